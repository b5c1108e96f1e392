//! The replies the server writes itself: the two bulk replies, `CheckBatchResponse`
//! and `PlayManyResponse`, and the three live games' replies, each encoded into one
//! growing buffer the moment its answer is known.
//!
//! prost would hold a reply as a tree of messages (a `CheckResult` or `GameState` per
//! item, with its response, board and cell lists) and, to encode it, compute the length
//! of every nested message at every level it is written from: an Othello state's cells
//! were measured four times and written once. Here each item is written front to back,
//! and each nested message's length is patched in when its end is reached (a nested
//! message of 128 bytes or more, whose length takes two bytes or more, is moved up to
//! make room for it). The bytes are prost's, field for field (the tests below hold them
//! to prost's encoding of the same messages, both ways), so clients decode them as the
//! generated messages of [`crate::proto`].
//!
//! The server's stubs answer with these types, and so do [`crate::Arbiter::open_many`]
//! and the in-process bulk calls; `to_response` reads one as the generated message. A
//! client, Rust ones included, receives the generated messages.

use prost::bytes::{Buf, BufMut};
use prost::encoding::{encode_key, encode_varint, DecodeContext, WireType};
use prost::DecodeError;

use crate::kit::grid::{self, Grid};

use super::wire::{fields, Field, Len, Varint};
use super::{CheckResult, GameState};

/// A reply as the server writes it: the bytes of its message, written straight from
/// the answer rather than built as prost's types and encoded.
pub trait WrittenReply: prost::Message + Default + Send + 'static {
    /// The message it holds the bytes of.
    type Response: prost::Message + Default;

    /// The reply whose fields `write` writes.
    fn written(write: impl FnOnce(&mut Writer)) -> Self;

    /// The encoded message: the reply's whole wire body.
    fn bytes(&self) -> &[u8];

    /// The reply as the client's message, decoded from its bytes.
    fn to_response(&self) -> Result<Self::Response, DecodeError>;
}

/// A message that the server writes as its `Reply` (`build.rs` puts that type in the
/// server's stubs in the message's place).
pub trait WrittenAs: prost::Message + Default {
    /// The message as the server writes it.
    type Reply: WrittenReply<Response = Self>;
}

/// The room a written reply starts with: a small board's state fits (a 100x100 board's
/// grows the buffer a few times).
const WRITTEN_BYTES: usize = 256;

