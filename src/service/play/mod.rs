//! Live games, one per Play* stream, for every game Arbiter referees.
//!
//! The stream machinery is the same for every game ([`LiveGame`] is what differs): the
//! reply stream pulls the next message only when the transport asks for the next reply,
//! so a client that stops reading stops the server reading its messages (backpressure)
//! and nothing is buffered beyond HTTP/2's flow-control windows. No task is spawned per
//! game: when the client cancels or its connection drops, the transport drops the reply
//! stream, and with it the game.
//!
//! A client that stops reading also stops the transport polling its reply stream, so
//! no timer inside the stream could fire. One reaper task per server (`reaper.rs`) therefore
//! watches every game's idle time and lifetime and ends the games past either: it
//! frees their state and their place in the live-game count at once, and their stream
//! answers with the reason as soon as the transport polls it again.

mod connect_four;
mod othello;
mod reaper;
mod tic_tac_toe;

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;
use tonic::Status;

use self::reaper::{Ending, Reaper, Watch};
use super::error::ServiceError;

/// The replies of one live game.
pub type ReplyStream<R> = Pin<Box<dyn Stream<Item = Result<R, Status>> + Send>>;

/// Limits on live game streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// The most messages one stream may send that are not applied moves (rejected
    /// moves, and the setup); applied moves are bounded by the board's cells.
    pub max_moves: usize,
    /// How long a stream may go without a message before it is closed; zero: no limit.
    pub idle_timeout: Duration,
    /// How long a game may last in all, however active; zero: no limit.
    pub max_game_duration: Duration,
    /// The most live games, of every kind, the server holds at once.
    pub max_live_games: usize,
}

/// The server's defaults, defined once in [`crate::server::Settings::default`].
impl Default for StreamLimits {
    fn default() -> Self {
        crate::server::Settings::default().stream_limits
    }
}

/// The kinds of live game, as metrics and messages name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameKind {
    /// PlayTicTacToe.
    TicTacToe,
    /// PlayOthello.
    Othello,
    /// PlayConnectFour.
    ConnectFour,
}

impl GameKind {
    /// Every kind, for registering metrics.
    pub const ALL: [Self; 3] = [Self::TicTacToe, Self::Othello, Self::ConnectFour];

    /// The `game` label of the metrics.
    pub const fn label(self) -> &'static str {
        match self {
            Self::TicTacToe => "tic_tac_toe",
            Self::Othello => "othello",
            Self::ConnectFour => "connect_four",
        }
    }

    /// The RPC that plays this game.
    pub const fn rpc(self) -> &'static str {
        match self {
            Self::TicTacToe => "PlayTicTacToe",
            Self::Othello => "PlayOthello",
            Self::ConnectFour => "PlayConnectFour",
        }
    }
}

/// What became of one message of a live game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    /// A move was applied.
    Applied,
    /// The message set up the game.
    Setup,
    /// The message was rejected; the game is unchanged.
    Rejected,
}

/// A reply to one message, and what became of the message.
pub struct Reply<R> {
    /// The reply.
    pub response: R,
    /// What became of the message.
    pub handled: Handled,
}

/// One kind of live game, as the stream machinery drives it: the translation between
/// its wire messages and its rules.
pub trait LiveGame: Sized + Send + 'static {
    /// A message from the client.
    type Request: Send + 'static;
    /// A reply to the client.
    type Response: Send + 'static;
    /// Which game this is.
    const KIND: GameKind;

    /// The game a stream's first message opens, and the reply to that message; an
    /// error (a malformed setup) ends the stream.
    fn open(first: Self::Request) -> Result<(Self, Reply<Self::Response>), ServiceError>;

    /// The reply to a later message.
    fn reply(&mut self, request: Self::Request) -> Reply<Self::Response>;
}

/// Opens `game` as it stands with `first` as its first move: for streams that start
/// without a setup.
fn first_move<G: LiveGame>(
    mut game: G,
    first: G::Request,
) -> Result<(G, Reply<G::Response>), ServiceError> {
    let reply = game.reply(first);
    Ok((game, reply))
}

/// How many live games are open right now, shared by every clone, and the watch on
/// their idle time and lifetime.
#[derive(Debug, Clone, Default)]
pub struct LiveGames {
    count: Arc<AtomicUsize>,
    reaper: Reaper,
}

impl LiveGames {
    /// The number of open games, of every kind.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// Counts one more live game of `kind`, unless `limit` are already open; the check
    /// and the count are one atomic step, so concurrent opens cannot pass the limit.
    fn try_open(&self, limit: usize, kind: GameKind) -> Option<OpenGame> {
        self.count
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |open| {
                (open < limit).then_some(open + 1)
            })
            .ok()?;
        metrics::gauge!("arbiter_live_games", "game" => kind.label()).increment(1.0);
        Some(OpenGame {
            count: Arc::clone(&self.count),
            kind,
        })
    }
}

/// Counts one game as live until dropped.
struct OpenGame {
    count: Arc<AtomicUsize>,
    kind: GameKind,
}

impl Drop for OpenGame {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
        metrics::gauge!("arbiter_live_games", "game" => self.kind.label()).decrement(1.0);
    }
}

