//! `CheckBatchRequest` as the server reads it: each check read where it lies in the
//! message, none decoded into a request of its own.
//!
//! prost's generated decoding would build every check as owned messages: the `Check`,
//! its request, a board's row buffers, a colour's `String`, a game's `Vec` of moves,
//! each allocated and freed again once the check is answered. Here the message's bytes
//! are kept as they came (tonic hands them over without a copy), and a check in the
//! plain form of its request (each field of the type its schema says, in any order,
//! repeated as prost allows; no field the schema lacks; at most one board) is read by
//! a decoder of ours, by the request's shape, which `build.rs` takes from the contract
//! ([`shape`]): its board becomes the places of its rows in the message, its strings
//! and messages (repeated or not) the places of their bytes, its list of pairs joins
//! every other check's, its scalars are kept by field number. No game is named here: a
//! check added to the contract is read by its shape, whatever fields it holds (a field
//! of a type the reader cannot take fails the build). Every other check, well-formed or not, is decoded by prost's
//! generated code, so that it means what prost says and fails with prost's own error,
//! and then read the same way from prost's own encoding of it. The handler reads every
//! check the same way ([`CheckRef`], whose fields each game's module takes by the
//! field constants of its request); tests and the `requests` fuzz target hold the
//! checks read, written back from their fields, equal to prost's decoding of whole,
//! cut and corrupted batches.

use std::ops::Range;

use prost::bytes::{Buf, BufMut, Bytes, BytesMut};
use prost::encoding::{decode_key, decode_varint, skip_field, DecodeContext, WireType};
use prost::{DecodeError, Message};

use super::{merge_items, reserve_items};
use crate::kit::rows::{RowsView, Span};
use crate::proto::wire::{fields, Len, Varint};
use crate::proto::{Board, Check, CheckBatchRequest};

/// A field of a check's request, by its number, as the reader reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// A `Board`, at most once.
    Board(u32),
    /// An `int32`, kept by its number.
    Int32(u32),
    /// A `bool`, kept by its number (as 0 or 1).
    Bool(u32),
    /// A `string`: the last one given, as prost keeps it.
    Text(u32),
    /// A `repeated string`: every one given, in order.
    #[allow(
        dead_code,
        reason = "read for a check that holds one; contract v5's hold none"
    )]
    Texts(u32),
    /// A message other than a `Board`: every occurrence, merged, as prost merges them.
    #[allow(
        dead_code,
        reason = "read for a check that holds one; contract v5's hold none"
    )]
    Message(u32),
    /// A repeated message other than a list of pairs: every one given, in order.
    #[allow(
        dead_code,
        reason = "read for a check that holds one; contract v5's hold none"
    )]
    Messages(u32),
    /// A repeated message of two `int32`s (the request's only list): the field's
    /// number, then the first's and the second's.
    Pairs(u32, u32, u32),
}

// `SCALARS`, `shape` and `Read::request`, generated from the contract's `Check` oneof.
include!(concat!(env!("OUT_DIR"), "/check_shapes.rs"));

/// The field number of `checks` in `CheckBatchRequest`.
const CHECKS: u32 = fields::check_batch_request::CHECKS.0;

/// About the bytes a small check takes on the wire: the batch's list of checks is
/// sized from the message's length with it ([`reserve_items`]).
const SMALL_CHECK: usize = 32;

/// A `CheckBatchRequest` as the server reads it: its checks, in order, each read in
/// place, from the message's bytes or from prost's encoding of a check it decoded (see
/// the module's documentation).
#[derive(Clone, Default, Debug)]
pub struct CheckBatchChecks {
    /// The message's bytes, as they came.
    body: Bytes,
    /// prost's encoding of each check that was not in the plain form, as prost decoded
    /// it, end to end.
    decoded: Vec<u8>,
    /// Every check, in order.
    items: Vec<Item>,
    /// What the checks hold apart from `body` and `decoded`.
    read: Read,
    /// A check prost decodes, before it is encoded into `decoded`.
    scratch: Vec<Check>,
}

