//! The name of every metric Arbiter writes, defined once, and their descriptions.

/// Calls answered, by `rpc` and `code`.
pub(crate) const CALLS_TOTAL: &str = "arbiter_calls_total";
/// Call duration by `rpc` (a histogram).
pub(crate) const CALL_DURATION_SECONDS: &str = "arbiter_call_duration_seconds";
/// Calls whose reply has not ended.
pub(crate) const CALLS_IN_FLIGHT: &str = "arbiter_calls_in_flight";
/// Live games open now, by `game`.
pub(crate) const LIVE_GAMES: &str = "arbiter_live_games";
/// Live-game messages answered with `rejected` set, by `game`.
pub(crate) const REJECTED_MOVES_TOTAL: &str = "arbiter_rejected_moves_total";
/// Live games that ended, by `game` and `ending` (`board` or `time`).
pub(crate) const GAMES_ENDED_TOTAL: &str = "arbiter_games_ended_total";
/// Connections open now.
pub(crate) const CONNECTIONS_OPEN: &str = "arbiter_connections_open";
/// Connections closed as they were accepted: the server had `--max-connections` open, or
/// their caller its share.
pub(crate) const CONNECTIONS_REFUSED_TOTAL: &str = "arbiter_connections_refused_total";
/// Connections closed for making no call within `--handshake-timeout`.
pub(crate) const HANDSHAKE_TIMEOUTS_TOTAL: &str = "arbiter_handshake_timeouts_total";
/// Connections ended with GOAWAY ENHANCE_YOUR_CALM, by `reason` (`too_many_pings`,
/// `too_many_settings`, `too_many_early_resets`).
pub(crate) const CONNECTIONS_ENDED_TOTAL: &str = "arbiter_connections_ended_total";

/// Describes every metric and registers the calls in flight at zero, so that dashboards
/// and alerts see it from the first scrape (the games' series: `games::install`).
pub(super) fn register_metrics() {
    metrics::describe_counter!(CALLS_TOTAL, "Calls answered, by RPC and gRPC status code.");
    metrics::describe_histogram!(
        CALL_DURATION_SECONDS,
        metrics::Unit::Seconds,
        "Call duration, from request headers to the end of the reply, by RPC."
    );
    metrics::describe_gauge!(
        CALLS_IN_FLIGHT,
        "Calls whose reply has not ended, open live-game streams included."
    );
    metrics::describe_gauge!(
        LIVE_GAMES,
        "Live games open now, by game (the `game` label: each game's name in snake_case)."
    );
    metrics::describe_counter!(
        REJECTED_MOVES_TOTAL,
        "Live-game messages answered with `rejected` set, by game."
    );
    metrics::describe_counter!(
        GAMES_ENDED_TOTAL,
        "Live games that ended, by game and by ending (board: the rules decided; time: a side ran out)."
    );
    metrics::describe_gauge!(CONNECTIONS_OPEN, "Connections open now.");
    metrics::describe_counter!(
        CONNECTIONS_REFUSED_TOTAL,
        "Connections closed as they were accepted, the server (--max-connections) or their caller (--max-connections-per-caller) having its limit open."
    );
    metrics::describe_counter!(
        HANDSHAKE_TIMEOUTS_TOTAL,
        "Connections closed for making no call within --handshake-timeout (TLS, HTTP/2 preface, first headers)."
    );
    metrics::describe_counter!(
        CONNECTIONS_ENDED_TOTAL,
        "Connections ended with GOAWAY ENHANCE_YOUR_CALM, by reason: too_many_pings (more often than --min-ping-interval), too_many_settings, too_many_early_resets (most streams reset by the client)."
    );
    metrics::gauge!(CALLS_IN_FLIGHT).increment(0.0);
}
