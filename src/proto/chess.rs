//! `arbiter.v1.ChessSetup` and `arbiter.v1.JudgeChessGameRequest`, encoded and decoded by
//! hand, for their moves (`repeated string history = 3;`, `repeated string moves = 2;`).
//!
//! prost would decode each move into a `String` of its own: 24 bytes and an allocation
//! for the 4 to 7 bytes of a move, so that a request of a megabyte of moves (which the
//! service refuses past 20,000 of them) would hold eight times its size. Here the moves
//! are copied once into one buffer ([`Rows`]), as a board's rows are, each checked as
//! UTF-8 as prost checks a string. Every other field is prost's own encoding.

use prost::bytes::{Buf, BufMut};
use prost::encoding::{
    bool as boolean, encode_key, encode_varint, encoded_len_varint, key_len, message, skip_field,
    string, DecodeContext, WireType,
};
use prost::DecodeError;

use super::board::merge_row;
use super::wire::fields::{chess_setup, judge_chess_game_request};
use super::{Clock, TimeControl};
use crate::kit::rows::Rows;

/// The start of a live chess game: the position, the moves replayed from it, the clock.
/// See the contract's `ChessSetup`.
#[derive(Clone, PartialEq, Eq, Hash, Default, Debug)]
pub struct ChessSetup {
    /// The start in FEN; empty: the standard position.
    pub fen: String,
    /// The game is Chess960.
    pub chess960: bool,
    /// Moves (UCI or SAN) replayed from `fen`, in one buffer (build it with
    /// `.collect()` from strings).
    pub history: Rows,
    /// A clock for this game; unset: no clock.
    pub time_control: Option<TimeControl>,
    /// With a time control, each side's time left as the game starts.
    pub clock: Option<Clock>,
    /// Every reply lists the legal moves of the side to move.
    pub legal_moves: bool,
}

/// A whole chess game to judge. See the contract's `JudgeChessGameRequest`.
#[derive(Clone, PartialEq, Eq, Hash, Default, Debug)]
pub struct JudgeChessGameRequest {
    /// The start in FEN; empty: the standard position.
    pub fen: String,
    /// The moves (UCI or SAN), in turn, in one buffer (build it with `.collect()` from
    /// strings).
    pub moves: Rows,
    /// The game is Chess960.
    pub chess960: bool,
}

/// Writes `texts` as the repeated string field `tag`.
fn encode_texts(tag: u32, texts: &Rows, buf: &mut impl BufMut) {
    for text in texts.iter() {
        encode_key(tag, WireType::LengthDelimited, buf);
        encode_varint(text.len() as u64, buf);
        buf.put_slice(text);
    }
}

/// The bytes `texts` take as the repeated string field `tag`.
fn texts_len(tag: u32, texts: &Rows) -> usize {
    texts
        .lengths()
        .map(|len| key_len(tag) + encoded_len_varint(len as u64) + len)
        .sum()
}

/// Appends the string at the front of `buf` to `texts`, refused as prost refuses it
/// unless it is UTF-8; errors say `field` of `message`, as prost's do.
fn merge_text(
    texts: &mut Rows,
    wire_type: WireType,
    buf: &mut impl Buf,
    names: (&'static str, &'static str),
) -> Result<(), DecodeError> {
    let pushed = merge_row(texts, wire_type, buf).and_then(|()| {
        let last = texts.get(texts.len().saturating_sub(1)).unwrap_or_default();
        match std::str::from_utf8(last) {
            Ok(_) => Ok(()),
            Err(_) => Err(not_utf8(last)),
        }
    });
    pushed.map_err(|mut error| {
        error.push(names.0, names.1);
        error
    })
}

/// prost's own error for a string that is not UTF-8 (prost has no public constructor
/// for it): what it says of `bytes` read as a string.
#[cold]
fn not_utf8(bytes: &[u8]) -> DecodeError {
    let mut field = Vec::with_capacity(bytes.len() + 10);
    encode_varint(bytes.len() as u64, &mut field);
    field.extend_from_slice(bytes);
    let mut text = String::new();
    match string::merge(
        WireType::LengthDelimited,
        &mut text,
        &mut &field[..],
        DecodeContext::default(),
    ) {
        Err(error) => error,
        // prost takes what is not UTF-8 as no string; if it ever did, the same words.
        #[allow(deprecated)]
        Ok(()) => DecodeError::new("invalid string value: data is not UTF-8 encoded"),
    }
}

/// Adds the message's name and the field's to `error`, as prost's generated code does.
fn named<T>(
    result: Result<T, DecodeError>,
    message: &'static str,
    field: &'static str,
) -> Result<T, DecodeError> {
    result.map_err(|mut error| {
        error.push(message, field);
        error
    })
}

