//! The `arbiter` server binary.

use std::process::ExitCode;

use arbiter::config::{LogFormat, Options};
use arbiter::server::{self, Server};
use clap::Parser;
use tracing_subscriber::EnvFilter;

/// The server's allocator: mimalloc, which costs fewer instructions per call than the
/// system's (every call allocates headers, buffers and futures; BENCHMARKS.md, tuning log).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let options = Options::parse();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    match options.log_format {
        LogFormat::Text => tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
            .init(),
        LogFormat::Json => tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .init(),
    }

    let shutdown = match shutdown_signal() {
        Ok(shutdown) => shutdown,
        Err(error) => {
            tracing::error!(%error, "cannot listen for signals");
            return ExitCode::FAILURE;
        }
    };
    let settings = options.settings();
    let listeners = match server::bind(&settings.listen).await {
        Ok(listeners) => listeners,
        Err(error) => {
            tracing::error!(address = %settings.listen, %error, "cannot listen");
            return ExitCode::FAILURE;
        }
    };
    for listener in &listeners {
        match listener.local_addr() {
            Ok(address) => tracing::info!("arbiter listening on {address}"),
            Err(_) => tracing::info!("arbiter listening on {}", settings.listen),
        }
    }
    match Server::new(settings).run_on(listeners, shutdown).await {
        Ok(()) => {
            tracing::info!("stopped");
            ExitCode::SUCCESS
        }
        Err(error) => {
            tracing::error!(%error, "server failed");
            ExitCode::FAILURE
        }
    }
}

/// Completes on Ctrl-C or SIGTERM. The handlers are registered at once, before the
/// server starts, so that a signal arriving early is never fatal.
#[cfg(unix)]
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

/// Completes on Ctrl-C.
#[cfg(not(unix))]
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
