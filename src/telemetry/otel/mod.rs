//! Distributed tracing: a server span per call, exported over OTLP/gRPC, continuing the
//! caller's trace from the W3C `traceparent` (and `tracestate`) of the request.
//!
//! Off until [`OtlpTracing::start`] is called (the binary does with `--otlp-endpoint`):
//! until then the call layer creates no span and reads no header, so a server without
//! tracing pays one atomic load per call for it. When on, each call gets a span named
//! `package.Service/Method` of kind server, with the RPC semantic conventions'
//! attributes (`rpc.system`, `rpc.service`, `rpc.method`, `rpc.grpc.status_code`, and
//! an error status for the codes that mean a server fault); a live-game stream's span
//! also holds `arbiter.messages_received`, the messages its client sent (in Arbiter's own
//! namespace: the conventions have no such attribute).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry::propagation::Extractor;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tonic::codegen::http::HeaderMap;
use tonic::Code;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// The target of the call spans, the only spans exported.
pub(crate) const SPAN_TARGET: &str = "arbiter::rpc";

/// The service name when `OTEL_SERVICE_NAME` is not set.
const DEFAULT_SERVICE_NAME: &str = "arbiter";

/// How long [`OtlpTracing::shutdown`] waits for the last spans to be exported.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(3);

/// Whether calls get spans: set by [`OtlpTracing::start`].
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Whether calls are traced.
#[inline]
pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

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
    /// the call spans on. The service is named by `OTEL_SERVICE_NAME`, else `arbiter`;
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
        let mut resource = Resource::builder();
        if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name(DEFAULT_SERVICE_NAME);
        }
        let provider = SdkTracerProvider::builder()
            .with_resource(resource.build())
            .with_batch_exporter(exporter)
            .build();
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        ENABLED.store(true, Ordering::Relaxed);
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
        ENABLED.store(false, Ordering::Relaxed);
        if let Err(error) = self.provider.shutdown_with_timeout(SHUTDOWN_TIMEOUT) {
            tracing::warn!(%error, "traces not all exported");
        }
    }
}

/// The span of a call to `rpc` (`package.Service/Method`, or `other` for a path the
/// server does not serve), child of the caller's span when `headers` carry one.
#[cold]
pub(super) fn call_span(rpc: &'static str, headers: &HeaderMap) -> Span {
    let (service, method) = rpc.split_once('/').unwrap_or((rpc, ""));
    let span = tracing::info_span!(
        target: SPAN_TARGET,
        "call",
        otel.name = rpc,
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        rpc.system = "grpc",
        rpc.service = service,
        rpc.method = method,
        rpc.grpc.status_code = tracing::field::Empty,
        arbiter.messages_received = tracing::field::Empty,
    );
    let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.extract(&Headers(headers))
    });
    // Without a valid `traceparent` the context is empty, and the span a new root.
    let _ = span.set_parent(parent);
    span
}

/// Records a call's final status `code` on its span: an error status for the codes that
/// mean the server failed (as the RPC conventions say for server spans), none for the
/// others, which are the client's.
pub(super) fn record_code(span: &Span, code: Code) {
    span.record("rpc.grpc.status_code", code as i64);
    if matches!(
        code,
        Code::Unknown
            | Code::DeadlineExceeded
            | Code::Unimplemented
            | Code::Internal
            | Code::Unavailable
            | Code::DataLoss
    ) {
        span.record("otel.status_code", "error");
    }
}

/// The span of the call being served, if calls are traced: for a live-game stream to
/// record its message count on (see [`record_messages`]).
pub(crate) fn current_call() -> Option<Span> {
    enabled().then(Span::current)
}

/// Records on a stream's call span how many messages its client sent.
pub(crate) fn record_messages(span: &Span, messages: u64) {
    // As an i64: the OpenTelemetry layer records a u64 as text.
    span.record(
        "arbiter.messages_received",
        i64::try_from(messages).unwrap_or(i64::MAX),
    );
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
