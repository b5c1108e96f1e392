//! Live games on the clock, as the service keeps them: a setup's time control read and
//! checked, the clock kept beside the game, and the clock and the ending written into
//! every reply.

use std::time::{Duration, Instant};

use crate::proto::replies::Writer;
use crate::proto::wire::fields as wire;
use crate::proto::wire::{Len, Varint};
use crate::proto::{self, Ending};
use crate::rules::clock::{Clock, Side, TimeControl};

use super::error::{Violation, Violations};

/// The longest `initial` time and `move_limit`: a day.
const MAX_INITIAL: Duration = Duration::from_secs(24 * 60 * 60);
/// The longest `increment`: an hour.
const MAX_INCREMENT: Duration = Duration::from_secs(60 * 60);
/// The most time a resumed game's side may have left: two days.
const MAX_LEFT: Duration = Duration::from_secs(48 * 60 * 60);

/// A live game's clock, if it has one, and how the game ended, if it has: what the
/// stream machinery keeps beside each game, and the instant the message being answered
/// was received.
#[derive(Debug, Clone, Default)]
pub struct Timekeeper {
    /// Boxed: a game without a clock, most games, carries a pointer's worth.
    clock: Option<Box<Clock>>,
    ending: Option<Ending>,
    /// When the message being answered arrived.
    now: Option<Instant>,
}

/// What a reply says of the clock and the end: each side's time left (A's, then B's),
/// how the game ended, and whether the reply answers no message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timing {
    /// Each side's time left, for a game on the clock.
    pub(crate) left: Option<[Duration; 2]>,
    /// How the game ended; `Unspecified` while it goes on.
    pub(crate) ending: Ending,
    /// The reply announces a loss on time, answering no message.
    pub(crate) unprompted: bool,
}

impl Timekeeper {
    /// A game set up with `clock` (or none), its first message received at `now`; the
    /// clock starts for `to_move`, or stays stopped if the game is already over.
    pub(crate) fn open(clock: Option<Clock>, now: Instant, to_move: Option<Side>) -> Self {
        let mut keeper = Self {
            clock: clock.map(Box::new),
            ending: None,
            now: Some(now),
        };
        if let (Some(clock), Some(side)) = (&mut keeper.clock, to_move) {
            clock.start(side, now);
        }
        keeper.note_end(to_move);
        keeper
    }

    /// What a reply to the message being answered says, with nothing played.
    pub(crate) fn current(&self) -> Timing {
        self.timing(self.now.unwrap_or_else(Instant::now), false)
    }

    /// Notes that the message being answered arrived at `now`.
    pub(crate) fn received(&mut self, now: Instant) {
        self.now = Some(now);
    }

    /// After a message: if it was an applied move, the mover is charged for its turn
    /// and given its increment, and `to_move`'s turn begins (or the clock stops, the
    /// game over). Returns what the reply says.
    #[inline]
    pub(crate) fn after(&mut self, applied: bool, to_move: Option<Side>) -> Timing {
        let now = self.now.unwrap_or_else(Instant::now);
        if applied {
            if let Some(clock) = &mut self.clock {
                clock.moved(now, to_move);
            }
            self.note_end(to_move);
        }
        self.timing(now, false)
    }

    /// When the side to move runs out, if a clock runs.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.clock.as_ref().and_then(|clock| clock.deadline())
    }

    /// Whether the side to move has run out by `now`.
    pub(crate) fn is_out(&self, now: Instant) -> bool {
        self.clock.as_ref().is_some_and(|clock| clock.is_out(now))
    }

    /// The side to move ran out: the clock stops as it stood at the deadline, the game
    /// ends on time. Returns the loser and what the announcement says; `None` if no
    /// clock was running.
    pub(crate) fn run_out(&mut self) -> Option<(Side, Timing)> {
        let clock = self.clock.as_mut()?;
        let deadline = clock.deadline()?;
        let loser = clock.run_out()?;
        self.ending = Some(Ending::Time);
        Some((loser, self.timing(deadline, true)))
    }

    /// How the game ended, if it has.
    pub(crate) fn ending(&self) -> Option<Ending> {
        self.ending
    }

    fn note_end(&mut self, to_move: Option<Side>) {
        if to_move.is_none() && self.ending.is_none() {
            self.ending = Some(Ending::Board);
        }
    }

    fn timing(&self, now: Instant, unprompted: bool) -> Timing {
        Timing {
            left: self.clock.as_ref().map(|clock| clock.left_at(now)),
            ending: self.ending.unwrap_or(Ending::Unspecified),
            unprompted,
        }
    }
}

/// The fields of a live game's reply that say the clock and the end.
#[derive(Debug, Clone, Copy)]
pub struct TimingFields {
    pub(crate) clock: Len,
    pub(crate) ending: Varint,
    pub(crate) unprompted: Varint,
}

