//! The gRPC server: the Arbiter service with health and reflection, and a graceful stop.

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_rustls::rustls;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tonic::transport::server::TcpIncoming;
use tonic_health::pb::health_server::HealthServer;
use tonic_health::server::{HealthReporter, HealthService};
use tonic_health::ServingStatus;
use tower::ServiceBuilder;

pub use crate::access::AccessError;
use crate::access::{Access, AccessLayer};
use crate::connections::{mark_called, ConnectionLimits, Incoming};
use crate::frame_watch::FrameLimits;
use crate::layers::{
    reply_encoding_follows_request, rewrite_transport_error, DeadlineLayer, InFlightLimitLayer,
    InFlightLimits,
};
use crate::proto::arbiter_service_server::ArbiterServiceServer;
use crate::proto::FILE_DESCRIPTOR_SET;
use crate::service::play::{LiveGames, StreamLimits};
use crate::service::Arbiter;
use crate::telemetry::{serve_metrics, CallMetricsLayer};
use crate::unread::UnreadLimits;

/// `$server` (a generated tonic server) accepting requests compressed with gzip, deflate
/// or zstd, able to compress its replies with the same (which replies are compressed is
/// [`reply_encoding_follows_request`]'s choice), and refusing requests larger than
/// `$max_bytes` once inflated.
/// The streams a connection may make the server reset for their errors (a malformed
/// frame, a body longer than its content-length) before it is sent GOAWAY: h2's default,
/// which tonic switches off.
const MAX_LOCAL_ERROR_RESETS: usize = 1024;

macro_rules! configured {
    ($server:expr, $max_bytes:expr) => {{
        use tonic::codec::CompressionEncoding::{Deflate, Gzip, Zstd};
        $server
            .accept_compressed(Gzip)
            .accept_compressed(Deflate)
            .accept_compressed(Zstd)
            .send_compressed(Gzip)
            .send_compressed(Deflate)
            .send_compressed(Zstd)
            .max_decoding_message_size($max_bytes)
    }};
}

/// How long the server still waits for connections to close after ending open streams.
const FINAL_WAIT: Duration = Duration::from_secs(2);

