//! `CheckBatchRequest` as the server reads it: each check read where it lies in the
//! message, none decoded into a request of its own.
//!
//! prost's generated decoding would build every check as owned messages: the `Check`,
//! its request, a board's row buffers, a colour's `String`, a game's `Vec` of moves,
//! each allocated and freed again once the check is answered. Here the message's bytes
//! are kept as they came (tonic hands them over without a copy), and a check in the
//! plain form of one of the four requests (each field of the type its schema says, in
//! any order, repeated as prost allows; no field the schema lacks; at most one board)
//! is read by a decoder of ours: its board becomes the places of its rows in the
//! message, its colour joins every other colour, its moves every other game's. Every
//! other check, well-formed or not, is decoded by prost's generated code, as before,
//! so that it means what prost says and fails with prost's own error. The handler reads
//! both kinds the same way ([`CheckRef`]); tests and the `requests` fuzz target hold
//! the checks read in place, expanded, equal to prost's decoding of whole, cut and
//! corrupted batches.

use std::ops::Range;

use prost::bytes::{Buf, BufMut, Bytes, BytesMut};
use prost::encoding::message::merge_repeated;
use prost::encoding::{decode_key, decode_varint, skip_field, DecodeContext, WireType};
use prost::DecodeError;

use super::{merge_items, reserve_items};
use crate::proto::check::Check as Kind;
use crate::proto::wire::{fields, Len, Varint};
use crate::proto::{
    Board, Check, CheckBatchRequest, CheckConnectFourRequest, CheckOthelloMoveRequest,
    JudgeTicTacToeRequest, ListOthelloMovesRequest, TicTacToeMove,
};
use crate::rules::rows::{RowsView, Span};

/// The field number of `checks` in `CheckBatchRequest`.
const CHECKS: u32 = fields::check_batch_request::CHECKS.0;

/// About the bytes a small check takes on the wire: the batch's list of checks is
/// sized from the message's length with it ([`reserve_items`]).
const SMALL_CHECK: usize = 32;

/// A `CheckBatchRequest` as the server reads it: its checks, in order, each read in
/// place or decoded by prost (see the module's documentation).
#[derive(Clone, Default, Debug)]
pub struct CheckBatchChecks {
    /// The message's bytes, as they came.
    body: Bytes,
    /// Every check, in order.
    items: Vec<Item>,
    /// What the checks read in place hold apart from `body`.
    read: Read,
    /// The checks prost decoded.
    decoded: Vec<Check>,
}

/// What the checks read in place hold apart from the message's bytes.
#[derive(Clone, Default, Debug)]
struct Read {
    /// Where the rows of every board are in the message, board after board; a board is
    /// a range of them.
    rows: Vec<Span>,
    /// The colours, end to end (UTF-8, checked once).
    text: String,
    /// The moves of every JudgeTicTacToe, end to end.
    moves: Vec<TicTacToeMove>,
}

/// One check of a batch as it is kept: its fields, ranges into the batch's buffers for
/// those read in place.
#[derive(Clone, Debug)]
enum Item {
    OthelloMove {
        board: Option<Range<usize>>,
        row: i32,
        col: i32,
        color: Range<usize>,
    },
    ListOthelloMoves {
        board: Option<Range<usize>>,
        color: Range<usize>,
    },
    ConnectFour {
        board: Option<Range<usize>>,
        row: i32,
        col: i32,
        player: i32,
        run_length: i32,
    },
    JudgeTicTacToe {
        moves: Range<usize>,
    },
    /// A `Check` that sets no check.
    Unset,
    /// The check at this index of the ones prost decoded.
    Decoded(usize),
}

/// A board game's request as `Read::request` reads it.
struct Fields {
    /// The board's rows, in the batch's rows, if the board is set.
    board: Option<Range<usize>>,
    /// The `int32` fields, in the order the reader names them; 0 where not set.
    ints: [i32; 4],
    /// The string field, in the batch's text; empty where not set.
    text: Range<usize>,
}

