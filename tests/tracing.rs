//! Distributed tracing over the wire: the `arbiter` binary started with
//! `--otlp-endpoint` (or `OTEL_EXPORTER_OTLP_ENDPOINT`) exports a server span per call to
//! a real OTLP/gRPC receiver run in the test (the collector's own `TraceService`, from
//! `opentelemetry-proto`), continuing the trace the caller's `traceparent` names.
#![cfg(feature = "otlp")]

mod common;

use std::time::Duration;

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::{CheckOthelloMoveRequest, PlayTicTacToeRequest};
use common::messages::board;
use common::process::{terminate, wait_exit, Spawned};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::Span;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::transport::Channel;
use tonic::{Code, Request, Response, Status};

/// A span as the receiver got it, with its resource's `service.name`.
#[derive(Debug, Clone)]
struct Received {
    service: Option<String>,
    span: Span,
}

/// An OTLP trace receiver that passes on every export it is sent.
struct Receiver {
    exports: mpsc::UnboundedSender<ExportTraceServiceRequest>,
}

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: Request<ExportTraceServiceRequest>,
    ) -> Result<Response<ExportTraceServiceResponse>, Status> {
        let _ = self.exports.send(request.into_inner());
        Ok(Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

/// The spans the receiver gets, one by one, each with its resource's `service.name`.
struct Spans {
    exports: mpsc::UnboundedReceiver<ExportTraceServiceRequest>,
    pending: std::collections::VecDeque<Received>,
}

impl Spans {
    /// The next `count` spans, failing after 20 s.
    async fn next(&mut self, count: usize) -> Vec<Received> {
        while self.pending.len() < count {
            let export = tokio::time::timeout(Duration::from_secs(20), self.exports.recv())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "{} spans received of {count}: {:?}",
                        self.pending.len(),
                        self.pending
                    )
                })
                .expect("the receiver runs");
            for batch in export.resource_spans {
                let service = batch
                    .resource
                    .as_ref()
                    .and_then(|resource| string(&resource.attributes, "service.name"));
                let spans = batch.scope_spans.into_iter().flat_map(|scope| scope.spans);
                self.pending.extend(spans.map(|span| Received {
                    service: service.clone(),
                    span,
                }));
            }
        }
        self.pending.drain(..count).collect()
    }

    /// The next span.
    async fn one(&mut self) -> Received {
        self.next(1).await.remove(0)
    }
}

/// Starts a receiver on a port of its own; returns its URL and the spans it gets.
async fn start_receiver() -> (String, Spans) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (exports, received) = mpsc::unbounded_channel();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(Receiver { exports }))
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    let spans = Spans {
        exports: received,
        pending: Default::default(),
    };
    (url, spans)
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
}

fn string(attributes: &[KeyValue], key: &str) -> Option<String> {
    match attribute(attributes, key)? {
        Value::StringValue(text) => Some(text.clone()),
        _ => None,
    }
}

