//! Live games on the clock, as the service keeps them: a setup's time control read and
//! checked, the clock kept beside the game, and the clock and the ending written into
//! every reply.

use std::time::Duration;

use crate::kit::clock::{Clock, Moment, Side, TimeControl};
use crate::proto::replies::Writer;
use crate::proto::wire::fields as wire;
use crate::proto::wire::{Field, Len, Varint};
use crate::proto::{self, Ending};

use super::error::{Violation, Violations};

/// The longest `initial` time and `move_limit`: a day.
const MAX_INITIAL: Duration = Duration::from_secs(24 * 60 * 60);
/// The longest `increment`: an hour.
const MAX_INCREMENT: Duration = Duration::from_secs(60 * 60);
/// The most time a resumed game's side may have left: two days.
const MAX_LEFT: Duration = Duration::from_secs(48 * 60 * 60);

/// A live game's clock, kept beside a game on the clock (a game without one has none,
/// and its replies say only how the board ended it), and the moment the message being
/// answered was received.
#[derive(Debug, Clone)]
pub struct Timekeeper {
    clock: Clock,
    /// The side to move ran out: the game ended on time.
    ended_on_time: bool,
    /// When the message being answered arrived.
    now: Moment,
    /// What the reply to the last message played says (see [`Timekeeper::after`]).
    said: Timing,
}

/// What a reply of a game on the clock says of it: each side's time left (A's, then
/// B's), how the game ended, and whether the reply answers no message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Each side's time left, in nanoseconds.
    left: [u64; 2],
    /// `left` as the reply's `Clock` holds it: each side's `Duration` field, encoded.
    encoded: [EncodedSide; 2],
    /// How the game ended; `Unspecified` while it goes on.
    pub(crate) ending: Ending,
    /// The reply announces a loss on time, answering no message.
    pub(crate) unprompted: bool,
}

impl Timekeeper {
    /// A game set up with `clock`, its first message received at `now`; the clock starts
    /// for `to_move`, or stays stopped if the game is already over.
    pub(crate) fn open(mut clock: Clock, now: Moment, to_move: Option<Side>) -> Self {
        if let Some(side) = to_move {
            clock.start(side, now);
        }
        let said = Timing::of_nanos(
            clock.left_nanos_at(now),
            board_ending(to_move.is_none()),
            false,
        );
        Self {
            clock,
            ended_on_time: false,
            now,
            said,
        }
    }

    /// What the reply to the last message played says: as the game opens, the reply
    /// to its setup.
    pub(crate) fn said(&self) -> &Timing {
        &self.said
    }

    /// Notes that the message being answered arrived at `now`.
    pub(crate) fn received(&mut self, now: Moment) {
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
        let ending = self.ending(to_move.is_none());
        self.said
            .update(self.clock.left_nanos_at(self.now), ending, false);
        &self.said
    }

    /// When the side to move runs out, while the clock runs.
    pub(crate) fn deadline(&self) -> Option<Moment> {
        self.clock.deadline()
    }

    /// Whether the side to move has run out by `now`.
    pub(crate) fn is_out(&self, now: Moment) -> bool {
        self.clock.is_out(now)
    }

    /// The side to move ran out: the clock stops as it stood at the deadline, the game
    /// ends on time. Returns the loser and what the announcement says; `None` if the
    /// clock was not running.
    pub(crate) fn run_out(&mut self) -> Option<(Side, Timing)> {
        let deadline = self.clock.deadline()?;
        let loser = self.clock.run_out()?;
        self.ended_on_time = true;
        let mut timing = self.said;
        timing.update(self.clock.left_nanos_at(deadline), Ending::Time, true);
        Some((loser, timing))
    }

