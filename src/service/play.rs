//! Live Tic-Tac-Toe games, one per PlayTicTacToe stream.
//!
//! The reply stream pulls the next move only when the transport asks for the next
//! reply, so a client that stops reading stops the server reading its moves
//! (backpressure) and nothing is buffered beyond HTTP/2's flow-control windows. No
//! task is spawned: when the client cancels or its connection drops, the transport
//! drops the reply stream, and with it the game.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;
use tonic::Status;

use crate::proto::{PlayTicTacToeRequest, PlayTicTacToeResponse};
use crate::rules::tic_tac_toe::Game;

use super::convert::TicTacToeState;
use super::error::ServiceError;

/// The replies of one live game.
pub type ReplyStream = Pin<Box<dyn Stream<Item = Result<PlayTicTacToeResponse, Status>> + Send>>;

/// Limits on one live game stream.
#[derive(Debug, Clone, Copy)]
pub struct StreamLimits {
    /// The most moves (applied or rejected) one stream may send.
    pub max_moves: usize,
    /// How long a stream may go without a move before it is closed.
    pub idle_timeout: Duration,
    /// The most live games the server holds at once.
    pub max_live_games: usize,
}

impl Default for StreamLimits {
    fn default() -> Self {
        Self {
            max_moves: 1000,
            idle_timeout: Duration::from_secs(300),
            max_live_games: 10_000,
        }
    }
}

/// How many live games are open right now, shared by every clone.
#[derive(Debug, Clone, Default)]
pub struct LiveGames(Arc<AtomicUsize>);

impl LiveGames {
    /// The number of open games.
    pub fn count(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    /// Counts one more live game, unless `limit` are already open; the check and the
    /// count are one atomic step, so concurrent opens cannot pass the limit.
    fn try_open(&self, limit: usize) -> Option<OpenGame> {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |open| {
                (open < limit).then_some(open + 1)
            })
            .ok()?;
        metrics::gauge!("arbiter_live_games").increment(1.0);
        Some(OpenGame(self.clone()))
    }
}

/// Counts one game as live until dropped.
struct OpenGame(LiveGames);

impl Drop for OpenGame {
    fn drop(&mut self) {
        (self.0).0.fetch_sub(1, Ordering::Relaxed);
        metrics::gauge!("arbiter_live_games").decrement(1.0);
    }
}

/// One game and the stream feeding it.
struct Session<S> {
    moves: S,
    game: Game,
    received: usize,
    limits: StreamLimits,
    closing: CancellationToken,
    _open: OpenGame,
}

/// Opens a game fed by `moves`, unless the server already holds `limits.max_live_games`,
/// and returns its replies: one per move, in order.
///
/// The stream ends when the client half-closes; it ends with an error status after
/// more than `limits.max_moves` moves, after `limits.idle_timeout` without one, or
/// when `closing` is cancelled (the server's shutdown grace period is over).
pub fn open<S>(
    moves: S,
    limits: StreamLimits,
    live_games: &LiveGames,
    closing: CancellationToken,
) -> Result<ReplyStream, ServiceError>
where
    S: Stream<Item = Result<PlayTicTacToeRequest, Status>> + Unpin + Send + 'static,
{
    let open = live_games
        .try_open(limits.max_live_games)
        .ok_or(ServiceError::TooManyGames {
            limit: limits.max_live_games,
        })?;
    Ok(play(moves, limits, open, closing))
}

/// The replies of the game fed by `moves`, counted as live until the stream is dropped.
fn play<S>(
    moves: S,
    limits: StreamLimits,
    open: OpenGame,
    closing: CancellationToken,
) -> ReplyStream
where
    S: Stream<Item = Result<PlayTicTacToeRequest, Status>> + Unpin + Send + 'static,
{
    let session = Session {
        moves,
        game: Game::new(),
        received: 0,
        limits,
        closing,
        _open: open,
    };
    Box::pin(futures_util::stream::unfold(
        Some(session),
        |session| async move {
            let mut session = session?;
            match session.next_reply().await {
                Some(Ok(reply)) => Some((Ok(reply), Some(session))),
                Some(Err(status)) => Some((Err(status), None)),
                None => None,
            }
        },
    ))
}

impl<S> Session<S>
where
    S: Stream<Item = Result<PlayTicTacToeRequest, Status>> + Unpin,
{
    /// The reply to the next move; `None` when the client has half-closed. An error ends
    /// the stream.
    async fn next_reply(&mut self) -> Option<Result<PlayTicTacToeResponse, Status>> {
        let next = tokio::select! {
            biased;
            () = self.closing.cancelled() => return Some(Err(ServiceError::ShuttingDown.into())),
            next = tokio::time::timeout(self.limits.idle_timeout, self.moves.next()) => next,
        };
        let request = match next {
            Err(_) => {
                let idle = self.limits.idle_timeout;
                return Some(Err(ServiceError::StreamIdle { idle }.into()));
            }
            Ok(None) => return None,
            Ok(Some(Err(status))) => {
                return Some(Err(
                    ServiceError::from_transport(&status).map_or(status, Status::from)
                ));
            }
            Ok(Some(Ok(request))) => request,
        };
        self.received += 1;
        if self.received > self.limits.max_moves {
            let limit = self.limits.max_moves;
            return Some(Err(ServiceError::TooManyMoves { limit }.into()));
        }
        let rejected = match self
            .game
            .play(i64::from(request.row), i64::from(request.col))
        {
            Ok(_) => String::new(),
            Err(error) => {
                metrics::counter!("arbiter_rejected_moves_total").increment(1);
                error.to_string()
            }
        };
        Some(Ok(
            TicTacToeState::from(&self.game).into_play_response(rejected)
        ))
    }
}