/// What the checks hold apart from the message's bytes.
#[derive(Clone, Default, Debug)]
struct Read {
    /// Where the rows of every board are in the message (or in `decoded`), board after
    /// board; a board is a range of them.
    rows: Vec<Span>,
    /// Every string and message field (but boards and pairs) as it came, check after
    /// check: its number and where its bytes are; a check's fields are a range of them.
    fields: Vec<Field>,
    /// The lists' items, end to end, each its two `int32`s.
    pairs: Vec<[i32; 2]>,
}

/// A string or message field of a check: where its bytes are in the message (or in
/// `decoded`), and its number: a string's, checked as UTF-8 once; a message's, checked
/// to decode as its type once. Eight bytes, for a field that takes at least two on the
/// wire (a chess game's moves take six): its length and its number share a word, the
/// number in the low byte. A field numbered past 255 or longer than 16 MiB is left to
/// prost (no contract's check request has such fields; a request's bytes are at most
/// the server's request limit).
#[derive(Clone, Copy, Debug)]
struct Field {
    start: u32,
    len_and_number: u32,
}

impl Field {
    /// The field numbered `number` at `start`, `len` bytes long, if it fits.
    fn new(number: u32, start: u32, len: u32) -> Option<Self> {
        let number = u8::try_from(number).ok()?;
        (len < 1 << 24).then_some(Self {
            start,
            len_and_number: len << 8 | u32::from(number),
        })
    }

    fn number(self) -> u32 {
        self.len_and_number & 0xff
    }

    /// Where its bytes are.
    fn range(self) -> std::ops::Range<usize> {
        let start = self.start as usize;
        start..start + (self.len_and_number >> 8) as usize
    }
}

/// One check of a batch as it is kept, small (a batch's list of items is sized from its
/// message's length, so an item's size is memory per byte of request): its kind, and its
/// fields by its request's shape, stretches of the batch's buffers for those that are
/// not scalars.
#[derive(Clone, Debug)]
struct Item {
    /// Its field in `Check`'s oneof; 0 for a check that sets none.
    kind: u32,
    /// Its board's rows are in `decoded`, not in the message: prost decoded it.
    decoded: bool,
    /// Whether its board is set.
    has_board: bool,
    /// Its board, a stretch of the batch's rows.
    board: Stretch,
    /// Its string and message fields, in the batch's fields, as they came.
    fields: Stretch,
    /// Its list, in the batch's pairs.
    pairs: Stretch,
    /// Its `int32`s and `bool`s, each in its slot ([`slot`]); 0 where not set.
    scalars: [i32; SCALARS],
}

/// A stretch of one of a batch's buffers: its items `start..end` (a batch holds fewer than
/// `u32::MAX` of anything; a longer one is left to prost).
#[derive(Clone, Copy, Debug, Default)]
struct Stretch {
    start: u32,
    end: u32,
}

impl Stretch {
    /// The stretch from `start` to `end`, if both fit a `u32`.
    fn new(start: usize, end: usize) -> Option<Self> {
        Some(Self {
            start: u32::try_from(start).ok()?,
            end: u32::try_from(end).ok()?,
        })
    }

    /// As a range of indexes.
    fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

impl Item {
    /// A check that sets nothing yet, its fields to start at `fields` and its list at
    /// `pairs`.
    fn new(decoded: bool, fields: usize, pairs: usize) -> Option<Self> {
        Some(Self {
            kind: 0,
            decoded,
            has_board: false,
            board: Stretch::default(),
            fields: Stretch::new(fields, fields)?,
            pairs: Stretch::new(pairs, pairs)?,
            scalars: [0; SCALARS],
        })
    }
}

/// One check of a batch as the handler reads it: its kind and its request's fields,
/// borrowed, each as prost would decode it (a field not set, or not of its request,
/// reads as its default), each found when asked for. A game's module takes its fields
/// by the constants of its request (`wire::fields::check_connect_four_request::ROW`).
#[derive(Clone, Copy, Debug)]
pub struct CheckRef<'a> {
    /// Its field in `Check`'s oneof (`wire::fields::check::CHECK_CONNECT_FOUR`'s
    /// number); 0 when it sets no check.
    pub kind: u32,
    checks: &'a CheckBatchChecks,
    item: &'a Item,
}