    /// After a message that ended the game with no move (a claim in chess): the clock
    /// stops as of the message, the side to move charged for its turn, and the game
    /// ended `ending` (unless it already ended on time). Returns what the reply says.
    #[allow(
        dead_code,
        reason = "for a game that ends with no move; contract v5's have none"
    )]
    pub(crate) fn ended(&mut self, ending: Ending) -> &Timing {
        self.clock.stop(self.now);
        let ending = if self.ended_on_time {
            Ending::Time
        } else {
            ending
        };
        self.said
            .update(self.clock.left_nanos_at(self.now), ending, false);
        &self.said
    }

    fn ending(&self, over: bool) -> Ending {
        if self.ended_on_time {
            Ending::Time
        } else {
            board_ending(over)
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

/// The [`TimingFields`] of the reply whose field constants are `wire::fields::$reply`:
/// every live reply names them `clock`, `ending` and `unprompted`.
macro_rules! timing_fields {
    ($reply:ident) => {
        $crate::glue::timing::TimingFields {
            clock: $crate::proto::wire::fields::$reply::CLOCK,
            ending: $crate::proto::wire::fields::$reply::ENDING,
            unprompted: $crate::proto::wire::fields::$reply::UNPROMPTED,
        }
    };
}
pub(crate) use timing_fields;

/// Writes a live reply's last fields, as `at` numbers them: its clock, ending and
/// `unprompted` for a game on the clock (`timing`), else only the ending once the board
/// has ended the game (`over`).
#[inline]
pub(crate) fn write_timing(timing: Option<&Timing>, over: bool, at: TimingFields, w: &mut Writer) {
    write_ending(timing, board_ending(over), at, w);
}

/// Writes a live reply's last fields, as `at` numbers them: its clock, ending and
/// `unprompted` for a game on the clock (`timing`), else only `ending`, how the game
/// ended if it has (on the board, or by a claim).
#[inline]
pub(crate) fn write_ending(
    timing: Option<&Timing>,
    ending: Ending,
    at: TimingFields,
    w: &mut Writer,
) {
    match timing {
        Some(timing) => timing.write(at, w),
        None if ending != Ending::Unspecified => w.int32(at.ending, ending.into()),
        None => {}
    }
}

/// How a game stands that did not end on time: ended by the board (`over`), or going on.
fn board_ending(over: bool) -> Ending {
    if over {
        Ending::Board
    } else {
        Ending::Unspecified
    }
}

impl Timing {
    /// What a reply says: `left` on each side, the game's `ending`, and whether it is an
    /// announcement (`unprompted`).
    #[cfg(test)]
    pub(crate) fn new(left: [Duration; 2], ending: Ending, unprompted: bool) -> Self {
        let nanos = |span: Duration| u64::try_from(span.as_nanos()).unwrap_or(u64::MAX);
        Self::of_nanos(left.map(nanos), ending, unprompted)
    }

    /// [`Timing::new`] of each side's nanoseconds left.
    fn of_nanos(left: [u64; 2], ending: Ending, unprompted: bool) -> Self {
        Self {
            left,
            encoded: [
                EncodedSide::new(wire::clock::A_LEFT, left[0]),
                EncodedSide::new(wire::clock::B_LEFT, left[1]),
            ],
            ending,
            unprompted,
        }
    }

    /// Makes this what the next reply says: only a side whose time changed is encoded
    /// again (after a move, only the mover's has: the other's turn has just begun), in
    /// place.
    fn update(&mut self, left: [u64; 2], ending: Ending, unprompted: bool) {
        if left[0] != self.left[0] {
            self.encoded[0].set(wire::clock::A_LEFT, left[0]);
        }
        if left[1] != self.left[1] {
            self.encoded[1].set(wire::clock::B_LEFT, left[1]);
        }
        self.left = left;
        self.ending = ending;
        self.unprompted = unprompted;
    }

    // Inlined, as are `EncodedSide::set` and `varint35`: as calls, they cost a clocked
    // move in PlayMany a twentieth more.
    #[inline(always)]
    fn write(&self, at: TimingFields, w: &mut Writer) {
        let [a, b] = &self.encoded;
        let keys = [at.clock.key(), at.ending.key(), at.unprompted.key()];
        let ending = i32::from(self.ending);
        if keys.iter().all(|&key| key < 0x80) && (0..0x80).contains(&ending) {
            // Every key of these fields is one byte, and so is every ending: the
            // fields are put together in fixed-size copies and written at once.
            let mut fields = [0; 2 + 2 * 16 + 4];
            fields[0] = keys[0] as u8;
            fields[1] = a.len + b.len;
            fields[2..18].copy_from_slice(&a.bytes);
            let mut len = 2 + usize::from(a.len);
            if let Some(slot) = fields.get_mut(len..len + 16) {
                slot.copy_from_slice(&b.bytes);
            }
            len += usize::from(b.len);
            for (key, value) in [
                (keys[1], ending as u8),
                (keys[2], u8::from(self.unprompted)),
            ] {
                if value != 0 {
                    if let Some(slot) = fields.get_mut(len..len + 2) {
                        slot.copy_from_slice(&[key as u8, value]);
                    }
                    len += 2;
                }
            }
            w.encoded_fields_within(&fields, len);
        } else {
            w.encoded_message_of(at.clock, [a.bytes(), b.bytes()]);
            w.int32(at.ending, ending);
            w.bool(at.unprompted, self.unprompted);
        }
    }
}

/// One side's time left as a `Clock` holds it: the `Duration` field, key, length and
/// body, as prost encodes it (its zero fields left out), at most 14 bytes. Kept from
/// reply to reply, since a move changes one side's time and every reply of a game on the
/// clock carries both, and built in a register: byte by byte through nested messages,
/// the clock cost a clocked move in PlayMany a fifth of its instructions more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EncodedSide {
    bytes: [u8; 16],
    len: u8,
}

impl EncodedSide {
    /// Field `field` of a `Clock`, of `nanos` nanoseconds.
    fn new(field: Len, nanos: u64) -> Self {
        let mut side = Self {
            bytes: [0; 16],
            len: 0,
        };
        side.set(field, nanos);
        side
    }

    /// Makes this field `field` of a `Clock`, of `nanos` nanoseconds.
    #[inline(always)]
    fn set(&mut self, field: Len, nanos: u64) {
        const NANOS_PER_SECOND: u64 = 1_000_000_000;
        let (seconds, nanos) = (nanos / NANOS_PER_SECOND, nanos % NANOS_PER_SECOND);
        // Every key here is one byte: the fields of `Clock` and `Duration` are 1 and 2.
        // Cleared first, so that equal times are equal bytes past `len` too.
        self.bytes = [0; 16];
        let bytes = &mut self.bytes;
        bytes[0] = field.key() as u8;
        let mut at = 2;
        for (key, value) in [
            (wire::duration::SECONDS.key(), seconds),
            (wire::duration::NANOS.key(), nanos),
        ] {
            if value != 0 {
                // The key and the varint: six bytes at most, written as eight, the
                // bytes past them overwritten next or left out.
                let (varint, len) = varint35(value);
                let field = u64::from(key) | varint << 8;
                if let Some(slot) = bytes.get_mut(at..at + 8) {
                    slot.copy_from_slice(&field.to_le_bytes());
                }
                at += 1 + len;
            }
        }
        bytes[1] = (at - 2) as u8;
        self.len = at as u8;
    }

    fn bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or_default()
    }
}