/// One check of a batch as the handler reads it: its request's fields, borrowed, the
/// same whether the check was read in place or decoded by prost.
#[derive(Clone, Copy, Debug)]
pub enum CheckRef<'a> {
    /// A CheckOthelloMove request's fields, as sent: the game checks them.
    OthelloMove {
        /// The board's rows, unchecked; `None` when the request sets no board.
        board: Option<RowsView<'a>>,
        /// The row of the cell to play.
        row: i32,
        /// The column of the cell to play.
        col: i32,
        /// The mover's colour, `"B"` or `"W"` when well formed.
        color: &'a str,
    },
    /// A ListOthelloMoves request's fields, as sent.
    ListOthelloMoves {
        /// The board's rows, unchecked; `None` when the request sets no board.
        board: Option<RowsView<'a>>,
        /// The colour whose moves are listed.
        color: &'a str,
    },
    /// A CheckConnectFour request's fields, as sent.
    ConnectFour {
        /// The board's rows, unchecked; `None` when the request sets no board.
        board: Option<RowsView<'a>>,
        /// The row of the piece just placed.
        row: i32,
        /// The column of the piece just placed.
        col: i32,
        /// The player whose piece it must be: 1 or 2 when well formed.
        player: i32,
        /// The pieces in a line that win; 0 for the default, 4.
        run_length: i32,
    },
    /// A JudgeTicTacToe request's moves, as sent.
    JudgeTicTacToe {
        /// The moves in order, A's first.
        moves: &'a [TicTacToeMove],
    },
    /// A `Check` that sets no check.
    Unset,
}

impl CheckBatchChecks {
    /// The number of checks.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there is no check.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Every check, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = CheckRef<'_>> + '_ {
        self.items.iter().map(|item| self.check_ref(item))
    }

    /// How many of the checks were read in place (the rest prost decoded).
    pub fn read_in_place(&self) -> usize {
        self.items.len() - self.decoded.len()
    }

    fn check_ref(&self, item: &Item) -> CheckRef<'_> {
        let board = |rows: &Option<Range<usize>>| {
            rows.clone()
                .map(|rows| RowsView::spans(&self.body, &self.read.rows[rows]))
        };
        let text = |span: &Range<usize>| &self.read.text[span.clone()];
        match item {
            Item::OthelloMove {
                board: rows,
                row,
                col,
                color,
            } => CheckRef::OthelloMove {
                board: board(rows),
                row: *row,
                col: *col,
                color: text(color),
            },
            Item::ListOthelloMoves { board: rows, color } => CheckRef::ListOthelloMoves {
                board: board(rows),
                color: text(color),
            },
            Item::ConnectFour {
                board: rows,
                row,
                col,
                player,
                run_length,
            } => CheckRef::ConnectFour {
                board: board(rows),
                row: *row,
                col: *col,
                player: *player,
                run_length: *run_length,
            },
            Item::JudgeTicTacToe { moves } => CheckRef::JudgeTicTacToe {
                moves: &self.read.moves[moves.clone()],
            },
            Item::Unset => CheckRef::Unset,
            Item::Decoded(index) => decoded_ref(&self.decoded[*index]),
        }
    }

    /// The check at `item`, as prost's generated message.
    fn to_check(&self, item: &Item) -> Check {
        if let Item::Decoded(index) = item {
            return self.decoded[*index].clone();
        }
        let board = |rows: Option<RowsView<'_>>| {
            rows.map(|rows| Board {
                rows: rows.to_rows(),
            })
        };
        let check = match self.check_ref(item) {
            CheckRef::OthelloMove {
                board: rows,
                row,
                col,
                color,
            } => Kind::CheckOthelloMove(CheckOthelloMoveRequest {
                board: board(rows),
                row,
                col,
                color: color.to_owned(),
            }),
            CheckRef::ListOthelloMoves { board: rows, color } => {
                Kind::ListOthelloMoves(ListOthelloMovesRequest {
                    board: board(rows),
                    color: color.to_owned(),
                })
            }
            CheckRef::ConnectFour {
                board: rows,
                row,
                col,
                player,
                run_length,
            } => Kind::CheckConnectFour(CheckConnectFourRequest {
                board: board(rows),
                row,
                col,
                player,
                run_length,
            }),
            CheckRef::JudgeTicTacToe { moves } => Kind::JudgeTicTacToe(JudgeTicTacToeRequest {
                moves: moves.to_vec(),
            }),
            CheckRef::Unset => return Check { check: None },
        };
        Check { check: Some(check) }
    }

    /// Reads the message `body` (its bytes after those already read, from `start`):
    /// each check in place, or by prost's generated code, as the module says.
    fn read_message(&mut self, body: &Bytes, start: usize) -> Result<(), DecodeError> {
        let ctx = DecodeContext::default();
        let mut rest = &body[start..];
        reserve_items(&mut self.items, rest.len(), SMALL_CHECK);
        while !rest.is_empty() {
            // As prost's generated code reads the message, field by field.
            let (tag, wire_type) = decode_key(&mut rest)?;
            if tag != CHECKS {
                skip_field(wire_type, tag, &mut rest, ctx.clone())?;
                continue;
            }
            self.merge_check(body, wire_type, &mut rest, ctx.clone())
                .map_err(|mut error| {
                    error.push("CheckBatchRequest", "checks");
                    error
                })?;
        }
        Ok(())
    }

    /// Reads one check from the front of `rest`, a part of `body`: in place when it is
    /// in the plain form, else by prost's generated decoding (the same message, or the
    /// same error, as prost's decoding of the whole request).
    fn merge_check(
        &mut self,
        body: &[u8],
        wire_type: WireType,
        rest: &mut &[u8],
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if wire_type == WireType::LengthDelimited {
            let mut after = *rest;
            if let Some(check) = field_bytes(&mut after) {
                if let Some(item) = self.read.check(body, check) {
                    self.items.push(item);
                    if self.items.len() == 1 {
                        self.read.reserve_like_first(rest.len(), after.len());
                    }
                    *rest = after;
                    return Ok(());
                }
            }
        }
        let index = self.decoded.len();
        merge_items(wire_type, &mut self.decoded, rest, ctx)?;
        self.items.push(Item::Decoded(index));
        Ok(())
    }
}

