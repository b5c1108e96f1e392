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

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;
use tonic::Status;

use self::reaper::{Reaper, Watch};
use super::answer::Answer;
use super::clock::{Timekeeper, Timing};
use super::error::ServiceError;
use crate::proto::replies::{WrittenAs, WrittenReply};
use crate::rules::clock::{Clock, Moment};
use crate::rules::GameKind;
use crate::telemetry::games::{self, GameEnding};
use crate::telemetry::otel;

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
    use crate::rules::clock::{Moment, Side};
    use crate::service::answer::Answer;
    use crate::service::clock::{Timekeeper, Timing, TimingFields};

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

    /// A game just opened, with its clock and its reply to the first message, or why
    /// it was not.
    pub(crate) type Opened<G> =
        Result<(G, Option<Timekeeper>, Reply<<G as Play>::Response>), ServiceError>;

    /// How a game is played on a stream: its messages, and how it answers them.
    pub trait Play: Sized + Send + 'static {
        /// A message from the client.
        type Request: Send + 'static;
        /// A reply to the client (which the server writes as its [`WrittenAs::Reply`]).
        type Response: WrittenAs + Send + 'static;
        /// Which game this is.
        const KIND: GameKind;
        /// The RPC that plays it on a stream of its own.
        const RPC: &'static str;
        /// The fields of its reply that say the clock and the end.
        const TIMING: TimingFields;
        /// Its answer to a message, before it is a reply.
        type Played<'a>: Answer<Response = Self::Response>
        where
            Self: 'a;

        /// The game a stream's first message, received at `now`, opens, with its clock,
        /// and the reply to that message; an error (a malformed setup) ends the stream.
        fn open(first: Self::Request, now: Moment) -> Opened<Self>;

        /// Plays a later message: what became of it, and its answer, whose clock
        /// `keeper` keeps.
        fn answer<'a>(
            &'a mut self,
            request: Self::Request,
            keeper: Option<&'a mut Timekeeper>,
        ) -> (Handled, Self::Played<'a>);

        /// The side to move; `None` once the game is over.
        fn side_to_move(&self) -> Option<Side>;

        /// Ends the game with a loss for `loser`, whose time ran out.
        fn forfeit(&mut self, loser: Side);

        /// The game as it stands, as the answer to no message: the announcement of a
        /// loss on time.
        fn standing<'a>(&'a self, timing: &'a Timing) -> Self::Played<'a>;

        /// The reply to a later message, built.
        fn reply(
            &mut self,
            request: Self::Request,
            keeper: Option<&mut Timekeeper>,
        ) -> Reply<Self::Response> {
            let (handled, answer) = self.answer(request, keeper);
            Reply {
                response: answer.into_response(),
                handled,
            }
        }
    }
}

/// Opens `game`, just set up, with its clock (if the setup set one) running from `now`
/// for the side to move, and the reply to the setup, which `answer` makes from the game
/// and what the clock says.
pub(crate) fn set_up<G: LiveGame>(
    game: G,
    clock: Option<Clock>,
    now: Moment,
    answer: impl for<'a> FnOnce(&'a G, Option<&'a Timing>) -> G::Played<'a>,
) -> Opened<G> {
    let keeper = clock.map(|clock| Timekeeper::open(clock, now, game.side_to_move()));
    let reply = answer(&game, keeper.as_ref().map(Timekeeper::said)).into_response();
    Ok((game, keeper, Reply::setup(reply)))
}

/// Opens `game` as it stands, with no clock, with `first`, received at `now`, as its
/// first move: for streams that start without a setup.
pub(crate) fn first_move<G: LiveGame>(mut game: G, first: G::Request) -> Opened<G> {
    let reply = game.reply(first, None);
    Ok((game, None, reply))
}

