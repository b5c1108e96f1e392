//! A game clock, as an arena keeps one: each side has a budget of time that runs only
//! while it is that side's turn, an increment added after each of its moves, and
//! perhaps a limit on any one move. A side whose time runs out, or whose move takes
//! longer than the limit, loses.
//!
//! The clock is told the moments things happen at (a turn begins, a move arrives); it
//! reads no clock of its own, so it is the same under a real clock and a test's. Its
//! moments and times are whole nanoseconds, so that what a move costs the clock is a few
//! integer operations.

use std::time::Duration;

/// A point in time, in nanoseconds since an origin of the caller's choosing (a live
/// stream's start), the same for every moment one clock is told.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Moment(u64);

impl Moment {
    /// The moment `nanos` nanoseconds after the origin.
    pub const fn from_nanos(nanos: u64) -> Self {
        Self(nanos)
    }

    /// The nanoseconds from the origin to this moment.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// The moment `span` after this one (the last moment there is, past it).
    pub fn after(self, span: Duration) -> Self {
        Self(self.0.saturating_add(nanos(span)))
    }

    /// The time from `earlier` to this moment; zero if `earlier` is later.
    pub fn since(self, earlier: Self) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

/// A span's whole nanoseconds (584 years at most: any longer span counts as that).
fn nanos(span: Duration) -> u64 {
    u64::try_from(span.as_nanos()).unwrap_or(u64::MAX)
}

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

/// A game's players, as its clock knows them: the one who moves first is side A.
pub trait Seat: Copy + PartialEq {
    /// The player who moves first (side A).
    const FIRST: Self;
    /// The player who moves second (side B).
    const SECOND: Self;

    /// This player's side.
    fn side(self) -> Side {
        if self == Self::FIRST {
            Side::A
        } else {
            Side::B
        }
    }

    /// The player on `side`.
    fn on(side: Side) -> Self {
        match side {
            Side::A => Self::FIRST,
            Side::B => Self::SECOND,
        }
    }
}

/// A game of two players taking turns, as its clock sees it: whose turn it is, and a
/// loss on time. A game says it of its own players; the sides follow.
pub trait Turns {
    /// Its players.
    type Player: Seat;

    /// The player to move; `None` once the game is over.
    fn player_to_move(&self) -> Option<Self::Player>;

    /// Ends the game with a loss for `loser`.
    fn forfeit_player(&mut self, loser: Self::Player);

    /// The side to move; `None` once the game is over.
    fn side_to_move(&self) -> Option<Side> {
        self.player_to_move().map(Seat::side)
    }

    /// Ends the game with a loss for the side `loser`, whose time ran out.
    fn lose_on_time(&mut self, loser: Side) {
        self.forfeit_player(Self::Player::on(loser));
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
    /// `control.increment` in nanoseconds.
    increment: u64,
    /// `control.move_limit` in nanoseconds; no limit is the longest.
    move_limit: u64,
    /// Each side's time left, in nanoseconds, as of the start of the running turn: A's,
    /// then B's.
    left: [u64; 2],
    /// The side whose time runs and when its turn began; `None` once the clock stopped
    /// (or before it starts).
    turn: Option<(Side, Moment)>,
}

impl Clock {
    /// A clock of `control` with `left` on each side (A's, then B's), not running.
    pub fn new(control: TimeControl, left: [Duration; 2]) -> Self {
        Self {
            control,
            increment: nanos(control.increment),
            move_limit: control.move_limit.map_or(u64::MAX, nanos),
            left: left.map(nanos),
            turn: None,
        }
    }

    /// The clock's time control.
    pub fn control(&self) -> TimeControl {
        self.control
    }

    /// Starts `side`'s turn at `now`.
    pub fn start(&mut self, side: Side, now: Moment) {
        self.turn = Some((side, now));
    }

    /// The side whose time is running, if any.
    pub fn running(&self) -> Option<Side> {
        self.turn.map(|(side, _)| side)
    }

    /// When the running side runs out: its time is gone, or its move has taken the
    /// move limit, whichever comes first. `None` when no time runs.
    pub fn deadline(&self) -> Option<Moment> {
        let (side, since) = self.turn?;
        Some(Moment(since.0.saturating_add(self.allowed(side))))
    }

    /// Whether the running side has run out by `now` (a move that arrives at its
    /// deadline is too late).
    pub fn is_out(&self, now: Moment) -> bool {
        self.deadline().is_some_and(|deadline| now >= deadline)
    }

