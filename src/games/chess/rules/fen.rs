//! FEN both ways: a position read, with what is wrong with it named, and written as
//! X-FEN.

use std::fmt;

use cozy_chess::{
    get_bishop_moves, get_king_moves, get_knight_moves, get_pawn_attacks, get_rook_moves,
    BitBoard, Board, BoardBuilder, CastleRights, Color, File, Piece, Rank, Square,
};

use super::{file, rank, Position, STANDARD_START};

/// The pieces a placement holds, by kind and by colour, as read.
#[derive(Clone, Copy, Default)]
struct Pieces {
    /// By `Piece as usize`.
    kinds: [BitBoard; 6],
    /// By `Color as usize`.
    colors: [BitBoard; 2],
}

impl Pieces {
    /// The squares of `piece` of `color`.
    fn of(&self, piece: Piece, color: Color) -> BitBoard {
        self.kinds[piece as usize] & self.colors[color as usize]
    }

    fn occupied(&self) -> BitBoard {
        self.colors[0] | self.colors[1]
    }
}

/// What is wrong with a FEN: a sentence naming the part and the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FenError(String);

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FenError {}

fn wrong(text: impl Into<String>) -> FenError {
    FenError(text.into())
}

/// The most characters of a FEN read: a FEN is under 100.
const MAX_FEN_BYTES: usize = 256;

/// Reads `fen` (the standard start when empty), as Chess960 when `chess960` is set.
pub(super) fn parse(fen: &str, chess960: bool) -> Result<Position, FenError> {
    let fen = if fen.is_empty() { STANDARD_START } else { fen };
    if fen.len() > MAX_FEN_BYTES {
        return Err(wrong(format!(
            "is {} bytes long, not a FEN (a FEN is under {MAX_FEN_BYTES})",
            fen.len()
        )));
    }
    let mut parts = fen.split_ascii_whitespace();
    let taken: [Option<&str>; 6] = std::array::from_fn(|_| parts.next());
    let count = taken.iter().flatten().count() + parts.count();
    let fields = match (count, taken) {
        (4 | 6, [Some(placement), Some(side), Some(castling), Some(en_passant), halfmove, fullmove]) => {
            Some((placement, side, castling, en_passant, halfmove.zip(fullmove)))
        }
        _ => None,
    };
    let Some((placement, side, castling, en_passant, counters)) = fields else {
        return Err(wrong(format!(
            "has {count} fields; a FEN has 6 (placement, side to move, castling, en passant, \
             halfmove clock, fullmove number), or the first 4"
        )));
    };
    let (halfmove, fullmove) = match counters {
        None => (0, 1),
        Some((halfmove, fullmove)) => (
            number(halfmove, "halfmove clock", 0)?,
            number(fullmove, "fullmove number", 1)?,
        ),
    };
    let mut builder = BoardBuilder::empty();
    let pieces = read_placement(placement, &mut builder)?;
    builder.side_to_move = match side {
        "w" => Color::White,
        "b" => Color::Black,
        other => {
            return Err(wrong(format!(
                "side to move must be \"w\" or \"b\", got {other:?}"
            )))
        }
    };
    check_pieces(&pieces)?;
    read_castling(castling, chess960, &pieces, &mut builder)?;
    let en_passant = read_en_passant(en_passant, &builder)?;
    check_checks(&pieces, builder.side_to_move)?;
    build(builder, en_passant, halfmove, fullmove, chess960)
}

/// A counter: a whole number from `least` up.
fn number(text: &str, name: &str, least: u32) -> Result<u32, FenError> {
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(wrong(format!("{name} must be a whole number, got {text:?}")));
    }
    let value: u32 = text
        .parse()
        .map_err(|_| wrong(format!("{name} {text} is more than {}", u32::MAX)))?;
    if value < least {
        return Err(wrong(format!("{name} must be at least {least}, got {value}")));
    }
    Ok(value)
}