impl Read {
    /// Room for the rest of a message whose bytes from its first check on are `len`,
    /// `left` of them after that check, if every check is like the first: as many rows, colours and moves per
    /// byte. Each reserve is within about the bytes left (a span takes 8 bytes and a
    /// row at least 10 on the wire in a board of 8 columns; a move 8 and 6), so that a
    /// batch unlike its first check makes the server reserve no more than that.
    fn reserve_like_first(&mut self, len: usize, left: usize) {
        let first = (len - left).max(1);
        let like = |had: usize, most: usize| (had * (left / first)).min(most);
        self.rows.reserve(like(self.rows.len(), left / 8));
        self.text.reserve(like(self.text.len(), left / 2));
        self.moves.reserve(like(self.moves.len(), left / 6));
    }

    /// Reads the check whose bytes are `check` (a part of `body`) in place, if it is in
    /// the plain form this decoder takes (see the module's documentation); else leaves
    /// everything as it was and returns `None`.
    fn check(&mut self, body: &[u8], check: &[u8]) -> Option<Item> {
        let marks = (self.rows.len(), self.text.len(), self.moves.len());
        let item = self.item(body, check);
        if item.is_none() {
            self.rows.truncate(marks.0);
            self.text.truncate(marks.1);
            self.moves.truncate(marks.2);
        }
        item
    }

    /// A `Check`: no field, or exactly one, one of the four requests.
    fn item(&mut self, body: &[u8], mut check: &[u8]) -> Option<Item> {
        if check.is_empty() {
            return Some(Item::Unset);
        }
        let tag = key(&mut check, WireType::LengthDelimited)?;
        let request = field_bytes(&mut check)?;
        if !check.is_empty() {
            return None;
        }
        // The check's kind, by its field of `Check`'s oneof.
        const OTHELLO_MOVE: u32 = fields::check::CHECK_OTHELLO_MOVE.0;
        const LIST_OTHELLO_MOVES: u32 = fields::check::LIST_OTHELLO_MOVES.0;
        const CONNECT_FOUR: u32 = fields::check::CHECK_CONNECT_FOUR.0;
        const TIC_TAC_TOE: u32 = fields::check::JUDGE_TIC_TAC_TOE.0;
        match tag {
            OTHELLO_MOVE => {
                use fields::check_othello_move_request as req;
                let ints = [req::ROW, req::COL];
                let fields = self.request(body, request, req::BOARD, &ints, Some(req::COLOR))?;
                Some(Item::OthelloMove {
                    board: fields.board,
                    row: fields.ints[0],
                    col: fields.ints[1],
                    color: fields.text,
                })
            }
            LIST_OTHELLO_MOVES => {
                use fields::list_othello_moves_request as req;
                let fields = self.request(body, request, req::BOARD, &[], Some(req::COLOR))?;
                Some(Item::ListOthelloMoves {
                    board: fields.board,
                    color: fields.text,
                })
            }
            CONNECT_FOUR => {
                use fields::check_connect_four_request as req;
                let ints = [req::ROW, req::COL, req::PLAYER, req::RUN_LENGTH];
                let fields = self.request(body, request, req::BOARD, &ints, None)?;
                let [row, col, player, run_length] = fields.ints;
                Some(Item::ConnectFour {
                    board: fields.board,
                    row,
                    col,
                    player,
                    run_length,
                })
            }
            TIC_TAC_TOE => self.tic_tac_toe(request),
            _ => None,
        }
    }