impl Timing {
    /// Writes the clock and the ending as `at` numbers them (the last fields of every
    /// live reply, so written after the game's).
    pub(crate) fn write(&self, at: TimingFields, w: &mut Writer) {
        if let Some([a, b]) = self.left {
            w.message(at.clock, |w| {
                duration(w, wire::clock::A_LEFT, a);
                duration(w, wire::clock::B_LEFT, b);
            });
        }
        w.int32(at.ending, self.ending.into());
        w.bool(at.unprompted, self.unprompted);
    }

    /// The clock as the reply's message holds it.
    pub(crate) fn clock(&self) -> Option<proto::Clock> {
        self.left.map(|[a, b]| proto::Clock {
            a_left: Some(to_proto(a)),
            b_left: Some(to_proto(b)),
        })
    }
}

/// A `google.protobuf.Duration` field of `value` (set even when zero).
fn duration(w: &mut Writer, field: Len, value: Duration) {
    let proto = to_proto(value);
    w.message(field, |w| {
        w.int64(wire::duration::SECONDS, proto.seconds);
        w.int32(wire::duration::NANOS, proto.nanos);
    });
}

fn to_proto(value: Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: i64::try_from(value.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(value.subsec_nanos()).unwrap_or_default(),
    }
}

/// Reads a setup's `time_control` and `clock` (fields named under `setup.`): the clock
/// they set, `None` without a time control, or a violation per problem.
pub(crate) fn set_up(
    time_control: Option<&proto::TimeControl>,
    clock: Option<&proto::Clock>,
    violations: &mut Violations,
) -> Option<Clock> {
    let Some(control) = time_control else {
        if clock.is_some() {
            violations.push(Violation::new(
                "setup.clock",
                "is set without a setup.time_control: a clock needs a time control",
            ));
        }
        return None;
    };
    let before = violations.len();
    let field = "setup.time_control";
    let initial = match &control.initial {
        None => {
            violations.push(Violation::new(format!("{field}.initial"), "is required"));
            None
        }
        Some(initial) => {
            checked(&format!("{field}.initial"), initial, violations).and_then(|initial| {
                let fits = !initial.is_zero() && initial <= MAX_INITIAL;
                if !fits {
                    violations.push(Violation::new(
                        format!("{field}.initial"),
                        "must be more than 0 and at most 24 hours",
                    ));
                }
                fits.then_some(initial)
            })
        }
    };
    let increment = within(
        &format!("{field}.increment"),
        control.increment.as_ref(),
        MAX_INCREMENT,
        "1 hour",
        violations,
    );
    let move_limit = within(
        &format!("{field}.move_limit"),
        control.move_limit.as_ref(),
        MAX_INITIAL,
        "24 hours",
        violations,
    );
    let left = clock.map(|clock| {
        [
            within(
                "setup.clock.a_left",
                clock.a_left.as_ref(),
                MAX_LEFT,
                "48 hours",
                violations,
            ),
            within(
                "setup.clock.b_left",
                clock.b_left.as_ref(),
                MAX_LEFT,
                "48 hours",
                violations,
            ),
        ]
    });
    let initial = initial?;
    if violations.len() > before {
        return None;
    }
    let control = TimeControl {
        initial,
        increment: increment.unwrap_or_default(),
        move_limit: move_limit.filter(|limit| !limit.is_zero()),
    };
    let [a, b] = match (clock, left) {
        (Some(clock), Some([a, b])) => [
            clock.a_left.as_ref().and(a).unwrap_or(initial),
            clock.b_left.as_ref().and(b).unwrap_or(initial),
        ],
        _ => [initial, initial],
    };
    Some(Clock::new(control, [a, b]))
}

/// An optional duration of 0 to `max` (unset: zero), or a violation on `field`.
fn within(
    field: &str,
    value: Option<&prost_types::Duration>,
    max: Duration,
    max_words: &str,
    violations: &mut Violations,
) -> Option<Duration> {
    let Some(value) = value else {
        return Some(Duration::ZERO);
    };
    let value = checked(field, value, violations)?;
    if value > max {
        violations.push(Violation::new(field, format!("must be 0 to {max_words}")));
        return None;
    }
    Some(value)
}

/// A well-formed, non-negative duration, or a violation on `field`.
fn checked(
    field: &str,
    value: &prost_types::Duration,
    violations: &mut Violations,
) -> Option<Duration> {
    let (seconds, nanos) = (value.seconds, value.nanos);
    let problem = if !(-999_999_999..=999_999_999).contains(&nanos) {
        Some(format!(
            "nanos must be -999999999 to 999999999, got {nanos}"
        ))
    } else if (seconds > 0 && nanos < 0) || (seconds < 0 && nanos > 0) {
        Some(format!(
            "seconds and nanos must have the same sign, got {seconds} and {nanos}"
        ))
    } else if seconds < 0 || nanos < 0 {
        Some("must not be negative".to_owned())
    } else {
        None
    };
    if let Some(problem) = problem {
        violations.push(Violation::new(field, problem));
        return None;
    }
    let seconds = u64::try_from(seconds).ok()?;
    let nanos = u32::try_from(nanos).ok()?;
    Some(Duration::new(seconds, nanos))
}