/// Declares `$reply`, a [`WrittenReply`] of `$whole`.
macro_rules! written_reply {
    ($(#[$doc:meta])* $reply:ident: $whole:path) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Default, Debug)]
        pub struct $reply {
            buf: Vec<u8>,
        }

        impl WrittenAs for $whole {
            type Reply = $reply;
        }

        impl WrittenReply for $reply {
            type Response = $whole;

            fn written(write: impl FnOnce(&mut Writer)) -> Self {
                let mut buf = Vec::with_capacity(WRITTEN_BYTES);
                write(&mut Writer { buf: &mut buf });
                Self { buf }
            }

            fn bytes(&self) -> &[u8] {
                &self.buf
            }

            fn to_response(&self) -> Result<$whole, DecodeError> {
                // The inherent method's, which needs no trait in scope.
                $reply::to_response(self)
            }
        }

        impl $reply {
            /// The encoded message: the reply's whole wire body.
            pub fn as_bytes(&self) -> &[u8] {
                &self.buf
            }

            /// The reply as the client's message, decoded from its bytes.
            pub fn to_response(&self) -> Result<$whole, DecodeError> {
                prost::Message::decode(self.as_bytes())
            }
        }

        message_impl! {
            $reply;
            encode_raw(reply, out) {
                out.put_slice(&reply.buf);
            }
            merge_field(reply, tag, wire_type, buf, ctx) {
                merge_raw(&mut reply.buf, tag, wire_type, buf, ctx)
            }
            encoded_len(reply) {
                reply.buf.len()
            }
            clear(reply) {
                reply.buf.clear();
            }
        }
    };
}

// One written reply type for each reply on a stream and for CheckBatch's, named after
// its response (`PlayOthelloResponse` is written as a `PlayOthelloReply`): build.rs
// lists them from the contract, and points the server's stubs at them.
include!(concat!(env!("OUT_DIR"), "/written_replies.rs"));

/// Keeps one field read from `buf` in `out` (the client's decoding checks it, not the
/// server's): its key and its value, a varint re-encoded in its shortest form, any
/// other value's bytes as they came. Groups, which proto3 has no use for, are skipped.
fn merge_raw(
    out: &mut Vec<u8>,
    tag: u32,
    wire_type: WireType,
    buf: &mut impl Buf,
    ctx: DecodeContext,
) -> Result<(), DecodeError> {
    let fixed = match wire_type {
        WireType::Varint => {
            let value = prost::encoding::decode_varint(buf)?;
            encode_key(tag, wire_type, out);
            encode_varint(value, out);
            return Ok(());
        }
        WireType::LengthDelimited => None,
        WireType::ThirtyTwoBit => Some(4),
        WireType::SixtyFourBit => Some(8),
        WireType::StartGroup | WireType::EndGroup => {
            return prost::encoding::skip_field(wire_type, tag, buf, ctx);
        }
    };
    let len = match fixed {
        Some(len) if buf.remaining() >= len => len,
        Some(_) => return Err(super::board::buffer_underflow()),
        None => super::board::field_len(buf)?,
    };
    encode_key(tag, wire_type, out);
    if fixed.is_none() {
        encode_varint(len as u64, out);
    }
    out.put(buf.take(len));
    Ok(())
}

impl CheckBatchReply {
    /// An empty reply with room for `bytes` of results.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            buf: Vec::with_capacity(bytes),
        }
    }

    /// Appends `result` as the reply's next `results`; returns its encoded length,
    /// without its field's key and length prefix.
    pub fn push(&mut self, result: &CheckResult) -> usize {
        Writer { buf: &mut self.buf }.encoded(fields::check_batch_response::RESULTS, result)
    }

    /// Appends the result of a check that was not answered, its `invalid` written by
    /// `write`; returns the `CheckResult`'s encoded length, as [`CheckBatchReply::push`]
    /// does.
    pub(crate) fn push_invalid(&mut self, write: impl FnOnce(&mut Writer)) -> usize {
        Writer { buf: &mut self.buf }.message(fields::check_batch_response::RESULTS, write)
    }

    /// Appends a check's answer as the reply's next `results`, the answer's message
    /// (`field` of `CheckResult`'s `result`) written by `write`; returns the
    /// `CheckResult`'s encoded length, as [`CheckBatchReply::push`] does.
    pub(crate) fn push_result(&mut self, field: Len, write: impl FnOnce(&mut Writer)) -> usize {
        Writer { buf: &mut self.buf }.message(fields::check_batch_response::RESULTS, |w| {
            w.message(field, write);
        })
    }
}

impl PlayManyReply {
    /// An empty reply with room for `bytes` of states.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            buf: Vec::with_capacity(bytes),
        }
    }

    /// Appends `state` as the reply's next `states`; returns its encoded length,
    /// without its field's key and length prefix.
    pub fn push(&mut self, state: &GameState) -> usize {
        Writer { buf: &mut self.buf }.encoded(fields::play_many_response::STATES, state)
    }

    /// Appends game number `game`'s state as the reply's next `states`, the state's
    /// message (`field` of `GameState`'s `state`) written by `write` straight from the
    /// game; returns the `GameState`'s encoded length, as [`PlayManyReply::push`] does.
    pub(crate) fn push_state(
        &mut self,
        game: u64,
        field: Len,
        write: impl FnOnce(&mut Writer),
    ) -> usize {
        Writer { buf: &mut self.buf }.message(fields::play_many_response::STATES, |w| {
            w.uint64(fields::game_state::GAME, game);
            w.message(field, write);
        })
    }

    /// Appends the state of game number `game` for an action that reached no game, its
    /// `invalid` written by `write`; returns the `GameState`'s encoded length, as
    /// [`PlayManyReply::push`] does.
    pub(crate) fn push_invalid(&mut self, game: u64, write: impl FnOnce(&mut Writer)) -> usize {
        Writer { buf: &mut self.buf }.message(fields::play_many_response::STATES, |w| {
            w.uint64(fields::game_state::GAME, game);
            write(w);
        })
    }

    /// Marks the reply as answering no message (`unprompted`): its states announce
    /// games that ended on time. Written last, after every state.
    pub(crate) fn set_unprompted(&mut self) {
        Writer { buf: &mut self.buf }.bool(fields::play_many_response::UNPROMPTED, true);
    }

    /// The length of the reply's bytes so far.
    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    /// Cuts the reply back to its first `len` bytes: takes back what was written since
    /// [`PlayManyReply::len`] was `len`.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.buf.truncate(len);
    }
}