    /// A board game's request: its `board` (at most once), its `ints` (`int32`s), its
    /// `text` (a string), if it has one, and no other field.
    fn request(
        &mut self,
        body: &[u8],
        mut fields: &[u8],
        board: Len,
        ints: &[Varint],
        text: Option<Len>,
    ) -> Option<Fields> {
        let mut read = Fields {
            board: None,
            ints: [0; 4],
            text: 0..0,
        };
        while !fields.is_empty() {
            match any_key(&mut fields)? {
                (tag, WireType::LengthDelimited) if tag == board.0 && read.board.is_none() => {
                    read.board = Some(self.board(body, field_bytes(&mut fields)?)?);
                }
                (tag, WireType::LengthDelimited) if Some(Len(tag)) == text => {
                    read.text = self.text(&mut fields)?;
                }
                (tag, WireType::Varint) => {
                    let at = ints.iter().position(|&number| number.0 == tag)?;
                    read.ints[at] = int32(&mut fields)?;
                }
                _ => return None,
            }
        }
        Some(read)
    }

    /// A JudgeTicTacToe request: its moves, each a row and a column.
    fn tic_tac_toe(&mut self, mut fields: &[u8]) -> Option<Item> {
        const MOVES: u32 = fields::judge_tic_tac_toe_request::MOVES.0;
        const ROW: u32 = fields::tic_tac_toe_move::ROW.0;
        const COL: u32 = fields::tic_tac_toe_move::COL.0;
        let start = self.moves.len();
        while !fields.is_empty() {
            key(&mut fields, WireType::LengthDelimited).filter(|&tag| tag == MOVES)?;
            let mut step = field_bytes(&mut fields)?;
            let (mut row, mut col) = (0, 0);
            while !step.is_empty() {
                match any_key(&mut step)? {
                    (ROW, WireType::Varint) => row = int32(&mut step)?,
                    (COL, WireType::Varint) => col = int32(&mut step)?,
                    _ => return None,
                }
            }
            self.moves.push(TicTacToeMove { row, col });
        }
        Some(Item::JudgeTicTacToe {
            moves: start..self.moves.len(),
        })
    }

    /// A `Board` (`fields`, a part of `body`) of rows and nothing else: where each row
    /// is in `body`, added to the batch's; the range of them it is.
    fn board(&mut self, body: &[u8], mut fields: &[u8]) -> Option<Range<usize>> {
        const ROWS: u32 = fields::board::ROWS.0;
        let start = self.rows.len();
        let origin = body.as_ptr() as usize;
        while !fields.is_empty() {
            key(&mut fields, WireType::LengthDelimited).filter(|&tag| tag == ROWS)?;
            let row = field_bytes(&mut fields)?;
            // `row` is a part of `body`: its place there is its distance from the start
            // (a body too long for a span's u32 is left to prost).
            let at = row.as_ptr() as usize - origin;
            self.rows.push(Span {
                start: u32::try_from(at).ok()?,
                end: u32::try_from(at + row.len()).ok()?,
            });
        }
        Some(start..self.rows.len())
    }

    /// A string field's text (UTF-8, as prost requires), appended to the batch's text:
    /// the range of it it is.
    fn text(&mut self, fields: &mut &[u8]) -> Option<Range<usize>> {
        let text = std::str::from_utf8(field_bytes(fields)?).ok()?;
        let start = self.text.len();
        self.text.push_str(text);
        Some(start..self.text.len())
    }
}

/// A check prost decoded, read as one read in place is.
fn decoded_ref(check: &Check) -> CheckRef<'_> {
    fn board(board: &Option<Board>) -> Option<RowsView<'_>> {
        board.as_ref().map(|board| board.rows.view())
    }
    match &check.check {
        Some(Kind::CheckOthelloMove(request)) => CheckRef::OthelloMove {
            board: board(&request.board),
            row: request.row,
            col: request.col,
            color: &request.color,
        },
        Some(Kind::ListOthelloMoves(request)) => CheckRef::ListOthelloMoves {
            board: board(&request.board),
            color: &request.color,
        },
        Some(Kind::CheckConnectFour(request)) => CheckRef::ConnectFour {
            board: board(&request.board),
            row: request.row,
            col: request.col,
            player: request.player,
            run_length: request.run_length,
        },
        Some(Kind::JudgeTicTacToe(request)) => CheckRef::JudgeTicTacToe {
            moves: &request.moves,
        },
        None => CheckRef::Unset,
    }
}

