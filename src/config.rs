//! The server's command-line options, each with a documented default.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::service::play::StreamLimits;

/// Arbiter: a gRPC service that rules on moves in Othello, Connect Four and Tic-Tac-Toe.
#[derive(Debug, Clone, Parser)]
#[command(name = "arbiter", version, about, long_about = None)]
pub struct Options {
    /// The address to serve gRPC on.
    #[arg(long, env = "ARBITER_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,

    /// After SIGTERM or Ctrl-C, how long the server keeps accepting connections and
    /// serving calls while its health already says NOT_SERVING, so that balancers and
    /// readiness probes take it out of rotation before it stops accepting. 0s stops
    /// accepting at once.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub shutdown_drain: Duration,

    /// After the drain (--shutdown-drain), when no new connection is taken any more: how
    /// long calls in flight may take to finish before open live-game
    /// streams are ended with UNAVAILABLE.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub shutdown_grace: Duration,

    /// The most messages one live-game stream may send that are not applied moves
    /// (rejected moves, and the setup): a stream may send at most the board's cell count
    /// plus N messages, so a whole game on the largest board always fits, and is ended
    /// with RESOURCE_EXHAUSTED past it.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max_moves_per_stream: usize,

    /// How long a live-game stream may go without a message before it is ended with
    /// DEADLINE_EXCEEDED (whether or not the client reads its replies).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = humantime::parse_duration)]
    pub stream_idle_timeout: Duration,

    /// How long a live game may last in all, however active, before its stream is
    /// ended with DEADLINE_EXCEEDED (whether or not the client reads its replies).
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = humantime::parse_duration)]
    pub max_game_duration: Duration,

    /// The largest request message accepted, in bytes (a 100x100 board is about 10 KB).
    /// A larger one is refused with RESOURCE_EXHAUSTED from its length prefix, before it
    /// is decoded.
    #[arg(long, default_value_t = 1024 * 1024)]
    pub max_request_bytes: usize,

    /// Calls in flight across the whole server beyond which new calls are refused at once
    /// with RESOURCE_EXHAUSTED instead of queueing. A call counts until its handler
    /// returns: an open stream (a live game) holds no slot (see --max-live-games), while
    /// the arbiter_calls_in_flight metric counts it until it ends.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_in_flight: u32,

    /// Live games of every kind across the whole server beyond which new Play* streams
    /// are refused with RESOURCE_EXHAUSTED.
    #[arg(long, default_value_t = 10_000)]
    pub max_live_games: usize,

    /// The most concurrent HTTP/2 streams (calls) one connection may open.
    #[arg(long, default_value_t = 256)]
    pub max_concurrent_streams: u32,

    /// A unary call's server-side deadline; a shorter `grpc-timeout` from the client
    /// wins.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub request_timeout: Duration,

    /// How often an HTTP/2 PING checks that an idle peer is still there.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub http2_keepalive_interval: Duration,

    /// How long a PING may go unanswered before the connection is dropped.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub http2_keepalive_timeout: Duration,

    /// TCP keepalive on accepted connections.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub tcp_keepalive: Duration,

    /// Close each connection gracefully after it has been open this long (HTTP/2
    /// GOAWAY), so that clients reconnect and spread over new replicas. Off when absent.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub max_connection_age: Option<Duration>,

    /// How long calls in flight on a connection closed for its age may take to finish.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub max_connection_age_grace: Duration,

    /// Serve Prometheus metrics over HTTP on this address (off when absent).
    #[arg(long)]
    pub metrics_listen: Option<SocketAddr>,

    /// The log format: `text` for people, `json` for log pipelines (one object a line).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// PEM certificate chain: serve over TLS (needs --tls-key).
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key for --tls-cert.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// PEM CA certificate(s): require mutual TLS, letting in only clients whose
    /// certificate this CA signed (needs --tls-cert).
    #[arg(long, requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

impl Options {
    /// The limits on each live game stream.
    pub fn stream_limits(&self) -> StreamLimits {
        StreamLimits {
            max_moves: self.max_moves_per_stream,
            idle_timeout: self.stream_idle_timeout,
            max_game_duration: self.max_game_duration,
            max_live_games: self.max_live_games,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Self::parse_from(["arbiter"])
    }
}
