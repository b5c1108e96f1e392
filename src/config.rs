//! The command line: flags parsed into the server's [`Settings`], whose defaults (from
//! [`Settings::default`]) are the flags' defaults.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use clap::Parser;

use crate::server::{Settings, TlsFiles};

/// What `--help` adds after the options.
const AFTER_HELP: &str = "\
Durations are written like 500ms, 10s, 5m or 1h (and combined: 1m30s). 0s turns off
each limit that can be off (--stream-idle-timeout, --max-game-duration, --request-timeout,
--handshake-timeout, --http2-keepalive-interval, --tcp-keepalive, --max-connection-age) and
means no wait for
the delays (--shutdown-drain, --shutdown-grace, --max-connection-age-grace);
--http2-keepalive-timeout refuses it.
ADDR is HOST:PORT, with HOST an IP address or a host name; every address a host name
resolves to is bound (localhost: 127.0.0.1 and ::1). Port 0 picks a free port; the log
says the address bound (\"arbiter listening on ADDR\").
RUST_LOG sets the log level (default info); RUST_LOG=arbiter=debug logs one line per call.";

/// Arbiter: a gRPC service that rules on moves in grid games (see `arbiter.v1.ArbiterService`).
#[derive(Debug, Clone, Parser)]
#[command(name = "arbiter", version, about, long_about = None, after_help = AFTER_HELP)]
pub struct Options {
    /// The address to serve gRPC on.
    #[arg(long, env = "ARBITER_LISTEN", value_name = "ADDR",
          default_value_t = Settings::default().listen, value_parser = parse_address)]
    pub listen: String,

    /// After SIGTERM or Ctrl-C, how long the server keeps accepting connections and
    /// serving calls while its health already says NOT_SERVING, so that balancers and
    /// readiness probes take it out of rotation before it stops accepting. 0s stops
    /// accepting at once (for a server run by hand). A second signal stops at once.
    #[arg(long, value_name = "DURATION", default_value_t = Settings::default().shutdown_drain.into())]
    pub shutdown_drain: HumanDuration,

    /// After the drain (--shutdown-drain), when no new connection is taken any more: how
    /// long calls in flight may take to finish before open live-game
    /// streams are ended with UNAVAILABLE. 0s ends them at once.
    #[arg(long, value_name = "DURATION", default_value_t = Settings::default().shutdown_grace.into())]
    pub shutdown_grace: HumanDuration,

    /// The most messages one live game may be sent that are not applied moves (rejected
    /// moves, and the setup): a game takes at most the board's cell count plus N
    /// messages, so a whole game on the largest board always fits. Past it a Play*
    /// stream is ended with RESOURCE_EXHAUSTED, and a PlayMany game is ended alone.
    /// (Also spelt --max-moves-per-stream, its former name.)
    #[arg(long, value_name = "N", alias = "max-moves-per-stream",
          default_value_t = Settings::default().stream_limits.max_unapplied)]
    pub max_unapplied_messages: usize,

    /// The most games one PlayMany stream may hold at once; an action that would start
    /// one more is answered with `invalid` on `game`, and the stream goes on. Each game
    /// also counts toward --max-live-games.
    #[arg(long, value_name = "N", default_value_t = Settings::default().stream_limits.max_games_per_stream)]
    pub max_games_per_stream: usize,

    /// How long a live-game stream may go without a message before it is ended with
    /// DEADLINE_EXCEEDED (whether or not the client reads its replies). 0s: no limit.
    #[arg(long, value_name = "DURATION",
          default_value_t = Settings::default().stream_limits.idle_timeout.into())]
    pub stream_idle_timeout: HumanDuration,

    /// How long a live game may last in all, however active, before its stream is
    /// ended with DEADLINE_EXCEEDED (whether or not the client reads its replies).
    /// 0s: no limit.
    #[arg(long, value_name = "DURATION",
          default_value_t = Settings::default().stream_limits.max_game_duration.into())]
    pub max_game_duration: HumanDuration,

    /// The largest request message accepted, in bytes (a 100x100 board is about 10 KB),
    /// on every service: it bounds a whole CheckBatch call or PlayMany message too, so
    /// 1 MiB carries about 100 checks on 100x100 boards, or 10,000 on 8x8 ones. A larger one is refused with RESOURCE_EXHAUSTED from its length
    /// prefix, before it is decoded; a compressed one (gzip, deflate or zstd) as soon as
    /// it inflates past N, so that it is never inflated whole.
    #[arg(long, value_name = "N", default_value_t = Settings::default().max_request_bytes)]
    pub max_request_bytes: usize,

    /// Calls in flight across the server past which new calls are refused at once with
    /// RESOURCE_EXHAUSTED, not queued; a stream counts only while it opens (what counts:
    /// RELIABILITY.md, "Calls in flight").
    #[arg(long, value_name = "N", default_value_t = Settings::default().max_in_flight,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_in_flight: u32,

    /// One connection's share of --max-in-flight: its calls past it are refused with
    /// RESOURCE_EXHAUSTED, so that one connection cannot hold every place.
    #[arg(long, value_name = "N", default_value_t = Settings::default().max_in_flight_per_connection,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_in_flight_per_connection: u32,

    /// One caller's share of --max-in-flight, over all its connections (a caller is an
    /// IP address; behind a proxy every call is the proxy's: set it to --max-in-flight).
    #[arg(long, value_name = "N", default_value_t = Settings::default().max_in_flight_per_caller,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_in_flight_per_caller: u32,

    /// Calls a second one caller may make; past it its calls are refused with
    /// RESOURCE_EXHAUSTED until the next second. 0: no quota.
    #[arg(long, value_name = "N", default_value_t = Settings::default().max_calls_per_second_per_caller)]
    pub max_calls_per_second_per_caller: u32,

    /// Bearer tokens, `NAME TOKEN` a line (`#` comments): every call but health checks
    /// must carry one (`authorization: Bearer TOKEN`) or gets UNAUTHENTICATED, and is
    /// counted under the token's NAME for the shares and the quota. The file is read
    /// again within a second of a change (a Kubernetes Secret's update, say).
    #[arg(long, value_name = "FILE")]
    pub tokens: Option<PathBuf>,

    /// Under mutual TLS, admit only client certificates valid for this DNS name (a
    /// subject alternative name; repeat the flag for several); others get
    /// PERMISSION_DENIED. The caller is the name. Needs --tls-client-ca.
    #[arg(long, value_name = "NAME", requires = "tls_client_ca")]
    pub tls_client_name: Vec<String>,

    /// Connections open at once past which a new one is closed as it is accepted (its
    /// client sees UNAVAILABLE). Keep it below the descriptor limit (`ulimit -n`).
    #[arg(long, value_name = "N", default_value_t = Settings::default().max_connections,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,

    /// One caller's (IP address's) share of --max-connections: past it its new
    /// connections are closed as they are accepted. Behind a proxy or NAT, set it to
    /// --max-connections.
    #[arg(long, value_name = "N", default_value_t = Settings::default().max_connections_per_caller,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections_per_caller: u32,

    /// How long a new connection may take to make its first call (TLS handshake, HTTP/2
    /// preface and the first request's headers) before it is closed. 0s: no limit.
    #[arg(long, value_name = "DURATION", default_value_t = Settings::default().handshake_timeout.into())]
    pub handshake_timeout: HumanDuration,

    /// Bytes of replies made and not yet read by their clients, across the server: past
    /// it, connections holding some get no new calls and replies that would go past it
    /// are answered RESOURCE_EXHAUSTED instead (DEPLOY.md sizes it against the pod's
    /// memory limit).
    #[arg(long, value_name = "BYTES", default_value_t = Settings::default().max_unread_bytes)]
    pub max_unread_bytes: usize,

    /// One connection's share of --max-unread-bytes.
    #[arg(long, value_name = "BYTES",
          default_value_t = Settings::default().max_unread_bytes_per_connection)]
    pub max_unread_bytes_per_connection: usize,

    /// One caller's share of --max-unread-bytes, over all its connections.
    #[arg(long, value_name = "BYTES", default_value_t = Settings::default().max_unread_bytes_per_caller)]
    pub max_unread_bytes_per_caller: usize,

    /// The least time between a client's PINGs with nothing sent to it between them:
    /// the third sooner ends its connection with GOAWAY ENHANCE_YOUR_CALM
    /// "too_many_pings", as grpc-go's servers do. 0s: any.
    #[arg(long, value_name = "DURATION", default_value_t = Settings::default().min_ping_interval.into())]
    pub min_ping_interval: HumanDuration,

    /// Live games of every kind across the whole server beyond which new Play* streams
    /// are refused with RESOURCE_EXHAUSTED (and new PlayMany games answered with
    /// `invalid` on `game`).
    #[arg(long, value_name = "N", default_value_t = Settings::default().stream_limits.max_live_games)]
    pub max_live_games: usize,

    /// One connection's share of --max-live-games: a new game past it is refused as one
    /// past --max-live-games is, so that one connection cannot hold every game.
    #[arg(long, value_name = "N",
          default_value_t = Settings::default().stream_limits.max_live_games_per_connection)]
    pub max_live_games_per_connection: usize,

    /// One caller's share of --max-live-games, over all its connections (a caller is an
    /// IP address; behind a proxy, set it to --max-live-games).
    #[arg(long, value_name = "N",
          default_value_t = Settings::default().stream_limits.max_live_games_per_caller)]
    pub max_live_games_per_caller: usize,

    /// The most concurrent HTTP/2 streams (calls) one connection may open.
    #[arg(long, value_name = "N", default_value_t = Settings::default().max_concurrent_streams)]
    pub max_concurrent_streams: u32,

    /// A unary call's server-side deadline, which also ends a call whose request never
    /// fully arrives; a shorter `grpc-timeout` from the client wins. 0s: none but the
    /// client's.
    #[arg(long, value_name = "DURATION", default_value_t = Settings::default().request_timeout.into())]
    pub request_timeout: HumanDuration,

    /// How often an HTTP/2 PING checks that an idle peer is still there, so that a
    /// vanished client's connection is dropped. 0s sends none (TCP keepalive still
    /// applies), which makes each call slightly cheaper (about 1.7% of a small call's
    /// work: BENCHMARKS.md).
    #[arg(long, value_name = "DURATION",
          default_value_t = Settings::default().http2_keepalive_interval.into())]
    pub http2_keepalive_interval: HumanDuration,

    /// How long a PING may go unanswered before the connection is dropped; more than 0s
    /// (turn the PINGs off with --http2-keepalive-interval 0s).
    #[arg(long, value_name = "DURATION",
          default_value_t = Settings::default().http2_keepalive_timeout.into(),
          value_parser = parse_positive_duration)]
    pub http2_keepalive_timeout: HumanDuration,

    /// TCP keepalive on accepted connections: idle time before the first probe. 0s: off.
    #[arg(long, value_name = "DURATION", default_value_t = Settings::default().tcp_keepalive.into())]
    pub tcp_keepalive: HumanDuration,

    /// Close each connection gracefully after it has been open this long (HTTP/2
    /// GOAWAY), so that clients reconnect and spread over new replicas. Off when absent
    /// or 0s.
    #[arg(long, value_name = "DURATION")]
    pub max_connection_age: Option<HumanDuration>,

    /// How long calls in flight on a connection closed for its age may take to finish.
    /// 0s: none.
    #[arg(long, value_name = "DURATION",
          default_value_t = Settings::default().max_connection_age_grace.into())]
    pub max_connection_age_grace: HumanDuration,

    /// Serve the health service alone, in plaintext, on this address (off when absent):
    /// for probes that cannot speak TLS, such as Kubernetes' gRPC probes, when the main
    /// listener serves TLS. It says what the main listener's health says, drain included.
    #[arg(long, value_name = "ADDR", value_parser = parse_address)]
    pub health_listen: Option<String>,

    /// Serve Prometheus metrics over HTTP on this address (off when absent).
    #[arg(long, value_name = "ADDR", value_parser = parse_address)]
    pub metrics_listen: Option<String>,

    /// Trace every call: export a server span per call over OTLP/gRPC to this collector
    /// (http://HOST:4317), continuing the caller's W3C trace (traceparent); off when
    /// absent. OTEL_SERVICE_NAME names the service (default arbiter).
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT", value_name = "URL",
          value_parser = parse_otlp_endpoint)]
    pub otlp_endpoint: Option<String>,

    /// The gRPC reflection service (v1 and v1alpha), with which grpcurl and Postman list
    /// the API: `on`, or `off` for a server that should not describe itself.
    #[arg(long, value_name = "ON|OFF", value_enum, default_value_t = Switch::On)]
    pub reflection: Switch,

    /// The log format: `text` for people, `json` for log pipelines (one object a line).
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// PEM certificate chain: serve over TLS (needs --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key for --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// PEM CA certificate(s): require mutual TLS, letting in only clients whose
    /// certificate this CA signed (needs --tls-cert).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
}

