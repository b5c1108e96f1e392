//! The count of live games across the server, and the watch on them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::reaper::Reaper;
use super::StreamLimits;
use crate::games::GameKind;
use crate::glue::error::{Holder, ServiceError};
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

    /// Counts one more live game of `kind` for `holder` (when the call came over a
    /// connection), unless the server already holds `limits.max_live_games`, or the
    /// holder's connection or caller its share; each check and its count are one atomic
    /// step, so concurrent opens cannot pass a limit.
    pub(crate) fn try_open(
        &self,
        limits: &StreamLimits,
        kind: GameKind,
        holder: Option<&GameHolder>,
    ) -> Result<OpenGame, ServiceError> {
        let held = match holder {
            Some(holder) => {
                let caller = limits.max_live_games_per_caller;
                if !take_place(&holder.caller, caller) {
                    return Err(ServiceError::TooManyGamesHeld {
                        holder: Holder::Caller(holder.caller_name.clone()),
                        limit: caller,
                    });
                }
                let connection = limits.max_live_games_per_connection;
                if !take_place(&holder.connection, connection) {
                    holder.caller.fetch_sub(1, Ordering::Relaxed);
                    return Err(ServiceError::TooManyGamesHeld {
                        holder: Holder::Connection,
                        limit: connection,
                    });
                }
                Some(HeldGame(holder.clone()))
            }
            None => None,
        };
        if !take_place(&self.count, limits.max_live_games) {
            return Err(ServiceError::TooManyGames {
                limit: limits.max_live_games,
            });
        }
        games::opened(kind);
        Ok(OpenGame {
            count: Arc::clone(&self.count),
            kind,
            _held: held,
        })
    }
}

/// Counts one more in `count` unless it holds `limit` already (a place under a limit,
/// here and in the transport's in-flight limit); the check and the count are one atomic
/// step.
pub(crate) fn take_place(count: &AtomicUsize, limit: usize) -> bool {
    count
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |open| {
            (open < limit).then_some(open + 1)
        })
        .is_ok()
}

/// Who holds a call's live games: the counts of its connection and of its caller (every
/// connection from one address), put in a Play* call's extensions by the transport.
#[derive(Debug, Clone)]
pub(crate) struct GameHolder {
    /// The connection's live games.
    pub(crate) connection: Arc<AtomicUsize>,
    /// The caller's live games.
    pub(crate) caller: Arc<AtomicUsize>,
    /// The caller's address or name, when known.
    pub(crate) caller_name: Option<Arc<str>>,
}

/// A game counted in its holder's shares until dropped.
struct HeldGame(GameHolder);

impl Drop for HeldGame {
    fn drop(&mut self) {
        self.0.connection.fetch_sub(1, Ordering::Relaxed);
        self.0.caller.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Counts one game as live until dropped.
pub(crate) struct OpenGame {
    count: Arc<AtomicUsize>,
    kind: GameKind,
    _held: Option<HeldGame>,
}

impl Drop for OpenGame {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
        games::closed(self.kind);
    }
}