/// Everything that configures a server, each field with its default in
/// [`Settings::default`], the one place where the defaults are defined (the command line
/// in [`crate::config`] takes its defaults from there). Building one has no side effect:
/// nothing reads the environment or the command line.
///
/// Marked `#[non_exhaustive]`, so that a setting added later breaks no embedder: start
/// from `Settings::default()` and change the fields you need.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// Where to serve gRPC, `HOST:PORT`: an IP address or a host name, every address of
    /// which is bound (`localhost` is 127.0.0.1 and ::1). Bound by the caller: see [`bind`].
    pub listen: String,
    /// After the shutdown signal, how long connections are still accepted and calls
    /// served while health already says NOT_SERVING.
    pub shutdown_drain: Duration,
    /// After the drain, how long calls in flight may take before open live-game streams
    /// are ended with UNAVAILABLE.
    pub shutdown_grace: Duration,
    /// The limits on each live-game stream, and on their number.
    pub stream_limits: StreamLimits,
    /// The largest request message, in bytes, on every service, compressed messages
    /// counted once inflated.
    pub max_request_bytes: usize,
    /// Calls in flight across the server beyond which new calls are refused (at least 1).
    pub max_in_flight: u32,
    /// One connection's share of `max_in_flight` (at least 1).
    pub max_in_flight_per_connection: u32,
    /// One caller's share of `max_in_flight`, over all its connections (at least 1): a
    /// caller is an IP address.
    pub max_in_flight_per_caller: u32,
    /// Calls a second one caller may make (a quota); zero: none.
    pub max_calls_per_second_per_caller: u32,
    /// Bearer tokens, `NAME TOKEN` a line: when set, every call but health checks must
    /// carry one (`authorization: Bearer TOKEN`), and its caller is the token's name.
    /// Read again when the file changes.
    pub tokens: Option<PathBuf>,
    /// Under mutual TLS, the names (DNS names of a certificate's subject alternative
    /// names) a client certificate must be valid for, one of them; any when empty. The
    /// caller is the name it is valid for.
    pub tls_client_names: Vec<String>,
    /// Connections open at once beyond which a new one is closed as it is accepted.
    pub max_connections: u32,
    /// One caller's (IP address's) share of `max_connections`.
    pub max_connections_per_caller: u32,
    /// How long a new connection may take to make its first call (its TLS handshake,
    /// HTTP/2 preface and first request headers) before it is closed; zero: no limit.
    pub handshake_timeout: Duration,
    /// Bytes of replies made and not yet taken by their clients, across the server,
    /// past which connections holding some get no new work and replies that would go
    /// past it are answered RESOURCE_EXHAUSTED instead.
    pub max_unread_bytes: usize,
    /// One connection's share of `max_unread_bytes`.
    pub max_unread_bytes_per_connection: usize,
    /// One caller's share of `max_unread_bytes`, over all its connections.
    pub max_unread_bytes_per_caller: usize,
    /// The least time between two PINGs of a client with nothing sent to it between
    /// them; the third such PING ends its connection with GOAWAY ENHANCE_YOUR_CALM
    /// "too_many_pings" (grpc-go's keepalive enforcement). Zero: any.
    pub min_ping_interval: Duration,
    /// The most concurrent HTTP/2 streams one connection may open: each live game is
    /// one for as long as it lasts. A game costs the server the same on one connection
    /// as on many (RELIABILITY.md, "Many live games on one connection"), so the default,
    /// 1024, lets one client hold a thousand games on one channel while keeping one
    /// connection to a tenth of `--max-live-games`.
    pub max_concurrent_streams: u32,
    /// A unary call's server-side deadline; zero: none (but the client's).
    pub request_timeout: Duration,
    /// How often an HTTP/2 PING checks an idle peer; zero sends none.
    pub http2_keepalive_interval: Duration,
    /// How long a PING may go unanswered.
    pub http2_keepalive_timeout: Duration,
    /// TCP keepalive on accepted connections; zero: off.
    pub tcp_keepalive: Duration,
    /// Close each connection gracefully after this long; never when `None` (or zero).
    pub max_connection_age: Option<Duration>,
    /// How long calls in flight on a connection closed for its age may take.
    pub max_connection_age_grace: Duration,
    /// Where to serve Prometheus metrics over HTTP, `HOST:PORT`; nowhere when `None`.
    pub metrics_listen: Option<String>,
    /// Where to serve the health service alone, in plaintext, `HOST:PORT`, for probes
    /// that cannot speak TLS (Kubernetes' gRPC probes); nowhere when `None`.
    pub health_listen: Option<String>,
    /// Serve the gRPC reflection service (v1 and v1alpha).
    pub reflection: bool,
    /// Serve TLS with these files; plaintext when `None`.
    pub tls: Option<TlsFiles>,
}

/// The PEM files of a TLS set-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain.
    pub cert: PathBuf,
    /// The private key.
    pub key: PathBuf,
    /// Mutual TLS: only clients with a certificate this CA signed get in.
    pub client_ca: Option<PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:50051".to_owned(),
            shutdown_drain: Duration::from_secs(5),
            shutdown_grace: Duration::from_secs(10),
            stream_limits: StreamLimits::DEFAULT,
            max_request_bytes: 1024 * 1024,
            max_in_flight: 1024,
            max_in_flight_per_connection: 256,
            max_in_flight_per_caller: 512,
            max_calls_per_second_per_caller: 0,
            tokens: None,
            tls_client_names: Vec::new(),
            max_connections: 10_000,
            max_connections_per_caller: 2_500,
            handshake_timeout: Duration::from_secs(10),
            max_unread_bytes: 96 * 1024 * 1024,
            max_unread_bytes_per_connection: 16 * 1024 * 1024,
            max_unread_bytes_per_caller: 32 * 1024 * 1024,
            min_ping_interval: Duration::from_secs(300),
            max_concurrent_streams: 1024,
            request_timeout: Duration::from_secs(10),
            http2_keepalive_interval: Duration::from_secs(30),
            http2_keepalive_timeout: Duration::from_secs(10),
            tcp_keepalive: Duration::from_secs(60),
            max_connection_age: None,
            max_connection_age_grace: Duration::from_secs(10),
            metrics_listen: None,
            health_listen: None,
            reflection: true,
            tls: None,
        }
    }
}

