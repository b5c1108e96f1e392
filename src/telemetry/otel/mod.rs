//! Distributed tracing: a server span per call, exported over OTLP/gRPC, continuing the
//! caller's trace from the W3C `traceparent` (and `tracestate`) of the request.
//!
//! Off until `OtlpTracing::start` is called (the binary does with `--otlp-endpoint`; a
//! build without the default `otlp` feature has no exporter, and never traces):
//! until then the call layer creates no span and reads no header, so a server without
//! tracing pays one atomic load per call for it. When on, each call gets a span named
//! `package.Service/Method` of kind server, with the RPC semantic conventions'
//! attributes (`rpc.system`, `rpc.service`, `rpc.method`, `rpc.grpc.status_code`, and
//! an error status for the codes that mean a server fault); a live-game stream's span
//! also holds `arbiter.messages_received`, the messages its client sent (in Arbiter's own
//! namespace: the conventions have no such attribute).

use std::sync::atomic::{AtomicBool, Ordering};

use tonic::codegen::http::HeaderMap;
use tonic::Code;
use tracing::Span;

#[cfg(feature = "otlp")]
mod export;
#[cfg(feature = "otlp")]
pub use export::{OtlpTracing, TracingError};

/// The target of the call spans, the only spans exported.
pub(crate) const SPAN_TARGET: &str = "arbiter::rpc";

/// Whether calls get spans: set by `OtlpTracing::start` (never, in a build without the
/// `otlp` feature).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Whether calls are traced.
#[inline]
pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
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
    #[cfg(feature = "otlp")]
    export::continue_trace(&span, headers);
    #[cfg(not(feature = "otlp"))]
    let _ = headers;
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