fn int(attributes: &[KeyValue], key: &str) -> Option<i64> {
    match attribute(attributes, key)? {
        Value::IntValue(value) => Some(*value),
        _ => None,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn client(server: &Spawned) -> ArbiterServiceClient<Channel> {
    ArbiterServiceClient::connect(format!("http://{}", server.addr))
        .await
        .unwrap()
}

/// A request carrying the W3C trace context of a caller's span.
fn traced<T>(message: T, trace: &str, parent: &str) -> Request<T> {
    let mut request = Request::new(message);
    request.metadata_mut().insert(
        "traceparent",
        format!("00-{trace}-{parent}-01").parse().unwrap(),
    );
    request
}

fn othello_check(color: &str) -> CheckOthelloMoveRequest {
    CheckOthelloMoveRequest {
        board: board(&["...", ".WB", "..."]),
        row: 1,
        col: 0,
        color: color.into(),
    }
}

const TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT: &str = "b7ad6b7169203331";

/// Fails against a server that exports no span, starts a new trace instead of the
/// caller's, names or kinds its spans otherwise, leaves out the RPC attributes or the
/// status code, counts a stream's messages wrong, or takes a client's error for its own.
#[tokio::test]
async fn every_call_is_a_span_of_the_callers_trace() {
    let (url, mut spans) = start_receiver().await;
    let mut server = Spawned::start_with_env(
        &["--otlp-endpoint", &url, "--shutdown-drain", "0s"],
        &[
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ("OTEL_SERVICE_NAME", "arbiter-under-test"),
        ],
    );
    server.wait_for_line("tracing calls to", Duration::from_secs(10));
    let mut client = client(&server).await;

    // A legal move, in the caller's trace.
    let reply = client
        .check_othello_move(traced(othello_check("B"), TRACE, PARENT))
        .await
        .unwrap();
    assert!(reply.into_inner().legal);
    let check = spans.one().await;
    assert_eq!(check.service.as_deref(), Some("arbiter-under-test"));
    let span = &check.span;
    assert_eq!(span.name, "arbiter.v1.ArbiterService/CheckOthelloMove");
    assert_eq!(span.kind, SpanKind::Server as i32);
    assert_eq!(hex(&span.trace_id), TRACE);
    assert_eq!(hex(&span.parent_span_id), PARENT);
    assert_eq!(span.span_id.len(), 8);
    assert_ne!(hex(&span.span_id), PARENT);
    assert_eq!(
        string(&span.attributes, "rpc.system").as_deref(),
        Some("grpc")
    );
    assert_eq!(
        string(&span.attributes, "rpc.service").as_deref(),
        Some("arbiter.v1.ArbiterService")
    );
    assert_eq!(
        string(&span.attributes, "rpc.method").as_deref(),
        Some("CheckOthelloMove")
    );
    assert_eq!(int(&span.attributes, "rpc.grpc.status_code"), Some(0));
    assert_ne!(
        span.status.as_ref().map(|status| status.code),
        Some(StatusCode::Error as i32)
    );
    assert!(span.end_time_unix_nano >= span.start_time_unix_nano);

    // A malformed request: its code on the span, and not a server error.
    let parent = "00f067aa0ba902b7";
    let status = client
        .check_othello_move(traced(othello_check("purple"), TRACE, parent))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let bad = spans.one().await;
    assert_eq!(hex(&bad.span.parent_span_id), parent);
    assert_eq!(int(&bad.span.attributes, "rpc.grpc.status_code"), Some(3));
    assert_ne!(
        bad.span.status.as_ref().map(|status| status.code),
        Some(StatusCode::Error as i32)
    );

    // A live game: one span for the whole stream, with its message count.
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let moves = [(1, 1), (1, 1), (0, 0)].map(|(row, col)| PlayTicTacToeRequest {
        row,
        col,
        setup: None,
    });
    let mut replies = client
        .play_tic_tac_toe(traced(tokio_stream::iter(moves), trace, PARENT))
        .await
        .unwrap()
        .into_inner();
    let mut count = 0;
    while replies.message().await.unwrap().is_some() {
        count += 1;
    }
    assert_eq!(count, 3);
    let game = spans.one().await;
    assert_eq!(game.span.name, "arbiter.v1.ArbiterService/PlayTicTacToe");
    assert_eq!(hex(&game.span.trace_id), trace);
    assert_eq!(
        int(&game.span.attributes, "arbiter.messages_received"),
        Some(3)
    );
    assert_eq!(int(&game.span.attributes, "rpc.grpc.status_code"), Some(0));

    // No trace context: a span of a new trace, a root.
    client.check_othello_move(othello_check("W")).await.unwrap();
    let root = spans.one().await;
    assert!(root.span.parent_span_id.is_empty(), "{root:?}");
    assert_eq!(root.span.trace_id.len(), 16);
    assert_ne!(hex(&root.span.trace_id), TRACE);

    // A method the server does not have: UNIMPLEMENTED, a server fault by the
    // conventions, so the span's status is an error; its name is `other`, never the
    // caller's path.
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", server.addr))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut raw = tonic::client::Grpc::new(channel);
    raw.ready().await.unwrap();
    let status = raw
        .unary::<_, CheckOthelloMoveRequest, _>(
            traced(othello_check("B"), TRACE, PARENT),
            "/arbiter.v1.ArbiterService/NoSuchMethod".parse().unwrap(),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unimplemented);
    let missing = spans.one().await;
    assert_eq!(missing.span.name, "other");
    assert_eq!(
        int(&missing.span.attributes, "rpc.grpc.status_code"),
        Some(12)
    );
    assert_eq!(
        missing.span.status.as_ref().map(|status| status.code),
        Some(StatusCode::Error as i32)
    );

    terminate(&server.child);
    assert!(wait_exit(&mut server.child, Duration::from_secs(15))
        .await
        .success());
}

/// The standard variables turn tracing on and name the service too, and a receiver
/// that never answers costs no call: every call is answered at once, and the server still stops. Fails against a
/// server that ignores the variable, or waits for its exporter on a call's path.
#[tokio::test]
async fn the_standard_variable_traces_and_a_dead_receiver_costs_no_call() {
    let (url, mut spans) = start_receiver().await;
    let server = Spawned::start_with_env(
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", url.as_str()),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ],
    );
    client(&server)
        .await
        .check_othello_move(traced(othello_check("B"), TRACE, PARENT))
        .await
        .unwrap();
    let span = spans.one().await;
    assert_eq!(hex(&span.span.trace_id), TRACE);
    assert_eq!(span.service.as_deref(), Some("arbiter"));
    drop(server);

    // The service named in OTEL_RESOURCE_ATTRIBUTES, as the SDK reads it, is kept.
    let server = Spawned::start_with_env(
        &["--otlp-endpoint", &url],
        &[
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attributes"),
        ],
    );
    client(&server)
        .await
        .check_othello_move(othello_check("B"))
        .await
        .unwrap();
    assert_eq!(
        spans.one().await.service.as_deref(),
        Some("from-attributes")
    );
    drop(server);

    // A receiver that accepts connections and never reads from them.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let mut server = Spawned::start_with_env(
        &["--otlp-endpoint", &url, "--shutdown-drain", "0s"],
        &[("OTEL_BSP_SCHEDULE_DELAY", "100")],
    );
    let mut client = client(&server).await;
    for _ in 0..50 {
        tokio::time::timeout(
            Duration::from_secs(5),
            client.check_othello_move(othello_check("B")),
        )
        .await
        .expect("a call answered while the receiver is silent")
        .unwrap();
    }
    terminate(&server.child);
    // The last export waits at most 3 s for the receiver.
    assert!(wait_exit(&mut server.child, Duration::from_secs(15))
        .await
        .success());
    drop(silent);
}
