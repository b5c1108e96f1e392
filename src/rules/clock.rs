//! A game clock, as an arena keeps one: each side has a budget of time that runs only
//! while it is that side's turn, an increment added after each of its moves, and
//! perhaps a limit on any one move. A side whose time runs out, or whose move takes
//! longer than the limit, loses.
//!
//! The clock is told the instants things happen at (a turn begins, a move arrives); it
//! reads no clock of its own, so it is the same under a real clock and a test's.

use std::time::{Duration, Instant};

/// One side of a two-player game: A moves first (X, Black, player 1), B second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The side that moves first.
    A,
    /// The other side.
    B,
}

impl Side {
    /// The other side.
    pub const fn other(self) -> Self {
        match self {
            Self::A => Self::B,
            Self::B => Self::A,
        }
    }

    const fn index(self) -> usize {
        match self {
            Self::A => 0,
            Self::B => 1,
        }
    }
}

/// How a game's clock runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeControl {
    /// Each side's time at the start.
    pub initial: Duration,
    /// Added to a side's time after each of its moves.
    pub increment: Duration,
    /// The most one move may take, whatever time is left; `None`: no limit.
    pub move_limit: Option<Duration>,
}

/// Each side's time, and whose is running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clock {
    control: TimeControl,
    /// Each side's time left as of the start of the running turn: A's, then B's.
    left: [Duration; 2],
    /// The side whose time runs and when its turn began; `None` once the clock stopped
    /// (or before it starts).
    turn: Option<(Side, Instant)>,
}

impl Clock {
    /// A clock of `control` with `left` on each side (A's, then B's), not running.
    pub fn new(control: TimeControl, left: [Duration; 2]) -> Self {
        Self {
            control,
            left,
            turn: None,
        }
    }

    /// The clock's time control.
    pub fn control(&self) -> TimeControl {
        self.control
    }

    /// Starts `side`'s turn at `now`.
    pub fn start(&mut self, side: Side, now: Instant) {
        self.turn = Some((side, now));
    }

    /// The side whose time is running, if any.
    pub fn running(&self) -> Option<Side> {
        self.turn.map(|(side, _)| side)
    }

    /// When the running side runs out: its time is gone, or its move has taken the
    /// move limit, whichever comes first. `None` when no time runs.
    pub fn deadline(&self) -> Option<Instant> {
        let (side, since) = self.turn?;
        Some(since + self.allowed(side))
    }

    /// Whether the running side has run out by `now` (a move that arrives at its
    /// deadline is too late).
    pub fn is_out(&self, now: Instant) -> bool {
        self.deadline().is_some_and(|deadline| now >= deadline)
    }

    /// Each side's time left at `now` (A's, then B's): the running side's less its turn
    /// so far, down to zero.
    pub fn left_at(&self, now: Instant) -> [Duration; 2] {
        let mut left = self.left;
        if let Some((side, since)) = self.turn {
            let used = now.saturating_duration_since(since);
            left[side.index()] = left[side.index()].saturating_sub(used);
        }
        left
    }

    /// The running side moved at `now`, in time: its turn is charged and the increment
    /// added; then `next`'s turn begins at `now`, or, with `None` (the game ended), the
    /// clock stops.
    pub fn moved(&mut self, now: Instant, next: Option<Side>) {
        if let Some((side, _)) = self.turn {
            let left = self.left_at(now)[side.index()];
            self.left[side.index()] = left.saturating_add(self.control.increment);
        }
        self.turn = next.map(|next| (next, now));
    }

    /// The running side ran out: the clock stops as it stood at the deadline (the
    /// loser's time at zero, or what it still held when the move limit ran out), and
    /// the loser is returned. `None` if no time was running.
    pub fn run_out(&mut self) -> Option<Side> {
        let (side, _) = self.turn?;
        let spent = self.allowed(side);
        self.left[side.index()] = self.left[side.index()].saturating_sub(spent);
        self.turn = None;
        Some(side)
    }

    /// Stops the clock at `now`, the running side charged for its turn (a game that
    /// ended with no move).
    pub fn stop(&mut self, now: Instant) {
        self.left = self.left_at(now);
        self.turn = None;
    }

    /// How long `side`'s turn may last from its start.
    fn allowed(&self, side: Side) -> Duration {
        let left = self.left[side.index()];
        match self.control.move_limit {
            Some(limit) => left.min(limit),
            None => left,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(initial: u64, increment: u64, move_limit: Option<u64>) -> TimeControl {
        TimeControl {
            initial: Duration::from_secs(initial),
            increment: Duration::from_secs(increment),
            move_limit: move_limit.map(Duration::from_secs),
        }
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn a_turn_is_charged_to_its_side_and_the_increment_added() {
        let t0 = Instant::now();
        let mut clock = Clock::new(control(60, 2, None), [secs(60), secs(60)]);
        clock.start(Side::A, t0);
        assert_eq!(clock.deadline(), Some(t0 + secs(60)));
        assert_eq!(clock.left_at(t0 + secs(10)), [secs(50), secs(60)]);
        clock.moved(t0 + secs(10), Some(Side::B));
        assert_eq!(clock.left_at(t0 + secs(10)), [secs(52), secs(60)]);
        assert_eq!(clock.running(), Some(Side::B));
        assert_eq!(clock.deadline(), Some(t0 + secs(70)));
        // A side that moves again (the other passed) keeps its own time running.
        clock.moved(t0 + secs(15), Some(Side::B));
        assert_eq!(clock.left_at(t0 + secs(15)), [secs(52), secs(57)]);
    }

    #[test]
    fn a_side_runs_out_at_its_deadline_not_before() {
        let t0 = Instant::now();
        let mut clock = Clock::new(control(5, 0, None), [secs(5), secs(3)]);
        clock.start(Side::B, t0);
        assert!(!clock.is_out(t0 + Duration::from_millis(2999)));
        assert!(clock.is_out(t0 + secs(3)));
        assert_eq!(clock.run_out(), Some(Side::B));
        assert_eq!(clock.left_at(t0 + secs(9)), [secs(5), Duration::ZERO]);
        assert_eq!(clock.deadline(), None);
        assert_eq!(clock.run_out(), None);
    }

    #[test]
    fn the_move_limit_ends_a_turn_whatever_is_left() {
        let t0 = Instant::now();
        let mut clock = Clock::new(control(60, 0, Some(2)), [secs(60), secs(1)]);
        clock.start(Side::A, t0);
        assert_eq!(clock.deadline(), Some(t0 + secs(2)));
        assert_eq!(clock.run_out(), Some(Side::A));
        // What A's clock still held when the move limit ran out.
        assert_eq!(clock.left_at(t0), [secs(58), secs(1)]);
        // Less left than the limit: the clock runs out first.
        clock.start(Side::B, t0);
        assert_eq!(clock.deadline(), Some(t0 + secs(1)));
    }

    #[test]
    fn a_stopped_clock_keeps_its_times() {
        let t0 = Instant::now();
        let mut clock = Clock::new(control(10, 1, None), [secs(10), secs(10)]);
        clock.start(Side::A, t0);
        clock.moved(t0 + secs(4), None);
        assert_eq!(clock.running(), None);
        assert_eq!(clock.left_at(t0 + secs(100)), [secs(7), secs(10)]);
        clock.start(Side::B, t0);
        clock.stop(t0 + secs(3));
        assert_eq!(clock.left_at(t0 + secs(100)), [secs(7), secs(7)]);
    }
}