/// The pieces of the placement field, rank 8 first, onto `builder`: the pieces read.
fn read_placement(placement: &str, builder: &mut BoardBuilder) -> Result<Pieces, FenError> {
    let mut pieces = Pieces::default();
    let count = placement.bytes().filter(|&b| b == b'/').count() + 1;
    if count != 8 {
        return Err(wrong(format!(
            "placement must have 8 ranks separated by '/', got {count}"
        )));
    }
    for (row, text) in placement.split('/').enumerate() {
        let rank_index = 7 - row;
        let mut column = 0usize;
        for &byte in text.as_bytes() {
            if let b'1'..=b'8' = byte {
                column += usize::from(byte - b'0');
                continue;
            }
            let Some((piece, color)) = piece_of(byte) else {
                return Err(wrong(format!(
                    "rank {} holds {:?}, which is neither a piece (PNBRQK, pnbrqk) nor \
                     a count of empty squares (1 to 8)",
                    rank_index + 1,
                    // The character this byte is (or begins): the first that is neither.
                    text.chars()
                        .find(|&c| !matches!(c, '1'..='8') && piece_of_char(c).is_none())
                        .unwrap_or(char::from(byte))
                )));
            };
            if let (Some(f), Some(r)) = (file(column), rank(rank_index)) {
                let square = Square::new(f, r);
                *builder.square_mut(square) = Some((piece, color));
                pieces.kinds[piece as usize] |= square.bitboard();
                pieces.colors[color as usize] |= square.bitboard();
            }
            column += 1;
        }
        if column != 8 {
            return Err(wrong(format!(
                "rank {} has {column} squares, not 8",
                rank_index + 1
            )));
        }
    }
    Ok(pieces)
}

/// The piece and colour a FEN letter names.
fn piece_of_char(ch: char) -> Option<(Piece, Color)> {
    u8::try_from(ch).ok().filter(u8::is_ascii).and_then(piece_of)
}

/// The piece and colour a FEN letter's byte names.
fn piece_of(byte: u8) -> Option<(Piece, Color)> {
    let color = if byte.is_ascii_uppercase() {
        Color::White
    } else {
        Color::Black
    };
    let piece = match byte.to_ascii_lowercase() {
        b'p' => Piece::Pawn,
        b'n' => Piece::Knight,
        b'b' => Piece::Bishop,
        b'r' => Piece::Rook,
        b'q' => Piece::Queen,
        b'k' => Piece::King,
        _ => return None,
    };
    Some((piece, color))
}

fn name(color: Color) -> &'static str {
    match color {
        Color::White => "white",
        Color::Black => "black",
    }
}

/// One king a side, at most 16 pieces and 8 pawns a side, no pawn on the first or last
/// rank.
fn check_pieces(pieces: &Pieces) -> Result<(), FenError> {
    for color in Color::ALL {
        let kings = pieces.of(Piece::King, color).len();
        if kings != 1 {
            return Err(wrong(format!(
                "has {kings} {} kings; a position has exactly one of each colour",
                name(color)
            )));
        }
        let count = pieces.colors[color as usize].len();
        if count > 16 {
            return Err(wrong(format!(
                "has {count} {} pieces, more than 16",
                name(color)
            )));
        }
        let pawns = pieces.of(Piece::Pawn, color);
        if pawns.len() > 8 {
            return Err(wrong(format!(
                "has {} {} pawns, more than 8",
                pawns.len(),
                name(color)
            )));
        }
        let back_ranks = Rank::First.bitboard() | Rank::Eighth.bitboard();
        if let Some(square) = (pawns & back_ranks).next_square() {
            return Err(wrong(format!(
                "has a {} pawn on {square}, on the first or last rank",
                name(color)
            )));
        }
    }
    Ok(())
}

