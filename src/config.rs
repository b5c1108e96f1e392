//! The server's command-line options, each with a documented default.

use std::net::SocketAddr;
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

    /// After SIGTERM or Ctrl-C, how long calls in flight may take to finish before open
    /// PlayTicTacToe streams are ended with UNAVAILABLE.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub shutdown_grace: Duration,

    /// The most moves one PlayTicTacToe stream may send (a game has at most 9 applied
    /// moves); the stream is ended with RESOURCE_EXHAUSTED past it.
    #[arg(long, default_value_t = 1000)]
    pub max_moves_per_stream: usize,

    /// How long a PlayTicTacToe stream may go without a move before it is ended with
    /// DEADLINE_EXCEEDED.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    pub stream_idle_timeout: Duration,
}

impl Options {
    /// The limits on each live game stream.
    pub fn stream_limits(&self) -> StreamLimits {
        StreamLimits {
            max_moves: self.max_moves_per_stream,
            idle_timeout: self.stream_idle_timeout,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Self::parse_from(["arbiter"])
    }
}