/// Writes messages into a buffer field by field, as prost encodes them: proto3's
/// defaults (zero, false, empty) left out, a set message written even when empty. Each
/// field is named by its generated constant ([`fields`]), whose type says how it is
/// encoded: a varint field cannot be written as a message. Only the crate writes with
/// it; it is public because the sealed live-game trait names it.
#[doc(hidden)]
pub struct Writer<'a> {
    buf: &'a mut Vec<u8>,
}

impl Writer<'_> {
    /// Board cells as a `repeated Cell` field, in order.
    pub(crate) fn grid_cells(&mut self, field: Len, cells: &[grid::Cell]) {
        for cell in cells {
            self.grid_cell(field, *cell);
        }
    }

    /// A board cell as a `Cell` field. Boards are at most 100x100, so coordinates fit
    /// an `int32`.
    pub(crate) fn grid_cell(&mut self, field: Len, cell: grid::Cell) {
        // Most cells: both coordinates under 128 (one byte each as varints), the field
        // number under 16 (a one-byte key), so the length is known before the cell is
        // written. Saves about a fifth of a listing's instructions against `message`.
        if cell.row < 0x80 && cell.col < 0x80 && field.0 < 16 {
            let (row, col) = (cell.row as u8, cell.col as u8);
            let len = 2 * u8::from(row != 0) + 2 * u8::from(col != 0);
            self.buf.reserve(6);
            self.buf.push(field.key() as u8);
            self.buf.push(len);
            if row != 0 {
                self.buf
                    .extend_from_slice(&[fields::cell::ROW.key() as u8, row]);
            }
            if col != 0 {
                self.buf
                    .extend_from_slice(&[fields::cell::COL.key() as u8, col]);
            }
            return;
        }
        self.message(field, |w| {
            w.int32(fields::cell::ROW, cell.row as i32);
            w.int32(fields::cell::COL, cell.col as i32);
        });
    }

    /// A grid as a `Board` field: its rows, row 0 first.
    pub(crate) fn grid(&mut self, field: Len, grid: &Grid) {
        let cols = grid.cols();
        // Rows of under 128 cells (every board the service keeps: at most 100) are each
        // a one-byte key, a one-byte length and the cells, so the board's length is
        // known before it is written, and it is written in place.
        if (1..0x80).contains(&cols) {
            let len = grid.rows() * (2 + cols);
            self.key(field);
            self.varint(len as u64);
            let at = self.buf.len();
            self.buf.resize(at + len, 0);
            let rows = grid.cells().chunks_exact(cols);
            for (out, row) in self.buf[at..].chunks_exact_mut(2 + cols).zip(rows) {
                out[0] = fields::board::ROWS.key() as u8;
                out[1] = cols as u8;
                copy_row(&mut out[2..], row);
            }
            return;
        }
        self.rows(field, grid.cells().chunks(cols));
    }

    /// A `Board` field of these rows, row 0 first.
    pub(crate) fn rows<'r>(&mut self, field: Len, rows: impl IntoIterator<Item = &'r [u8]>) {
        self.message(field, |w| {
            for row in rows {
                w.key(fields::board::ROWS);
                w.varint(row.len() as u64);
                w.buf.extend_from_slice(row);
            }
        });
    }

    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.buf.push(value as u8 | 0x80);
            value >>= 7;
        }
        self.buf.push(value as u8);
    }

    fn key(&mut self, field: impl Field) {
        self.varint(u64::from(field.key()));
    }

    /// An `int32` or enum field: a negative value as its 64-bit two's complement.
    pub(crate) fn int32(&mut self, field: Varint, value: i32) {
        if value != 0 {
            self.key(field);
            self.varint(i64::from(value) as u64);
        }
    }

    /// A `uint64` field.
    pub(crate) fn uint64(&mut self, field: Varint, value: u64) {
        if value != 0 {
            self.key(field);
            self.varint(value);
        }
    }

    /// A `bool` field.
    pub(crate) fn bool(&mut self, field: Varint, value: bool) {
        if value {
            self.key(field);
            self.buf.push(1);
        }
    }

    /// A `string` field.
    pub(crate) fn string(&mut self, field: Len, value: &str) {
        self.string_of(field, [value]);
    }

    /// Fields already encoded, keys and all: the first `len` bytes of `encoded`. The
    /// whole array is copied and the rest cut off, since a copy of a size known when
    /// compiling costs a few moves, and one of any size a call to `memcpy`.
    pub(crate) fn encoded_fields_within<const N: usize>(&mut self, encoded: &[u8; N], len: usize) {
        let end = self.buf.len() + len.min(N);
        self.buf.extend_from_slice(encoded);
        self.buf.truncate(end);
    }

    /// A `string` field whose text is `parts` one after the other.
    pub(crate) fn string_of<const N: usize>(&mut self, field: Len, parts: [&str; N]) {
        let len = parts.iter().map(|part| part.len()).sum::<usize>();
        if len > 0 {
            self.key(field);
            self.varint(len as u64);
            for part in parts {
                self.buf.extend_from_slice(part.as_bytes());
            }
        }
    }

    /// A message field whose body, already encoded, is `parts` one after the other:
    /// written even when empty.
    pub(crate) fn encoded_message_of<const N: usize>(&mut self, field: Len, parts: [&[u8]; N]) {
        let len = parts.iter().map(|part| part.len()).sum::<usize>();
        self.key(field);
        self.varint(len as u64);
        for part in parts {
            self.buf.extend_from_slice(part);
        }
    }

    /// A message field, its body written by `write`; returns the body's length. The
    /// length is written after the body, in front of it: one byte is set aside, and the
    /// body moved along if its length needs more.
    pub(crate) fn message(&mut self, field: Len, write: impl FnOnce(&mut Writer)) -> usize {
        self.key(field);
        let at = self.buf.len();
        self.buf.push(0);
        write(&mut Writer { buf: self.buf });
        let len = self.buf.len() - at - 1;
        if len < 0x80 {
            self.buf[at] = len as u8;
        } else {
            let mut prefix = [0; 10];
            let prefix_len = {
                let mut slice = &mut prefix[..];
                encode_varint(len as u64, &mut slice);
                10 - slice.len()
            };
            let end = self.buf.len();
            self.buf.resize(end + prefix_len - 1, 0);
            self.buf.copy_within(at + 1..end, at + prefix_len);
            self.buf[at..at + prefix_len].copy_from_slice(&prefix[..prefix_len]);
        }
        len
    }

    /// The fields of a message already written (a game's reply to its first message,
    /// as a state of PlayMany), into the message being written.
    pub(crate) fn fields_written(&mut self, fields: &[u8]) {
        self.buf.extend_from_slice(fields);
    }

    /// A whole built message as a message field, encoded by prost: for the replies'
    /// rare items (a refused check or action, a game's first state), where writing by
    /// hand buys nothing measurable. Returns the message's length.
    fn encoded<M: prost::Message>(&mut self, field: Len, message: &M) -> usize {
        let len = message.encoded_len();
        self.key(field);
        self.varint(len as u64);
        message.encode_raw(self.buf);
        len
    }
}