message_impl! {
    ChessSetup;
    encode_raw(setup, buf) {
        if !setup.fen.is_empty() {
            string::encode(chess_setup::FEN.0, &setup.fen, buf);
        }
        if setup.chess960 {
            boolean::encode(chess_setup::CHESS960.0, &setup.chess960, buf);
        }
        encode_texts(chess_setup::HISTORY.0, &setup.history, buf);
        if let Some(control) = &setup.time_control {
            message::encode(chess_setup::TIME_CONTROL.0, control, buf);
        }
        if let Some(clock) = &setup.clock {
            message::encode(chess_setup::CLOCK.0, clock, buf);
        }
        if setup.legal_moves {
            boolean::encode(chess_setup::LEGAL_MOVES.0, &setup.legal_moves, buf);
        }
    }
    merge_field(setup, tag, wire_type, buf, ctx) {
        const NAME: &str = "ChessSetup";
        match tag {
            t if t == chess_setup::FEN.0 => {
                named(string::merge(wire_type, &mut setup.fen, buf, ctx), NAME, "fen")
            }
            t if t == chess_setup::CHESS960.0 => named(
                boolean::merge(wire_type, &mut setup.chess960, buf, ctx),
                NAME,
                "chess960",
            ),
            t if t == chess_setup::HISTORY.0 => {
                merge_text(&mut setup.history, wire_type, buf, (NAME, "history"))
            }
            t if t == chess_setup::TIME_CONTROL.0 => {
                let control = setup.time_control.get_or_insert_with(Default::default);
                named(message::merge(wire_type, control, buf, ctx), NAME, "time_control")
            }
            t if t == chess_setup::CLOCK.0 => {
                let clock = setup.clock.get_or_insert_with(Default::default);
                named(message::merge(wire_type, clock, buf, ctx), NAME, "clock")
            }
            t if t == chess_setup::LEGAL_MOVES.0 => named(
                boolean::merge(wire_type, &mut setup.legal_moves, buf, ctx),
                NAME,
                "legal_moves",
            ),
            _ => skip_field(wire_type, tag, buf, ctx),
        }
    }
    encoded_len(setup) {
        let fen = if setup.fen.is_empty() {
            0
        } else {
            string::encoded_len(chess_setup::FEN.0, &setup.fen)
        };
        let flags = [
            (setup.chess960, chess_setup::CHESS960.0),
            (setup.legal_moves, chess_setup::LEGAL_MOVES.0),
        ]
        .iter()
        .filter(|(set, _)| *set)
        .map(|&(set, tag)| boolean::encoded_len(tag, &set))
        .sum::<usize>();
        let control = setup
            .time_control
            .as_ref()
            .map_or(0, |control| message::encoded_len(chess_setup::TIME_CONTROL.0, control));
        let clock = setup
            .clock
            .as_ref()
            .map_or(0, |clock| message::encoded_len(chess_setup::CLOCK.0, clock));
        fen + flags + texts_len(chess_setup::HISTORY.0, &setup.history) + control + clock
    }
    clear(setup) {
        *setup = ChessSetup::default();
    }
}