/// A feature turned on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Switch {
    /// On.
    On,
    /// Off.
    Off,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// A duration written and shown the human way (`500ms`, `10s`, `5m`, `1h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanDuration(pub Duration);

impl From<Duration> for HumanDuration {
    fn from(duration: Duration) -> Self {
        Self(duration)
    }
}

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        humantime::format_duration(self.0).fmt(f)
    }
}

impl FromStr for HumanDuration {
    type Err = humantime::DurationError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        humantime::parse_duration(text).map(Self)
    }
}

/// A duration above zero, for the flags where zero cannot mean off.
fn parse_positive_duration(text: &str) -> Result<HumanDuration, String> {
    let duration: HumanDuration = text.parse().map_err(|error| format!("{error}"))?;
    if duration.0.is_zero() {
        return Err("must be more than 0s".into());
    }
    Ok(duration)
}

/// Checks that `text` is `HOST:PORT` (an IP address, a bracketed IPv6 address or a host
/// name, then a port number); the host name is resolved only when the server binds.
fn parse_address(text: &str) -> Result<String, String> {
    if text.parse::<std::net::SocketAddr>().is_ok() {
        return Ok(text.to_owned());
    }
    let Some((host, port)) = text.rsplit_once(':') else {
        return Err("expected HOST:PORT, such as localhost:50051 or 0.0.0.0:50051".into());
    };
    if host.is_empty() || host.contains(':') {
        return Err(format!(
            "expected HOST:PORT, such as localhost:50051 (an IPv6 address goes in brackets: [::1]:50051), got {text:?}"
        ));
    }
    port.parse::<u16>()
        .map_err(|_| format!("the port must be a number from 0 to 65535, got {port:?}"))?;
    Ok(text.to_owned())
}

