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

pub(crate) mod many;
mod reaper;

use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;
use tonic::Status;

use self::reaper::{Ending, Reaper, Watch};
use super::answer::Answer;
use super::error::ServiceError;
use crate::proto::replies::{WrittenAs, WrittenReply};
use crate::rules::GameKind;
use crate::telemetry::{names, otel};

/// The replies of one live game.
pub type ReplyStream<R> = Pin<Box<dyn Stream<Item = Result<R, Status>> + Send>>;

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
}

impl StreamLimits {
    /// The defaults, which [`crate::server::Settings::default`] uses.
    pub const DEFAULT: Self = Self {
        max_unapplied: 1000,
        idle_timeout: Duration::from_secs(5 * 60),
        max_game_duration: Duration::from_secs(60 * 60),
        max_live_games: 10_000,
        max_games_per_stream: 1000,
    };
}

impl Default for StreamLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl<R> Reply<R> {
    /// The reply `response` to a message that `handled` says what became of.
    pub(crate) fn new(response: R, handled: Handled) -> Self {
        Self { response, handled }
    }

    /// The reply to a setup: the game as it starts.
    pub(crate) fn setup(response: R) -> Self {
        Self {
            response,
            handled: Handled::Setup,
        }
    }
}

/// The RPC that plays a game of `kind` on a stream of its own.
pub(crate) const fn rpc_of(kind: GameKind) -> &'static str {
    match kind {
        GameKind::TicTacToe => "PlayTicTacToe",
        GameKind::Othello => "PlayOthello",
        GameKind::ConnectFour => "PlayConnectFour",
    }
}

/// One kind of live game, as the stream machinery drives it: the translation between
/// its wire messages and its rules. Implemented by the three games (`rules::othello::Game`,
/// `rules::connect_four::Game`, `rules::tic_tac_toe::Game`) and sealed: name it to open
/// a game in process with [`crate::Arbiter::open_game`].
pub trait LiveGame: sealed::Play {}

impl<G: sealed::Play> LiveGame for G {}

pub(crate) use self::sealed::{Handled, Opened, Reply};

/// The part of [`LiveGame`] that only this crate implements.
pub(crate) mod sealed {
    use super::{GameKind, ServiceError};
    use crate::proto::replies::WrittenAs;
    use crate::service::answer::Answer;

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

    /// A game just opened and its reply to the first message, or why it was not.
    pub(crate) type Opened<G> = Result<(G, Reply<<G as Play>::Response>), ServiceError>;

    /// How a game is played on a stream: its messages, and how it answers them.
    pub trait Play: Sized + Send + 'static {
        /// A message from the client.
        type Request: Send + 'static;
        /// A reply to the client (which the server writes as its [`WrittenAs::Reply`]).
        type Response: WrittenAs + Send + 'static;
        /// Which game this is.
        const KIND: GameKind;

        /// The game a stream's first message opens, and the reply to that message; an
        /// error (a malformed setup) ends the stream.
        fn open(first: Self::Request) -> Opened<Self>;

        /// Plays a later message: what became of it, and its answer.
        fn answer(
            &mut self,
            request: Self::Request,
        ) -> (Handled, impl Answer<Response = Self::Response> + '_);

        /// The reply to a later message, built.
        fn reply(&mut self, request: Self::Request) -> Reply<Self::Response> {
            let (handled, answer) = self.answer(request);
            Reply {
                response: answer.into_response(),
                handled,
            }
        }
    }
}

/// Opens `game` as it stands with `first` as its first move: for streams that start
/// without a setup.
pub(crate) fn first_move<G: LiveGame>(mut game: G, first: G::Request) -> Opened<G> {
    let reply = game.reply(first);
    Ok((game, reply))
}

/// One game as its messages reach it, with the count of its messages that were not
/// applied moves: what a single-game stream and each game of a PlayMany stream share,
/// so that both answer the same messages alike.
pub(crate) struct Referee<G> {
    game: G,
    unapplied: usize,
}

impl<G: LiveGame> Referee<G> {
    /// Opens a game with its first message; an error (a malformed setup, or a setup
    /// past `max_unapplied`) opens none.
    pub(crate) fn open(
        first: G::Request,
        max_unapplied: usize,
    ) -> Result<(Self, G::Response), ServiceError> {
        let (game, reply) = G::open(first)?;
        let mut referee = Self { game, unapplied: 0 };
        let response = referee.count(reply, max_unapplied)?;
        Ok((referee, response))
    }

    /// The reply to a later message; an error when it is one unapplied message more
    /// than `max_unapplied`, which ends the game.
    pub(crate) fn reply(
        &mut self,
        request: G::Request,
        max_unapplied: usize,
    ) -> Result<G::Response, ServiceError> {
        let reply = self.game.reply(request);
        self.count(reply, max_unapplied)
    }