/// Binds every address `address` (`HOST:PORT`) resolves to, IPv4 first: an IP address
/// gives one listener, `localhost` usually two (127.0.0.1 and ::1). With port 0 the
/// first address gets a free port and the others the same one. An address the host
/// does not have (::1 where IPv6 is off) is skipped with a warning when another was
/// bound; any other failure is an error, whose message names the address.
pub async fn bind(address: &str) -> std::io::Result<Vec<TcpListener>> {
    let addresses = tokio::net::lookup_host(address)
        .await
        .map_err(|error| std::io::Error::new(error.kind(), format!("{address}: {error}")))?
        .collect();
    bind_all(address, addresses).await
}

/// Binds each of `addresses`, IPv4 first, as [`bind`] does for those `name` resolved to.
async fn bind_all(name: &str, mut addresses: Vec<SocketAddr>) -> std::io::Result<Vec<TcpListener>> {
    addresses.sort_by_key(SocketAddr::is_ipv6);
    let mut seen = Vec::new();
    addresses.retain(|address| {
        let new = !seen.contains(address);
        seen.push(*address);
        new
    });
    let mut listeners: Vec<TcpListener> = Vec::new();
    let mut skipped = None;
    for mut wanted in addresses {
        if let Some(first) = listeners.first() {
            if wanted.port() == 0 {
                wanted.set_port(first.local_addr()?.port());
            }
        }
        match TcpListener::bind(wanted).await {
            Ok(listener) => listeners.push(listener),
            Err(error) if error.kind() == std::io::ErrorKind::AddrNotAvailable => {
                tracing::warn!(address = %wanted, %error, "cannot listen; skipped");
                skipped = Some(error);
            }
            Err(error) => {
                return Err(std::io::Error::new(
                    error.kind(),
                    format!("{wanted}: {error}"),
                ))
            }
        }
    }
    if listeners.is_empty() {
        return Err(skipped.unwrap_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{name} resolves to no address"),
            )
        }));
    }
    Ok(listeners)
}

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
    #[error("listening for metrics: {source}")]
    MetricsListen {
        /// The address asked for.
        address: String,
        /// Why it could not be bound, naming the address.
        source: std::io::Error,
    },
    /// The token file or a client name is unusable.
    #[error("{0}")]
    Access(#[from] AccessError),
    /// The health listener could not be bound.
    #[error("listening for health checks: {source}")]
    HealthListen {
        /// The address asked for.
        address: String,
        /// Why it could not be bound, naming the address.
        source: std::io::Error,
    },
    /// The TLS files do not make a TLS set-up (no certificate or key in them, a key that
    /// does not fit, a CA that cannot verify clients).
    #[error("setting up TLS: {0}")]
    Tls(String),
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
    end_streams: CancellationToken,
    metrics_listeners: Vec<TcpListener>,
    health_listeners: Vec<TcpListener>,
    settings: Settings,
}

impl Server {
    /// A server configured by `settings` (its `listen` address is the caller's to bind:
    /// see [`bind`]).
    pub fn new(settings: Settings) -> Self {
        let end_streams = CancellationToken::new();
        Self {
            arbiter: Arbiter::new(settings.stream_limits, end_streams.clone()),
            health: HealthReporter::new(),
            end_streams,
            metrics_listeners: Vec::new(),
            health_listeners: Vec::new(),
            settings,
        }
    }

    /// Serve metrics on `listener` rather than on a listener bound to the
    /// `metrics_listen` address: for callers that bind it themselves.
    pub fn with_metrics_listener(self, listener: TcpListener) -> Self {
        self.with_metrics_listeners(vec![listener])
    }

    /// Serve metrics on `listeners` (as [`bind`] returns them) rather than on listeners
    /// bound to the `metrics_listen` address: for callers that bind them themselves,
    /// such as the binary, which binds every address before it says it is listening.
    pub fn with_metrics_listeners(mut self, listeners: Vec<TcpListener>) -> Self {
        self.metrics_listeners.extend(listeners);
        self
    }

