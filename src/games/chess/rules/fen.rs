//! FEN both ways: a position read, with what is wrong with it named, and written as
//! X-FEN.

use std::fmt;

use cozy_chess::{
    get_bishop_moves, get_king_moves, get_knight_moves, get_pawn_attacks, get_rook_moves,
    BitBoard, Board, BoardBuilder, CastleRights, Color, File, Piece, Rank, Square,
};

use super::{file, rank, Position, STANDARD_START};

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
    let fields: Vec<&str> = fen.split_ascii_whitespace().collect();
    let [placement, side, castling, en_passant, counters @ ..] = &fields[..] else {
        return Err(wrong(format!(
            "has {} fields; a FEN has 6 (placement, side to move, castling, en passant, \
             halfmove clock, fullmove number), or the first 4",
            fields.len()
        )));
    };
    let (halfmove, fullmove) = match counters {
        [] => (0, 1),
        [halfmove, fullmove] => (
            number(halfmove, "halfmove clock", 0)?,
            number(fullmove, "fullmove number", 1)?,
        ),
        _ => {
            return Err(wrong(format!(
                "has {} fields; a FEN has 6 (placement, side to move, castling, en \
                 passant, halfmove clock, fullmove number), or the first 4",
                fields.len()
            )))
        }
    };
    let mut builder = BoardBuilder::empty();
    read_placement(placement, &mut builder)?;
    builder.side_to_move = match *side {
        "w" => Color::White,
        "b" => Color::Black,
        other => {
            return Err(wrong(format!(
                "side to move must be \"w\" or \"b\", got {other:?}"
            )))
        }
    };
    check_pieces(&builder)?;
    read_castling(castling, chess960, &mut builder)?;
    let en_passant = read_en_passant(en_passant, &builder)?;
    check_checks(&builder)?;
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

/// The pieces of the placement field, rank 8 first, onto `builder`.
fn read_placement(placement: &str, builder: &mut BoardBuilder) -> Result<(), FenError> {
    let ranks: Vec<&str> = placement.split('/').collect();
    if ranks.len() != 8 {
        return Err(wrong(format!(
            "placement must have 8 ranks separated by '/', got {}",
            ranks.len()
        )));
    }
    for (row, text) in ranks.iter().enumerate() {
        let rank_index = 7 - row;
        let mut column = 0usize;
        for ch in text.chars() {
            if let Some(empty) = ch.to_digit(10).filter(|d| (1..=8).contains(d)) {
                column += empty as usize;
                continue;
            }
            let Some((piece, color)) = piece_of(ch) else {
                return Err(wrong(format!(
                    "rank {} holds {ch:?}, which is neither a piece (PNBRQK, pnbrqk) nor \
                     a count of empty squares (1 to 8)",
                    rank_index + 1
                )));
            };
            if let (Some(f), Some(r)) = (file(column), rank(rank_index)) {
                *builder.square_mut(Square::new(f, r)) = Some((piece, color));
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
    Ok(())
}

fn piece_of(ch: char) -> Option<(Piece, Color)> {
    let color = if ch.is_ascii_uppercase() {
        Color::White
    } else {
        Color::Black
    };
    let piece = match ch.to_ascii_lowercase() {
        'p' => Piece::Pawn,
        'n' => Piece::Knight,
        'b' => Piece::Bishop,
        'r' => Piece::Rook,
        'q' => Piece::Queen,
        'k' => Piece::King,
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

/// Every square holding `piece` of `color` (any piece of it when `piece` is `None`).
fn squares(builder: &BoardBuilder, piece: Option<Piece>, color: Color) -> Vec<Square> {
    Square::ALL
        .into_iter()
        .filter(|&square| match builder.square(square) {
            Some((p, c)) => c == color && piece.is_none_or(|piece| piece == p),
            None => false,
        })
        .collect()
}

/// One king a side, at most 16 pieces and 8 pawns a side, no pawn on the first or last
/// rank.
fn check_pieces(builder: &BoardBuilder) -> Result<(), FenError> {
    for color in Color::ALL {
        let kings = squares(builder, Some(Piece::King), color).len();
        if kings != 1 {
            return Err(wrong(format!(
                "has {kings} {} kings; a position has exactly one of each colour",
                name(color)
            )));
        }
        let pieces = squares(builder, None, color).len();
        if pieces > 16 {
            return Err(wrong(format!(
                "has {pieces} {} pieces, more than 16",
                name(color)
            )));
        }
        let pawns = squares(builder, Some(Piece::Pawn), color);
        if pawns.len() > 8 {
            return Err(wrong(format!(
                "has {} {} pawns, more than 8",
                pawns.len(),
                name(color)
            )));
        }
        if let Some(square) = pawns
            .iter()
            .find(|square| matches!(square.rank(), Rank::First | Rank::Eighth))
        {
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
fn read_castling(text: &str, chess960: bool, builder: &mut BoardBuilder) -> Result<(), FenError> {
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
        let king = squares(builder, Some(Piece::King), color)
            .first()
            .copied()
            .filter(|king| king.rank() == back);
        let rooks: Vec<File> = squares(builder, Some(Piece::Rook), color)
            .into_iter()
            .filter(|rook| rook.rank() == back)
            .map(Square::file)
            .collect();
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
                    if king.file() != home || !rooks.contains(&corner) {
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
                    let outermost = if short {
                        rooks.iter().copied().filter(|&f| f > king.file()).max()
                    } else {
                        rooks.iter().copied().filter(|&f| f < king.file()).min()
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
                if !rooks.contains(&rook) || rook == king.file() {
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
fn check_checks(builder: &BoardBuilder) -> Result<(), FenError> {
    let mover = builder.side_to_move;
    if !attackers(builder, !mover).is_empty() {
        return Err(wrong(format!(
            "{} is in check, but it is {}'s move",
            name(!mover),
            name(mover)
        )));
    }
    let checkers = attackers(builder, mover).len();
    if checkers > 2 {
        return Err(wrong(format!(
            "{} is checked by {checkers} pieces; no move gives more than two checks",
            name(mover)
        )));
    }
    Ok(())
}

/// The pieces attacking `color`'s king.
fn attackers(builder: &BoardBuilder, color: Color) -> BitBoard {
    let Some(&king) = squares(builder, Some(Piece::King), color).first() else {
        return BitBoard::EMPTY;
    };
    let mut occupied = BitBoard::EMPTY;
    let mut theirs = [BitBoard::EMPTY; 6];
    for square in Square::ALL {
        if let Some((piece, c)) = builder.square(square) {
            occupied |= square.bitboard();
            if c != color {
                theirs[piece as usize] |= square.bitboard();
            }
        }
    }
    let [pawns, knights, bishops, rooks, queens, kings] = theirs;
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
    let mut fen = String::with_capacity(90);
    for rank_index in (0..8).rev() {
        let mut empty = 0u8;
        for file_index in 0..8 {
            let (Some(f), Some(r)) = (file(file_index), rank(rank_index)) else {
                continue;
            };
            let square = Square::new(f, r);
            match (board.piece_on(square), board.color_on(square)) {
                (Some(piece), Some(color)) => {
                    if empty > 0 {
                        fen.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    let letter = char::from(piece);
                    fen.push(if color == Color::White {
                        letter.to_ascii_uppercase()
                    } else {
                        letter
                    });
                }
                _ => empty += 1,
            }
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