    /// Like [`Referee::reply`], for a reply the caller makes itself: `play` plays the
    /// message on the game and says what became of it, beside what it made of the
    /// game's answer (PlayMany writes it straight into its reply).
    pub(crate) fn play<T>(
        &mut self,
        max_unapplied: usize,
        play: impl FnOnce(&mut G) -> (Handled, T),
    ) -> Result<T, ServiceError> {
        let (handled, done) = play(&mut self.game);
        self.count(Reply::new(done, handled), max_unapplied)
    }

    fn count<R>(&mut self, reply: Reply<R>, max_unapplied: usize) -> Result<R, ServiceError> {
        match reply.handled {
            Handled::Applied => {}
            Handled::Rejected => {
                metrics::counter!(names::REJECTED_MOVES_TOTAL, "game" => G::KIND.label())
                    .increment(1);
                self.unapplied += 1;
            }
            Handled::Setup => self.unapplied += 1,
        }
        if self.unapplied > max_unapplied {
            return Err(ServiceError::TooManyMessages {
                rpc: rpc_of(G::KIND),
                limit: max_unapplied,
            });
        }
        Ok(reply.response)
    }
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
    pub(crate) fn try_open(&self, limit: usize, kind: GameKind) -> Option<OpenGame> {
        self.count
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |open| {
                (open < limit).then_some(open + 1)
            })
            .ok()?;
        metrics::gauge!(names::LIVE_GAMES, "game" => kind.label()).increment(1.0);
        Some(OpenGame {
            count: Arc::clone(&self.count),
            kind,
        })
    }
}

/// Counts one game as live until dropped.
pub(crate) struct OpenGame {
    count: Arc<AtomicUsize>,
    kind: GameKind,
}

impl Drop for OpenGame {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
        metrics::gauge!(names::LIVE_GAMES, "game" => self.kind.label()).decrement(1.0);
    }
}

/// What one stream plays: a single game, or the many games of a PlayMany stream. The
/// stream machinery ([`Session`]) feeds it the stream's messages, one at a time.
pub(crate) trait Games: Send + 'static {
    /// A message from the client.
    type Request: Send + 'static;
    /// A reply to the client.
    type Response: Send + 'static;

    /// The reply to one message; an error ends the stream.
    fn handle(&mut self, request: Self::Request) -> Result<Self::Response, ServiceError>;
}

/// The one game of a Play* stream, and its place in the live-game count; its replies
/// are built, or written (`F`).
struct OneGame<G, F> {
    referee: Option<Referee<G>>,
    max_unapplied: usize,
    _open: OpenGame,
    form: PhantomData<fn() -> F>,
}

/// How a single-game stream's replies are made: [`Built`] or [`Written`].
pub(crate) trait Form<G: LiveGame>: 'static {
    /// A reply.
    type Reply: Send + 'static;
    /// The reply to the first message, from the game's built reply.
    fn first(response: G::Response) -> Self::Reply;
    /// The reply to a later message.
    fn later(
        referee: &mut Referee<G>,
        request: G::Request,
        max_unapplied: usize,
    ) -> Result<Self::Reply, ServiceError>;
}

/// Replies built as prost's messages: for clients in process.
pub(crate) struct Built;

/// Replies written straight from the game into their bytes: for the wire.
pub(crate) struct Written;

impl<G: LiveGame> Form<G> for Built {
    type Reply = G::Response;
    fn first(response: G::Response) -> G::Response {
        response
    }
    fn later(
        referee: &mut Referee<G>,
        request: G::Request,
        max_unapplied: usize,
    ) -> Result<G::Response, ServiceError> {
        referee.reply(request, max_unapplied)
    }
}

/// The reply to a game's message as the server writes it.
pub(crate) type WrittenReplyOf<G> = <<G as sealed::Play>::Response as WrittenAs>::Reply;

impl<G: LiveGame> Form<G> for Written {
    type Reply = WrittenReplyOf<G>;
    fn first(response: G::Response) -> WrittenReplyOf<G> {
        WrittenReplyOf::<G>::encoded(&response)
    }
    fn later(
        referee: &mut Referee<G>,
        request: G::Request,
        max_unapplied: usize,
    ) -> Result<WrittenReplyOf<G>, ServiceError> {
        referee.play(max_unapplied, |game| {
            let (handled, answer) = game.answer(request);
            (handled, WrittenReplyOf::<G>::written(|w| answer.write(w)))
        })
    }
}

impl<G: LiveGame, F: Form<G>> Games for OneGame<G, F> {
    type Request = G::Request;
    type Response = F::Reply;

