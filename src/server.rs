//! The gRPC server: the Arbiter service with health and reflection, and a graceful stop.

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Certificate, Identity, ServerTlsConfig};
use tonic_health::pb::health_server::HealthServer;
use tonic_health::server::{HealthReporter, HealthService};
use tonic_health::ServingStatus;
use tower::ServiceBuilder;

use crate::config::Options;
use crate::layers::rewrite_transport_error;
use crate::proto::arbiter_service_server::ArbiterServiceServer;
use crate::proto::FILE_DESCRIPTOR_SET;
use crate::service::play::LiveGames;
use crate::service::Arbiter;
use crate::telemetry::{serve_metrics, CallMetricsLayer};

/// How long the server still waits for connections to close after ending open streams.
const FINAL_WAIT: Duration = Duration::from_secs(2);

/// Why the server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The reflection service could not be built from the descriptor sets.
    #[error("building the reflection service: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// The transport failed, or refused the TLS set-up.
    #[error("serving: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The metrics recorder could not be set up.
    #[error("serving metrics: {0}")]
    Metrics(#[from] metrics_exporter_prometheus::BuildError),
    /// The metrics listener could not be bound.
    #[error("listening for metrics on {address}: {source}")]
    MetricsListen {
        /// The address asked for.
        address: SocketAddr,
        /// Why it could not be bound.
        source: std::io::Error,
    },
    /// A TLS file could not be read.
    #[error("reading {path}: {source}")]
    TlsFile {
        /// The file.
        path: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
}

/// A server ready to run: the service, its health reporter and its shutdown settings.
pub struct Server {
    arbiter: Arbiter,
    health: HealthReporter,
    closing: CancellationToken,
    metrics_listener: Option<TcpListener>,
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
            metrics_listener: None,
            options,
        }
    }

    /// Serve metrics on `listener` rather than on a listener bound to the
    /// `--metrics-listen` address: for callers that bind it themselves.
    pub fn with_metrics_listener(mut self, listener: TcpListener) -> Self {
        self.metrics_listener = Some(listener);
        self
    }

    /// The count of live games of every kind, readable while the server runs.
    pub fn live_games(&self) -> LiveGames {
        self.arbiter.live_games().clone()
    }

    /// Serves on `listener` until `shutdown` completes, then stops gracefully.
    ///
    /// On shutdown, health turns NOT_SERVING at once, but connections are still accepted
    /// and calls served for the drain delay (`--shutdown-drain`), while balancers take
    /// the server out of rotation. Then no new connection is taken (the listener is
    /// closed, so connecting is refused, and open connections get a GOAWAY); calls in
    /// flight get the grace period (`--shutdown-grace`) to finish, after which open
    /// live-game streams are ended with UNAVAILABLE.
    pub async fn run(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), ServerError> {
        let Self {
            arbiter,
            health,
            closing,
            metrics_listener,
            options,
        } = self;
        health.set_serving::<ArbiterServiceServer<Arbiter>>().await;
        let metrics_listener = match (metrics_listener, options.metrics_listen) {
            (Some(listener), _) => Some(listener),
            (None, Some(address)) => Some(
                TcpListener::bind(address)
                    .await
                    .map_err(|source| ServerError::MetricsListen { address, source })?,
            ),
            (None, None) => None,
        };
        if let Some(listener) = metrics_listener {
            // The address actually bound: with port 0 the OS chose it.
            let bound = listener.local_addr();
            serve_metrics(listener)?;
            match bound {
                Ok(address) => tracing::info!("metrics on http://{address}/metrics"),
                Err(error) => tracing::warn!(%error, "metrics served, address unknown"),
            }
        }
        let reflection_v1 = reflection().build_v1()?;
        let reflection_v1alpha = reflection().build_v1alpha()?;
        // `serve_with_incoming` ignores the builder's TCP settings: set them here.
        let incoming = TcpIncoming::from(listener)
            .with_nodelay(Some(true))
            .with_keepalive(Some(options.tcp_keepalive));

        let mut builder = tonic::transport::Server::builder()
            .max_concurrent_streams(options.max_concurrent_streams)
            .http2_keepalive_interval(Some(options.http2_keepalive_interval))
            .http2_keepalive_timeout(Some(options.http2_keepalive_timeout))
            .timeout(options.request_timeout);
        if let Some(age) = options.max_connection_age {
            builder = builder
                .max_connection_age(age)
                .max_connection_age_grace(options.max_connection_age_grace);
        }
        if let Some(tls) = tls_config(&options)? {
            builder = builder.tls_config(tls)?;
        }
        let limit = options.max_in_flight as usize;
        let layers = ServiceBuilder::new()
            .layer(CallMetricsLayer)
            .map_response(rewrite_transport_error)
            .map_err(move |error: tower::BoxError| -> tower::BoxError {
                if error.is::<tower::load_shed::error::Overloaded>() {
                    Box::new(tonic::Status::resource_exhausted(format!(
                        "the server is at its limit of {limit} calls in flight; retry with backoff"
                    )))
                } else {
                    error
                }
            })
            .load_shed()
            .layer(tower::limit::GlobalConcurrencyLimitLayer::new(limit));

        let stopping = CancellationToken::new();
        let serve = builder
            .layer(layers)
            .add_service(
                ArbiterServiceServer::new(arbiter)
                    .max_decoding_message_size(options.max_request_bytes),
            )
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
        // Drain: out of rotation first, still serving, so that calls a balancer sends
        // before it learns of the stop are not refused.
        tracing::info!(
            drain = ?options.shutdown_drain,
            grace = ?options.shutdown_grace,
            "shutting down: health NOT_SERVING; still accepting connections while draining"
        );
        health
            .set_not_serving::<ArbiterServiceServer<Arbiter>>()
            .await;
        health
            .set_service_status("", ServingStatus::NotServing)
            .await;
        tokio::select! {
            result = &mut serve => return Ok(result?),
            () = tokio::time::sleep(options.shutdown_drain) => {}
        }
        tracing::info!(
            grace = ?options.shutdown_grace,
            "drain over: no new connections; calls in flight may finish"
        );
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

/// The TLS set-up the options ask for, if any: a server identity, and with
/// `--tls-client-ca`, mutual TLS that lets in only clients that CA signed.
fn tls_config(options: &Options) -> Result<Option<ServerTlsConfig>, ServerError> {
    let (Some(cert), Some(key)) = (&options.tls_cert, &options.tls_key) else {
        return Ok(None);
    };
    let mut tls = ServerTlsConfig::new().identity(Identity::from_pem(read(cert)?, read(key)?));
    if let Some(ca) = &options.tls_client_ca {
        tls = tls.client_ca_root(Certificate::from_pem(read(ca)?));
    }
    Ok(Some(tls))
}

fn read(path: &Path) -> Result<Vec<u8>, ServerError> {
    std::fs::read(path).map_err(|source| ServerError::TlsFile {
        path: path.to_owned(),
        source,
    })
}
