//! The two bulk requests, `CheckBatchRequest` and `PlayManyRequest`, as the server
//! reads them: each item decoded from one contiguous slice of the message, and a
//! batch's checks, most of them, read in place ([`CheckBatchChecks`]).
//!
//! prost's generated decoding reads every item's fields through the transport's buffer
//! (`Buf`, whose chunk it asks for again at every field and varint) and grows the item
//! list one push at a time.
//! Here each item's bytes are read as the plain slice they almost always are in that
//! buffer, by the item's own generated decoding, and the list is sized once from the
//! message's length. The items, and the errors of a malformed one (named as prost
//! names them), are prost's; only the server's stubs use these types, and each becomes
//! the generated message, and back (`From`): a `PlayManyRequest` without a copy.

use prost::bytes::Buf;
use prost::encoding::message::merge_repeated;
use prost::encoding::{decode_varint, skip_field, DecodeContext, WireType};
use prost::DecodeError;

use super::wire::fields;
use super::{GameAction, PlayManyRequest};

pub(crate) mod checks;

pub use self::checks::{CheckBatchChecks, CheckRef};

/// A `PlayManyRequest` as the server reads it: its actions, in order.
#[derive(Clone, PartialEq, Default, Debug)]
pub struct PlayManyActions {
    /// The actions, in order.
    pub actions: Vec<GameAction>,
}

impl From<PlayManyActions> for PlayManyRequest {
    fn from(reading: PlayManyActions) -> Self {
        Self {
            actions: reading.actions,
        }
    }
}

impl From<PlayManyRequest> for PlayManyActions {
    fn from(whole: PlayManyRequest) -> Self {
        Self {
            actions: whole.actions,
        }
    }
}

/// The field number of `actions` in `PlayManyRequest`.
const ACTIONS: u32 = fields::play_many_request::ACTIONS.0;

/// About the bytes a small action takes on the wire: the list of actions is sized from
/// the message's length with it ([`reserve_items`]).
const SMALL_ACTION: usize = 8;

message_impl! {
    PlayManyActions;
    encode_raw(reading, buf) {
        for item in &reading.actions {
            prost::encoding::message::encode(ACTIONS, item, buf);
        }
    }
    merge_field(reading, tag, wire_type, buf, ctx) {
        if tag != ACTIONS {
            return skip_field(wire_type, tag, buf, ctx);
        }
        reserve_items(&mut reading.actions, buf.remaining(), SMALL_ACTION);
        merge_items(wire_type, &mut reading.actions, buf, ctx).map_err(|mut error| {
            error.push("PlayManyRequest", "actions");
            error
        })
    }
    encoded_len(reading) {
        prost::encoding::message::encoded_len_repeated(ACTIONS, &reading.actions)
    }
    clear(reading) {
        reading.actions.clear();
    }
}

/// The most items a bulk request's list is sized for before its items are read: one
/// more than the most a CheckBatch or PlayMany message may carry (the service refuses
/// more, and its test `bulk_lists_reserve_room_for_every_item_allowed` holds this bound
/// to its limits). So a request makes the server reserve at most this many items'
/// room, however it is made.
pub(crate) const MAX_RESERVED: usize = 10_001;

/// Room in a bulk request's empty list for as many small items (of about `item_bytes`
/// bytes each on the wire) as the `bytes_left` of its message can hold, within the most
/// a message may carry ([`MAX_RESERVED`]): larger items leave room unused, more items
/// than that grow the list as usual. A list that holds items already is left as it is.
fn reserve_items<T>(items: &mut Vec<T>, bytes_left: usize, item_bytes: usize) {
    if items.is_empty() {
        items.reserve((bytes_left / item_bytes + 1).min(MAX_RESERVED));
    }
}

