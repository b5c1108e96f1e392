//! A minimal OTLP/gRPC trace receiver that prints every span it is sent, one line each:
//! to see Arbiter's spans without running a collector or Jaeger.
//!
//! ```sh
//! cargo run --example otlp_receiver                 # listens on 127.0.0.1:4317
//! cargo run --example otlp_receiver -- 0.0.0.0:4317
//! ```
//!
//! then start the server with `--otlp-endpoint http://127.0.0.1:4317`.

use std::error::Error;
use std::fmt::Write as _;

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use tonic::{Request, Response, Status};

/// Prints the spans it receives.
struct Printer;

#[tonic::async_trait]
impl TraceService for Printer {
    async fn export(
        &self,
        request: Request<ExportTraceServiceRequest>,
    ) -> Result<Response<ExportTraceServiceResponse>, Status> {
        for resource_spans in request.into_inner().resource_spans {
            let service = resource_spans
                .resource
                .as_ref()
                .and_then(|resource| {
                    resource
                        .attributes
                        .iter()
                        .find(|kv| kv.key == "service.name")
                })
                .map(|kv| value(kv).unwrap_or_default())
                .unwrap_or_default();
            for scope in resource_spans.scope_spans {
                for span in scope.spans {
                    println!("{service}: {}", describe(&span));
                }
            }
        }
        Ok(Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

/// One line for `span`: its trace, its parent, its name, how long it took, its
/// attributes.
fn describe(span: &Span) -> String {
    let hex = |bytes: &[u8]| -> String { bytes.iter().map(|b| format!("{b:02x}")).collect() };
    let parent = if span.parent_span_id.is_empty() {
        "none (a root)".to_owned()
    } else {
        hex(&span.parent_span_id)
    };
    let micros = span
        .end_time_unix_nano
        .saturating_sub(span.start_time_unix_nano)
        / 1000;
    let mut line = format!(
        "trace {} span {} parent {parent} {} {micros} us",
        hex(&span.trace_id),
        hex(&span.span_id),
        span.name,
    );
    for kv in &span.attributes {
        let _ = write!(line, " {}={}", kv.key, value(kv).unwrap_or_default());
    }
    if let Some(status) = span.status.as_ref().filter(|status| status.code != 0) {
        let _ = write!(line, " status={}", status.code);
    }
    line
}

/// An attribute's value as text.
fn value(kv: &KeyValue) -> Option<String> {
    Some(match kv.value.as_ref()?.value.as_ref()? {
        Value::StringValue(text) => text.clone(),
        Value::IntValue(number) => number.to_string(),
        Value::BoolValue(flag) => flag.to_string(),
        Value::DoubleValue(number) => number.to_string(),
        other => format!("{other:?}"),
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let address = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:4317".into());
    let address = address.parse()?;
    println!("OTLP trace receiver listening on {address}");
    tonic::transport::Server::builder()
        .add_service(TraceServiceServer::new(Printer))
        .serve(address)
        .await?;
    Ok(())
}
