//! The live-game metrics (`arbiter_live_games`, `arbiter_rejected_moves_total` and
//! `arbiter_games_ended_total`), counted through handles taken once, when the metrics
//! recorder is installed: a game's opening, its rejected moves, its end and its closing
//! then hash no label and look nothing up. As the calls' metrics (`layer`), they are
//! counted only when metrics are served; without a metrics listener they cost nothing.

use std::sync::OnceLock;

use metrics::{Counter, Gauge};

use super::names::{GAMES_ENDED_TOTAL, LIVE_GAMES, REJECTED_MOVES_TOTAL};
use crate::games::GameKind;

/// How a live game ended, as the `ending` label of `arbiter_games_ended_total` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GameEnding {
    /// The rules decided it on the board.
    Board,
    /// The side to move ran out of time.
    Time,
}

impl GameEnding {
    /// Every ending, in the order of [`GameEnding::index`].
    pub(crate) const ALL: [Self; 2] = [Self::Board, Self::Time];

    /// The `ending` label.
    pub(crate) const fn label(self) -> &'static str {
        match self {
            Self::Board => "board",
            Self::Time => "time",
        }
    }

    const fn index(self) -> usize {
        match self {
            Self::Board => 0,
            Self::Time => 1,
        }
    }
}

/// One game's handles.
struct GameHandles {
    live: Gauge,
    rejected: Counter,
    /// By [`GameEnding::index`].
    ended: [Counter; 2],
}

static HANDLES: OnceLock<[GameHandles; GameKind::ALL.len()]> = OnceLock::new();

/// Takes the handles from the recorder just installed (and registers every series at
/// zero, so that dashboards see them before any game is played).
pub(super) fn install() {
    HANDLES.get_or_init(|| {
        GameKind::ALL.map(|game| {
            let handles = GameHandles {
                live: metrics::gauge!(LIVE_GAMES, "game" => game.label()),
                rejected: metrics::counter!(REJECTED_MOVES_TOTAL, "game" => game.label()),
                ended: GameEnding::ALL.map(|ending| {
                    metrics::counter!(
                        GAMES_ENDED_TOTAL,
                        "game" => game.label(),
                        "ending" => ending.label()
                    )
                }),
            };
            handles.live.increment(0.0);
            handles.rejected.increment(0);
            for ended in &handles.ended {
                ended.increment(0);
            }
            handles
        })
    });
}

fn handles(kind: GameKind) -> Option<&'static GameHandles> {
    HANDLES.get().and_then(|all| all.get(kind.index()))
}

/// One more live game of `kind` is open.
pub(crate) fn opened(kind: GameKind) {
    if let Some(handles) = handles(kind) {
        handles.live.increment(1.0);
    }
}

/// A live game of `kind` has closed.
pub(crate) fn closed(kind: GameKind) {
    if let Some(handles) = handles(kind) {
        handles.live.decrement(1.0);
    }
}

/// A message of a live game of `kind` was answered with `rejected` set.
pub(crate) fn rejected(kind: GameKind) {
    if let Some(handles) = handles(kind) {
        handles.rejected.increment(1);
    }
}

/// A live game of `kind` ended so.
pub(crate) fn ended(kind: GameKind, ending: GameEnding) {
    if let Some(ended) = handles(kind).and_then(|handles| handles.ended.get(ending.index())) {
        ended.increment(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ending_indexes_follow_the_list() {
        for (index, ending) in GameEnding::ALL.into_iter().enumerate() {
            assert_eq!(ending.index(), index, "{ending:?}");
        }
    }
}