/// A varint from the front of `bytes`, as prost reads one; a one-byte varint (every
/// key, length and small value of a plain check) without prost's general decoding.
#[inline(always)]
fn varint(bytes: &mut &[u8]) -> Option<u64> {
    match bytes.split_first() {
        Some((&byte, rest)) if byte < 0x80 => {
            *bytes = rest;
            Some(u64::from(byte))
        }
        _ => long_varint(bytes),
    }
}

/// A varint of more than one byte (or none), by prost's decoding: kept out of line, so
/// that the one-byte case inlined wherever a varint is read stays a few instructions.
#[cold]
#[inline(never)]
fn long_varint(bytes: &mut &[u8]) -> Option<u64> {
    decode_varint(bytes).ok()
}

/// A field's key from the front of `bytes`: its number and wire type, if it is a key
/// prost takes (a varint of at most 32 bits, a known wire type, a number above 0).
#[inline]
fn any_key(bytes: &mut &[u8]) -> Option<(u32, WireType)> {
    let key = u32::try_from(varint(bytes)?).ok()?;
    let wire_type = match key & 0x07 {
        0 => WireType::Varint,
        1 => WireType::SixtyFourBit,
        2 => WireType::LengthDelimited,
        3 => WireType::StartGroup,
        4 => WireType::EndGroup,
        5 => WireType::ThirtyTwoBit,
        _ => return None,
    };
    let tag = key >> 3;
    (tag > 0).then_some((tag, wire_type))
}

/// A field's number from the front of `bytes`, if its key is of `wire_type`.
#[inline]
fn key(bytes: &mut &[u8], wire_type: WireType) -> Option<u32> {
    any_key(bytes).and_then(|(tag, found)| (found == wire_type).then_some(tag))
}

/// A length-delimited field's bytes from the front of `bytes`, if they are all there.
#[inline]
fn field_bytes<'a>(bytes: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = usize::try_from(varint(bytes)?).ok()?;
    if len > bytes.len() {
        return None;
    }
    let (field, rest) = bytes.split_at(len);
    *bytes = rest;
    Some(field)
}

/// An `int32` from the front of `bytes`, as prost reads one (a varint, cut to 32 bits).
#[inline]
fn int32(bytes: &mut &[u8]) -> Option<i32> {
    varint(bytes).map(|value| value as i32)
}

impl From<CheckBatchRequest> for CheckBatchChecks {
    /// Every check as prost decoded it (none read in place).
    fn from(request: CheckBatchRequest) -> Self {
        Self {
            items: (0..request.checks.len()).map(Item::Decoded).collect(),
            decoded: request.checks,
            ..Self::default()
        }
    }
}

impl From<CheckBatchChecks> for CheckBatchRequest {
    fn from(checks: CheckBatchChecks) -> Self {
        Self {
            checks: checks
                .items
                .iter()
                .map(|item| checks.to_check(item))
                .collect(),
        }
    }
}

impl prost::Message for CheckBatchChecks {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        for item in &self.items {
            prost::encoding::message::encode(CHECKS, &self.to_check(item), buf);
        }
    }

    /// Takes the message's bytes as they are (from tonic's buffer, without a copy) and
    /// reads every check from them.
    fn merge(&mut self, mut buf: impl Buf) -> Result<(), DecodeError> {
        let more = buf.copy_to_bytes(buf.remaining());
        let start = self.body.len();
        self.body = if start == 0 {
            more
        } else {
            // Merged into checks already read: their places in the bytes stay the same.
            let mut joined = BytesMut::with_capacity(start + more.len());
            joined.extend_from_slice(&self.body);
            joined.extend_from_slice(&more);
            joined.freeze()
        };
        let body = self.body.clone();
        self.read_message(&body, start)
    }

    /// A field as prost's generated code merges it, every check decoded by prost: for
    /// a `CheckBatchRequest` nested in another message or read length-delimited
    /// (`merge_length_delimited`), which the service never does ([`Self::merge`], which
    /// tonic's decoding calls, reads a whole message).
    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag != CHECKS {
            return skip_field(wire_type, tag, buf, ctx);
        }
        let index = self.decoded.len();
        merge_repeated(wire_type, &mut self.decoded, buf, ctx).map_err(|mut error| {
            error.push("CheckBatchRequest", "checks");
            error
        })?;
        self.items.push(Item::Decoded(index));
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        self.items
            .iter()
            .map(|item| prost::encoding::message::encoded_len(CHECKS, &self.to_check(item)))
            .sum()
    }

    fn clear(&mut self) {
        *self = Self::default();
    }
}
