//! The two bulk requests, `CheckBatchRequest` and `PlayManyRequest`, as the server
//! reads them: each item decoded from one contiguous slice of the message.
//!
//! prost's generated decoding reads every item's fields through the transport's buffer
//! (`Buf`, whose chunk it asks for again at every field and varint) and grows the item
//! list one push at a time.
//! Here each item's bytes are read as the plain slice they almost always are in that
//! buffer, by the item's own generated decoding, and the list is sized once from the
//! message's length. The items, and the errors of a malformed one (named as prost
//! names them), are prost's; only the server's stubs use these types, and each becomes
//! the generated message, and back (`From`), without a copy.

use prost::bytes::Buf;
use prost::encoding::message::merge_repeated;
use prost::encoding::{decode_varint, skip_field, DecodeContext, WireType};
use prost::DecodeError;

use super::{Check, GameAction};

/// Declares `$reading`, `$whole` as the server reads it: its one field `$items` (number
/// 1, a repeated `$item`), a small item taking about `$bytes` bytes on the wire.
macro_rules! bulk_request {
    ($(#[$doc:meta])* $reading:ident: $whole:ident { $items:ident: $item:ident, $bytes:literal }) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Default, Debug)]
        pub struct $reading {
            /// The items, in order.
            pub $items: Vec<$item>,
        }

        impl From<$reading> for super::$whole {
            fn from(reading: $reading) -> Self {
                Self {
                    $items: reading.$items,
                }
            }
        }

        impl From<super::$whole> for $reading {
            fn from(whole: super::$whole) -> Self {
                Self {
                    $items: whole.$items,
                }
            }
        }

        message_impl! {
            $reading;
            encode_raw(reading, buf) {
                for item in &reading.$items {
                    prost::encoding::message::encode(1, item, buf);
                }
            }
            merge_field(reading, tag, wire_type, buf, ctx) {
                if tag != 1 {
                    return skip_field(wire_type, tag, buf, ctx);
                }
                if reading.$items.is_empty() {
                    // Room for as many small items as the message can hold, within the
                    // most a message may carry (larger items leave room unused, more
                    // items than that grow the list as usual).
                    let room = buf.remaining() / $bytes + 1;
                    reading.$items.reserve(room.min(MAX_RESERVED));
                }
                merge_items(wire_type, &mut reading.$items, buf, ctx).map_err(|mut error| {
                    error.push(stringify!($whole), stringify!($items));
                    error
                })
            }
            encoded_len(reading) {
                prost::encoding::message::encoded_len_repeated(1, &reading.$items)
            }
            clear(reading) {
                reading.$items.clear();
            }
        }
    };
}

bulk_request! {
    /// A `CheckBatchRequest` as the server reads it.
    CheckBatchChecks: CheckBatchRequest { checks: Check, 32 }
}

bulk_request! {
    /// A `PlayManyRequest` as the server reads it.
    PlayManyActions: PlayManyRequest { actions: GameAction, 8 }
}

/// The most items a bulk request's list is sized for before its items are read: the
/// most a CheckBatch or PlayMany message may carry (one more is refused anyway). So a
/// request makes the server reserve at most this many items' room, however it is made.
const MAX_RESERVED: usize = if crate::MAX_CHECKS > crate::MAX_ACTIONS {
    crate::MAX_CHECKS
} else {
    crate::MAX_ACTIONS
} + 1;

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
        check, game_action, play_connect_four_request, CheckBatchRequest, CheckConnectFourRequest,
        JudgeTicTacToeRequest, PlayConnectFourRequest, PlayManyRequest, TicTacToeMove,
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

    fn checks() -> impl Strategy<Value = CheckBatchRequest> {
        let check = (-2..8i32, vec((-1..4i32, -1..4i32), 0..10)).prop_map(|(col, moves)| {
            let check = if moves.len() % 2 == 0 {
                check::Check::CheckConnectFour(CheckConnectFourRequest {
                    board: Some(crate::proto::Board::from_rows(["0000", "0120"])),
                    row: 1,
                    col,
                    player: 1,
                    run_length: 0,
                })
            } else {
                check::Check::JudgeTicTacToe(JudgeTicTacToeRequest {
                    moves: moves
                        .into_iter()
                        .map(|(row, col)| TicTacToeMove { row, col })
                        .collect(),
                })
            };
            Check { check: Some(check) }
        });
        vec(check, 0..20).prop_map(|checks| CheckBatchRequest { checks })
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
    }
}