/// Decodes one item from the front of `buf` into `items`, as prost's generated code
/// does (`merge_repeated`, so the same message or the same error), but from the
/// contiguous slice the item is in when it is in one: the transport's buffer almost
/// always holds a whole message in one chunk.
fn merge_items<M: prost::Message + Default>(
    wire_type: WireType,
    items: &mut Vec<M>,
    buf: &mut impl Buf,
    ctx: DecodeContext,
) -> Result<(), DecodeError> {
    let chunk = buf.chunk();
    let mut item = chunk;
    let in_chunk = wire_type == WireType::LengthDelimited
        && decode_varint(&mut item).is_ok_and(|len| len <= item.len() as u64);
    if !in_chunk {
        return merge_repeated(wire_type, items, buf, ctx);
    }
    let mut rest = chunk;
    merge_repeated(wire_type, items, &mut rest, ctx)?;
    let read = chunk.len() - rest.len();
    buf.advance(read);
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::collection::vec;
    use proptest::prelude::*;
    use prost::Message;

    use super::*;
    use crate::proto::{
        check, game_action, play_connect_four_request, Check, CheckBatchRequest,
        ListOthelloMovesRequest, PlayConnectFourRequest, PlayManyRequest,
    };

    /// Fails unless `bytes` decode as the server's type exactly as prost's generated one
    /// decodes them: the same message, or the same error.
    fn decodes_as_generated<R, M>(bytes: &[u8]) -> Result<(), TestCaseError>
    where
        R: Message + Default + Into<M>,
        M: Message + Default + PartialEq + std::fmt::Debug,
    {
        let ours = R::decode(bytes).map(Into::into);
        let prost = M::decode(bytes);
        match (ours, prost) {
            (Ok(ours), Ok(prost)) => prop_assert!(ours == prost),
            (Err(ours), Err(prost)) => prop_assert_eq!(ours.to_string(), prost.to_string()),
            (ours, prost) => prop_assert!(false, "ours {:?}, prost's {:?}", ours, prost),
        }
        Ok(())
    }

    fn actions() -> impl Strategy<Value = PlayManyRequest> {
        let action = (any::<u64>(), -3..10i32, any::<bool>()).prop_map(|(game, drop, close)| {
            let action = if close {
                game_action::Action::Close(drop > 0)
            } else {
                game_action::Action::ConnectFour(PlayConnectFourRequest {
                    action: Some(play_connect_four_request::Action::Drop(drop)),
                })
            };
            GameAction {
                game,
                action: Some(action),
            }
        });
        vec(action, 0..20).prop_map(|actions| PlayManyRequest { actions })
    }

    /// A board of a few rows from a small alphabet (the games' and a stray byte).
    fn board() -> impl Strategy<Value = Option<crate::proto::Board>> {
        let row = vec(prop::sample::select(b".BW012x\xff".to_vec()), 0..5);
        proptest::option::weighted(0.9, vec(row, 0..4))
            .prop_map(|rows| rows.map(crate::proto::Board::from_rows))
    }

    /// The field numbers of every kind of check in `Check`'s oneof, by the shapes
    /// `build.rs` takes from the contract: a check added to it is among them.
    fn kinds() -> Vec<u32> {
        (1..64)
            .filter(|&kind| checks::shape(kind).is_some())
            .collect()
    }

    /// A request of `kind` written by prost from random values of its fields (by its
    /// shape): a board of a few rows, coordinates about one, colours that are not one.
    fn request(kind: u32) -> impl Strategy<Value = Vec<u8>> {
        use prost::encoding::{bool as boolean, int32, message, string};
        let shape = checks::shape(kind).unwrap_or_default();
        let color = prop::sample::select(vec!["", "B", "W", "black", "é"]);
        let value = (board(), -2..9i32, color, vec((-1..4i32, -1..4i32), 0..10));
        vec(value, shape.len()).prop_map(move |values| {
            let mut out = Vec::new();
            for (part, (board, number, color, pairs)) in shape.iter().zip(values) {
                match *part {
                    checks::Part::Board(n) => {
                        if let Some(board) = board {
                            message::encode(n, &board, &mut out);
                        }
                    }
                    checks::Part::Int32(n) => int32::encode(n, &number, &mut out),
                    checks::Part::Bool(n) => boolean::encode(n, &(number % 2 == 0), &mut out),
                    checks::Part::Text(n) => string::encode(n, &color.to_owned(), &mut out),
                    checks::Part::Texts(n) => {
                        for _ in 0..pairs.len() % 3 {
                            string::encode(n, &color.to_owned(), &mut out);
                        }
                    }
                    // An empty message decodes as any type.
                    checks::Part::Message(n) | checks::Part::Messages(n) => {
                        for _ in 0..pairs.len() % 3 {
                            prost::encoding::bytes::encode(n, &Vec::new(), &mut out);
                        }
                    }
                    checks::Part::Pairs(n, first, second) => {
                        for (a, b) in pairs {
                            let pair = [(first, a), (second, b)].map(|(number, value)| {
                                let mut out = Vec::new();
                                int32::encode(number, &value, &mut out);
                                out
                            });
                            prost::encoding::bytes::encode(n, &pair.concat(), &mut out);
                        }
                    }
                }
            }
            out
        })
    }

    /// Checks of every kind the contract has, unset ones among them, with fields at
    /// their defaults often (left out of the wire) and colours that are not one.
    fn checks() -> impl Strategy<Value = CheckBatchRequest> {
        let kind = prop_oneof![6 => prop::sample::select(kinds()), 1 => Just(0)];
        let check = kind.prop_flat_map(|kind| {
            request(kind).prop_map(move |request| {
                let bytes = if kind == 0 {
                    Vec::new()
                } else {
                    field(kind, 2, &request, 0)
                };
                Check::decode(&bytes[..]).unwrap()
            })
        });
        vec(check, 0..20).prop_map(|checks| CheckBatchRequest { checks })
    }

    /// `value` as a varint, as prost writes it or padded with `pad` more bytes that
    /// add nothing (which prost reads too), within a varint's ten bytes.
    fn varint(value: u64, pad: usize) -> Vec<u8> {
        let mut out = Vec::new();
        prost::encoding::encode_varint(value, &mut out);
        if pad > 0 && out.len() + pad <= 10 {
            *out.last_mut().unwrap() |= 0x80;
            out.extend(std::iter::repeat_n(0x80, pad - 1));
            out.push(0);
        }
        out
    }

    /// A field written by hand: its key, its length if length-delimited, `payload`.
    fn field(tag: u32, wire_type: u8, payload: &[u8], pad: usize) -> Vec<u8> {
        let mut out = varint(u64::from(tag << 3 | u32::from(wire_type)), pad);
        if wire_type == 2 {
            out.extend(varint(payload.len() as u64, pad));
        }
        out.extend_from_slice(payload);
        out
    }

    /// A field of any number and type with a payload that may fit it: the checks'
    /// fields, repeated, in any order, of the wrong type, unknown, in varints that
    /// are not the shortest.
    fn any_field() -> impl Strategy<Value = Vec<u8>> {
        let board = [field(1, 2, b"B.", 0), field(1, 2, b"WB", 0)].concat();
        let payloads = vec![
            board.clone(),
            [board, field(7, 0, &[1], 0)].concat(),
            b"B".to_vec(),
            b"W".to_vec(),
            vec![0xc3],
            Vec::new(),
            [field(1, 0, &[1], 0), field(2, 0, &[2], 0)].concat(),
        ];
        let values = vec![0, 1, 7, u64::MAX, 1 << 33, 300];
        (
            0..7u32,
            prop_oneof![4 => Just(2u8), 3 => Just(0u8), 1 => Just(5u8)],
            prop::sample::select(payloads),
            prop::sample::select(values),
            0..3usize,
        )
            .prop_map(|(tag, wire_type, payload, value, pad)| match wire_type {
                0 => [varint(u64::from(tag << 3), pad), varint(value, 0)].concat(),
                5 => field(tag, 5, &[0; 4], pad),
                _ => field(tag, 2, &payload, pad),
            })
    }

    /// A field that fits a request of `kind` (the `Check` oneof's number), by its
    /// shape: one of its fields, of its type, with a value that may or may not make
    /// sense to the game.
    fn fitting_field(kind: u32) -> impl Strategy<Value = Vec<u8>> {
        // Each field's number and what it holds: a board, an int32 or bool, a string, a
        // list of pairs (and the pair's numbers).
        let schema: Vec<(u32, char, u32, u32)> = checks::shape(kind)
            .unwrap_or_default()
            .iter()
            .map(|part| match *part {
                checks::Part::Board(n) => (n, 'b', 0, 0),
                checks::Part::Int32(n) | checks::Part::Bool(n) => (n, 'i', 0, 0),
                checks::Part::Text(n) | checks::Part::Texts(n) => (n, 's', 0, 0),
                // Bytes that may or may not decode as the message.
                checks::Part::Message(n) | checks::Part::Messages(n) => (n, 's', 0, 0),
                checks::Part::Pairs(n, first, second) => (n, 'm', first, second),
            })
            .collect();
        let rows = prop::sample::select(vec![&b"B."[..], b"WB", b"12", b"", b"\xff"]);
        (
            prop::sample::select(schema),
            vec(rows, 0..3),
            prop::sample::select(vec![&b"B"[..], b"W", b"", "é".as_bytes(), b"\xc3"]),
            prop::sample::select(vec![0, 1, 2, 5, u64::MAX, 1 << 33]),
            0..3usize,
            any::<bool>(),
        )
            .prop_map(
                |((tag, holds, first, second), rows, text, value, pad, odd)| match holds {
                    'b' => {
                        let rows = rows.iter().map(|row| field(1, 2, row, pad));
                        let mut board = rows.collect::<Vec<_>>().concat();
                        if odd && pad > 1 {
                            board.extend(field(2, 0, &[1], 0));
                        }
                        field(tag, 2, &board, pad)
                    }
                    'i' => [varint(u64::from(tag << 3), pad), varint(value, pad)].concat(),
                    's' => field(tag, 2, text, pad),
                    _ => {
                        let row =
                            [varint(u64::from(first << 3), 0), varint(value % 4, pad)].concat();
                        let col = [
                            varint(u64::from(second << 3), pad),
                            varint(value / 2 % 4, 0),
                        ]
                        .concat();
                        let step = if odd {
                            [col, row].concat()
                        } else {
                            [row, col].concat()
                        };
                        field(tag, 2, &step, 0)
                    }
                },
            )
    }

    /// Batches of checks written by hand: most of a check's fields fit its kind, but
    /// repeated, in any order, now and then of the wrong type or unknown (see
    /// [`any_field`]), in varints that are not the shortest; now and then a check of
    /// two kinds, or none, or an unknown field between the checks.
    fn unusual_batch() -> impl Strategy<Value = Vec<u8>> {
        let request = prop::sample::select(kinds()).prop_flat_map(|kind| {
            let field = prop_oneof![8 => fitting_field(kind), 1 => any_field()];
            (
                Just(kind),
                vec(field, 0..6).prop_map(|fields| fields.concat()),
            )
        });
        let check = (vec(request, 0..3), 0..2usize).prop_map(|(parts, pad)| {
            let parts = parts
                .iter()
                .map(|(kind, request)| field(*kind, 2, request, pad));
            parts.collect::<Vec<_>>().concat()
        });
        let item = prop_oneof![
            12 => check.prop_map(|check| field(1, 2, &check, 0)),
            1 => any_field(),
        ];
        vec(item, 0..8).prop_map(|items| items.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Whole messages, the same cut short anywhere, a byte changed anywhere, and
        /// bytes at random.
        #[test]
        fn bulk_requests_decode_as_prost_decodes_them(
            many in actions(),
            batch in checks(),
            cut in any::<prop::sample::Index>(),
            flip in any::<(prop::sample::Index, u8)>(),
            noise in vec(any::<u8>(), 0..64),
            unusual in unusual_batch(),
        ) {
            for bytes in [many.encode_to_vec(), batch.encode_to_vec()] {
                let mut changed = bytes.clone();
                if !changed.is_empty() {
                    let at = flip.0.index(changed.len());
                    changed[at] ^= flip.1;
                }
                let short = &bytes[..cut.index(bytes.len() + 1)];
                for case in [&bytes[..], short, &changed[..], &noise[..]] {
                    decodes_as_generated::<PlayManyActions, PlayManyRequest>(case)?;
                    decodes_as_generated::<CheckBatchChecks, CheckBatchRequest>(case)?;
                }
            }
            decodes_as_generated::<CheckBatchChecks, CheckBatchRequest>(&unusual)?;
            // Every check of a batch prost's own encoder wrote is read in place (the
            // test above would pass as well if none were).
            let read = CheckBatchChecks::decode(&batch.encode_to_vec()[..]).unwrap();
            prop_assert_eq!(read.read_in_place(), batch.checks.len());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100))]

        /// A batch merged into one already read (prost appends the second's checks to
        /// the first's) keeps the first's checks read in place as they were; and a
        /// batch nested in a message (read field by field, as prost reads it) is read
        /// as prost reads it.
        #[test]
        fn a_batch_merged_into_another_keeps_both(first in checks(), second in checks()) {
            let (first, second) = (first.encode_to_vec(), second.encode_to_vec());
            let mut read = CheckBatchChecks::decode(&first[..]).unwrap();
            read.merge(&second[..]).unwrap();
            let both = CheckBatchRequest::decode(&[first.clone(), second][..].concat()[..]);
            prop_assert_eq!(CheckBatchRequest::from(read), both.unwrap());
            let nested = CheckBatchChecks::decode_length_delimited(
                &CheckBatchRequest::decode(&first[..]).unwrap().encode_length_delimited_to_vec()[..],
            );
            prop_assert_eq!(
                CheckBatchRequest::from(nested.unwrap()),
                CheckBatchRequest::decode(&first[..]).unwrap()
            );
        }
    }

    /// An item split across the buffer's chunks is read through the buffer, whole.
    #[test]
    fn an_item_split_across_chunks_is_read_whole() {
        let many = PlayManyRequest {
            actions: vec![GameAction {
                game: 300,
                action: Some(game_action::Action::Close(true)),
            }],
        };
        let bytes = many.encode_to_vec();
        for split in 0..bytes.len() {
            let (front, back) = bytes.split_at(split);
            let decoded = PlayManyActions::decode(front.chain(back)).unwrap();
            assert_eq!(PlayManyRequest::from(decoded), many, "split at {split}");
        }
        let batch = CheckBatchRequest {
            checks: vec![Check {
                check: Some(check::Check::ListOthelloMoves(ListOthelloMovesRequest {
                    board: Some(crate::proto::Board::from_rows(["..", "BW"])),
                    color: "B".to_owned(),
                })),
            }],
        };
        let bytes = batch.encode_to_vec();
        for split in 0..bytes.len() {
            let (front, back) = bytes.split_at(split);
            let decoded = CheckBatchChecks::decode(front.chain(back)).unwrap();
            assert_eq!(CheckBatchRequest::from(decoded), batch, "split at {split}");
        }
    }
}