impl<'a> CheckRef<'a> {
    /// The board's rows, unchecked; `None` when the request sets no board.
    pub fn board(&self) -> Option<RowsView<'a>> {
        let (checks, item) = (self.checks, self.item);
        let bytes = self.bytes();
        if !item.has_board {
            return None;
        }
        let rows = checks.read.rows.get(item.board.range())?;
        Some(RowsView::spans(bytes, rows))
    }

    /// The `int32` field `field`.
    pub(crate) fn int32(&self, field: Varint) -> i32 {
        slot(self.kind, field.0)
            .and_then(|at| self.item.scalars.get(at))
            .copied()
            .unwrap_or(0)
    }

    /// The `bool` field `field`.
    pub(crate) fn bool(&self, field: Varint) -> bool {
        self.int32(field) != 0
    }

    /// The bytes its board's rows and its fields are in: the message's, or prost's
    /// encoding of it when prost decoded it.
    fn bytes(&self) -> &'a [u8] {
        if self.item.decoded {
            &self.checks.decoded[..]
        } else {
            &self.checks.body[..]
        }
    }

    /// The string field `field`: the last one given, as prost keeps it; empty when
    /// none is.
    pub(crate) fn text(&self, field: Len) -> &'a str {
        self.texts(field).next_back().unwrap_or_default()
    }

    /// The repeated string field `field`: every one given, in order.
    pub(crate) fn texts(&self, field: Len) -> impl DoubleEndedIterator<Item = &'a str> + 'a {
        // Each was checked as UTF-8 when it was read.
        self.fields(field.0)
            .map(|bytes| std::str::from_utf8(bytes).unwrap_or_default())
    }

    /// The message field `field`, every occurrence merged as prost merges them (`None`
    /// when it is not set).
    #[allow(
        dead_code,
        reason = "for a check that holds one; contract v5's hold none"
    )]
    pub(crate) fn message<M: Message + Default>(&self, field: Len) -> Option<M> {
        let mut merged: Option<M> = None;
        for bytes in self.fields(field.0) {
            // Each decoded when it was read.
            let _ = merged.get_or_insert_with(M::default).merge(bytes);
        }
        merged
    }

    /// The repeated message field `field`: every one given, in order.
    #[allow(
        dead_code,
        reason = "for a check that holds one; contract v5's hold none"
    )]
    pub(crate) fn messages<M: Message + Default>(
        &self,
        field: Len,
    ) -> impl DoubleEndedIterator<Item = M> + 'a {
        // Each decoded when it was read.
        self.fields(field.0)
            .map(|bytes| M::decode(bytes).unwrap_or_default())
    }

    /// The bytes of every string or message given as field `number`, in order.
    fn fields(&self, number: u32) -> impl DoubleEndedIterator<Item = &'a [u8]> + 'a {
        let bytes = self.bytes();
        self.checks
            .read
            .fields
            .get(self.item.fields.range())
            .unwrap_or_default()
            .iter()
            .filter(move |field| field.number() == number)
            .map(move |field| bytes.get(field.range()).unwrap_or_default())
    }

    /// The request's list, each item its two `int32`s in the order of their numbers.
    pub fn pairs(&self) -> &'a [[i32; 2]] {
        self.checks
            .read
            .pairs
            .get(self.item.pairs.range())
            .unwrap_or_default()
    }
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

    /// How many of the checks were read from the message's bytes (the rest prost
    /// decoded first).
    pub fn read_in_place(&self) -> usize {
        self.items.iter().filter(|item| !item.decoded).count()
    }

    fn check_ref<'a>(&'a self, item: &'a Item) -> CheckRef<'a> {
        CheckRef {
            kind: item.kind,
            checks: self,
            item,
        }
    }

    /// The check at `item` as prost's generated message, written back from the fields
    /// read (prost's encoding of them, by the request's shape, decoded).
    fn to_check(&self, item: &Item) -> Check {
        use prost::encoding::{bool as boolean, bytes, int32, message, string};
        let check = self.check_ref(item);
        let Some(shape) = shape(item.kind) else {
            return Check::default();
        };
        let mut request = Vec::new();
        for &part in shape {
            match part {
                Part::Board(n) => {
                    if let Some(rows) = check.board() {
                        let board = Board {
                            rows: rows.to_rows(),
                        };
                        message::encode(n, &board, &mut request);
                    }
                }
                Part::Int32(n) | Part::Bool(n) => {
                    let value = check.int32(Varint(n));
                    if value != 0 {
                        if matches!(part, Part::Bool(_)) {
                            boolean::encode(n, &true, &mut request);
                        } else {
                            int32::encode(n, &value, &mut request);
                        }
                    }
                }
                Part::Text(n) => {
                    let text = check.text(Len(n));
                    if !text.is_empty() {
                        string::encode(n, &text.to_owned(), &mut request);
                    }
                }
                Part::Texts(n) => {
                    for text in check.texts(Len(n)) {
                        string::encode(n, &text.to_owned(), &mut request);
                    }
                }
                Part::Message(n) => {
                    // Occurrences merge as their encodings end to end do.
                    let mut merged = Vec::new();
                    let mut any = false;
                    for bytes in check.fields(n) {
                        merged.extend_from_slice(bytes);
                        any = true;
                    }
                    if any {
                        bytes::encode(n, &merged, &mut request);
                    }
                }
                Part::Messages(n) => {
                    for bytes in check.fields(n) {
                        bytes::encode(n, &bytes.to_vec(), &mut request);
                    }
                }
                Part::Pairs(n, first, second) => {
                    for &[a, b] in check.pairs() {
                        let mut pair = Vec::new();
                        for (number, value) in [(first, a), (second, b)] {
                            if value != 0 {
                                int32::encode(number, &value, &mut pair);
                            }
                        }
                        bytes::encode(n, &pair, &mut request);
                    }
                }
            }
        }
        let mut whole = Vec::new();
        bytes::encode(item.kind, &request, &mut whole);
        Check::decode(&whole[..]).unwrap_or_default()
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
                if let Some(item) = self.read.check(body, check, false) {
                    self.items.push(item);
                    if self.items.len() == 1 {
                        self.read.reserve_like_first(rest.len(), after.len());
                    }
                    *rest = after;
                    return Ok(());
                }
            }
        }
        self.merge_decoded(wire_type, rest, ctx)
    }

    /// Decodes one check from the front of `buf` by prost's generated code, and reads
    /// it from prost's encoding of it, which is in the plain form.
    fn merge_decoded(
        &mut self,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        self.scratch.clear();
        merge_items(wire_type, &mut self.scratch, buf, ctx)?;
        let start = self.decoded.len();
        if let Some(check) = self.scratch.pop() {
            check.encode_raw(&mut self.decoded);
        }
        // prost's encoding is in the plain form of every request `build.rs` gave a
        // shape (the `requests` tests and fuzz target hold it): this error is not
        // reached.
        #[allow(deprecated, reason = "prost's own way to say a Message cannot decode")]
        let item = self
            .read
            .check(&self.decoded, &self.decoded[start..], true)
            .ok_or_else(|| DecodeError::new("a check prost decoded does not read by its shape"))?;
        self.items.push(item);
        Ok(())
    }
}

