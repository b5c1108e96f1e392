//! The `arbiter` server binary.

use std::process::ExitCode;

use arbiter::config::{LogFormat, Options};
use arbiter::server::{self, Server};
use arbiter::OtlpTracing;
use clap::Parser;
use tokio_util::sync::CancellationToken;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

/// The server's allocator: mimalloc, which costs fewer instructions per call than the
/// system's (every call allocates headers, buffers and futures; BENCHMARKS.md, tuning log).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let options = Options::parse();
    // Tracing first, so that its layer joins the subscriber.
    let tracing = match options.otlp_endpoint.as_deref().map(OtlpTracing::start) {
        None => None,
        Some(Ok(tracing)) => Some(tracing),
        Some(Err(error)) => {
            eprintln!("arbiter: {error}");
            return ExitCode::FAILURE;
        }
    };
    // The logs never show the call spans (only the OTLP layer takes them).
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "info".into())
        .add_directive("arbiter::rpc=off".parse().expect("a valid directive"));
    let logs = match options.log_format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_filter(filter)
            .boxed(),
    };
    tracing_subscriber::registry()
        .with(logs)
        .with(tracing.as_ref().map(OtlpTracing::layer))
        .init();
    let code = serve(options).await;
    if let Some(tracing) = tracing {
        // It blocks until the last spans are sent, which takes the runtime's workers.
        let _ = tokio::task::spawn_blocking(move || tracing.shutdown()).await;
    }
    code
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
    let metrics_listeners = match &settings.metrics_listen {
        Some(address) => match server::bind(address).await {
            Ok(listeners) => listeners,
            Err(error) => {
                tracing::error!("cannot listen for metrics: {error}");
                return ExitCode::FAILURE;
            }
        },
        None => Vec::new(),
    };
    for listener in &listeners {
        match listener.local_addr() {
            Ok(address) => tracing::info!("arbiter listening on {address}"),
            Err(_) => tracing::info!("arbiter listening on {}", settings.listen),
        }
    }
    if let Some(endpoint) = &options.otlp_endpoint {
        tracing::info!("tracing calls to {endpoint} (OTLP/gRPC)");
    }
    let serve = Server::new(settings)
        .with_metrics_listeners(metrics_listeners)
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
