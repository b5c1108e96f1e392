//! The stream of one Play* or PlayMany call: it feeds the client's messages to its
//! games one at a time, as the transport asks for replies, wakes for the clocks that run
//! out, and ends as the client, an error or the reaper ends it.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;
use tonic::Status;

use super::limits::StreamLimits;
use super::live_games::LiveGames;
use super::reaper::{self, Watch};
use crate::glue::error::ServiceError;
use crate::kit::clock::Moment;
use crate::telemetry::otel;

/// The replies of one live game.
pub type ReplyStream<R> = Pin<Box<dyn Stream<Item = Result<R, Status>> + Send>>;

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