    /// Serve the plaintext health listener on `listeners` rather than on listeners bound
    /// to the `health_listen` address: for callers that bind them themselves.
    pub fn with_health_listeners(mut self, listeners: Vec<TcpListener>) -> Self {
        self.health_listeners.extend(listeners);
        self
    }

    /// The count of live games of every kind, readable while the server runs.
    pub fn live_games(&self) -> LiveGames {
        self.arbiter.live_games().clone()
    }

    /// Serves on `listener` until `shutdown` completes, then stops gracefully: see
    /// [`Server::run_on`].
    pub async fn run(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), ServerError> {
        self.run_on(vec![listener], shutdown).await
    }

    /// Serves on every one of `listeners` (as [`bind`] returns them) until `shutdown`
    /// completes, then stops gracefully.
    ///
    /// On shutdown, health turns NOT_SERVING at once, but connections are still accepted
    /// and calls served for the drain delay (`shutdown_drain`), while balancers take
    /// the server out of rotation. Then no new connection is taken (the listeners are
    /// closed, so connecting is refused, and open connections get a GOAWAY); calls in
    /// flight get the grace period (`shutdown_grace`) to finish, after which open
    /// live-game streams are ended with UNAVAILABLE.
    pub async fn run_on(
        self,
        listeners: Vec<TcpListener>,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), ServerError> {
        let Self {
            arbiter,
            health,
            end_streams,
            metrics_listeners,
            health_listeners,
            settings,
        } = self;
        health.set_serving::<ArbiterServiceServer<Arbiter>>().await;
        let metrics_listeners = bound_or_bind(metrics_listeners, &settings.metrics_listen)
            .await
            .map_err(|(address, source)| ServerError::MetricsListen { address, source })?;
        // Served until this is dropped, when `run_on` returns, whichever way.
        let mut _metrics = None;
        if !metrics_listeners.is_empty() {
            // The addresses actually bound: with port 0 the OS chose them.
            let bound: Vec<_> = metrics_listeners
                .iter()
                .map(TcpListener::local_addr)
                .collect();
            _metrics = Some(serve_metrics(metrics_listeners)?);
            for bound in bound {
                match bound {
                    Ok(address) => tracing::info!("metrics on http://{address}/metrics"),
                    Err(error) => tracing::warn!(%error, "metrics served, address unknown"),
                }
            }
        }
        let health_listeners = bound_or_bind(health_listeners, &settings.health_listen)
            .await
            .map_err(|(address, source)| ServerError::HealthListen { address, source })?;
        // Served until this is dropped, when `run_on` returns, whichever way.
        let _health = (!health_listeners.is_empty())
            .then(|| serve_health(health_listeners, &health, &settings));
        let (reflection_v1, reflection_v1alpha) = if settings.reflection {
            (
                Some(configured!(
                    reflection().build_v1()?,
                    settings.max_request_bytes
                )),
                Some(configured!(
                    reflection().build_v1alpha()?,
                    settings.max_request_bytes
                )),
            )
        } else {
            (None, None)
        };
        // `serve_with_incoming` ignores the builder's TCP settings: set them here.
        let incoming = Incoming::new(
            listeners
                .into_iter()
                .map(|listener| {
                    TcpIncoming::from(listener)
                        .with_nodelay(Some(true))
                        .with_keepalive(
                            (!settings.tcp_keepalive.is_zero()).then_some(settings.tcp_keepalive),
                        )
                })
                .collect(),
            connection_limits(
                &settings,
                settings.max_connections as usize,
                settings.max_connections_per_caller as usize,
            ),
            tls_acceptor(&settings)?,
        );

        let mut builder = tonic::transport::Server::builder()
            .max_concurrent_streams(settings.max_concurrent_streams)
            // h2's own guard, which tonic leaves off: a connection whose streams the
            // server has had to reset for their errors 1,024 times is sent GOAWAY.
            .http2_max_local_error_reset_streams(Some(MAX_LOCAL_ERROR_RESETS))
            .http2_keepalive_interval(
                (!settings.http2_keepalive_interval.is_zero())
                    .then_some(settings.http2_keepalive_interval),
            )
            .http2_keepalive_timeout(Some(settings.http2_keepalive_timeout));
        if let Some(age) = settings.max_connection_age.filter(|age| !age.is_zero()) {
            builder = builder
                .max_connection_age(age)
                .max_connection_age_grace(settings.max_connection_age_grace);
        }
        let access = Access::new(settings.tokens.as_deref(), &settings.tls_client_names)?;
        let layers = ServiceBuilder::new()
            .layer(CallMetricsLayer)
            .map_response(rewrite_transport_error)
            .option_layer(access.map(AccessLayer))
            // Ours rather than tonic's `timeout`, which arms a timer for every call; above
            // the in-flight limit, where a unary call waits for its first message.
            .layer(DeadlineLayer::new(settings.request_timeout))
            .layer(InFlightLimitLayer::new(InFlightLimits {
                server: settings.max_in_flight as usize,
                connection: settings.max_in_flight_per_connection as usize,
                caller: settings.max_in_flight_per_caller as usize,
                calls_per_second: settings.max_calls_per_second_per_caller,
            }))
            .map_request(reply_encoding_follows_request);

        let stop_accepting = CancellationToken::new();
        let max_bytes = settings.max_request_bytes;
        let serve = builder
            .layer(layers)
            .add_service(configured!(ArbiterServiceServer::new(arbiter), max_bytes))
            .add_service(configured!(
                HealthServer::new(HealthService::from_health_reporter(health.clone())),
                max_bytes
            ))
            .add_optional_service(reflection_v1)
            .add_optional_service(reflection_v1alpha)
            .serve_with_incoming_shutdown(incoming, stop_accepting.clone().cancelled_owned());
        tokio::pin!(serve);

        tokio::select! {
            result = &mut serve => return Ok(result?),
            () = shutdown => {}
        }
        // Drain: out of rotation first, still serving, so that calls a balancer sends
        // before it learns of the stop are not refused.
        tracing::info!(
            drain = %humantime::format_duration(settings.shutdown_drain),
            grace = %humantime::format_duration(settings.shutdown_grace),
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
            () = tokio::time::sleep(settings.shutdown_drain) => {}
        }
        tracing::info!(
            grace = %humantime::format_duration(settings.shutdown_grace),
            "drain over: no new connections; calls in flight may finish"
        );
        stop_accepting.cancel();

        tokio::select! {
            result = &mut serve => return Ok(result?),
            () = tokio::time::sleep(settings.shutdown_grace) => {}
        }
        tracing::info!("grace period over: ending open streams with UNAVAILABLE");
        end_streams.cancel();
        match tokio::time::timeout(FINAL_WAIT, serve).await {
            Ok(result) => Ok(result?),
            Err(_) => {
                tracing::warn!("connections still open after the grace period; stopping anyway");
                Ok(())
            }
        }
    }
}

