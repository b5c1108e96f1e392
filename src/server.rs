//! The gRPC server: the Arbiter service with health and reflection, and a graceful stop.

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tonic::transport::server::TcpIncoming;
use tonic_health::pb::health_server::HealthServer;
use tonic_health::server::{HealthReporter, HealthService};
use tonic_health::ServingStatus;

use crate::config::Options;
use crate::proto::arbiter_service_server::ArbiterServiceServer;
use crate::proto::FILE_DESCRIPTOR_SET;
use crate::service::play::LiveGames;
use crate::service::Arbiter;

/// How long the server still waits for connections to close after ending open streams.
const FINAL_WAIT: Duration = Duration::from_secs(2);

/// Why the server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The reflection service could not be built from the descriptor sets.
    #[error("building the reflection service: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// The transport failed.
    #[error("serving: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// A server ready to run: the service, its health reporter and its shutdown settings.
pub struct Server {
    arbiter: Arbiter,
    health: HealthReporter,
    closing: CancellationToken,
    options: Options,
}

impl Server {
    /// A server configured by `options` (its `listen` address is the caller's to bind).
    pub fn new(options: Options) -> Self {
        let closing = CancellationToken::new();
        Self {
            arbiter: Arbiter::new(options.stream_limits(), closing.clone()),
            health: HealthReporter::new(),
            closing,
            options,
        }
    }

    /// The count of live PlayTicTacToe games, readable while the server runs.
    pub fn live_games(&self) -> LiveGames {
        self.arbiter.live_games().clone()
    }

    /// Serves on `listener` until `shutdown` completes, then stops gracefully.
    ///
    /// On shutdown, health turns NOT_SERVING and no new connection is taken; calls in
    /// flight get the grace period to finish, after which open PlayTicTacToe streams are
    /// ended with UNAVAILABLE.
    pub async fn run(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), ServerError> {
        let Self {
            arbiter,
            health,
            closing,
            options,
        } = self;
        health.set_serving::<ArbiterServiceServer<Arbiter>>().await;
        let reflection_v1 = reflection().build_v1()?;
        let reflection_v1alpha = reflection().build_v1alpha()?;
        // `serve_with_incoming` ignores the builder's nodelay setting: set it here.
        let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));

        let stopping = CancellationToken::new();
        let serve = tonic::transport::Server::builder()
            .add_service(ArbiterServiceServer::new(arbiter))
            .add_service(HealthServer::new(HealthService::from_health_reporter(
                health.clone(),
            )))
            .add_service(reflection_v1)
            .add_service(reflection_v1alpha)
            .serve_with_incoming_shutdown(incoming, stopping.clone().cancelled_owned());
        tokio::pin!(serve);

        tokio::select! {
            result = &mut serve => return Ok(result?),
            () = shutdown => {}
        }
        tracing::info!(
            grace = ?options.shutdown_grace,
            "shutting down: no new connections; calls in flight may finish"
        );
        health
            .set_not_serving::<ArbiterServiceServer<Arbiter>>()
            .await;
        health
            .set_service_status("", ServingStatus::NotServing)
            .await;
        stopping.cancel();

        tokio::select! {
            result = &mut serve => return Ok(result?),
            () = tokio::time::sleep(options.shutdown_grace) => {}
        }
        tracing::info!("grace period over: ending open streams with UNAVAILABLE");
        closing.cancel();
        match tokio::time::timeout(FINAL_WAIT, serve).await {
            Ok(result) => Ok(result?),
            Err(_) => {
                tracing::warn!("connections still open after the grace period; stopping anyway");
                Ok(())
            }
        }
    }
}

/// A reflection builder that knows every message the server can send, error details
/// and health replies included, so that grpcurl can decode them, and lists both
/// versions of the reflection service.
fn reflection() -> tonic_reflection::server::Builder<'static> {
    tonic_reflection::server::Builder::configure()
        .include_reflection_service(false)
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_types::pb::FILE_DESCRIPTOR_SET)
}
