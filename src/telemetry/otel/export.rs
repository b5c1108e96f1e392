//! The OTLP/gRPC exporter and the W3C trace context: what the `otlp` feature adds.

use std::time::Duration;

use opentelemetry::propagation::Extractor;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tonic::codegen::http::HeaderMap;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

use super::{ENABLED, SPAN_TARGET};

/// The service name when `OTEL_SERVICE_NAME` is not set.
const DEFAULT_SERVICE_NAME: &str = "arbiter";

/// How long [`OtlpTracing::shutdown`] waits for the last spans to be exported.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(3);

/// Why tracing could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot export traces to {endpoint}: {source}")]
pub struct TracingError {
    endpoint: String,
    #[source]
    source: opentelemetry_otlp::ExporterBuildError,
}

/// Traces exported over OTLP/gRPC to a collector (or any OTLP receiver: Jaeger, Tempo,
/// a vendor's agent), in batches, from a background task.
#[derive(Debug)]
pub struct OtlpTracing {
    provider: SdkTracerProvider,
}

impl OtlpTracing {
    /// Starts exporting to the OTLP/gRPC `endpoint` (`http://collector:4317`) and turns
    /// the call spans on. The service is named by `OTEL_SERVICE_NAME` (or `service.name`
    /// in `OTEL_RESOURCE_ATTRIBUTES`), else `arbiter`;
    /// the other standard `OTEL_*` variables of the SDK (batch sizes and delays,
    /// `OTEL_RESOURCE_ATTRIBUTES`) apply. Call it inside the Tokio runtime: the exporter's
    /// channel lives on it. Nothing is connected yet: a collector that is down costs the
    /// spans, never a call.
    pub fn start(endpoint: &str) -> Result<Self, TracingError> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint)
            .build()
            .map_err(|source| TracingError {
                endpoint: endpoint.to_owned(),
                source,
            })?;
        // The SDK names the service from OTEL_SERVICE_NAME, else from service.name in
        // OTEL_RESOURCE_ATTRIBUTES, else `unknown_service`: only then is it `arbiter`.
        let mut resource = Resource::builder().build();
        let named = resource
            .get(&opentelemetry::Key::from_static_str("service.name"))
            .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
        if !named {
            resource = Resource::builder()
                .with_service_name(DEFAULT_SERVICE_NAME)
                .build();
        }
        let provider = SdkTracerProvider::builder()
            .with_resource(resource)
            .with_batch_exporter(exporter)
            .build();
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        ENABLED.store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(Self { provider })
    }

    /// The `tracing-subscriber` layer that turns the call spans into OpenTelemetry
    /// spans; it sees no other span and no event.
    pub fn layer<S>(&self) -> impl Layer<S>
    where
        S: tracing::Subscriber + for<'span> LookupSpan<'span>,
    {
        let tracer = self.provider.tracer("arbiter");
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
            .with_target(false)
            .with_filter(filter_fn(|meta| {
                meta.is_span() && meta.target() == SPAN_TARGET
            }))
    }

    /// Exports the spans still buffered, then stops: call it once the server has
    /// stopped. It waits at most 3 s for the collector; errors (a
    /// collector that cannot be reached) are logged.
    pub fn shutdown(self) {
        ENABLED.store(false, std::sync::atomic::Ordering::Relaxed);
        if let Err(error) = self.provider.shutdown_with_timeout(SHUTDOWN_TIMEOUT) {
            tracing::warn!(%error, "traces not all exported");
        }
    }
}

/// Makes `span` a child of the caller's span when `headers` carry a W3C `traceparent`;
/// without a valid one its context stays empty, and the span is a new root.
pub(super) fn continue_trace(span: &Span, headers: &HeaderMap) {
    let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.extract(&Headers(headers))
    });
    let _ = span.set_parent(parent);
}

/// A request's headers as the propagator reads them.
struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|name| name.as_str()).collect()
    }
}
