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

/// A live game's clock, kept beside a game on the clock (a game without one has none,
/// and its replies say only how the board ended it), and the instant the message being
/// answered was received.
#[derive(Debug, Clone)]
pub struct Timekeeper {
    clock: Clock,
    /// The side to move ran out: the game ended on time.
    ended_on_time: bool,
    /// When the message being answered arrived.
    now: Instant,
    /// What the reply to the last message played says (see [`Timekeeper::after`]).
    said: Timing,
}

/// What a reply of a game on the clock says of it: each side's time left (A's, then
/// B's), how the game ended, and whether the reply answers no message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Each side's time left.
    pub(crate) left: [Duration; 2],
    /// How the game ended; `Unspecified` while it goes on.
    pub(crate) ending: Ending,
    /// The reply announces a loss on time, answering no message.
    pub(crate) unprompted: bool,
}

impl Timekeeper {
    /// A game set up with `clock`, its first message received at `now`; the clock starts
    /// for `to_move`, or stays stopped if the game is already over.
    pub(crate) fn open(mut clock: Clock, now: Instant, to_move: Option<Side>) -> Self {
        if let Some(side) = to_move {
            clock.start(side, now);
        }
        let mut keeper = Self {
            clock,
            ended_on_time: false,
            now,
            said: Timing {
                left: [Duration::ZERO; 2],
                ending: Ending::Unspecified,
                unprompted: false,
            },
        };
        keeper.said = keeper.timing(now, false, to_move.is_none());
        keeper
    }

    /// What the reply to the last message played says: as the game opens, the reply
    /// to its setup.
    pub(crate) fn said(&self) -> &Timing {
        &self.said
    }

    /// Notes that the message being answered arrived at `now`.
    pub(crate) fn received(&mut self, now: Instant) {
        self.now = now;
    }

    /// After a message: if it was an applied move, the mover is charged for its turn
    /// and given its increment, and `to_move`'s turn begins (or the clock stops, the
    /// game over). Returns what the reply says, kept here so that the reply can borrow
    /// it rather than carry it.
    pub(crate) fn after(&mut self, applied: bool, to_move: Option<Side>) -> &Timing {
        if applied {
            self.clock.moved(self.now, to_move);
        }
        self.said = self.timing(self.now, false, to_move.is_none());
        &self.said
    }

    /// When the side to move runs out, while the clock runs.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.clock.deadline()
    }

    /// Whether the side to move has run out by `now`.
    pub(crate) fn is_out(&self, now: Instant) -> bool {
        self.clock.is_out(now)
    }

    /// The side to move ran out: the clock stops as it stood at the deadline, the game
    /// ends on time. Returns the loser and what the announcement says; `None` if the
    /// clock was not running.
    pub(crate) fn run_out(&mut self) -> Option<(Side, Timing)> {
        let deadline = self.clock.deadline()?;
        let loser = self.clock.run_out()?;
        self.ended_on_time = true;
        Some((loser, self.timing(deadline, true, true)))
    }

    fn timing(&self, now: Instant, unprompted: bool, over: bool) -> Timing {
        Timing {
            left: self.clock.left_at(now),
            ending: if self.ended_on_time {
                Ending::Time
            } else if over {
                Ending::Board
            } else {
                Ending::Unspecified
            },
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

/// Writes a live reply's last fields, as `at` numbers them: its clock, ending and
/// `unprompted` for a game on the clock (`timing`), else only the ending once the board
/// has ended the game (`over`).
#[inline]
pub(crate) fn write_timing(timing: Option<&Timing>, over: bool, at: TimingFields, w: &mut Writer) {
    match timing {
        Some(timing) => timing.write(at, w),
        None if over => w.int32(at.ending, Ending::Board.into()),
        None => {}
    }
}

/// A live reply's `ending` (see [`write_timing`]).
pub(crate) fn ending(timing: Option<&Timing>, over: bool) -> i32 {
    match timing {
        Some(timing) => timing.ending.into(),
        None if over => Ending::Board.into(),
        None => Ending::Unspecified.into(),
    }
}

impl Timing {
    fn write(&self, at: TimingFields, w: &mut Writer) {
        let (clock, len) = clock_bytes(self.left);
        w.encoded_message(at.clock, clock.get(..len).unwrap_or_default());
        w.int32(at.ending, self.ending.into());
        w.bool(at.unprompted, self.unprompted);
    }

    /// The clock as the reply's message holds it.
    pub(crate) fn clock(&self) -> proto::Clock {
        let [a, b] = self.left;
        proto::Clock {
            a_left: Some(to_proto(a)),
            b_left: Some(to_proto(b)),
        }
    }
}

/// The most bytes of an encoded `Clock`: two Durations, each a one-byte key, a one-byte
/// length, and at most two fields of a one-byte key and a ten-byte varint.
const CLOCK_BYTES: usize = 2 * (2 + 2 * 11);

/// The encoded `Clock` of `left` (A's time, then B's), as prost encodes it (each
/// Duration present, its zero fields left out), and its length: built on the stack and
/// written at once, since every reply of a game on the clock carries one (byte by byte
/// through nested messages, it cost a clocked move a fifth of its instructions more).
fn clock_bytes(left: [Duration; 2]) -> ([u8; CLOCK_BYTES], usize) {
    use crate::proto::wire::Field;
    use prost::encoding::encoded_len_varint as varint_len;
    let mut bytes = [0; CLOCK_BYTES];
    let mut at = 0;
    let mut put = |mut value: u64| {
        while value >= 0x80 {
            if let Some(byte) = bytes.get_mut(at) {
                *byte = value as u8 | 0x80;
            }
            at += 1;
            value >>= 7;
        }
        if let Some(byte) = bytes.get_mut(at) {
            *byte = value as u8;
        }
        at += 1;
    };
    let (seconds_key, nanos_key) = (
        u64::from(wire::duration::SECONDS.key()),
        u64::from(wire::duration::NANOS.key()),
    );
    for (field, value) in [
        (wire::clock::A_LEFT, left[0]),
        (wire::clock::B_LEFT, left[1]),
    ] {
        let proto = to_proto(value);
        let (seconds, nanos) = (proto.seconds as u64, i64::from(proto.nanos) as u64);
        let len = [(seconds_key, seconds), (nanos_key, nanos)]
            .iter()
            .filter(|(_, value)| *value != 0)
            .map(|&(key, value)| varint_len(key) + varint_len(value))
            .sum::<usize>();
        put(u64::from(field.key()));
        put(len as u64);
        if seconds != 0 {
            put(seconds_key);
            put(seconds);
        }
        if nanos != 0 {
            put(nanos_key);
            put(nanos);
        }
    }
    (bytes, at.min(CLOCK_BYTES))
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
