//! The watch on every live game's idle time and lifetime: one task per server ends the
//! games that have been silent or open too long, whether or not anything polls their
//! streams.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::task::AtomicWaker;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::StreamLimits;
use crate::kit::clock::Moment;

/// Why the watch ended a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    /// No message arrived for this long.
    Idle(Duration),
    /// The game lasted its whole allowed lifetime.
    Lifetime(Duration),
}

/// A game's state that the watch can end: dropping it frees the game.
pub(super) trait Expire: Send + Sync {
    /// Frees the game's state and its place in the live-game count, ended by a limit at
    /// `at` (on the timeline of [`Watch::moment`]): first every clock that ran out by
    /// then is announced, so a game's result goes out before the limit ends its stream.
    fn expire(&self, at: Moment);
}

/// One watched game's clock, shared by its stream and the reaper.
struct Watched {
    opened: Instant,
    /// When the last message arrived, in nanoseconds after `opened`.
    last_message: AtomicU64,
    idle_timeout: Duration,
    lifetime: Duration,
    ending: OnceLock<Ending>,
    /// Set when the watch ends the game, or when the server's grace period is over.
    ended: AtomicBool,
    /// While a game's clock runs, when it runs out, in nanoseconds after `opened` (0:
    /// no clock runs): until then the clock, not the idle timeout, bounds the game.
    clock_deadline: AtomicU64,
    /// The stream's task, woken when `ended` is set.
    waker: AtomicWaker,
    game: Arc<dyn Expire>,
}

impl Watched {
    /// Why the game should end at `now`, if it should. A zero limit is no limit.
    fn due(&self, now: Instant) -> Option<Ending> {
        let open = now.saturating_duration_since(self.opened);
        let last = Duration::from_nanos(self.last_message.load(Ordering::Relaxed));
        if !self.lifetime.is_zero() && open >= self.lifetime {
            Some(Ending::Lifetime(self.lifetime))
        } else if !self.idle_timeout.is_zero()
            && open.saturating_sub(last) >= self.idle_timeout
            && open.as_nanos() >= u128::from(self.clock_deadline.load(Ordering::Relaxed))
        {
            Some(Ending::Idle(self.idle_timeout))
        } else {
            None
        }
    }

    /// The instant, after `opened`, at which `ending` ended the game (`None`: the
    /// server's grace period, over at `now`). An idle timeout waits for the running
    /// clocks, so it ends a game no sooner than their deadline.
    fn ended_at(&self, ending: Option<Ending>, now: Instant) -> Duration {
        match ending {
            Some(Ending::Lifetime(lifetime)) => lifetime,
            Some(Ending::Idle(idle)) => {
                let last = Duration::from_nanos(self.last_message.load(Ordering::Relaxed));
                let clocks = Duration::from_nanos(self.clock_deadline.load(Ordering::Relaxed));
                last.saturating_add(idle).max(clocks)
            }
            None => now.saturating_duration_since(self.opened),
        }
    }

    /// Ends the game at `now`: announces the clocks that ran out by the instant it
    /// ended, frees it and wakes its stream, which then sends those announcements and
    /// answers why.
    fn end(&self, ending: Option<Ending>, now: Instant) {
        if let Some(ending) = ending {
            let _ = self.ending.set(ending);
        }
        self.game.expire(moment_after(self.ended_at(ending, now)));
        self.ended.store(true, Ordering::Release);
        self.waker.wake();
    }
}

/// The moment `since` after the watch began.
fn moment_after(since: Duration) -> Moment {
    Moment::from_nanos(u64::try_from(since.as_nanos()).unwrap_or(u64::MAX))
}

/// A game's end of the watch, held by its stream.
pub(super) struct Watch(Arc<Watched>);

impl Watch {
    /// The moment `at` on the timeline of the stream's clocks, which starts when the
    /// watch began (before the stream's first message).
    pub(super) fn moment(&self, at: Instant) -> Moment {
        moment_after(at.saturating_duration_since(self.0.opened))
    }

    /// The instant of `moment` on the timeline of [`Watch::moment`] (a century on, for a
    /// moment past what an instant can hold, which no platform's is).
    pub(super) fn instant(&self, moment: Moment) -> Instant {
        let since = Duration::from_nanos(moment.as_nanos());
        let century = Duration::from_secs(100 * 365 * 24 * 60 * 60);
        (self.0.opened.checked_add(since))
            .or_else(|| self.0.opened.checked_add(century))
            .unwrap_or(self.0.opened)
    }

    /// Notes that a message arrived at `now`.
    pub(super) fn touch(&self, now: Moment) {
        self.0.last_message.store(now.as_nanos(), Ordering::Relaxed);
    }

    /// Notes when the next clock of the stream's games runs out, if one runs: the idle
    /// timeout waits until then.
    pub(super) fn set_clock_deadline(&self, deadline: Option<Moment>) {
        let nanos = deadline.map_or(0, |deadline| deadline.as_nanos().max(1));
        self.0.clock_deadline.store(nanos, Ordering::Relaxed);
    }

    /// Ready once the watch has ended the game or the server's grace period is over;
    /// otherwise wakes the task of `cx` when that happens. Costs a stream no lock per
    /// message: one atomic load, and a waker registration.
    pub(super) fn poll_ended(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.ended.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        self.0.waker.register(cx.waker());
        // Set between the first load and the registration: no wake is coming for it.
        if self.0.ended.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }

