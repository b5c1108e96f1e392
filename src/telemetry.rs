//! Every call seen in one tower layer, health and reflection included: counted for
//! Prometheus (served on an optional listener) and logged at debug level with its RPC,
//! status code and duration.
//!
//! Metrics: `arbiter_calls_total{rpc, code}`, `arbiter_call_duration_seconds{rpc}`
//! (histogram), `arbiter_calls_in_flight`, and from the live-game stream
//! `arbiter_live_games` and `arbiter_rejected_moves_total`.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http_body::{Body, Frame, SizeHint};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use metrics::{Counter, Gauge, Histogram};
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder, PrometheusHandle};
use tokio::net::TcpListener;
use tonic::codegen::http;
use tonic::{Code, Status};
use tower::{BoxError, Layer, Service};

use crate::layers::grpc_code;
use crate::service::play::GameKind;

/// The RPCs counted under their own name; any other path counts as `other`, so that
/// callers cannot grow the label set.
const KNOWN_RPCS: [&str; 11] = [
    "arbiter.v1.ArbiterService/CheckOthelloMove",
    "arbiter.v1.ArbiterService/ListOthelloMoves",
    "arbiter.v1.ArbiterService/CheckConnectFour",
    "arbiter.v1.ArbiterService/JudgeTicTacToe",
    "arbiter.v1.ArbiterService/PlayTicTacToe",
    "arbiter.v1.ArbiterService/PlayOthello",
    "arbiter.v1.ArbiterService/PlayConnectFour",
    "grpc.health.v1.Health/Check",
    "grpc.health.v1.Health/Watch",
    "grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
];

/// How many label values `rpc` can take: the known RPCs, then `other`.
const RPCS: usize = KNOWN_RPCS.len() + 1;

/// How many gRPC status codes there are (`Ok` = 0 to `Unauthenticated` = 16).
const CODES: usize = 17;

/// Latency buckets, in seconds: from 10 µs to 10 s.
const BUCKETS: [f64; 13] = [
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.01, 0.1, 1.0, 5.0,
    10.0,
];

/// How long a metrics connection may take to send a request's headers.
const SCRAPE_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How often the recorder's upkeep runs (drains histogram buffers), as the exporter's
/// own listener would.
const UPKEEP: Duration = Duration::from_secs(5);

/// Describes every metric and registers those without per-call labels at zero, so that
/// dashboards and alerts see them from the first scrape, before any game is played.
fn register_metrics() {
    metrics::describe_counter!(
        "arbiter_calls_total",
        "Calls answered, by RPC and gRPC status code."
    );
    metrics::describe_histogram!(
        "arbiter_call_duration_seconds",
        metrics::Unit::Seconds,
        "Call duration, from request headers to the end of the reply, by RPC."
    );
    metrics::describe_gauge!(
        "arbiter_calls_in_flight",
        "Calls whose reply has not ended, open live-game streams included."
    );
    metrics::describe_gauge!(
        "arbiter_live_games",
        "Live games open now, by game (tic_tac_toe, othello, connect_four)."
    );
    metrics::describe_counter!(
        "arbiter_rejected_moves_total",
        "Live-game messages answered with `rejected` set, by game."
    );
    metrics::gauge!("arbiter_calls_in_flight").increment(0.0);
    for game in GameKind::ALL {
        metrics::gauge!("arbiter_live_games", "game" => game.label()).increment(0.0);
        metrics::counter!("arbiter_rejected_moves_total", "game" => game.label()).increment(0);
    }
}

/// Installs the metrics recorder and serves the metrics in Prometheus's text format over
/// HTTP/1.1 on every one of `listeners` (any path) from now on. The caller binds the
/// listeners, so that it knows the addresses actually bound (port 0 included).
pub fn serve_metrics(listeners: Vec<TcpListener>) -> Result<(), BuildError> {
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full("arbiter_call_duration_seconds".into()),
            &BUCKETS,
        )?
        .install_recorder()?;
    register_metrics();
    CALL_METRICS.get_or_init(CallMetricHandles::default);
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(UPKEEP);
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });
    for listener in listeners {
        let handle = handle.clone();
        tokio::spawn(accept_scrapes(listener, handle));
    }
    Ok(())
}

/// Answers every scrape on `listener` with the metrics `handle` renders.
async fn accept_scrapes(listener: TcpListener, handle: PrometheusHandle) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of file descriptors, most likely: wait rather than spin.
                tracing::warn!(%error, "metrics: cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let handle = handle.clone();
        tokio::spawn(async move {
            let scrape = service_fn(move |_request| {
                let text = handle.render();
                async move {
                    let mut response = hyper::Response::new(Full::<Bytes>::from(text));
                    response.headers_mut().insert(
                        http::header::CONTENT_TYPE,
                        http::HeaderValue::from_static("text/plain; version=0.0.4"),
                    );
                    Ok::<_, Infallible>(response)
                }
            });
            // A connection that sends no request headers for this long (a new one, or an
            // idle one between scrapes) is closed, so silent connections cannot pile up.
            if let Err(error) = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(SCRAPE_HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), scrape)
                .await
            {
                tracing::debug!(%error, "metrics: connection ended with an error");
            }
        });
    }
}

