//! The count of live games across the server, and the watch on them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::reaper::Reaper;
use crate::games::GameKind;
use crate::telemetry::games;

/// How many live games are open right now, shared by every clone, and the watch on
/// their idle time and lifetime.
#[derive(Debug, Clone, Default)]
pub struct LiveGames {
    count: Arc<AtomicUsize>,
    pub(super) reaper: Reaper,
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