    /// Why the watch ended the game; `None` while it lives, or when the server ended it.
    pub(super) fn ending(&self) -> Option<Ending> {
        self.0.ending.get().copied()
    }
}

/// The watch over every live game of one server.
#[derive(Debug, Clone, Default)]
pub(super) struct Reaper {
    registry: Arc<Registry>,
}

#[derive(Default)]
struct Registry {
    watched: Mutex<Vec<Weak<Watched>>>,
    started: OnceLock<()>,
    /// Set once the server's grace period is over: every game is ended, and any game
    /// opened after that at once.
    shut_down: AtomicBool,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry").finish_non_exhaustive()
    }
}

impl Reaper {
    /// Starts watching `game` under `limits`; `end_streams` is cancelled when the
    /// server's shutdown grace period is over.
    pub(super) fn watch(
        &self,
        game: Arc<dyn Expire>,
        limits: StreamLimits,
        end_streams: &CancellationToken,
    ) -> Watch {
        let watched = Arc::new(Watched {
            opened: Instant::now(),
            last_message: AtomicU64::new(0),
            idle_timeout: limits.idle_timeout,
            lifetime: limits.max_game_duration,
            ending: OnceLock::new(),
            ended: AtomicBool::new(false),
            clock_deadline: AtomicU64::new(0),
            waker: AtomicWaker::new(),
            game,
        });
        lock(&self.registry.watched).push(Arc::downgrade(&watched));
        self.registry
            .started
            .get_or_init(|| self.start(limits, end_streams.clone()));
        // Checked after registering: a shutdown from now on finds this game registered.
        if self.registry.shut_down.load(Ordering::Acquire) || end_streams.is_cancelled() {
            watched.end(None, Instant::now());
        }
        Watch(watched)
    }

    /// Spawns the task that ends overdue games, looking a few times per shortest limit
    /// that is on (once a second when both are off), and every game once `end_streams`
    /// is cancelled. Without a Tokio runtime (a fuzz target driving the streams by hand)
    /// there is no task, and games end only with their streams.
    fn start(&self, limits: StreamLimits, end_streams: CancellationToken) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let shortest = [limits.idle_timeout, limits.max_game_duration]
            .into_iter()
            .filter(|limit| !limit.is_zero())
            .min()
            .unwrap_or(Duration::MAX);
        let period = (shortest / 8).clamp(Duration::from_millis(5), Duration::from_secs(1));
        let registry = Arc::downgrade(&self.registry);
        runtime.spawn(async move {
            let mut ticks = tokio::time::interval(period);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = ticks.tick() => {}
                    () = end_streams.cancelled(), if !end_streams.is_cancelled() => {}
                }
                let Some(registry) = registry.upgrade() else {
                    return;
                };
                // Asked of the token, not of the branch taken: a tick due at the instant
                // of the cancellation may be taken first, and the cancellation's branch is
                // off from then on.
                if end_streams.is_cancelled() {
                    registry.shut_down.store(true, Ordering::Release);
                }
                reap(&registry, Instant::now());
            }
        });
    }
}

/// Ends every game overdue at `now` (every game, once the server has shut down), and
/// forgets the games that are gone.
fn reap(registry: &Registry, now: Instant) {
    let shut_down = registry.shut_down.load(Ordering::Acquire);
    let mut overdue = Vec::new();
    lock(&registry.watched).retain(|weak| {
        let Some(watched) = weak.upgrade() else {
            return false;
        };
        match watched.due(now) {
            Some(ending) => {
                overdue.push((watched, Some(ending)));
                false
            }
            None if shut_down => {
                overdue.push((watched, None));
                false
            }
            None => true,
        }
    });
    // The games are freed outside the registry's lock.
    for (watched, ending) in overdue {
        watched.end(ending, now);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nothing;

    impl Expire for Nothing {
        fn expire(&self, _at: Moment) {}
    }

    fn watched(idle_timeout: Duration, lifetime: Duration) -> Watched {
        Watched {
            opened: Instant::now(),
            last_message: AtomicU64::new(0),
            clock_deadline: AtomicU64::new(0),
            idle_timeout,
            lifetime,
            ending: OnceLock::new(),
            ended: AtomicBool::new(false),
            waker: AtomicWaker::new(),
            game: Arc::new(Nothing),
        }
    }

    /// A zero limit never ends a game; the other limit still does.
    #[test]
    fn a_zero_limit_is_off() {
        let second = Duration::from_secs(1);
        let hour = Duration::from_secs(3600);
        let both_off = watched(Duration::ZERO, Duration::ZERO);
        assert_eq!(both_off.due(both_off.opened + 1000 * hour), None);
        let lifetime_only = watched(Duration::ZERO, hour);
        assert_eq!(lifetime_only.due(lifetime_only.opened + second), None);
        assert_eq!(
            lifetime_only.due(lifetime_only.opened + hour),
            Some(Ending::Lifetime(hour))
        );
        let idle_only = watched(second, Duration::ZERO);
        assert_eq!(idle_only.due(idle_only.opened), None);
        assert_eq!(
            idle_only.due(idle_only.opened + 1000 * hour),
            Some(Ending::Idle(second))
        );
    }
}