/// One game as its messages reach it, with its clock and the count of its messages that
/// were not applied moves: what a single-game stream and each game of a PlayMany stream
/// share, so that both answer the same messages alike.
pub(crate) struct Referee<G> {
    game: G,
    /// The clock of a game on the clock; boxed, so that a game without one carries a
    /// pointer's worth.
    keeper: Option<Box<Timekeeper>>,
    unapplied: usize,
    /// The game's end has been counted in the metrics.
    end_counted: bool,
}

impl<G: LiveGame> Referee<G> {
    /// Opens a game with its first message, received at `now`; an error (a malformed
    /// setup, or a setup past `max_unapplied`) opens none.
    pub(crate) fn open(
        first: G::Request,
        max_unapplied: usize,
        now: Moment,
    ) -> Result<(Self, G::Response), ServiceError> {
        let (game, keeper, reply) = G::open(first, now)?;
        let mut referee = Self {
            game,
            keeper: keeper.map(Box::new),
            unapplied: 0,
            end_counted: false,
        };
        let response = referee.count(reply, max_unapplied)?;
        Ok((referee, response))
    }

    /// Plays `request`, a later message received at `now`, and makes its reply with
    /// `reply` from the game's answer (written straight from it); an error when it is
    /// one unapplied message more than `max_unapplied`, which ends the game.
    pub(crate) fn play<T>(
        &mut self,
        request: G::Request,
        max_unapplied: usize,
        now: Moment,
        reply: impl FnOnce(G::Played<'_>) -> T,
    ) -> Result<T, ServiceError> {
        if let Some(keeper) = &mut self.keeper {
            keeper.received(now);
        }
        let (handled, answer) = self.game.answer(request, self.keeper.as_deref_mut());
        let reply = reply(answer);
        self.count(Reply::new(reply, handled), max_unapplied)
    }

    /// Whether the game is on the clock.
    pub(crate) fn is_clocked(&self) -> bool {
        self.keeper.is_some()
    }

    /// When the side to move runs out, if the game is on the clock and goes on.
    pub(crate) fn deadline(&self) -> Option<Moment> {
        self.keeper.as_ref().and_then(|keeper| keeper.deadline())
    }

    /// If the side to move has run out by `now`, ends the game on time and makes the
    /// announcement of it with `announce`, from the game's answer to no message.
    pub(crate) fn run_out<T>(
        &mut self,
        now: Moment,
        announce: impl FnOnce(G::Played<'_>) -> T,
    ) -> Option<T> {
        let keeper = self.keeper.as_mut()?;
        if !keeper.is_out(now) {
            return None;
        }
        let (loser, timing) = keeper.run_out()?;
        self.game.forfeit(loser);
        self.count_end(GameEnding::Time);
        Some(announce(self.game.standing(&timing)))
    }

    fn count<R>(&mut self, reply: Reply<R>, max_unapplied: usize) -> Result<R, ServiceError> {
        match reply.handled {
            Handled::Applied => {
                if !self.end_counted && self.game.side_to_move().is_none() {
                    self.count_end(GameEnding::Board);
                }
            }
            Handled::Rejected => {
                games::rejected(G::KIND);
                self.unapplied += 1;
            }
            Handled::Setup => {
                if self.game.side_to_move().is_none() {
                    self.count_end(GameEnding::Board);
                }
                self.unapplied += 1;
            }
        }
        if self.unapplied > max_unapplied {
            return Err(ServiceError::TooManyMessages {
                rpc: G::RPC,
                limit: max_unapplied,
            });
        }
        Ok(reply.response)
    }

    /// Counts the game's end, so, in the metrics: once a game.
    #[cold]
    fn count_end(&mut self, ending: GameEnding) {
        self.end_counted = true;
        games::ended(G::KIND, ending);
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
        games::opened(kind);
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
        games::closed(self.kind);
    }
}

/// What one stream plays: a single game, or the many games of a PlayMany stream. The
/// stream machinery ([`Session`]) feeds it the stream's messages, one at a time, and
/// asks it for the games whose time ran out.
pub(crate) trait Games: Send + 'static {
    /// A message from the client.
    type Request: Send + 'static;
    /// A reply to the client.
    type Response: Send + 'static;

    /// The reply to one message, received at `now`, after the announcements of the
    /// games whose time ran out by then, which go into `announced`. An error ends the
    /// stream.
    fn handle(
        &mut self,
        request: Self::Request,
        now: Moment,
        announced: &mut VecDeque<Self::Response>,
    ) -> Result<Self::Response, ServiceError>;

    /// When the next clock runs out, if a clock runs: the time to wake the stream and
    /// look (it may find that the clock has since moved on).
    fn deadline(&self) -> Option<Moment>;

    /// A time no running clock runs past, if a clock runs: until then the stream is
    /// not idle.
    fn clocks_run_until(&self) -> Option<Moment> {
        self.deadline()
    }

    /// The announcements of the games whose time ran out by `now`, into `announced`.
    fn expire(&mut self, now: Moment, announced: &mut VecDeque<Self::Response>);
}

/// The one game of a Play* stream, and its place in the live-game count.
struct OneGame<G> {
    referee: Option<Referee<G>>,
    max_unapplied: usize,
    _open: OpenGame,
}

/// The reply to a game's message as the server writes it.
pub(crate) type WrittenReplyOf<G> = <<G as sealed::Play>::Response as WrittenAs>::Reply;

/// The announcement, written, that `referee`'s side to move ran out by `now`, if it has.
fn run_out<G: LiveGame>(referee: &mut Referee<G>, now: Moment) -> Option<WrittenReplyOf<G>> {
    referee.run_out(now, |answer| {
        WrittenReplyOf::<G>::written(|w| answer.write(w))
    })
}

impl<G: LiveGame> Games for OneGame<G> {
    type Request = G::Request;
    type Response = WrittenReplyOf<G>;