/// `value` as a varint of at most five bytes, in the low bytes of the result, and its
/// length: without a loop, since a clock's times fit 35 bits (a side's time is at most
/// `u64::MAX` nanoseconds: under 2^35 seconds; its nanoseconds, under 2^30). A larger
/// value is written as the largest that fits.
#[inline(always)]
fn varint35(value: u64) -> (u64, usize) {
    let value = value.min((1 << 35) - 1);
    let spread = (value & 0x7f)
        | (value << 1 & 0x7f << 8)
        | (value << 2 & 0x7f << 16)
        | (value << 3 & 0x7f << 24)
        | (value << 4 & 0x7f << 32);
    // Seven bits a byte: 1 to 5 bytes.
    let len = (64 - (value | 1).leading_zeros() as usize).div_ceil(7);
    // Every byte but the last says another follows.
    let more = 0x8080_8080 & ((1u64 << (8 * (len - 1))) - 1);
    (spread | more, len)
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
    let field = "setup.time_control.initial";
    let initial = match &control.initial {
        None => {
            violations.push(Violation::new(field, "is required"));
            None
        }
        Some(initial) => checked(field, initial, violations).and_then(|initial| {
            let fits = !initial.is_zero() && initial <= MAX_INITIAL;
            if !fits {
                violations.push(Violation::new(
                    field,
                    "must be more than 0 and at most 24 hours",
                ));
            }
            fits.then_some(initial)
        }),
    };
    let increment = within(
        "setup.time_control.increment",
        control.increment.as_ref(),
        MAX_INCREMENT,
        "1 hour",
        violations,
    );
    let move_limit = within(
        "setup.time_control.move_limit",
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use prost::Message;

    /// `value` as the well-known `Duration` prost encodes.
    fn to_proto(value: Duration) -> prost_types::Duration {
        prost_types::Duration {
            seconds: i64::try_from(value.as_secs()).unwrap(),
            nanos: i32::try_from(value.subsec_nanos()).unwrap(),
        }
    }

    /// A game ended with no move (a claim): the clock stops as of the message, the side
    /// to move charged for its turn without an increment, and the reply says how it
    /// ended; a game that ended on time first stays ended on time.
    #[test]
    fn a_game_ended_with_no_move_stops_its_clock() {
        use crate::kit::clock::TimeControl;
        let control = TimeControl {
            initial: Duration::from_secs(10),
            increment: Duration::from_secs(5),
            move_limit: None,
        };
        let clock = Clock::new(control, [Duration::from_secs(10); 2]);
        let start = Moment::from_nanos(0);
        let mut keeper = Timekeeper::open(clock, start, Some(Side::A));
        keeper.received(start.after(Duration::from_secs(3)));
        let said = *keeper.ended(Ending::Board);
        assert_eq!(said.ending, Ending::Board);
        assert_eq!(said.left, [7_000_000_000, 10_000_000_000]);
        assert_eq!(keeper.deadline(), None);
        assert!(!keeper.is_out(start.after(Duration::from_secs(60))));

        let clock = Clock::new(control, [Duration::from_secs(1); 2]);
        let mut keeper = Timekeeper::open(clock, start, Some(Side::A));
        assert!(keeper.run_out().is_some());
        keeper.received(start.after(Duration::from_secs(3)));
        assert_eq!(keeper.ended(Ending::Board).ending, Ending::Time);
    }

    proptest! {
        /// A side's time is written as prost writes it, whatever its size: zero, whole
        /// seconds, under a second, and varints of every length.
        #[test]
        fn a_side_is_encoded_as_prost_encodes_it(
            // Up to the most a side can hold, `u64::MAX` nanoseconds.
            seconds in prop_oneof![Just(0u64), 0..128u64, 0..=u64::MAX / 1_000_000_000 - 1],
            nanos in prop_oneof![Just(0u32), 0..128u32, 0..1_000_000_000u32],
            b_side in any::<bool>(),
        ) {
            let value = Duration::new(seconds, nanos);
            let (field, clock) = if b_side {
                (wire::clock::B_LEFT, proto::Clock { a_left: None, b_left: Some(to_proto(value)) })
            } else {
                (wire::clock::A_LEFT, proto::Clock { a_left: Some(to_proto(value)), b_left: None })
            };
            let encoded = EncodedSide::new(field, seconds * 1_000_000_000 + u64::from(nanos));
            prop_assert_eq!(encoded.bytes(), &clock.encode_to_vec()[..]);
        }

        #[test]
        fn a_varint_of_35_bits_is_prost_s(value in prop_oneof![0..(1u64 << 7), 0..(1u64 << 35)]) {
            let (varint, len) = varint35(value);
            let mut expected = Vec::new();
            prost::encoding::encode_varint(value, &mut expected);
            prop_assert_eq!(&varint.to_le_bytes()[..len], &expected[..]);
            prop_assert_eq!(varint >> (8 * len), 0);
        }
    }
}