    /// Each side's time left at `now` (A's, then B's): the running side's less its turn
    /// so far, down to zero.
    pub fn left_at(&self, now: Moment) -> [Duration; 2] {
        self.left_nanos_at(now).map(Duration::from_nanos)
    }

    /// The running side moved at `now`, in time: its turn is charged and the increment
    /// added; then `next`'s turn begins at `now`, or, with `None` (the game ended), the
    /// clock stops.
    pub fn moved(&mut self, now: Moment, next: Option<Side>) {
        if let Some((side, _)) = self.turn {
            let left = self.left_nanos_at(now)[side.index()];
            self.left[side.index()] = left.saturating_add(self.increment);
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
    pub fn stop(&mut self, now: Moment) {
        self.left = self.left_nanos_at(now);
        self.turn = None;
    }

    /// Each side's time left at `now`, in whole nanoseconds (see [`Clock::left_at`]).
    pub fn left_nanos_at(&self, now: Moment) -> [u64; 2] {
        let mut left = self.left;
        if let Some((side, since)) = self.turn {
            let used = now.0.saturating_sub(since.0);
            left[side.index()] = left[side.index()].saturating_sub(used);
        }
        left
    }

    /// How many nanoseconds `side`'s turn may last from its start.
    fn allowed(&self, side: Side) -> u64 {
        self.left[side.index()].min(self.move_limit)
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
        let t0 = Moment::from_nanos(1_000);
        let mut clock = Clock::new(control(60, 2, None), [secs(60), secs(60)]);
        clock.start(Side::A, t0);
        assert_eq!(clock.deadline(), Some(t0.after(secs(60))));
        assert_eq!(clock.left_at(t0.after(secs(10))), [secs(50), secs(60)]);
        clock.moved(t0.after(secs(10)), Some(Side::B));
        assert_eq!(clock.left_at(t0.after(secs(10))), [secs(52), secs(60)]);
        assert_eq!(clock.running(), Some(Side::B));
        assert_eq!(clock.deadline(), Some(t0.after(secs(70))));
        // A side that moves again (the other passed) keeps its own time running.
        clock.moved(t0.after(secs(15)), Some(Side::B));
        assert_eq!(clock.left_at(t0.after(secs(15))), [secs(52), secs(57)]);
    }

    #[test]
    fn a_side_runs_out_at_its_deadline_not_before() {
        let t0 = Moment::from_nanos(1_000);
        let mut clock = Clock::new(control(5, 0, None), [secs(5), secs(3)]);
        clock.start(Side::B, t0);
        assert!(!clock.is_out(t0.after(Duration::from_millis(2999))));
        assert!(clock.is_out(t0.after(secs(3))));
        assert_eq!(clock.run_out(), Some(Side::B));
        assert_eq!(clock.left_at(t0.after(secs(9))), [secs(5), Duration::ZERO]);
        assert_eq!(clock.deadline(), None);
        assert_eq!(clock.run_out(), None);
    }

    #[test]
    fn the_move_limit_ends_a_turn_whatever_is_left() {
        let t0 = Moment::from_nanos(1_000);
        let mut clock = Clock::new(control(60, 0, Some(2)), [secs(60), secs(1)]);
        clock.start(Side::A, t0);
        assert_eq!(clock.deadline(), Some(t0.after(secs(2))));
        assert_eq!(clock.run_out(), Some(Side::A));
        // What A's clock still held when the move limit ran out.
        assert_eq!(clock.left_at(t0), [secs(58), secs(1)]);
        // Less left than the limit: the clock runs out first.
        clock.start(Side::B, t0);
        assert_eq!(clock.deadline(), Some(t0.after(secs(1))));
    }

    #[test]
    fn a_stopped_clock_keeps_its_times() {
        let t0 = Moment::from_nanos(1_000);
        let mut clock = Clock::new(control(10, 1, None), [secs(10), secs(10)]);
        clock.start(Side::A, t0);
        clock.moved(t0.after(secs(4)), None);
        assert_eq!(clock.running(), None);
        assert_eq!(clock.left_at(t0.after(secs(100))), [secs(7), secs(10)]);
        clock.start(Side::B, t0);
        clock.stop(t0.after(secs(3)));
        assert_eq!(clock.left_at(t0.after(secs(100))), [secs(7), secs(7)]);
    }
}