/// Copies `row` into `out` (the same length): a row of 8 to 16 cells (Othello's, Gomoku's)
/// as two overlapping 8-byte moves, rather than a call to `memcpy` for each row.
#[inline(always)]
fn copy_row(out: &mut [u8], row: &[u8]) {
    let len = row.len();
    if (8..=16).contains(&len) && out.len() == len {
        if let (Some(head), Some(tail)) = (row.first_chunk::<8>(), row.last_chunk::<8>()) {
            let (head, tail) = (*head, *tail);
            out[..8].copy_from_slice(&head);
            out[len - 8..].copy_from_slice(&tail);
            return;
        }
    }
    out.copy_from_slice(row);
}

#[cfg(test)]
mod tests {
    use proptest::collection::vec;
    use proptest::prelude::*;
    use prost::Message;

    use super::*;
    use crate::proto::{
        check_result, game_state, Board, Cell, CheckBatchResponse, CheckConnectFourResponse,
        CheckOthelloMoveResponse, FieldViolation, JudgeTicTacToeResponse, ListOthelloMovesResponse,
        OthelloMove, PlayConnectFourResponse, PlayManyResponse, PlayOthelloResponse,
        PlayTicTacToeResponse,
    };

    /// Numbers of every varint length, negative ones (ten bytes) and zero (left out).
    fn int32() -> impl Strategy<Value = i32> {
        prop_oneof![Just(0), 1..128, 128..20_000, any::<i32>()]
    }

