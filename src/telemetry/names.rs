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
    metrics::gauge!(CALLS_IN_FLIGHT).increment(0.0);
}