impl Read {
    /// Room for the rest of a message whose bytes from its first check on are `len`,
    /// `left` of them after that check, if every check is like the first: as many
    /// rows, strings and list items per byte. Each reserve is within about the bytes
    /// left (a span takes 8 bytes and a row at least 10 on the wire in a board of 8
    /// columns; a pair 8 and 6), so that a batch unlike its first check makes the
    /// server reserve no more than that.
    fn reserve_like_first(&mut self, len: usize, left: usize) {
        let first = (len - left).max(1);
        let like = |had: usize, most: usize| (had * (left / first)).min(most);
        self.rows.reserve(like(self.rows.len(), left / 8));
        self.fields.reserve(like(self.fields.len(), left / 2));
        self.pairs.reserve(like(self.pairs.len(), left / 6));
    }

    /// Reads the check whose bytes are `check` (a part of `body`) by its shape, if it
    /// is in the plain form this decoder takes (see the module's documentation); else
    /// leaves everything as it was and returns `None`.
    fn check(&mut self, body: &[u8], check: &[u8], decoded: bool) -> Option<Item> {
        let marks = (self.rows.len(), self.fields.len(), self.pairs.len());
        let item =
            Item::new(decoded, marks.1, marks.2).and_then(|item| self.item(body, check, item));
        if item.is_none() {
            self.rows.truncate(marks.0);
            self.fields.truncate(marks.1);
            self.pairs.truncate(marks.2);
        }
        item
    }

