//! `arbiter.v1.Board` (`repeated string rows = 1;`), encoded and decoded by hand.
//!
//! prost would decode each row into a `String` of its own: an allocation, a copy and a
//! UTF-8 check per row, then the game's alphabet check and a second copy into the
//! grid. Here every row is copied once, straight from the request into one buffer
//! ([`Rows`]), and that buffer becomes the grid after the one pass that checks it
//! against the game's alphabet. The alphabets are ASCII, so that pass also rejects
//! anything that is not UTF-8, with an error naming the row and column where prost's
//! would have named only the field.

use prost::bytes::Buf;
use prost::encoding::{
    check_wire_type, decode_varint, encode_key, encode_varint, encoded_len_varint, key_len,
    skip_field, DecodeContext, WireType,
};
use prost::DecodeError;

use crate::kit::rows::Rows;

/// The field number of `rows`.
const ROWS: u32 = super::wire::fields::board::ROWS.0;

/// The most rows that a board's first row makes room for: an 8x8 Othello board or a
/// 6x7 Connect Four board is read without growing its buffer; larger ones grow it.
const ROWS_GUESS: usize = 8;

/// The longest first row [`ROWS_GUESS`] rows are reserved for: a little over the
/// widest board the service takes (100 cells, a byte each).
const MAX_GUESSED_ROW: usize = 128;

/// A board: its rows of text, row 0 at the top, each one character per cell.
///
/// The rows' bytes are kept as they came, unchecked: a board means something only once
/// a game has checked it against its alphabet.
#[derive(Clone, PartialEq, Eq, Hash, Default, Debug)]
pub struct Board {
    /// The rows, row 0 at the top.
    pub rows: Rows,
}

impl Board {
    /// A board of `rows`, row 0 first.
    pub fn from_rows<S: AsRef<[u8]>>(rows: impl IntoIterator<Item = S>) -> Self {
        Self {
            rows: rows.into_iter().collect(),
        }
    }
}

message_impl! {
    Board;
    encode_raw(board, buf) {
        for row in board.rows.iter() {
            encode_key(ROWS, WireType::LengthDelimited, buf);
            encode_varint(row.len() as u64, buf);
            buf.put_slice(row);
        }
    }
    merge_field(board, tag, wire_type, buf, ctx) {
        if tag != ROWS {
            return skip_field(wire_type, tag, buf, ctx);
        }
        merge_row(&mut board.rows, wire_type, buf).map_err(|mut error| {
            error.push("Board", "rows");
            error
        })
    }
    encoded_len(board) {
        board
            .rows
            .lengths()
            .map(|len| key_len(ROWS) + encoded_len_varint(len as u64) + len)
            .sum()
    }
    clear(board) {
        board.rows.clear();
    }
}

/// Appends the row at the front of `buf` to `rows`, copied once.
pub(super) fn merge_row(
    rows: &mut Rows,
    wire_type: WireType,
    buf: &mut impl Buf,
) -> Result<(), DecodeError> {
    check_wire_type(WireType::LengthDelimited, wire_type)?;
    let len = field_len(buf)?;
    if rows.is_empty() {
        // Room at once for a few rows as long as the first when the first is a row of
        // a board (boards are mostly about square, and small): at most ROWS_GUESS times
        // the bytes of a row no wider than the widest board. A longer first row, which
        // the service refuses anyway, gets room for itself alone, so that no request
        // makes the server hold much more than it sent.
        let guess = if len <= MAX_GUESSED_ROW {
            len.clamp(1, ROWS_GUESS)
        } else {
            1
        };
        rows.reserve(guess, guess * len);
    }
    let mut left = len;
    let mut row = rows.push_row();
    row.reserve(len);
    while left > 0 {
        let chunk = buf.chunk();
        let take = chunk.len().min(left);
        if take == 0 {
            break;
        }
        row.extend_from_slice(&chunk[..take]);
        buf.advance(take);
        left -= take;
    }
    drop(row);
    // Only a `Buf` that claims bytes it cannot show leaves some: refuse the short row.
    if left > 0 {
        return Err(buffer_underflow());
    }
    Ok(())
}