/// The castling field: `-`, or rights each written once, KQkq or (in Chess960) by the
/// rook's file, each with the king and that rook on their squares.
fn read_castling(
    text: &str,
    chess960: bool,
    pieces: &Pieces,
    builder: &mut BoardBuilder,
) -> Result<(), FenError> {
    if text == "-" {
        return Ok(());
    }
    for ch in text.chars() {
        let color = if ch.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        let back = Rank::First.relative_to(color);
        let king = pieces
            .of(Piece::King, color)
            .next_square()
            .filter(|king| king.rank() == back);
        let rooks = pieces.of(Piece::Rook, color) & back.bitboard();
        let has_rook = |file: File| rooks.has(Square::new(file, back));
        let (rook, short) = match ch.to_ascii_lowercase() {
            side @ ('k' | 'q') => {
                let short = side == 'k';
                let Some(king) = king else {
                    return Err(wrong(format!(
                        "castling right {ch} needs the {} king on its first rank",
                        name(color)
                    )));
                };
                if !chess960 {
                    let (home, corner) = (File::E, if short { File::H } else { File::A });
                    if king.file() != home || !has_rook(corner) {
                        return Err(wrong(format!(
                            "castling right {ch} needs the {} king on {} and a rook on {}",
                            name(color),
                            Square::new(home, back),
                            Square::new(corner, back)
                        )));
                    }
                    (corner, short)
                } else {
                    // The outermost rook on that side of the king (X-FEN).
                    let files = rooks.into_iter().map(Square::file);
                    let outermost = if short {
                        files.filter(|&f| f > king.file()).max()
                    } else {
                        files.filter(|&f| f < king.file()).min()
                    };
                    let Some(rook) = outermost else {
                        return Err(wrong(format!(
                            "castling right {ch} needs a {} rook on its first rank on the \
                             king's {} side",
                            name(color),
                            if short { "h" } else { "a" }
                        )));
                    };
                    (rook, short)
                }
            }
            letter @ 'a'..='h' if chess960 => {
                let rook = file((letter as u8 - b'a') as usize).unwrap_or(File::A);
                let Some(king) = king else {
                    return Err(wrong(format!(
                        "castling right {ch} needs the {} king on its first rank",
                        name(color)
                    )));
                };
                if !has_rook(rook) || rook == king.file() {
                    return Err(wrong(format!(
                        "castling right {ch} needs a {} rook on {}",
                        name(color),
                        Square::new(rook, back)
                    )));
                }
                (rook, rook > king.file())
            }
            _ => {
                return Err(wrong(format!(
                    "castling must be \"-\" or rights {}, got {text:?}",
                    if chess960 {
                        "of KQkq or rook files (AHah)"
                    } else {
                        "of KQkq"
                    }
                )))
            }
        };
        let rights: &mut CastleRights = builder.castle_rights_mut(color);
        let slot = if short {
            &mut rights.short
        } else {
            &mut rights.long
        };
        if slot.is_some() {
            return Err(wrong(format!(
                "castling gives {}'s {} castling twice ({text:?})",
                name(color),
                if short { "king-side" } else { "queen-side" }
            )));
        }
        *slot = Some(rook);
    }
    Ok(())
}

/// The en-passant field: `-`, or a square on the sixth (third) rank behind a pawn of
/// the side not to move, that square and the one behind it empty.
fn read_en_passant(text: &str, builder: &BoardBuilder) -> Result<Option<Square>, FenError> {
    if text == "-" {
        return Ok(None);
    }
    let square: Square = text
        .parse()
        .map_err(|_| wrong(format!("en passant must be \"-\" or a square, got {text:?}")))?;
    let mover = builder.side_to_move;
    let (target, pawn, behind) = (
        Rank::Sixth.relative_to(mover),
        Rank::Fifth.relative_to(mover),
        Rank::Seventh.relative_to(mover),
    );
    if square.rank() != target {
        return Err(wrong(format!(
            "en passant square {square} is not on rank {}, where {} can capture en passant",
            target as usize + 1,
            name(mover)
        )));
    }
    let pawn_square = Square::new(square.file(), pawn);
    if builder.square(pawn_square) != Some((Piece::Pawn, !mover)) {
        return Err(wrong(format!(
            "en passant square {square} is not behind a {} pawn (on {pawn_square})",
            name(!mover)
        )));
    }
    let behind_square = Square::new(square.file(), behind);
    if builder.square(square).is_some() || builder.square(behind_square).is_some() {
        return Err(wrong(format!(
            "en passant square {square} needs {square} and {behind_square} empty"
        )));
    }
    Ok(Some(square))
}

/// The side not to move is not in check; the side to move is checked by at most two
/// pieces.
fn check_checks(pieces: &Pieces, mover: Color) -> Result<(), FenError> {
    if !attackers(pieces, !mover).is_empty() {
        return Err(wrong(format!(
            "{} is in check, but it is {}'s move",
            name(!mover),
            name(mover)
        )));
    }
    let checkers = attackers(pieces, mover).len();
    if checkers > 2 {
        return Err(wrong(format!(
            "{} is checked by {checkers} pieces; no move gives more than two checks",
            name(mover)
        )));
    }
    Ok(())
}