    fn handle(&mut self, request: G::Request) -> Result<F::Reply, ServiceError> {
        match &mut self.referee {
            Some(referee) => F::later(referee, request, self.max_unapplied),
            None => {
                let (referee, response) = Referee::open(request, self.max_unapplied)?;
                self.referee = Some(referee);
                Ok(F::first(response))
            }
        }
    }
}

/// A stream's games, shared by the stream and the reaper, which takes them away to end
/// them.
struct Slot<T> {
    held: Mutex<Option<T>>,
}

impl<T> Slot<T> {
    fn lock(&self) -> MutexGuard<'_, Option<T>> {
        // A panic while the lock was held cannot leave a game half-updated in a way
        // that matters more than ending it, so a poisoned lock is simply taken.
        self.held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<T: Send> reaper::Expire for Slot<T> {
    fn expire(&self) {
        let held = self.lock().take();
        drop(held);
    }
}

/// One stream and the games it feeds: the stream of their replies.
struct Session<T, S> {
    messages: S,
    slot: Arc<Slot<T>>,
    watch: Watch,
    /// The stream has ended (the client half-closed, or an error was sent).
    done: bool,
    /// The messages received so far.
    received: u64,
    /// The call's span, when calls are traced: it is told the message count at the end.
    span: Option<tracing::Span>,
}

impl<T, S> Drop for Session<T, S> {
    fn drop(&mut self) {
        if let Some(span) = &self.span {
            otel::record_messages(span, self.received);
        }
    }
}

/// Opens a game of kind `G` fed by `messages`, unless the server already holds
/// `limits.max_live_games`, and returns its replies: one per message, in order.
///
/// The stream ends when the client half-closes; it ends with an error status after
/// more than `limits.max_unapplied` messages that were not applied moves, after
/// `limits.idle_timeout` without a message, after `limits.max_game_duration` in all,
/// or when `end_streams` is cancelled (the server's shutdown grace period is over).
pub(crate) fn open<G, F, S>(
    messages: S,
    limits: StreamLimits,
    live_games: &LiveGames,
    end_streams: &CancellationToken,
) -> Result<ReplyStream<F::Reply>, ServiceError>
where
    G: LiveGame,
    F: Form<G>,
    S: Stream<Item = Result<G::Request, Status>> + Unpin + Send + 'static,
{
    let open =
        live_games
            .try_open(limits.max_live_games, G::KIND)
            .ok_or(ServiceError::TooManyGames {
                limit: limits.max_live_games,
            })?;
    let games = OneGame::<G, F> {
        referee: None,
        max_unapplied: limits.max_unapplied,
        _open: open,
        form: PhantomData,
    };
    Ok(session(games, messages, limits, live_games, end_streams))
}

/// The reply stream of `games` fed by `messages`, watched by the reaper.
pub(crate) fn session<T, S>(
    games: T,
    messages: S,
    limits: StreamLimits,
    live_games: &LiveGames,
    end_streams: &CancellationToken,
) -> ReplyStream<T::Response>
where
    T: Games,
    S: Stream<Item = Result<T::Request, Status>> + Unpin + Send + 'static,
{
    let slot = Arc::new(Slot {
        held: Mutex::new(Some(games)),
    });
    let watch = live_games.reaper.watch(
        Arc::clone(&slot) as Arc<dyn reaper::Expire>,
        limits,
        end_streams,
    );
    Box::pin(Session {
        messages,
        slot,
        watch,
        done: false,
        received: 0,
        span: otel::current_call(),
    })
}

impl<T, S> Stream for Session<T, S>
where
    T: Games,
    S: Stream<Item = Result<T::Request, Status>> + Unpin,
{
    type Item = Result<T::Response, Status>;

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

impl<T, S> Session<T, S>
where
    T: Games,
    S: Stream<Item = Result<T::Request, Status>> + Unpin,
{
    /// The reply to `next`, what the client sent; `None` when it has half-closed.
    fn reply_to(
        &mut self,
        next: Option<Result<T::Request, Status>>,
    ) -> Option<Result<T::Response, Status>> {
        let request = match next? {
            Ok(request) => {
                self.received += 1;
                request
            }
            Err(status) => {
                return Some(Err(
                    ServiceError::from_transport(&status).map_or(status, Status::from)
                ));
            }
        };
        self.watch.touch();
        let mut held = self.slot.lock();
        let Some(games) = held.as_mut() else {
            drop(held);
            return Some(Err(self.ending_error().into()));
        };
        Some(games.handle(request).map_err(Status::from))
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
pub(crate) const SETUP_NOT_FIRST: &str =
    "a setup is accepted only as the first message of a stream; the game goes on";