/// The tower layer that counts every call.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallMetricsLayer;

impl<S> Layer<S> for CallMetricsLayer {
    type Service = CallMetrics<S>;

    fn layer(&self, inner: S) -> Self::Service {
        CallMetrics { inner }
    }
}

/// Counts the calls `inner` serves.
#[derive(Debug, Clone)]
pub struct CallMetrics<S> {
    inner: S,
}

impl<S, ReqBody, ResBody> Service<http::Request<ReqBody>> for CallMetrics<S>
where
    S: Service<http::Request<ReqBody>, Response = http::Response<ResBody>, Error = BoxError>,
{
    type Response = http::Response<MeteredBody<ResBody>>;
    type Error = BoxError;
    type Future = CallFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        CallFuture {
            call: Call::start(request.uri().path()),
            inner: self.inner.call(request),
        }
    }
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
        let result = std::task::ready!(this.inner.poll(cx));
        let mut call = this.call.take();
        Poll::Ready(match result {
            Ok(response) => {
                if let Some(call) = &mut call {
                    // Errors come trailers-only: their status is in the headers.
                    if let Some(code) = grpc_code(response.headers()) {
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

/// The index of a request path's RPC in [`KNOWN_RPCS`], or `RPCS - 1` (`other`).
fn rpc_index(path: &str) -> usize {
    let name = path.strip_prefix('/').unwrap_or(path);
    KNOWN_RPCS
        .iter()
        .position(|known| *known == name)
        .unwrap_or(RPCS - 1)
}

/// The `rpc` label of the RPC at `index` (see [`rpc_index`]).
fn rpc_label(index: usize) -> &'static str {
    KNOWN_RPCS.get(index).copied().unwrap_or("other")
}

/// The per-call metrics' handles, set when the metrics recorder is installed: calls are
/// counted only when metrics are served. Each handle is registered with the recorder
/// once, at its first use, so that a call only updates atomics: it builds no metric key,
/// hashes nothing and looks nothing up.
static CALL_METRICS: OnceLock<CallMetricHandles> = OnceLock::new();

/// The handles of `arbiter_calls_in_flight`, `arbiter_calls_total{rpc, code}` and
/// `arbiter_call_duration_seconds{rpc}`.
struct CallMetricHandles {
    in_flight: Gauge,
    /// By RPC index, then status code.
    calls: [[OnceLock<Counter>; CODES]; RPCS],
    /// By RPC index.
    durations: [OnceLock<Histogram>; RPCS],
}

impl Default for CallMetricHandles {
    fn default() -> Self {
        Self {
            in_flight: metrics::gauge!("arbiter_calls_in_flight"),
            calls: [const { [const { OnceLock::new() }; CODES] }; RPCS],
            durations: [const { OnceLock::new() }; RPCS],
        }
    }
}

impl CallMetricHandles {
    /// Counts one call of the RPC at `rpc` that ended with `code` after `elapsed`.
    fn count(&self, rpc: usize, code: Code, elapsed: Duration) {
        self.in_flight.decrement(1.0);
        // `Code` is a fieldless enum numbered 0 to 16.
        let slot = (code as usize).min(CODES - 1);
        self.calls[rpc][slot]
            .get_or_init(|| {
                metrics::counter!(
                    "arbiter_calls_total",
                    "rpc" => rpc_label(rpc),
                    "code" => code_label(code)
                )
            })
            .increment(1);
        self.durations[rpc]
            .get_or_init(
                || metrics::histogram!("arbiter_call_duration_seconds", "rpc" => rpc_label(rpc)),
            )
            .record(elapsed.as_secs_f64());
    }
}

/// One call being counted: in flight from its start until dropped, when it is counted
/// with its final code (`Cancelled` if it never got one: the client went away).
struct Call {
    rpc: usize,
    started: Instant,
    code: Option<Code>,
    metrics: Option<&'static CallMetricHandles>,
}

impl Call {
    /// Starts counting a call to `path`; `None` when nothing would see it (no metrics
    /// recorder, and debug logging off), so that such a call costs no clock reads and
    /// no lookups.
    fn start(path: &str) -> Option<Self> {
        let metrics = CALL_METRICS.get();
        if metrics.is_none() && !tracing::enabled!(tracing::Level::DEBUG) {
            return None;
        }
        if let Some(metrics) = metrics {
            metrics.in_flight.increment(1.0);
        }
        Some(Self {
            rpc: rpc_index(path),
            started: Instant::now(),
            code: None,
            metrics,
        })
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
        let polled = this.inner.poll_frame(cx);
        if this.call.is_some() {
            match &polled {
                Poll::Ready(Some(Ok(frame))) => {
                    if let Some(code) = frame.trailers_ref().and_then(grpc_code) {
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