    /// Texts empty (left out), short, and past 127 bytes (a two-byte length).
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![Just(String::new()), "[a-z]{1,5}", "[a-zé]{100,300}"]
    }

    fn cell() -> impl Strategy<Value = Cell> {
        (int32(), int32()).prop_map(|(row, col)| Cell { row, col })
    }

    fn cells() -> impl Strategy<Value = Vec<Cell>> {
        vec(cell(), 0..40)
    }

    /// No board, an empty one, and rows up to 300 bytes (so up to 30 KB a board).
    fn board() -> impl Strategy<Value = Option<Board>> {
        proptest::option::of(vec(vec(any::<u8>(), 0..300), 0..100).prop_map(Board::from_rows))
    }

    fn violations() -> impl Strategy<Value = Vec<FieldViolation>> {
        vec(
            (text(), text()).prop_map(|(field, description)| FieldViolation { field, description }),
            0..3,
        )
    }

    fn game_state() -> impl Strategy<Value = GameState> {
        let othello = (
            (int32(), board(), cells(), text(), any::<bool>()),
            (cells(), int32(), int32(), int32(), text()),
        )
            .prop_map(
                |(
                    (verdict, board, flips, to_move, passed),
                    (legal_moves, black_discs, white_discs, moves_played, rejected),
                )| {
                    game_state::State::Othello(PlayOthelloResponse {
                        verdict,
                        board,
                        flips,
                        to_move,
                        passed,
                        legal_moves,
                        black_discs,
                        white_discs,
                        moves_played,
                        rejected,
                        ..Default::default()
                    })
                },
            );
        let connect_four = (
            int32(),
            board(),
            proptest::option::of(cell()),
            cells(),
            (int32(), int32(), text()),
        )
            .prop_map(
                |(verdict, board, placed, run, (to_move, moves_played, rejected))| {
                    game_state::State::ConnectFour(PlayConnectFourResponse {
                        verdict,
                        board,
                        placed,
                        run,
                        to_move,
                        moves_played,
                        rejected,
                        ..Default::default()
                    })
                },
            );
        let tic_tac_toe = (int32(), cells(), board(), int32(), text()).prop_map(
            |(verdict, line, board, moves_played, rejected)| {
                game_state::State::TicTacToe(PlayTicTacToeResponse {
                    verdict,
                    line,
                    board,
                    moves_played,
                    rejected,
                    ..Default::default()
                })
            },
        );
        let state = proptest::option::of(prop_oneof![othello, connect_four, tic_tac_toe]);
        (any::<u64>(), violations(), state).prop_map(|(game, invalid, state)| GameState {
            game,
            invalid,
            state,
        })
    }

    fn check_result() -> impl Strategy<Value = CheckResult> {
        use check_result::Result as Answer;
        let answer = prop_oneof![
            (any::<bool>(), cells()).prop_map(|(legal, flips)| Answer::CheckOthelloMove(
                CheckOthelloMoveResponse { legal, flips }
            )),
            vec((proptest::option::of(cell()), cells()), 0..20).prop_map(|moves| {
                Answer::ListOthelloMoves(ListOthelloMovesResponse {
                    moves: moves
                        .into_iter()
                        .map(|(cell, flips)| OthelloMove { cell, flips })
                        .collect(),
                })
            }),
            (any::<bool>(), cells()).prop_map(|(wins, run)| Answer::CheckConnectFour(
                CheckConnectFourResponse { wins, run }
            )),
            (int32(), cells(), board(), int32()).prop_map(
                |(verdict, line, board, moves_played)| {
                    Answer::JudgeTicTacToe(JudgeTicTacToeResponse {
                        verdict,
                        line,
                        board,
                        moves_played,
                    })
                }
            ),
        ];
        (violations(), proptest::option::of(answer))
            .prop_map(|(invalid, result)| CheckResult { invalid, result })
    }

    /// Fails unless the reply that `push` writes item by item is, byte for byte, what
    /// prost encodes of the whole message (`whole`), each item's length as prost counts
    /// it; and unless decoding prost's bytes into the reply keeps them as they are.
    fn holds_prost_s_bytes<I, R, M>(
        items: Vec<I>,
        push: fn(&mut R, &I) -> usize,
        whole: fn(Vec<I>) -> M,
        to_response: fn(&R) -> Result<M, DecodeError>,
    ) -> Result<(), TestCaseError>
    where
        I: Message,
        R: Message + Default + PartialEq,
        M: Message + Default + PartialEq,
    {
        let mut reply = R::default();
        for item in &items {
            prop_assert_eq!(push(&mut reply, item), item.encoded_len());
        }
        let expected = whole(items).encode_to_vec();
        prop_assert_eq!(&reply.encode_to_vec(), &expected);
        prop_assert_eq!(reply.encoded_len(), expected.len());
        prop_assert!(R::decode(&expected[..]).unwrap() == reply);
        prop_assert!(to_response(&reply).unwrap() == M::decode(&expected[..]).unwrap());
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn bulk_replies_are_prost_s_bytes_both_ways(
            states in vec(game_state(), 0..6),
            results in vec(check_result(), 0..6),
        ) {
            let play_many = |states| PlayManyResponse { states, unprompted: false };
            holds_prost_s_bytes(states, PlayManyReply::push, play_many, PlayManyReply::to_response)?;
            let batch = |results| CheckBatchResponse { results };
            holds_prost_s_bytes(results, CheckBatchReply::push, batch, CheckBatchReply::to_response)?;
        }
    }

    /// A grid is written as prost writes a `Board` of its rows, whatever its size and
    /// field number: rows short and long (past 127 cells, a two-byte length each),
    /// boards whose whole length takes one, two or three bytes (127, 128; 16,383,
    /// 16,384), keys of one byte and of two.
    #[test]
    fn grids_are_written_as_prost_writes_their_board() {
        use std::num::NonZeroUsize;
        let sizes = [
            (1, 1),
            (6, 7),
            (8, 8),
            (13, 9),
            (1, 125),
            (1, 126),
            (127, 127),
            (128, 126),
            (1, 127),
            (2, 128),
            (100, 100),
            (3, 300),
        ];
        for (rows, cols) in sizes {
            let size = |n| NonZeroUsize::new(n).unwrap();
            let mut grid = Grid::filled(size(rows), size(cols), b'0');
            for row in 0..rows {
                grid.set(
                    grid::Cell::new(row, (row * 7) % cols),
                    b'1' + (row % 2) as u8,
                );
            }
            let board = crate::proto::Board::from_rows(grid.cells().chunks(cols));
            for tag in [2, 16] {
                let mut written = Vec::new();
                Writer { buf: &mut written }.grid(Len(tag), &grid);
                let mut expected = Vec::new();
                prost::encoding::message::encode(tag, &board, &mut expected);
                assert_eq!(written, expected, "a {rows}x{cols} grid as field {tag}");
            }
        }
    }

    #[test]
    fn a_reply_read_from_a_truncated_message_is_an_error() {
        let mut reply = PlayManyReply::with_capacity(0);
        reply.push(&GameState {
            game: 7,
            ..GameState::default()
        });
        let bytes = reply.encode_to_vec();
        for cut in 1..bytes.len() {
            assert!(
                PlayManyReply::decode(&bytes[..cut]).is_err(),
                "cut at {cut} of {bytes:?}"
            );
        }
        // Every field is kept, whatever its wire type: a varint, a fixed 64 and 32
        // bits, bytes (all as they came, each already in its shortest form here); a
        // group is skipped.
        let fields = [
            &[0x10, 0x05][..],
            &[0x19, 1, 2, 3, 4, 5, 6, 7, 8],
            &[0x25, 1, 2, 3, 4],
            &[0x2a, 0x01, 0x00],
        ]
        .concat();
        let reply = PlayManyReply::decode(&fields[..]).unwrap();
        assert_eq!(reply.as_bytes(), &fields[..]);
        let group = [0x33, 0x08, 0x01, 0x34];
        assert_eq!(PlayManyReply::decode(&group[..]).unwrap().as_bytes(), b"");
        for cut in [&fields[2..5], &fields[11..13]] {
            assert!(PlayManyReply::decode(cut).is_err(), "{cut:?} is cut short");
        }
    }
}