/// `listeners` if the caller bound them, else those [`bind_optional`] binds for `address`
/// (or why it could not be bound, with the address).
async fn bound_or_bind(
    listeners: Vec<TcpListener>,
    address: &Option<String>,
) -> Result<Vec<TcpListener>, (String, std::io::Error)> {
    if !listeners.is_empty() {
        return Ok(listeners);
    }
    bind_optional(address)
        .await
        .map_err(|source| (address.clone().unwrap_or_default(), source))
}

/// The listeners of an optional address (`--metrics-listen`, `--health-listen`): none
/// when it is not set, else every address it resolves to, as [`bind`] binds them.
pub async fn bind_optional(address: &Option<String>) -> std::io::Result<Vec<TcpListener>> {
    match address {
        Some(address) => bind(address).await,
        None => Ok(Vec::new()),
    }
}

/// Serves the health service alone, in plaintext, on `listeners` (`--health-listen`),
/// from the server's own reporter, so that it says what the main listener's says, drain
/// included; until the guard it returns is dropped. At most 64 connections at once, and
/// no busy loop at the descriptor limit, as on the main listener.
fn serve_health(
    listeners: Vec<TcpListener>,
    reporter: &HealthReporter,
    settings: &Settings,
) -> tokio_util::sync::DropGuard {
    for listener in &listeners {
        match listener.local_addr() {
            Ok(address) => tracing::info!("health checks on {address} (plaintext)"),
            Err(error) => tracing::warn!(%error, "health checks served, address unknown"),
        }
    }
    let incoming = Incoming::new(
        listeners.into_iter().map(TcpIncoming::from).collect(),
        connection_limits(settings, HEALTH_CONNECTIONS, HEALTH_CONNECTIONS),
        None,
    );
    let stop = CancellationToken::new();
    let serve = tonic::transport::Server::builder()
        .layer(ServiceBuilder::new().map_request(mark_called::<tonic::body::Body>))
        .add_service(HealthServer::new(HealthService::from_health_reporter(
            reporter.clone(),
        )))
        .serve_with_incoming_shutdown(incoming, stop.clone().cancelled_owned());
    tokio::spawn(async move {
        if let Err(error) = serve.await {
            tracing::warn!(%error, "the health listener failed");
        }
    });
    stop.drop_guard()
}

