//! The two bulk replies, `CheckBatchResponse` and `PlayManyResponse`, as the server
//! writes them: each item encoded into one growing buffer the moment it is answered.
//!
//! prost would hold the reply as a tree of messages (a `CheckResult` or `GameState`
//! per item, with its response, board and cell lists) and, to encode it, compute the
//! length of every nested message at every level it is written from: an Othello state's
//! cells were measured four times and written once. Here each item is written once,
//! front to back, and each nested message's length is patched in when its end is
//! reached. The bytes are prost's, field for field (the tests below hold them to
//! prost's encoding of the same messages, both ways), so clients decode them as the
//! `CheckBatchResponse` and `PlayManyResponse` of [`crate::proto`].
//!
//! Only the server's stubs use these types; a client, Rust ones included, receives the
//! generated messages.

use prost::bytes::{Buf, BufMut};
use prost::encoding::{decode_varint, encode_key, encode_varint, DecodeContext, WireType};
use prost::DecodeError;

use super::{
    check_result, game_state, Board, Cell, CheckBatchResponse, CheckResult, FieldViolation,
    GameState, PlayConnectFourResponse, PlayManyResponse, PlayOthelloResponse,
    PlayTicTacToeResponse,
};

/// The wire type of a varint field, as a key's low bits.
const VARINT: u32 = 0;
/// The wire type of a length-delimited field, as a key's low bits.
const LENGTH_DELIMITED: u32 = 2;

/// A `CheckBatchResponse` as the server writes it: its encoded `results`, one per
/// check, in order.
#[derive(Clone, PartialEq, Eq, Default, Debug)]
pub struct CheckBatchReply {
    items: Items,
}

impl CheckBatchReply {
    /// An empty reply with room for `bytes` of results.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            items: Items::with_capacity(bytes),
        }
    }

    /// Appends `result` as the reply's next `results`; returns its encoded length,
    /// without its field's key and length prefix.
    pub fn push(&mut self, result: &CheckResult) -> usize {
        self.items.push(|w| w.check_result(result))
    }

    /// The encoded results so far: the reply's whole wire body.
    pub fn as_bytes(&self) -> &[u8] {
        &self.items.buf
    }

    /// The reply as the client's message, decoded from its bytes.
    pub fn decode(&self) -> Result<CheckBatchResponse, DecodeError> {
        prost::Message::decode(self.as_bytes())
    }
}

/// A `PlayManyResponse` as the server writes it: its encoded `states`, one per action,
/// in order.
#[derive(Clone, PartialEq, Eq, Default, Debug)]
pub struct PlayManyReply {
    items: Items,
}

impl PlayManyReply {
    /// An empty reply with room for `bytes` of states.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            items: Items::with_capacity(bytes),
        }
    }

    /// Appends `state` as the reply's next `states`; returns its encoded length,
    /// without its field's key and length prefix.
    pub fn push(&mut self, state: &GameState) -> usize {
        self.items.push(|w| w.game_state(state))
    }

    /// The encoded states so far: the reply's whole wire body.
    pub fn as_bytes(&self) -> &[u8] {
        &self.items.buf
    }

    /// The reply as the client's message, decoded from its bytes.
    pub fn decode(&self) -> Result<PlayManyResponse, DecodeError> {
        prost::Message::decode(self.as_bytes())
    }
}

/// The body of a message whose one field (number 1) is a repeated message: the field's
/// entries, each key, length and message, end to end.
#[derive(Clone, PartialEq, Eq, Default, Debug)]
struct Items {
    buf: Vec<u8>,
}

impl Items {
    fn with_capacity(bytes: usize) -> Self {
        Self {
            buf: Vec::with_capacity(bytes),
        }
    }

    /// Appends one entry of field 1, its message written by `write`; returns the
    /// message's length.
    fn push(&mut self, write: impl FnOnce(&mut Writer)) -> usize {
        let mut writer = Writer { buf: &mut self.buf };
        writer.message(1, write)
    }

    /// Takes one field of the message from `buf`, as decoding does: field 1 kept as it
    /// came (it is checked only by the client's decoding), any other skipped.
    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag != 1 || wire_type != WireType::LengthDelimited {
            return prost::encoding::skip_field(wire_type, tag, buf, ctx);
        }
        let len = decode_varint(buf)?;
        let Some(len) = usize::try_from(len)
            .ok()
            .filter(|&len| len <= buf.remaining())
        else {
            return Err(super::board::buffer_underflow());
        };
        encode_key(1, WireType::LengthDelimited, &mut self.buf);
        encode_varint(len as u64, &mut self.buf);
        self.buf.put(buf.take(len));
        Ok(())
    }
}

macro_rules! reply_message {
    ($reply:ty) => {
        impl prost::Message for $reply {
            fn encode_raw(&self, buf: &mut impl BufMut) {
                buf.put_slice(&self.items.buf);
            }

            fn merge_field(
                &mut self,
                tag: u32,
                wire_type: WireType,
                buf: &mut impl Buf,
                ctx: DecodeContext,
            ) -> Result<(), DecodeError> {
                self.items.merge_field(tag, wire_type, buf, ctx)
            }

            fn encoded_len(&self) -> usize {
                self.items.buf.len()
            }

            fn clear(&mut self) {
                self.items.buf.clear();
            }
        }
    };
}

reply_message!(CheckBatchReply);
reply_message!(PlayManyReply);

