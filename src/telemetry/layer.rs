//! The tower layer that counts every call: its RPC, its final status code and how long
//! it took, without an allocation or a lookup per call; and, when calls are traced, that
//! runs each in its span (see [`super::otel`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http_body::{Body, Frame, SizeHint};
use metrics::{Counter, Gauge, Histogram};
use tonic::codegen::http;
use tonic::{Code, Status};
use tower::{BoxError, Layer, Service};
use tracing::Span;

use super::grpc_code;
use super::names::{CALLS_IN_FLIGHT, CALLS_TOTAL, CALL_DURATION_SECONDS};
use super::otel;
use super::rpcs::{rpc_index, rpc_label, rpc_labels};

/// How many gRPC status codes there are (`Ok` = 0 to `Unauthenticated` = 16).
const CODES: usize = 17;

/// The tower layer that counts every call.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CallMetricsLayer;

impl<S> Layer<S> for CallMetricsLayer {
    type Service = CallMetrics<S>;

    fn layer(&self, inner: S) -> Self::Service {
        CallMetrics { inner }
    }
}

/// Counts the calls `inner` serves.
#[derive(Debug, Clone)]
pub(crate) struct CallMetrics<S> {
    inner: S,
}

impl<S, ReqBody, ResBody> Service<http::Request<ReqBody>> for CallMetrics<S>
where
    S: Service<
        http::Request<RequestBody<ReqBody>>,
        Response = http::Response<ResBody>,
        Error = BoxError,
    >,
{
    type Response = http::Response<MeteredBody<ResBody>>;
    type Error = BoxError;
    type Future = CallFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        CallFuture {
            call: Call::start(request.uri().path(), request.headers()),
            inner: self.inner.call(request.map(|inner| RequestBody { inner })),
        }
    }
}

pin_project_lite::pin_project! {
    /// A request body whose failure (the client reset the stream or went away before
    /// its request arrived whole) marks the call unfinished: it is counted `Cancelled`,
    /// whatever status the handler then gives it (tonic's is `Unknown`), since the
    /// server is not at fault and no reply can reach the client.
    ///
    /// The transport's body is boxed further in anyway (the router boxes whatever body it
    /// gets), so wrapping it costs no allocation.
    pub struct RequestBody<B> {
        #[pin]
        inner: B,
    }
}

impl<B> Body for RequestBody<B>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    type Data = B::Data;
    type Error = Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        self.project().inner.poll_frame(cx).map_err(unfinished)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The metadata that marks the status of a call whose request failed to arrive (see
/// [`RequestBody`]); taken off again before the reply leaves this layer.
const UNFINISHED: &str = "arbiter-unfinished-call";

/// The status of a call whose request stopped arriving with `error`: tonic's for it,
/// marked [`UNFINISHED`]. Never `Cancelled` itself: tonic takes a cancelled request
/// body for its clean end, and would answer a unary call INTERNAL ("Missing request
/// message").
#[cold]
fn unfinished(error: impl Into<BoxError>) -> Status {
    let status = Status::from_error(error.into());
    let code = match status.code() {
        Code::Cancelled => Code::Unknown,
        code => code,
    };
    let mut status = Status::new(code, status.message().to_owned());
    status
        .metadata_mut()
        .insert(UNFINISHED, tonic::metadata::MetadataValue::from_static("1"));
    status
}

/// The code of a reply's status in `headers` (trailers-only) or trailers: `Cancelled`
/// for a call marked [`UNFINISHED`], whose mark is taken off.
fn final_code(headers: &mut http::HeaderMap) -> Option<Code> {
    let code = grpc_code(headers)?;
    // Only errors pay for the look-up.
    if code != Code::Ok && headers.remove(UNFINISHED).is_some() {
        return Some(Code::Cancelled);
    }
    Some(code)
}

pin_project_lite::pin_project! {
    /// The response of a call being counted (no allocation per call): dropped before it
    /// completes, the call is counted `Cancelled`.
    pub struct CallFuture<F> {
        #[pin]
        inner: F,
        call: Option<Call>,
    }
}

impl<F, ResBody> Future for CallFuture<F>
where
    F: Future<Output = Result<http::Response<ResBody>, BoxError>>,
{
    type Output = Result<http::Response<MeteredBody<ResBody>>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let result = {
            // The handler runs in the call's span, if it has one.
            let _in_span = Call::enter_span(this.call);
            std::task::ready!(this.inner.poll(cx))
        };
        let mut call = this.call.take();
        Poll::Ready(match result {
            Ok(mut response) => {
                if let Some(call) = &mut call {
                    // Errors come trailers-only: their status is in the headers.
                    if let Some(code) = final_code(response.headers_mut()) {
                        call.set_code(code);
                    }
                }
                let (parts, body) = response.into_parts();
                Ok(http::Response::from_parts(
                    parts,
                    MeteredBody { inner: body, call },
                ))
            }
            Err(error) => {
                if let Some(call) = &mut call {
                    call.set_code(
                        error
                            .downcast_ref::<Status>()
                            .map_or(Code::Unknown, Status::code),
                    );
                }
                Err(error)
            }
        })
    }
}

/// The per-call metrics' handles, set when the metrics recorder is installed: calls are
/// counted only when metrics are served. Each handle is registered with the recorder
/// once, at its first use, so that a call only updates atomics: it builds no metric key,
/// hashes nothing and looks nothing up.
static CALL_METRICS: OnceLock<CallMetricHandles> = OnceLock::new();