/// The pieces attacking `color`'s king.
fn attackers(pieces: &Pieces, color: Color) -> BitBoard {
    let Some(king) = pieces.of(Piece::King, color).next_square() else {
        return BitBoard::EMPTY;
    };
    let occupied = pieces.occupied();
    let theirs = |piece: Piece| pieces.of(piece, !color);
    let (pawns, knights, bishops, rooks, queens, kings) = (
        theirs(Piece::Pawn),
        theirs(Piece::Knight),
        theirs(Piece::Bishop),
        theirs(Piece::Rook),
        theirs(Piece::Queen),
        theirs(Piece::King),
    );
    (get_pawn_attacks(king, color) & pawns)
        | (get_knight_moves(king) & knights)
        | (get_bishop_moves(king, occupied) & (bishops | queens))
        | (get_rook_moves(king, occupied) & (rooks | queens))
        | (get_king_moves(king) & kings)
}

/// The position of `builder`'s pieces and rights, with `en_passant`; an en-passant
/// square the board refuses is kept apart (see the module's documentation).
fn build(
    mut builder: BoardBuilder,
    en_passant: Option<Square>,
    halfmove: u32,
    fullmove: u32,
    chess960: bool,
) -> Result<Position, FenError> {
    builder.halfmove_clock = 0;
    builder.fullmove_number = 1;
    builder.en_passant = en_passant;
    let (board, odd_en_passant) = match builder.build() {
        Ok(board) => (board, None),
        Err(_) if en_passant.is_some() => {
            builder.en_passant = None;
            let board = builder
                .build()
                .map_err(|error| wrong(format!("is not a position play can go on from: {error}")))?;
            (board, en_passant)
        }
        Err(error) => {
            return Err(wrong(format!(
                "is not a position play can go on from: {error}"
            )))
        }
    };
    Ok(Position {
        board,
        halfmove,
        fullmove,
        chess960,
        odd_en_passant,
    })
}

/// The position as X-FEN (see [`Position::fen`]).
pub(super) fn write(position: &Position) -> String {
    let board: &Board = &position.board;
    // The board as 64 letters, a1 first (0 for empty), from its bitboards.
    let mut letters = [0u8; 64];
    for (piece, letter) in [
        (Piece::Pawn, b'p'),
        (Piece::Knight, b'n'),
        (Piece::Bishop, b'b'),
        (Piece::Rook, b'r'),
        (Piece::Queen, b'q'),
        (Piece::King, b'k'),
    ] {
        for (color, letter) in [
            (Color::White, letter.to_ascii_uppercase()),
            (Color::Black, letter),
        ] {
            for square in board.colored_pieces(color, piece) {
                if let Some(slot) = letters.get_mut(square as usize) {
                    *slot = letter;
                }
            }
        }
    }
    let mut fen = String::with_capacity(90);
    for rank_index in (0..8).rev() {
        let mut empty = 0u8;
        for &letter in letters.iter().skip(8 * rank_index).take(8) {
            if letter == 0 {
                empty += 1;
                continue;
            }
            if empty > 0 {
                fen.push(char::from(b'0' + empty));
                empty = 0;
            }
            fen.push(char::from(letter));
        }
        if empty > 0 {
            fen.push(char::from(b'0' + empty));
        }
        if rank_index > 0 {
            fen.push('/');
        }
    }
    fen.push(' ');
    fen.push_str(position.to_move().letter());
    fen.push(' ');
    let before = fen.len();
    for color in Color::ALL {
        let rights = board.castle_rights(color);
        let back = Rank::First.relative_to(color);
        let rooks = board.colored_pieces(color, Piece::Rook) & back.bitboard();
        let king = board.king(color).file();
        for (rook, short) in [(rights.short, true), (rights.long, false)] {
            let Some(rook) = rook else { continue };
            let outermost = rooks.into_iter().map(Square::file).all(|other| {
                if short {
                    other <= rook || other < king
                } else {
                    other >= rook || other > king
                }
            });
            let letter = if outermost {
                if short {
                    'k'
                } else {
                    'q'
                }
            } else {
                char::from(rook)
            };
            fen.push(if color == Color::White {
                letter.to_ascii_uppercase()
            } else {
                letter
            });
        }
    }
    if fen.len() == before {
        fen.push('-');
    }
    fen.push(' ');
    match position.legal_en_passant() {
        Some(square) => fen.push_str(&square.to_string()),
        None => fen.push('-'),
    }
    fen.push(' ');
    fen.push_str(itoa::Buffer::new().format(position.halfmove));
    fen.push(' ');
    fen.push_str(itoa::Buffer::new().format(position.fullmove));
    fen
}
