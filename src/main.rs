//! The `arbiter` server binary.
// Start-up has no request to answer, but fails with a message, never a panic.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

use std::process::ExitCode;

use arbiter::config::{LogFormat, Options};
use arbiter::server::{self, Server};
#[cfg(feature = "otlp")]
use arbiter::OtlpTracing;
use clap::Parser;
use tokio_util::sync::CancellationToken;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer};

/// The server's allocator: mimalloc, which costs fewer instructions per call than the
/// system's (every call allocates headers, buffers and futures; BENCHMARKS.md, "Tried and rejected").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let options = Options::parse();
    #[cfg(feature = "otlp")]
    let tracing = {
        // Tracing first, so that its layer joins the subscriber.
        let tracing = match options.otlp_endpoint.as_deref().map(OtlpTracing::start) {
            None => None,
            Some(Ok(tracing)) => Some(tracing),
            Some(Err(error)) => {
                eprintln!("arbiter: {error}");
                return ExitCode::FAILURE;
            }
        };
        match &tracing {
            None => init_logs(options.log_format),
            // With tracing, each layer filters on its own: the logs never show the call
            // spans, and the OTLP layer takes nothing else.
            Some(tracing) => tracing_subscriber::registry()
                .with(log_layer(options.log_format).with_filter(without_call_spans(log_filter())))
                .with(tracing.layer())
                .init(),
        }
        tracing
    };
    #[cfg(not(feature = "otlp"))]
    {
        init_logs(options.log_format);
        if options.otlp_endpoint.is_some() {
            // Not fatal: OTEL_EXPORTER_OTLP_ENDPOINT is often set for every container.
            tracing::warn!(
                "built without the otlp feature: --otlp-endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) \
                 is ignored, no call is traced"
            );
        }
    }
    let code = serve(options).await;
    #[cfg(feature = "otlp")]
    if let Some(tracing) = tracing {
        // It blocks until the last spans are sent, which takes the runtime's workers.
        let _ = tokio::task::spawn_blocking(move || tracing.shutdown()).await;
    }
    code
}

/// Logs alone: their filter is the whole subscriber's, so that a disabled log line costs
/// its call site a cached check and nothing more.
fn init_logs(format: LogFormat) {
    tracing_subscriber::registry()
        .with(log_filter())
        .with(log_layer(format))
        .init();
}

/// The log level `RUST_LOG` asks for, `info` by default.
fn log_filter() -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into())
}

/// `filter` with the call spans (target `arbiter::rpc`) turned off.
#[cfg(feature = "otlp")]
fn without_call_spans(filter: EnvFilter) -> EnvFilter {
    match CALL_SPANS_OFF.parse() {
        Ok(directive) => filter.add_directive(directive),
        // Held by the test `the_call_spans_directive_parses`.
        Err(_) => filter,
    }
}

/// The directive that keeps the call spans out of the logs.
#[cfg(feature = "otlp")]
const CALL_SPANS_OFF: &str = "arbiter::rpc=off";

/// The log lines in `format`, on standard output.
fn log_layer<S>(format: LogFormat) -> Box<dyn Layer<S> + Send + Sync>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer().json().boxed(),
    }
}

/// Runs the server `options` ask for until it stops.
async fn serve(options: Options) -> ExitCode {
    let (stop, stop_now) = match stop_signals() {
        Ok(tokens) => tokens,
        Err(error) => {
            tracing::error!(%error, "cannot listen for signals");
            return ExitCode::FAILURE;
        }
    };
    let settings = options.settings();
    // Every address is bound before the server says it listens on any.
    let listeners = match server::bind(&settings.listen).await {
        Ok(listeners) => listeners,
        Err(error) => {
            tracing::error!("cannot listen: {error}");
            return ExitCode::FAILURE;
        }
    };
    let Some(metrics_listeners) = bind_side(&settings.metrics_listen, "metrics").await else {
        return ExitCode::FAILURE;
    };
    let Some(health_listeners) = bind_side(&settings.health_listen, "health checks").await else {
        return ExitCode::FAILURE;
    };
    for listener in &listeners {
        match listener.local_addr() {
            Ok(address) => tracing::info!("arbiter listening on {address}"),
            Err(_) => tracing::info!("arbiter listening on {}", settings.listen),
        }
    }
    #[cfg(feature = "otlp")]
    if let Some(endpoint) = &options.otlp_endpoint {
        tracing::info!("tracing calls to {endpoint} (OTLP/gRPC)");
    }
    let serve = Server::new(settings)
        .with_metrics_listeners(metrics_listeners)
        .with_health_listeners(health_listeners)
        .run_on(listeners, stop.cancelled_owned());
    tokio::select! {
        result = serve => match result {
            Ok(()) => {
                tracing::info!("stopped");
                ExitCode::SUCCESS
            }
            Err(error) => {
                tracing::error!(%error, "server failed");
                ExitCode::FAILURE
            }
        },
        () = stop_now.cancelled() => {
            // Returning drops the runtime, and with it every connection and call.
            tracing::warn!("second stop signal: stopped at once, calls in flight cut off");
            ExitCode::FAILURE
        }
    }
}

/// Two tokens: the first cancelled on the first Ctrl-C or SIGTERM (the graceful stop),
/// the second on the next one (stop at once). The handlers are registered at once,
/// before the server starts, so that a signal arriving early is never fatal.
fn stop_signals() -> std::io::Result<(CancellationToken, CancellationToken)> {
    let mut signals = StopSignals::new()?;
    let stop = CancellationToken::new();
    let stop_now = CancellationToken::new();
    let (first, second) = (stop.clone(), stop_now.clone());
    tokio::spawn(async move {
        signals.next().await;
        tracing::info!(
            "stop signal: stopping gracefully; a second Ctrl-C or SIGTERM stops at once"
        );
        first.cancel();
        signals.next().await;
        second.cancel();
    });
    Ok((stop, stop_now))
}

/// Ctrl-C and SIGTERM.
#[cfg(unix)]
struct StopSignals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl StopSignals {
    fn new() -> std::io::Result<Self> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// Completes on the next Ctrl-C or SIGTERM.
    async fn next(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }
}

/// Ctrl-C.
#[cfg(not(unix))]
struct StopSignals(tokio::signal::windows::CtrlC);

#[cfg(not(unix))]
impl StopSignals {
    fn new() -> std::io::Result<Self> {
        tokio::signal::windows::ctrl_c().map(Self)
    }

    /// Completes on the next Ctrl-C.
    async fn next(&mut self) {
        let _ = self.0.recv().await;
    }
}

#[cfg(all(test, feature = "otlp"))]
mod tests {
    #[test]
    fn the_call_spans_directive_parses() {
        assert!(super::CALL_SPANS_OFF
            .parse::<tracing_subscriber::filter::Directive>()
            .is_ok());
    }
}

/// The listeners of an optional side address (metrics, health checks): none when it is
/// not set, `None` (having logged why) when it cannot be bound.
async fn bind_side(address: &Option<String>, what: &str) -> Option<Vec<tokio::net::TcpListener>> {
    match server::bind_optional(address).await {
        Ok(listeners) => Some(listeners),
        Err(error) => {
            tracing::error!("cannot listen for {what}: {error}");
            None
        }
    }
}