/// The handles of `arbiter_calls_in_flight`, `arbiter_calls_total{rpc, code}` and
/// `arbiter_call_duration_seconds{rpc}`.
pub(super) struct CallMetricHandles {
    in_flight: Gauge,
    /// By RPC index, then status code.
    calls: Box<[[OnceLock<Counter>; CODES]]>,
    /// By RPC index.
    durations: Box<[OnceLock<Histogram>]>,
}

impl CallMetricHandles {
    /// Starts counting calls: the handles, each registered at its first use, for every
    /// value the `rpc` label can take.
    pub(super) fn install() {
        CALL_METRICS.get_or_init(|| {
            let rpcs = rpc_labels();
            Self {
                in_flight: metrics::gauge!(CALLS_IN_FLIGHT),
                calls: (0..rpcs)
                    .map(|_| [const { OnceLock::new() }; CODES])
                    .collect(),
                durations: (0..rpcs).map(|_| OnceLock::new()).collect(),
            }
        });
    }

    /// Counts one call of the RPC at `rpc` that ended with `code` after `elapsed`.
    fn count(&self, rpc: usize, code: Code, elapsed: Duration) {
        self.in_flight.decrement(1.0);
        // `Code` is a fieldless enum numbered 0 to 16.
        let slot = (code as usize).min(CODES - 1);
        self.calls[rpc][slot]
            .get_or_init(|| {
                metrics::counter!(
                    CALLS_TOTAL,
                    "rpc" => rpc_label(rpc),
                    "code" => code_label(code)
                )
            })
            .increment(1);
        self.durations[rpc]
            .get_or_init(|| metrics::histogram!(CALL_DURATION_SECONDS, "rpc" => rpc_label(rpc)))
            .record(elapsed.as_secs_f64());
    }
}

/// One call being counted: in flight from its start until dropped, when it is counted
/// with its final code (`Cancelled` if it never got one: the client went away), and its
/// span, if calls are traced, ends.
struct Call {
    rpc: usize,
    started: Instant,
    code: Option<Code>,
    metrics: Option<&'static CallMetricHandles>,
    /// Boxed: a call's future and body carry this struct, and an untraced call should
    /// not carry a span's bytes (every extra byte is copied with the future).
    span: Option<Box<Span>>,
}

impl Call {
    /// Starts counting a call to `path` with the request's `headers`; `None` when
    /// nothing would see it (no metrics recorder, tracing off, and debug logging off),
    /// so that such a call costs no clock reads and no lookups.
    fn start(path: &str, headers: &http::HeaderMap) -> Option<Self> {
        let metrics = CALL_METRICS.get();
        let traced = otel::enabled();
        if metrics.is_none() && !traced && !tracing::enabled!(tracing::Level::DEBUG) {
            return None;
        }
        if let Some(metrics) = metrics {
            metrics.in_flight.increment(1.0);
        }
        let rpc = rpc_index(path);
        Some(Self {
            rpc,
            started: Instant::now(),
            code: None,
            metrics,
            span: traced.then(|| Box::new(otel::call_span(rpc_label(rpc), headers))),
        })
    }

    /// Enters the span of `call`, if it is counted and traced, until the guard drops.
    fn enter_span(call: &Option<Self>) -> Option<tracing::span::Entered<'_>> {
        call.as_ref()?.span.as_deref().map(Span::enter)
    }

    /// The call's final status code.
    fn set_code(&mut self, code: Code) {
        self.code = Some(code);
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        let code = self.code.unwrap_or(Code::Cancelled);
        let elapsed = self.started.elapsed();
        if let Some(span) = &self.span {
            otel::record_code(span, code);
        }
        tracing::debug!(
            rpc = rpc_label(self.rpc),
            code = code_label(code),
            duration_us = elapsed.as_micros() as u64,
            "call"
        );
        if let Some(metrics) = self.metrics {
            metrics.count(self.rpc, code, elapsed);
        }
    }
}

/// A status code's label: its name as tonic spells it (`Ok`, `InvalidArgument`, ...).
fn code_label(code: Code) -> &'static str {
    match code {
        Code::Ok => "Ok",
        Code::Cancelled => "Cancelled",
        Code::Unknown => "Unknown",
        Code::InvalidArgument => "InvalidArgument",
        Code::DeadlineExceeded => "DeadlineExceeded",
        Code::NotFound => "NotFound",
        Code::AlreadyExists => "AlreadyExists",
        Code::PermissionDenied => "PermissionDenied",
        Code::ResourceExhausted => "ResourceExhausted",
        Code::FailedPrecondition => "FailedPrecondition",
        Code::Aborted => "Aborted",
        Code::OutOfRange => "OutOfRange",
        Code::Unimplemented => "Unimplemented",
        Code::Internal => "Internal",
        Code::Unavailable => "Unavailable",
        Code::DataLoss => "DataLoss",
        Code::Unauthenticated => "Unauthenticated",
    }
}

pin_project_lite::pin_project! {
    /// A reply body that reads the final status from the trailers as they pass.
    pub struct MeteredBody<B> {
        #[pin]
        inner: B,
        call: Option<Call>,
    }
}

impl<B: Body> Body for MeteredBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        // A live game's stream is polled here: in the call's span, if it has one.
        let in_span = Call::enter_span(this.call);
        let mut polled = this.inner.poll_frame(cx);
        drop(in_span);
        if this.call.is_some() {
            match &mut polled {
                Poll::Ready(Some(Ok(frame))) => {
                    if let Some(code) = frame.trailers_mut().and_then(final_code) {
                        if let Some(mut call) = this.call.take() {
                            call.set_code(code);
                        }
                    }
                }
                // Ended without trailers: the headers' status, if any, stands.
                Poll::Ready(None) => drop(this.call.take()),
                _ => {}
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
