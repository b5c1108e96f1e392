//! The `arbiter` server binary.

use std::process::ExitCode;

use arbiter::config::{LogFormat, Options};
use arbiter::server::Server;
use clap::Parser;
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

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

    let listener = match TcpListener::bind(options.listen).await {
        Ok(listener) => listener,
        Err(error) => {
            tracing::error!(address = %options.listen, %error, "cannot listen");
            return ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(address) => tracing::info!("arbiter listening on {address}"),
        Err(_) => tracing::info!("arbiter listening on {}", options.listen),
    }
    match Server::new(options).run(listener, shutdown_signal()).await {
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

/// Completes on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
