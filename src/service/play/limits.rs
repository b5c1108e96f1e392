//! The limits on live game streams, which the command line sets.

use std::time::Duration;

/// Limits on live game streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// The most messages one game may be sent that are not applied moves (rejected
    /// moves, and the setup); applied moves are bounded by the board's cells.
    pub max_unapplied: usize,
    /// How long a stream may go without a message before it is closed; zero: no limit.
    pub idle_timeout: Duration,
    /// How long a game may last in all, however active; zero: no limit.
    pub max_game_duration: Duration,
    /// The most live games, of every kind, the server holds at once.
    pub max_live_games: usize,
    /// The most games one PlayMany stream holds at once.
    pub max_games_per_stream: usize,
    /// One connection's share of `max_live_games`.
    pub max_live_games_per_connection: usize,
    /// One caller's share of `max_live_games`, over all its connections.
    pub max_live_games_per_caller: usize,
}

impl StreamLimits {
    /// The defaults, which [`crate::server::Settings::default`] uses.
    pub const DEFAULT: Self = Self {
        max_unapplied: 1000,
        idle_timeout: Duration::from_secs(5 * 60),
        max_game_duration: Duration::from_secs(60 * 60),
        max_live_games: 10_000,
        max_games_per_stream: 1000,
        max_live_games_per_connection: 2_500,
        max_live_games_per_caller: 5_000,
    };
}

impl Default for StreamLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}