/// What a live game holds while it lives: its state (once the first message has
/// opened it) and its place in the live-game count. The reaper takes it away to end
/// the game.
struct Held<G> {
    game: Option<G>,
    _open: OpenGame,
}

/// A live game's state, shared by its stream and the reaper.
struct Slot<G> {
    held: Mutex<Option<Held<G>>>,
}

impl<G> Slot<G> {
    fn lock(&self) -> MutexGuard<'_, Option<Held<G>>> {
        // A panic while the lock was held cannot leave a game half-updated in a way
        // that matters more than ending it, so a poisoned lock is simply taken.
        self.held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<G: Send> reaper::Expire for Slot<G> {
    fn expire(&self) {
        let held = self.lock().take();
        drop(held);
    }
}

/// One game and the stream feeding it: the stream of its replies.
struct Session<G, S> {
    messages: S,
    slot: Arc<Slot<G>>,
    watch: Watch,
    unapplied: usize,
    max_unapplied: usize,
    /// The stream has ended (the client half-closed, or an error was sent).
    done: bool,
}

/// Opens a game of kind `G` fed by `messages`, unless the server already holds
/// `limits.max_live_games`, and returns its replies: one per message, in order.
///
/// The stream ends when the client half-closes; it ends with an error status after
/// more than `limits.max_moves` messages that were not applied moves, after
/// `limits.idle_timeout` without a message, after `limits.max_game_duration` in all,
/// or when `end_streams` is cancelled (the server's shutdown grace period is over).
pub(crate) fn open<G, S>(
    messages: S,
    limits: StreamLimits,
    live_games: &LiveGames,
    end_streams: &CancellationToken,
) -> Result<ReplyStream<G::Response>, ServiceError>
where
    G: LiveGame,
    S: Stream<Item = Result<G::Request, Status>> + Unpin + Send + 'static,
{
    let open =
        live_games
            .try_open(limits.max_live_games, G::KIND)
            .ok_or(ServiceError::TooManyGames {
                limit: limits.max_live_games,
            })?;
    let slot = Arc::new(Slot {
        held: Mutex::new(Some(Held {
            game: None,
            _open: open,
        })),
    });
    let watch = live_games.reaper.watch(
        Arc::clone(&slot) as Arc<dyn reaper::Expire>,
        limits,
        end_streams,
    );
    Ok(Box::pin(Session::<G, S> {
        messages,
        slot,
        watch,
        unapplied: 0,
        max_unapplied: limits.max_moves,
        done: false,
    }))
}

impl<G, S> Stream for Session<G, S>
where
    G: LiveGame,
    S: Stream<Item = Result<G::Request, Status>> + Unpin,
{
    type Item = Result<G::Response, Status>;

    /// The reply to the next message; `None` once the client has half-closed or after
    /// an error, which ends the stream.
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        // The watch first: a game it ended answers no more messages.
        let reply = if this.watch.poll_ended(cx).is_ready() {
            Some(Err(this.ending_error().into()))
        } else {
            match this.messages.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(next) => this.reply_to(next),
            }
        };
        this.done = !matches!(reply, Some(Ok(_)));
        Poll::Ready(reply)
    }
}

impl<G, S> Session<G, S>
where
    G: LiveGame,
    S: Stream<Item = Result<G::Request, Status>> + Unpin,
{
    /// The reply to `next`, what the client sent; `None` when it has half-closed.
    fn reply_to(
        &mut self,
        next: Option<Result<G::Request, Status>>,
    ) -> Option<Result<G::Response, Status>> {
        let request = match next? {
            Ok(request) => request,
            Err(status) => {
                return Some(Err(
                    ServiceError::from_transport(&status).map_or(status, Status::from)
                ));
            }
        };
        self.watch.touch();
        let reply = {
            let mut held = self.slot.lock();
            let Some(held) = held.as_mut() else {
                return Some(Err(self.ending_error().into()));
            };
            match &mut held.game {
                Some(game) => game.reply(request),
                None => match G::open(request) {
                    Ok((game, reply)) => {
                        held.game = Some(game);
                        reply
                    }
                    Err(error) => return Some(Err(error.into())),
                },
            }
        };
        match reply.handled {
            Handled::Applied => {}
            Handled::Rejected => {
                metrics::counter!("arbiter_rejected_moves_total", "game" => G::KIND.label())
                    .increment(1);
                self.unapplied += 1;
            }
            Handled::Setup => self.unapplied += 1,
        }
        if self.unapplied > self.max_unapplied {
            return Some(Err(ServiceError::TooManyMessages {
                rpc: G::KIND.rpc(),
                limit: self.max_unapplied,
            }
            .into()));
        }
        Some(Ok(reply.response))
    }

    /// Why the watch ended the game.
    fn ending_error(&self) -> ServiceError {
        match self.watch.ending() {
            Some(Ending::Idle(idle)) => ServiceError::StreamIdle { idle },
            Some(Ending::Lifetime(limit)) => ServiceError::GameTooLong { limit },
            None => ServiceError::ShuttingDown,
        }
    }
}

/// The rejection of a setup that is not a stream's first message.
const SETUP_NOT_FIRST: &str =
    "a setup is accepted only as the first message of a stream; the game goes on";