/// The limits on a listener's connections: `max_connections` open, `per_caller` from one
/// address, and the settings' deadline, frame limits and budgets of unread replies.
fn connection_limits(
    settings: &Settings,
    max_connections: usize,
    per_caller: usize,
) -> ConnectionLimits {
    ConnectionLimits {
        max_connections,
        per_caller,
        handshake_timeout: settings.handshake_timeout,
        frames: FrameLimits {
            min_ping_interval: settings.min_ping_interval,
        },
        unread: UnreadLimits {
            server: settings.max_unread_bytes,
            connection: settings.max_unread_bytes_per_connection,
            caller: settings.max_unread_bytes_per_caller,
        },
    }
}

/// Connections the plaintext health listener holds at once: probes, one at a time each.
const HEALTH_CONNECTIONS: usize = 64;

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

/// The TLS set-up the settings ask for, if any: a server identity offering HTTP/2, and
/// with a client CA, mutual TLS that lets in only clients that CA signed. Served by
/// [`Incoming`], under each connection's handshake deadline.
fn tls_acceptor(settings: &Settings) -> Result<Option<TlsAcceptor>, ServerError> {
    let Some(TlsFiles {
        cert,
        key,
        client_ca,
    }) = &settings.tls
    else {
        return Ok(None);
    };
    let tls_error =
        |what: &str, error: &dyn std::fmt::Display| ServerError::Tls(format!("{what}: {error}"));
    let certificates = |path: &Path| -> Result<Vec<CertificateDer<'static>>, ServerError> {
        let pem = read(path)?;
        let certificates = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| {
                tls_error(&format!("the certificates of {}", path.display()), &error)
            })?;
        if certificates.is_empty() {
            return Err(ServerError::Tls(format!(
                "no certificate in {}",
                path.display()
            )));
        }
        Ok(certificates)
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|error| tls_error("the protocol versions", &error))?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            roots.add_parsable_certificates(certificates(ca)?);
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .map_err(|error| {
                        tls_error(&format!("the client CA {}", ca.display()), &error)
                    })?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let private_key = PrivateKeyDer::from_pem_slice(&read(key)?)
        .map_err(|error| tls_error(&format!("the key in {}", key.display()), &error))?;
    let mut config = builder
        .with_single_cert(certificates(cert)?, private_key)
        .map_err(|error| tls_error("the certificate and key", &error))?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Some(TlsAcceptor::from(Arc::new(config))))
}

fn read(path: &Path) -> Result<Vec<u8>, ServerError> {
    std::fs::read(path).map_err(|source| ServerError::TlsFile {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_address_of_a_name_is_bound_on_one_port() {
        let v6: SocketAddr = "[::1]:0".parse().unwrap();
        let v4: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let listeners = bind_all("both", vec![v6, v4, v4]).await.unwrap();
        let bound: Vec<SocketAddr> = listeners.iter().map(|l| l.local_addr().unwrap()).collect();
        // IPv4 first; where the host has no ::1, only 127.0.0.1.
        assert_eq!(bound[0].ip(), v4.ip());
        assert!(bound.len() <= 2, "{bound:?}");
        if let Some(second) = bound.get(1) {
            assert_eq!(second.ip(), v6.ip());
            assert_eq!(second.port(), bound[0].port());
        }
    }

    #[tokio::test]
    async fn localhost_is_bound() {
        let listeners = bind("localhost:0").await.unwrap();
        assert!(listeners
            .iter()
            .all(|l| l.local_addr().unwrap().ip().is_loopback()));
    }
}