message_impl! {
    JudgeChessGameRequest;
    encode_raw(request, buf) {
        if !request.fen.is_empty() {
            string::encode(judge_chess_game_request::FEN.0, &request.fen, buf);
        }
        encode_texts(judge_chess_game_request::MOVES.0, &request.moves, buf);
        if request.chess960 {
            boolean::encode(judge_chess_game_request::CHESS960.0, &request.chess960, buf);
        }
    }
    merge_field(request, tag, wire_type, buf, ctx) {
        const NAME: &str = "JudgeChessGameRequest";
        match tag {
            t if t == judge_chess_game_request::FEN.0 => {
                named(string::merge(wire_type, &mut request.fen, buf, ctx), NAME, "fen")
            }
            t if t == judge_chess_game_request::MOVES.0 => {
                merge_text(&mut request.moves, wire_type, buf, (NAME, "moves"))
            }
            t if t == judge_chess_game_request::CHESS960.0 => named(
                boolean::merge(wire_type, &mut request.chess960, buf, ctx),
                NAME,
                "chess960",
            ),
            _ => skip_field(wire_type, tag, buf, ctx),
        }
    }
    encoded_len(request) {
        let fen = if request.fen.is_empty() {
            0
        } else {
            string::encoded_len(judge_chess_game_request::FEN.0, &request.fen)
        };
        let chess960 = if request.chess960 {
            boolean::encoded_len(judge_chess_game_request::CHESS960.0, &request.chess960)
        } else {
            0
        };
        fen + texts_len(judge_chess_game_request::MOVES.0, &request.moves) + chess960
    }
    clear(request) {
        *request = JudgeChessGameRequest::default();
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use prost::Message;

    use super::*;

    /// What prost generates for the two messages, under their names (which prost's
    /// errors say), to compare the wire bytes and the errors.
    mod generated {
        use super::{Clock, TimeControl};

        #[derive(Clone, PartialEq, prost::Message)]
        pub(super) struct ChessSetup {
            #[prost(string, tag = "1")]
            pub(super) fen: String,
            #[prost(bool, tag = "2")]
            pub(super) chess960: bool,
            #[prost(string, repeated, tag = "3")]
            pub(super) history: Vec<String>,
            #[prost(message, optional, tag = "4")]
            pub(super) time_control: Option<TimeControl>,
            #[prost(message, optional, tag = "5")]
            pub(super) clock: Option<Clock>,
            #[prost(bool, tag = "6")]
            pub(super) legal_moves: bool,
        }

        #[derive(Clone, PartialEq, prost::Message)]
        pub(super) struct JudgeChessGameRequest {
            #[prost(string, tag = "1")]
            pub(super) fen: String,
            #[prost(string, repeated, tag = "2")]
            pub(super) moves: Vec<String>,
            #[prost(bool, tag = "3")]
            pub(super) chess960: bool,
        }
    }
    use generated::{ChessSetup as GeneratedSetup, JudgeChessGameRequest as GeneratedJudge};

    fn duration(ms: u64) -> prost_types::Duration {
        prost_types::Duration {
            seconds: (ms / 1000) as i64,
            nanos: (ms % 1000) as i32 * 1_000_000,
        }
    }

    proptest! {
        /// Both ways, the bytes and the values are prost's, on random setups and games:
        /// encoded alike, each decodes the other's bytes to the same message.
        #[test]
        fn the_bytes_are_the_generated_code_s_both_ways(
            fen in "[a-zA-Z0-9/ -]{0,40}",
            chess960 in any::<bool>(),
            moves in prop::collection::vec("[a-h1-8NBRQKO=x+#é-]{0,8}", 0..12),
            control in prop::option::of(0..100_000u64),
            clock in prop::option::of((0..100_000u64, 0..100_000u64)),
            legal_moves in any::<bool>(),
        ) {
            let time_control = control.map(|ms| TimeControl {
                initial: Some(duration(ms)),
                ..Default::default()
            });
            let clock = clock.map(|(a, b)| Clock {
                a_left: Some(duration(a)),
                b_left: Some(duration(b)),
            });
            let generated = GeneratedSetup {
                fen: fen.clone(),
                chess960,
                history: moves.clone(),
                time_control,
                clock,
                legal_moves,
            };
            let setup = ChessSetup {
                fen: fen.clone(),
                chess960,
                history: moves.iter().collect(),
                time_control,
                clock,
                legal_moves,
            };
            prop_assert_eq!(setup.encode_to_vec(), generated.encode_to_vec());
            prop_assert_eq!(setup.encoded_len(), generated.encoded_len());
            let decoded = ChessSetup::decode(&generated.encode_to_vec()[..]).unwrap();
            prop_assert_eq!(&decoded, &setup);
            prop_assert_eq!(GeneratedSetup::decode(&setup.encode_to_vec()[..]).unwrap(), generated);

            let generated = GeneratedJudge { fen: fen.clone(), moves: moves.clone(), chess960 };
            let judge = JudgeChessGameRequest { fen, moves: moves.iter().collect(), chess960 };
            prop_assert_eq!(judge.encode_to_vec(), generated.encode_to_vec());
            prop_assert_eq!(judge.encoded_len(), generated.encoded_len());
            let decoded = JudgeChessGameRequest::decode(&generated.encode_to_vec()[..]).unwrap();
            prop_assert_eq!(&decoded, &judge);
            prop_assert_eq!(GeneratedJudge::decode(&judge.encode_to_vec()[..]).unwrap(), generated);
        }

        /// Cut or corrupted, the bytes fail or succeed as prost's do, to the same
        /// message, or with the same error.
        #[test]
        fn damaged_bytes_decode_as_prost_decodes_them(
            moves in prop::collection::vec("[a-h1-8NO-]{0,6}", 1..6),
            cut in any::<prop::sample::Index>(),
            flip in any::<prop::sample::Index>(),
            byte in any::<u8>(),
        ) {
            let generated = GeneratedSetup {
                fen: "8/8/8/8/8/8/8/K6k w - - 0 1".into(),
                history: moves.clone(),
                legal_moves: true,
                ..Default::default()
            };
            let bytes = generated.encode_to_vec();
            let mut damaged = bytes.clone();
            let at = flip.index(damaged.len());
            damaged[at] = byte;
            for case in [&bytes[..cut.index(bytes.len())], &damaged[..]] {
                let ours = ChessSetup::decode(case);
                let theirs = GeneratedSetup::decode(case);
                match (ours, theirs) {
                    (Ok(ours), Ok(theirs)) => {
                        prop_assert_eq!(ours.encode_to_vec(), theirs.encode_to_vec());
                    }
                    (Err(ours), Err(theirs)) => {
                        prop_assert_eq!(ours.to_string(), theirs.to_string());
                    }
                    (ours, theirs) => {
                        prop_assert!(false, "{:?} against prost's {:?}", ours, theirs.map(|_| ()));
                    }
                }
            }
        }
    }
}