/// Reads a length-delimited field's length from the front of `buf`: an error unless
/// that many bytes follow.
pub(super) fn field_len(buf: &mut impl Buf) -> Result<usize, DecodeError> {
    let len = decode_varint(buf)?;
    usize::try_from(len)
        .ok()
        .filter(|&len| len <= buf.remaining())
        .ok_or_else(buffer_underflow)
}

/// prost's own error for a length past the end of the message (prost has no public
/// constructor for it): the error of a one-byte field in an empty buffer.
#[cold]
pub(super) fn buffer_underflow() -> DecodeError {
    let mut scratch = Vec::new();
    let mut truncated: &[u8] = &[1];
    match prost::encoding::bytes::merge(
        WireType::LengthDelimited,
        &mut scratch,
        &mut truncated,
        DecodeContext::default(),
    ) {
        Err(error) => error,
        // prost reads no field of one byte from none; if it ever did, the same words.
        #[allow(deprecated)]
        Ok(()) => DecodeError::new("buffer underflow"),
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;

    /// What prost generates for `repeated string rows = 1;`, to compare the wire bytes.
    #[derive(Clone, PartialEq, Message)]
    struct Generated {
        #[prost(string, repeated, tag = "1")]
        rows: Vec<String>,
        #[prost(int32, tag = "2")]
        other: i32,
    }

    #[test]
    fn the_bytes_are_the_generated_code_s_both_ways() {
        let rows = vec!["B.W".to_owned(), String::new(), "é".repeat(200)];
        let generated = Generated {
            rows: rows.clone(),
            other: 0,
        };
        let board = Board::from_rows(&rows);
        assert_eq!(board.encode_to_vec(), generated.encode_to_vec());
        assert_eq!(board.encoded_len(), generated.encoded_len());
        let decoded = Board::decode(&generated.encode_to_vec()[..]).unwrap();
        assert_eq!(decoded.rows.to_strings(), rows);
    }

    #[test]
    fn a_row_split_across_buffers_is_whole() {
        let bytes = Board::from_rows(["B.W.", "WWBB"]).encode_to_vec();
        for split in 0..bytes.len() {
            let (front, back) = bytes.split_at(split);
            let decoded = Board::decode(front.chain(back)).unwrap();
            assert_eq!(
                decoded.rows.to_strings(),
                ["B.W.", "WWBB"],
                "split at {split}"
            );
        }
    }

    #[test]
    fn unknown_fields_are_skipped_and_repeats_appended() {
        let with_other = Generated {
            rows: vec!["12".into()],
            other: 7,
        };
        let mut bytes = with_other.encode_to_vec();
        bytes.extend(with_other.encode_to_vec());
        let decoded = Board::decode(&bytes[..]).unwrap();
        assert_eq!(decoded.rows.to_strings(), ["12", "12"]);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_kept_for_the_game_to_refuse() {
        let decoded = Board::decode(&[0x0a, 0x02, 0xff, b'.'][..]).unwrap();
        assert_eq!(decoded.rows.get(0), Some(&[0xff, b'.'][..]));
    }

    #[test]
    fn truncated_and_mistyped_rows_are_decode_errors() {
        let error = Board::decode(&[0x0a, 0x05, b'.'][..]).unwrap_err();
        assert!(error.to_string().contains("Board.rows"), "{error}");
        assert!(error.to_string().contains("buffer underflow"), "{error}");
        let error = Board::decode(&[0x08, 0x01][..]).unwrap_err();
        assert!(error.to_string().contains("Board.rows"), "{error}");
        let error = Board::decode(&[0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff][..]).unwrap_err();
        assert!(error.to_string().contains("Board.rows"), "{error}");
    }
}