/// An OTLP/gRPC endpoint: an `http://` URL with a host (the exporter speaks plain
/// HTTP/2; a collector on the same host or network, or a mesh's sidecar).
fn parse_otlp_endpoint(text: &str) -> Result<String, String> {
    let uri: tonic::codegen::http::Uri = text
        .parse()
        .map_err(|_| format!("expected a URL such as http://localhost:4317, got {text:?}"))?;
    match (uri.scheme_str(), uri.host()) {
        (Some("http"), Some(host)) if !host.is_empty() => Ok(text.to_owned()),
        (Some("https"), _) => Err(format!(
            "https is not supported (traces are exported over plain HTTP/2): use http://, got {text:?}"
        )),
        _ => Err(format!(
            "expected a URL such as http://localhost:4317, got {text:?}"
        )),
    }
}

impl Options {
    /// The server's settings these flags ask for.
    pub fn settings(&self) -> Settings {
        let mut settings = Settings {
            listen: self.listen.clone(),
            shutdown_drain: self.shutdown_drain.0,
            shutdown_grace: self.shutdown_grace.0,
            max_request_bytes: self.max_request_bytes,
            max_in_flight: self.max_in_flight,
            max_in_flight_per_connection: self.max_in_flight_per_connection,
            max_in_flight_per_caller: self.max_in_flight_per_caller,
            max_connections: self.max_connections,
            max_connections_per_caller: self.max_connections_per_caller,
            max_calls_per_second_per_caller: self.max_calls_per_second_per_caller,
            tokens: self.tokens.clone(),
            tls_client_names: self.tls_client_name.clone(),
            handshake_timeout: self.handshake_timeout.0,
            max_unread_bytes: self.max_unread_bytes,
            max_unread_bytes_per_connection: self.max_unread_bytes_per_connection,
            max_unread_bytes_per_caller: self.max_unread_bytes_per_caller,
            min_ping_interval: self.min_ping_interval.0,
            max_concurrent_streams: self.max_concurrent_streams,
            request_timeout: self.request_timeout.0,
            http2_keepalive_interval: self.http2_keepalive_interval.0,
            http2_keepalive_timeout: self.http2_keepalive_timeout.0,
            tcp_keepalive: self.tcp_keepalive.0,
            max_connection_age: self
                .max_connection_age
                .map(|age| age.0)
                .filter(|age| !age.is_zero()),
            max_connection_age_grace: self.max_connection_age_grace.0,
            metrics_listen: self.metrics_listen.clone(),
            health_listen: self.health_listen.clone(),
            reflection: self.reflection == Switch::On,
            tls: match (&self.tls_cert, &self.tls_key) {
                (Some(cert), Some(key)) => Some(TlsFiles {
                    cert: cert.clone(),
                    key: key.clone(),
                    client_ca: self.tls_client_ca.clone(),
                }),
                _ => None,
            },
            ..Settings::default()
        };
        let limits = &mut settings.stream_limits;
        limits.max_unapplied = self.max_unapplied_messages;
        limits.max_games_per_stream = self.max_games_per_stream;
        limits.idle_timeout = self.stream_idle_timeout.0;
        limits.max_game_duration = self.max_game_duration.0;
        limits.max_live_games = self.max_live_games;
        limits.max_live_games_per_connection = self.max_live_games_per_connection;
        limits.max_live_games_per_caller = self.max_live_games_per_caller;
        settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_flags_give_the_default_settings() {
        let options = Options::try_parse_from(["arbiter", "--listen", "127.0.0.1:50051"]).unwrap();
        assert_eq!(options.settings(), Settings::default());
    }

    #[test]
    fn otlp_endpoints_are_http_urls() {
        for good in [
            "http://localhost:4317",
            "http://10.0.0.1:4317/",
            "http://otel",
        ] {
            assert_eq!(parse_otlp_endpoint(good).as_deref(), Ok(good));
        }
        for (bad, said) in [
            ("localhost:4317", "expected a URL"),
            ("", "expected a URL"),
            ("https://collector:4317", "https is not supported"),
            ("ftp://collector", "expected a URL"),
        ] {
            let error = parse_otlp_endpoint(bad).unwrap_err();
            assert!(error.contains(said), "{bad:?}: {error}");
        }
    }

    #[test]
    fn addresses_may_name_hosts() {
        for good in [
            "localhost:50051",
            "127.0.0.1:0",
            "[::1]:50051",
            "arbiter.example:1",
        ] {
            assert_eq!(parse_address(good).as_deref(), Ok(good));
        }
        for bad in [
            "localhost",
            ":50051",
            "localhost:http",
            "::1:50051",
            "host:70000",
        ] {
            assert!(parse_address(bad).is_err(), "{bad} was accepted");
        }
    }

    /// The settings `args` ask for.
    fn settings(args: &[&str]) -> Settings {
        Options::try_parse_from(["arbiter"].iter().chain(args))
            .unwrap()
            .settings()
    }

    #[test]
    fn zero_turns_off_the_limits_that_can_be_off() {
        let zero = settings(&[
            "--stream-idle-timeout",
            "0s",
            "--max-game-duration",
            "0s",
            "--request-timeout",
            "0s",
            "--http2-keepalive-interval",
            "0s",
            "--tcp-keepalive",
            "0s",
            "--max-connection-age",
            "0s",
            "--shutdown-drain",
            "0s",
            "--shutdown-grace",
            "0s",
            "--max-connection-age-grace",
            "0s",
        ]);
        assert_eq!(zero.stream_limits.idle_timeout, Duration::ZERO);
        assert_eq!(zero.stream_limits.max_game_duration, Duration::ZERO);
        assert_eq!(zero.request_timeout, Duration::ZERO);
        assert_eq!(zero.http2_keepalive_interval, Duration::ZERO);
        assert_eq!(zero.tcp_keepalive, Duration::ZERO);
        assert_eq!(zero.max_connection_age, None);
        assert_eq!(zero.shutdown_drain, Duration::ZERO);
        assert_eq!(zero.shutdown_grace, Duration::ZERO);
        assert_eq!(zero.max_connection_age_grace, Duration::ZERO);
        assert_eq!(
            settings(&["--max-connection-age", "1h"]).max_connection_age,
            Some(Duration::from_secs(3600))
        );
    }

    #[test]
    fn zero_is_refused_where_it_cannot_mean_off() {
        let error = Options::try_parse_from(["arbiter", "--http2-keepalive-timeout", "0s"])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("invalid value '0s' for '--http2-keepalive-timeout <DURATION>'")
                && error.contains("must be more than 0s"),
            "{error}"
        );
        assert_eq!(
            settings(&["--http2-keepalive-timeout", "500ms"]).http2_keepalive_timeout,
            Duration::from_millis(500)
        );
        let error = Options::try_parse_from(["arbiter", "--http2-keepalive-timeout", "soon"])
            .unwrap_err()
            .to_string();
        assert!(error.contains("--http2-keepalive-timeout"), "{error}");
    }

    #[test]
    fn durations_show_humanly() {
        assert_eq!(HumanDuration(Duration::from_secs(300)).to_string(), "5m");
        assert_eq!(
            "1h".parse::<HumanDuration>().unwrap().0,
            Duration::from_secs(3600)
        );
    }
}