    /// Its reply to `request`, written straight from the game (the reply to the first
    /// message is built, then encoded).
    fn handle(
        &mut self,
        request: G::Request,
        now: Moment,
        announced: &mut VecDeque<WrittenReplyOf<G>>,
    ) -> Result<WrittenReplyOf<G>, ServiceError> {
        match &mut self.referee {
            Some(referee) => {
                // A move that arrives after the deadline is never applied: the
                // announcement goes first, and the move is answered as after the end.
                if referee.is_clocked() {
                    announced.extend(run_out(referee, now));
                }
                referee.play(request, self.max_unapplied, now, |answer| {
                    WrittenReplyOf::<G>::written(|w| answer.write(w))
                })
            }
            None => {
                let (referee, response) = Referee::open(request, self.max_unapplied, now)?;
                self.referee = Some(referee);
                Ok(WrittenReplyOf::<G>::encoded(&response))
            }
        }
    }

    fn deadline(&self) -> Option<Moment> {
        self.referee.as_ref().and_then(Referee::deadline)
    }

    fn expire(&mut self, now: Moment, announced: &mut VecDeque<WrittenReplyOf<G>>) {
        if let Some(referee) = &mut self.referee {
            announced.extend(run_out(referee, now));
        }
    }
}

/// A stream's games, shared by the stream and the reaper, which takes them away to end
/// them.
struct Slot<T: Games> {
    held: Mutex<Held<T>>,
}

/// What a [`Slot`] holds: the games while they live, then their last words.
struct Held<T: Games> {
    /// The games; `None` once the reaper has ended them.
    games: Option<T>,
    /// The announcements of the clocks that ran out by the instant a limit ended the
    /// games, made as the reaper took them away, for the stream to send before it ends.
    last_words: VecDeque<T::Response>,
}

impl<T: Games> Slot<T> {
    fn lock(&self) -> MutexGuard<'_, Held<T>> {
        // A panic while the lock was held cannot leave a game half-updated in a way
        // that matters more than ending it, so a poisoned lock is simply taken.
        self.held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<T: Games> reaper::Expire for Slot<T> {
    fn expire(&self, at: Moment) {
        let mut held = self.lock();
        let games = held.games.take();
        if let Some(mut games) = games {
            let Held { last_words, .. } = &mut *held;
            games.expire(at, last_words);
            drop(held);
            drop(games);
        }
    }
}

/// One stream and the games it feeds: the stream of their replies.
struct Session<T: Games, S> {
    messages: S,
    slot: Arc<Slot<T>>,
    watch: Watch,
    /// The stream has ended (the client half-closed and no clock runs, or an error
    /// was sent).
    done: bool,
    /// The client has half-closed: no message comes, but a running clock still ends
    /// its game on time, announced before the stream ends.
    closed: bool,
    /// The messages received so far.
    received: u64,
    /// The call's span, when calls are traced: it is told the message count at the end.
    span: Option<tracing::Span>,
    /// Replies made and not yet sent: the announcements of games whose time ran out,
    /// and after them the reply to a message that came after their deadline. Empty,
    /// and never allocated, while no clock runs out.
    queued: VecDeque<T::Response>,
    /// The error that ends the stream, sent once the replies before it are.
    failed: Option<Status>,
    /// The timer of the next deadline, while a clock runs.
    timer: Option<(Moment, Pin<Box<tokio::time::Sleep>>)>,
    /// A clock ran among its games after the last message: the timer needs looking
    /// after (a stream without one never locks its games to ask).
    timed: bool,
}

// Nothing of a session is pinned: its fields are moved freely, the timer boxed.
impl<T: Games, S: Unpin> Unpin for Session<T, S> {}

impl<T: Games, S> Drop for Session<T, S> {
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
pub(crate) fn open<G, S>(
    messages: S,
    limits: StreamLimits,
    live_games: &LiveGames,
    end_streams: &CancellationToken,
) -> Result<ReplyStream<WrittenReplyOf<G>>, ServiceError>
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
    let games = OneGame::<G> {
        referee: None,
        max_unapplied: limits.max_unapplied,
        _open: open,
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
        held: Mutex::new(Held {
            games: Some(games),
            last_words: VecDeque::new(),
        }),
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
        closed: false,
        received: 0,
        span: otel::current_call(),
        queued: VecDeque::new(),
        failed: None,
        timer: None,
        timed: false,
    })
}

impl<T, S> Stream for Session<T, S>
where
    T: Games,
    S: Stream<Item = Result<T::Request, Status>> + Unpin,
{
    type Item = Result<T::Response, Status>;

    /// The next reply: an announcement of a game whose time ran out, or the reply to
    /// the next message; `None` once the client has half-closed, or after an error,
    /// which ends the stream.
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(reply) = this.queued.pop_front() {
                return Poll::Ready(Some(Ok(reply)));
            }
            if let Some(status) = this.failed.take() {
                this.done = true;
                return Poll::Ready(Some(Err(status)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            if this.closed {
                // No message comes: wait for the running clocks, then end.
                if this.watch.poll_ended(cx).is_ready() {
                    this.end_by_watch();
                } else if !this.poll_timer(cx) {
                    if this.timer.is_some() {
                        return Poll::Pending;
                    }
                    this.done = true;
                }
                continue;
            }
            // The watch first: a game it ended answers no more messages.
            if this.watch.poll_ended(cx).is_ready() {
                this.end_by_watch();
                continue;
            }
            match this.messages.poll_next_unpin(cx) {
                Poll::Ready(next) => {
                    if let Some(reply) = this.reply_to(next) {
                        return Poll::Ready(Some(Ok(reply)));
                    }
                }
                Poll::Pending if (this.timed || this.timer.is_some()) && this.poll_timer(cx) => {}
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl<T, S> Session<T, S>
where
    T: Games,
    S: Stream<Item = Result<T::Request, Status>> + Unpin,
{
    /// The reply to `next`, what the client sent (`None`: it has half-closed), when it
    /// is the next to send; `None` when it waits behind announcements (both queued), or
    /// the stream has half-closed or failed.
    fn reply_to(&mut self, next: Option<Result<T::Request, Status>>) -> Option<T::Response> {
        let request = match next {
            None => {
                self.closed = true;
                return None;
            }
            Some(Ok(request)) => {
                self.received += 1;
                request
            }
            Some(Err(status)) => {
                self.failed =
                    Some(ServiceError::from_transport(&status).map_or(status, Status::from));
                return None;
            }
        };
        let now = self.now();
        self.watch.touch(now);
        let mut held = self.slot.lock();
        let Some(games) = held.games.as_mut() else {
            drop(held);
            self.end_by_watch();
            return None;
        };
        let reply = games.handle(request, now, &mut self.queued);
        let timed = games.deadline().is_some();
        if timed || self.timed {
            // The idle watch learns at once how long the clocks now hold it off, not
            // only when the stream is next polled.
            self.watch.set_clock_deadline(games.clocks_run_until());
        }
        self.timed = timed;
        drop(held);
        match reply {
            Ok(reply) if self.queued.is_empty() => Some(reply),
            Ok(reply) => {
                self.queued.push_back(reply);
                None
            }
            Err(error) => {
                self.failed = Some(error.into());
                None
            }
        }
    }

    /// Polls the timer of the next deadline, arming it for the games' next deadline
    /// first; true when it fired and the announcements it brought are queued.
    fn poll_timer(&mut self, cx: &mut Context<'_>) -> bool {
        let mut fired = None;
        loop {
            let (deadline, until) = match self.slot.lock().games.as_ref() {
                Some(games) => (games.deadline(), games.clocks_run_until()),
                None => (None, None),
            };
            // While a clock runs, the clock and not the idle timeout bounds the game.
            self.watch.set_clock_deadline(until);
            let Some(deadline) = deadline else {
                self.timer = None;
                return false;
            };
            let mut until = self.watch.instant(deadline);
            if fired == Some(deadline) {
                // It fired and nothing ran out by it: never spin on it.
                until += Duration::from_millis(1);
            }
            // One timer a stream, moved as the next deadline moves.
            let sleep = match &mut self.timer {
                Some((at, sleep)) => {
                    if *at != deadline || fired.is_some() {
                        *at = deadline;
                        sleep.as_mut().reset(until);
                    }
                    sleep
                }
                timer => {
                    &mut timer
                        .insert((deadline, Box::pin(tokio::time::sleep_until(until))))
                        .1
                }
            };
            if sleep.as_mut().poll(cx).is_pending() {
                return false;
            }
            let before = self.queued.len();
            if let Some(games) = self.slot.lock().games.as_mut() {
                games.expire(self.now(), &mut self.queued);
            }
            if self.queued.len() > before {
                return true;
            }
            fired = Some(deadline);
            // Nothing ran out (the deadline was one its game has since moved past):
            // wait for the next.
        }
    }

    /// Now, on the timeline of the stream's clocks, by tokio's clock (which tests can
    /// stop).
    fn now(&self) -> Moment {
        self.watch.moment(tokio::time::Instant::now())
    }

    /// Ends the stream as the watch ended its games: the announcements of the clocks
    /// that ran out by then first, then why.
    fn end_by_watch(&mut self) {
        let last_words = std::mem::take(&mut self.slot.lock().last_words);
        self.queued.extend(last_words);
        self.failed = Some(self.ending_error().into());
    }

    /// Why the watch ended the game.
    fn ending_error(&self) -> ServiceError {
        match self.watch.ending() {
            Some(reaper::Ending::Idle(idle)) => ServiceError::StreamIdle { idle },
            Some(reaper::Ending::Lifetime(limit)) => ServiceError::GameTooLong { limit },
            None => ServiceError::ShuttingDown,
        }
    }
}

/// The rejection of a setup that is not a stream's first message.
pub(crate) const SETUP_NOT_FIRST: &str =
    "a setup is accepted only as the first message of a stream; the game goes on";