    /// A `Check`: no field, or exactly one, a request of a kind the contract has.
    fn item(&mut self, body: &[u8], mut check: &[u8], mut item: Item) -> Option<Item> {
        if check.is_empty() {
            return Some(item);
        }
        let kind = key(&mut check, WireType::LengthDelimited)?;
        let request = field_bytes(&mut check)?;
        if !check.is_empty() {
            return None;
        }
        self.request(kind, body, request, &mut item)?;
        item.kind = kind;
        item.fields.end = u32::try_from(self.fields.len()).ok()?;
        item.pairs.end = u32::try_from(self.pairs.len()).ok()?;
        Some(item)
    }

    /// An item of a list: a message of two `int32`s, numbered `FIRST` and `SECOND`.
    fn pair<const FIRST: u32, const SECOND: u32>(&mut self, mut fields: &[u8]) -> Option<()> {
        let mut pair = [0; 2];
        while !fields.is_empty() {
            match raw_key(&mut fields)? {
                key if key == FIRST << 3 => pair[0] = int32(&mut fields)?,
                key if key == SECOND << 3 => pair[1] = int32(&mut fields)?,
                _ => return None,
            }
        }
        self.pairs.push(pair);
        Some(())
    }

    /// A `Board` (`fields`, a part of `body`) of rows and nothing else: where each row
    /// is in `body`, added to the batch's; the range of them it is.
    fn board(&mut self, body: &[u8], mut fields: &[u8]) -> Option<Stretch> {
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
        Stretch::new(start, self.rows.len())
    }

    /// A string field numbered `number` (`bytes`, a part of `body`), if it is UTF-8
    /// as prost requires: where it is, added to the batch's fields.
    fn string(&mut self, number: u32, body: &[u8], bytes: &[u8]) -> Option<()> {
        std::str::from_utf8(bytes).ok()?;
        self.field(number, body, bytes)
    }

    /// A message field numbered `number` (`bytes`, a part of `body`), if it decodes as
    /// its type `M`, as prost requires: where it is, added to the batch's fields.
    #[allow(
        dead_code,
        reason = "read for a check that holds one; contract v5's hold none"
    )]
    fn message<M: Message + Default>(
        &mut self,
        number: u32,
        body: &[u8],
        bytes: &[u8],
    ) -> Option<()> {
        M::decode(bytes).ok()?;
        self.field(number, body, bytes)
    }

    /// Where the field numbered `number`, `bytes`, is in `body`, added to the batch's
    /// fields (a body too long for a span's u32 is left to prost).
    fn field(&mut self, number: u32, body: &[u8], bytes: &[u8]) -> Option<()> {
        let at = bytes.as_ptr() as usize - body.as_ptr() as usize;
        let start = u32::try_from(at).ok()?;
        let len = u32::try_from(bytes.len()).ok()?;
        self.fields.push(Field::new(number, start, len)?);
        Some(())
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

/// A varint of more than one byte (or none): two bytes at once, more by prost's
/// decoding; kept out of line, so that the one-byte case inlined wherever a varint is
/// read stays a few instructions.
#[cold]
#[inline(never)]
fn long_varint(bytes: &mut &[u8]) -> Option<u64> {
    // Two bytes (the length of a check, a board or a row past 127 bytes) at once.
    if let Some((&[low, high], rest)) = bytes.split_first_chunk::<2>() {
        if high < 0x80 {
            *bytes = rest;
            return Some(u64::from(low & 0x7f) | u64::from(high) << 7);
        }
    }
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

/// A field's key from the front of `bytes`, as its varint holds it (its number and its
/// wire type, `number << 3 | wire type`), if it fits 32 bits: what the readers generated
/// from a request's shape match against the keys of its fields, whole (a key they do
/// not know, of an unknown wire type or field number 0 among them, leaves the check to
/// prost).
#[inline(always)]
fn raw_key(bytes: &mut &[u8]) -> Option<u32> {
    u32::try_from(varint(bytes)?).ok()
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
    /// Every check read from prost's encoding of the request.
    fn from(request: CheckBatchRequest) -> Self {
        // prost's own encoding always decodes.
        Self::decode(&request.encode_to_vec()[..]).unwrap_or_default()
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
        self.merge_decoded(wire_type, buf, ctx)
            .map_err(|mut error| {
                error.push("CheckBatchRequest", "checks");
                error
            })
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
