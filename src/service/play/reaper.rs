//! The watch on every live game's idle time and lifetime: one task per server ends the
//! games that have been silent or open too long, whether or not anything polls their
//! streams.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::StreamLimits;

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
    /// Frees the game's state and its place in the live-game count.
    fn expire(&self);
}

/// One watched game's clock, shared by its stream and the reaper.
struct Watched {
    opened: Instant,
    /// When the last message arrived, in nanoseconds after `opened`.
    last_message: AtomicU64,
    idle_timeout: Duration,
    lifetime: Duration,
    ending: OnceLock<Ending>,
    /// Cancelled when the watch ends the game, or when the server's grace period is
    /// over (it is a child of the server's token).
    ended: CancellationToken,
    game: Arc<dyn Expire>,
}

impl Watched {
    /// Why the game should end at `now`, if it should.
    fn due(&self, now: Instant) -> Option<Ending> {
        let open = now.saturating_duration_since(self.opened);
        let last = Duration::from_nanos(self.last_message.load(Ordering::Relaxed));
        if open >= self.lifetime {
            Some(Ending::Lifetime(self.lifetime))
        } else if open.saturating_sub(last) >= self.idle_timeout {
            Some(Ending::Idle(self.idle_timeout))
        } else {
            None
        }
    }
}

/// A game's end of the watch, held by its stream.
pub(super) struct Watch(Arc<Watched>);

impl Watch {
    /// Notes that a message arrived now.
    pub(super) fn touch(&self) {
        let since = Instant::now().saturating_duration_since(self.0.opened);
        let nanos = u64::try_from(since.as_nanos()).unwrap_or(u64::MAX);
        self.0.last_message.store(nanos, Ordering::Relaxed);
    }

    /// Completes when the watch has ended the game or the server's grace period is over.
    pub(super) async fn ended(&self) {
        self.0.ended.cancelled().await;
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
            ended: end_streams.child_token(),
            game,
        });
        lock(&self.registry.watched).push(Arc::downgrade(&watched));
        self.registry.started.get_or_init(|| self.start(limits));
        Watch(watched)
    }

    /// Spawns the task that ends overdue games, looking a few times per shortest limit.
    /// Without a Tokio runtime (a fuzz target driving the streams by hand) there is no
    /// task, and games end only with their streams.
    fn start(&self, limits: StreamLimits) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let period = (limits.idle_timeout.min(limits.max_game_duration) / 8)
            .clamp(Duration::from_millis(5), Duration::from_secs(1));
        let registry = Arc::downgrade(&self.registry);
        runtime.spawn(async move {
            let mut ticks = tokio::time::interval(period);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(registry) = registry.upgrade() else {
                    return;
                };
                reap(&registry, Instant::now());
            }
        });
    }
}

/// Ends every game overdue at `now`, and forgets the games that are gone.
fn reap(registry: &Registry, now: Instant) {
    let mut overdue = Vec::new();
    lock(&registry.watched).retain(|weak| {
        let Some(watched) = weak.upgrade() else {
            return false;
        };
        match watched.due(now) {
            Some(ending) => {
                overdue.push((watched, ending));
                false
            }
            None => true,
        }
    });
    // The games are freed outside the registry's lock.
    for (watched, ending) in overdue {
        let _ = watched.ending.set(ending);
        watched.game.expire();
        watched.ended.cancel();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