/// Writes messages into a buffer field by field, as prost encodes them: proto3's
/// defaults (zero, false, empty) left out, a set message written even when empty.
struct Writer<'a> {
    buf: &'a mut Vec<u8>,
}

impl Writer<'_> {
    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.buf.push(value as u8 | 0x80);
            value >>= 7;
        }
        self.buf.push(value as u8);
    }

    fn key(&mut self, tag: u32, wire_type: u32) {
        self.varint(u64::from(tag << 3 | wire_type));
    }

    /// An `int32` or enum field: a negative value as its 64-bit two's complement.
    fn int32(&mut self, tag: u32, value: i32) {
        if value != 0 {
            self.key(tag, VARINT);
            self.varint(i64::from(value) as u64);
        }
    }

    fn uint64(&mut self, tag: u32, value: u64) {
        if value != 0 {
            self.key(tag, VARINT);
            self.varint(value);
        }
    }

    fn bool(&mut self, tag: u32, value: bool) {
        if value {
            self.key(tag, VARINT);
            self.buf.push(1);
        }
    }

    fn string(&mut self, tag: u32, value: &str) {
        if !value.is_empty() {
            self.key(tag, LENGTH_DELIMITED);
            self.varint(value.len() as u64);
            self.buf.extend_from_slice(value.as_bytes());
        }
    }

    /// A message field, its body written by `write`; returns the body's length. The
    /// length is written after the body, in front of it: one byte is set aside, and the
    /// body moved along if its length needs more.
    fn message(&mut self, tag: u32, write: impl FnOnce(&mut Writer)) -> usize {
        self.key(tag, LENGTH_DELIMITED);
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

    fn cell(&mut self, tag: u32, cell: &Cell) {
        self.message(tag, |w| {
            w.int32(1, cell.row);
            w.int32(2, cell.col);
        });
    }

    fn cells(&mut self, tag: u32, cells: &[Cell]) {
        for cell in cells {
            self.cell(tag, cell);
        }
    }

    fn board(&mut self, tag: u32, board: Option<&Board>) {
        if let Some(board) = board {
            self.message(tag, |w| {
                for row in board.rows.iter() {
                    w.key(1, LENGTH_DELIMITED);
                    w.varint(row.len() as u64);
                    w.buf.extend_from_slice(row);
                }
            });
        }
    }

    fn violations(&mut self, tag: u32, violations: &[FieldViolation]) {
        for violation in violations {
            self.message(tag, |w| {
                w.string(1, &violation.field);
                w.string(2, &violation.description);
            });
        }
    }

    fn check_result(&mut self, result: &CheckResult) {
        use check_result::Result as Answer;
        self.violations(1, &result.invalid);
        match &result.result {
            None => {}
            Some(Answer::CheckOthelloMove(answer)) => {
                self.message(2, |w| {
                    w.bool(1, answer.legal);
                    w.cells(2, &answer.flips);
                });
            }
            Some(Answer::ListOthelloMoves(answer)) => {
                self.message(3, |w| {
                    for entry in &answer.moves {
                        w.message(1, |w| {
                            if let Some(cell) = &entry.cell {
                                w.cell(1, cell);
                            }
                            w.cells(2, &entry.flips);
                        });
                    }
                });
            }
            Some(Answer::CheckConnectFour(answer)) => {
                self.message(4, |w| {
                    w.bool(1, answer.wins);
                    w.cells(2, &answer.run);
                });
            }
            Some(Answer::JudgeTicTacToe(answer)) => {
                self.message(5, |w| {
                    w.int32(1, answer.verdict);
                    w.cells(2, &answer.line);
                    w.board(3, answer.board.as_ref());
                    w.int32(4, answer.moves_played);
                });
            }
        }
    }

    fn game_state(&mut self, state: &GameState) {
        use game_state::State;
        self.uint64(1, state.game);
        self.violations(2, &state.invalid);
        match &state.state {
            None => {}
            Some(State::Othello(reply)) => {
                self.message(3, |w| w.othello(reply));
            }
            Some(State::ConnectFour(reply)) => {
                self.message(4, |w| w.connect_four(reply));
            }
            Some(State::TicTacToe(reply)) => {
                self.message(5, |w| w.tic_tac_toe(reply));
            }
        }
    }

    fn othello(&mut self, reply: &PlayOthelloResponse) {
        self.int32(1, reply.verdict);
        self.board(2, reply.board.as_ref());
        self.cells(3, &reply.flips);
        self.string(4, &reply.to_move);
        self.bool(5, reply.passed);
        self.cells(6, &reply.legal_moves);
        self.int32(7, reply.black_discs);
        self.int32(8, reply.white_discs);
        self.int32(9, reply.moves_played);
        self.string(10, &reply.rejected);
    }

    fn connect_four(&mut self, reply: &PlayConnectFourResponse) {
        self.int32(1, reply.verdict);
        self.board(2, reply.board.as_ref());
        if let Some(placed) = &reply.placed {
            self.cell(3, placed);
        }
        self.cells(4, &reply.run);
        self.int32(5, reply.to_move);
        self.int32(6, reply.moves_played);
        self.string(7, &reply.rejected);
    }

    fn tic_tac_toe(&mut self, reply: &PlayTicTacToeResponse) {
        self.int32(1, reply.verdict);
        self.cells(2, &reply.line);
        self.board(3, reply.board.as_ref());
        self.int32(4, reply.moves_played);
        self.string(5, &reply.rejected);
    }
}
