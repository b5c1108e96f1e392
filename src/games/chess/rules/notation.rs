//! Moves as text, both ways: UCI (`e2e4`, `e7e8q`; castling as the king's move in
//! standard chess, or as the king taking its own rook) and SAN as PGN writes it (`Nf3`,
//! `O-O`, `exd8=Q+`).

use std::fmt;

use cozy_chess::{File, Move as CozyMove, Piece, Rank, Square};

use super::{Move, Position};

/// Why a move's text is not a move of the position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MoveError {
    /// Neither UCI nor SAN.
    Malformed(String),
    /// A well-formed move that is not legal in the position: why.
    Illegal(String),
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed(text) => write!(
                f,
                "{} is not a move in UCI (e2e4, e7e8q) or SAN (Nf3, O-O, exd8=Q)",
                shown(text)
            ),
            Self::Illegal(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for MoveError {}

/// `text` quoted, cut short past 32 characters.
pub(super) fn shown(text: &str) -> String {
    if text.chars().count() <= 32 {
        format!("{text:?}")
    } else {
        let cut: String = text.chars().take(32).collect();
        format!("{cut:?}... ({} bytes)", text.len())
    }
}

/// A move as SAN names it: its piece, where it goes, what it says of where it comes
/// from, and its promotion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum San {
    Castle { short: bool },
    Move {
        piece: Piece,
        from_file: Option<File>,
        from_rank: Option<Rank>,
        to: Square,
        promotion: Option<Piece>,
    },
}

impl Position {
    /// The legal move `text` names, in UCI or SAN; why it is malformed or not legal.
    pub fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        self.parse_move_among(text, &self.legal_moves())
    }

    /// [`Position::parse_move`] among `legal`, this position's legal moves.
    pub fn parse_move_among(&self, text: &str, legal: &[Move]) -> Result<Move, MoveError> {
        if let Some(mv) = uci(text) {
            return self.legal_uci(text, mv, legal);
        }
        let Some(san) = san(text) else {
            return Err(MoveError::Malformed(text.to_owned()));
        };
        let matches: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|&mv| self.named_by(mv, san))
            .collect();
        match matches[..] {
            [mv] => Ok(mv),
            [] => Err(MoveError::Illegal(self.why_no_san(text, san))),
            _ => Err(MoveError::Illegal(format!(
                "{} names {} legal moves; say which piece moves",
                shown(text),
                matches.len()
            ))),
        }
    }

    /// The legal move of `legal` that the UCI move `mv` names.
    fn legal_uci(&self, text: &str, mv: CozyMove, legal: &[Move]) -> Result<Move, MoveError> {
        let named = |candidate: CozyMove| legal.iter().copied().find(|&Move(m)| m == candidate);
        if let Some(found) = named(mv) {
            // In standard chess, castling is the king's move (e1g1), and the king
            // taking its own rook (e1h1) is read too.
            return Ok(found);
        }
        if !self.chess960 && self.piece_on(mv.from) == Some(Piece::King) && mv.promotion.is_none() {
            let rank = mv.from.rank();
            let rook_file = match (mv.from.file(), mv.to.file()) {
                (File::E, File::G) if mv.to.rank() == rank => Some(File::H),
                (File::E, File::C) if mv.to.rank() == rank => Some(File::A),
                _ => None,
            };
            if let Some(rook_file) = rook_file {
                let castle = CozyMove {
                    from: mv.from,
                    to: Square::new(rook_file, rank),
                    promotion: None,
                };
                if let Some(found) = named(castle) {
                    return Ok(found);
                }
            }
        }
        let why = if self.board.color_on(mv.from) != Some(self.board.side_to_move()) {
            format!(
                "{} is not a legal move: {} has no piece on {}",
                shown(text),
                self.to_move_name(),
                mv.from
            )
        } else if self.piece_on(mv.from) == Some(Piece::Pawn)
            && matches!(mv.to.rank(), Rank::First | Rank::Eighth)
            && mv.promotion.is_none()
        {
            format!(
                "{} is not a legal move: a pawn reaching the last rank must promote",
                shown(text)
            )
        } else if self.in_check() {
            format!("{} is not a legal move: {} is in check", shown(text), self.to_move_name())
        } else {
            format!("{} is not a legal move", shown(text))
        };
        Err(MoveError::Illegal(why))
    }

    fn to_move_name(&self) -> &'static str {
        match self.to_move() {
            super::Player::White => "white",
            super::Player::Black => "black",
        }
    }

    /// Why the well-formed SAN `san` names no legal move.
    fn why_no_san(&self, text: &str, san: San) -> String {
        if let San::Move {
            piece: Piece::Pawn,
            to,
            promotion: None,
            ..
        } = san
        {
            if matches!(to.rank(), Rank::First | Rank::Eighth) {
                return format!(
                    "{} names no legal move: a pawn reaching the last rank must promote",
                    shown(text)
                );
            }
        }
        if self.in_check() {
            format!(
                "{} names no legal move: {} is in check",
                shown(text),
                self.to_move_name()
            )
        } else {
            format!("{} names no legal move", shown(text))
        }
    }

    /// Whether the legal move `mv` is the one `san` names.
    fn named_by(&self, Move(mv): Move, san: San) -> bool {
        let castle = self.is_castle(mv);
        match san {
            San::Castle { short } => castle && (mv.to.file() > mv.from.file()) == short,
            San::Move {
                piece,
                from_file,
                from_rank,
                to,
                promotion,
            } => {
                !castle
                    && self.piece_on(mv.from) == Some(piece)
                    && mv.to == to
                    && mv.promotion == promotion
                    && from_file.is_none_or(|file| mv.from.file() == file)
                    && from_rank.is_none_or(|rank| mv.from.rank() == rank)
                    // A pawn's move without a capture's file stays on its file.
                    && (piece != Piece::Pawn || from_file.is_some() || mv.from.file() == to.file())
            }
        }
    }

    /// Whether `mv` castles: the king taking its own rook.
    fn is_castle(&self, mv: CozyMove) -> bool {
        self.piece_on(mv.from) == Some(Piece::King)
            && self.board.color_on(mv.to) == Some(self.board.side_to_move())
    }

    /// `mv` in UCI: castling as the king's move in standard chess (`e1g1`), as the king
    /// taking its own rook in Chess960.
    pub fn uci(&self, Move(mv): Move) -> String {
        let mut text = String::with_capacity(5);
        let to = if self.is_castle(mv) && !self.chess960 {
            let file = if mv.to.file() > mv.from.file() {
                File::G
            } else {
                File::C
            };
            Square::new(file, mv.from.rank())
        } else {
            mv.to
        };
        push_square(&mut text, mv.from);
        push_square(&mut text, to);
        if let Some(piece) = mv.promotion {
            text.push(char::from(piece));
        }
        text
    }

    /// `mv` in SAN, with `+` for check and `#` for mate; `legal` is this position's legal
    /// moves (for disambiguation).
    pub fn san(&self, mv: Move, legal: &[Move]) -> String {
        let after = self.play(mv);
        self.san_after(mv, legal, &after, || after.has_legal_move())
    }

    /// [`Position::san`] of `mv`, which leads to `after`, whose side to move has a legal
    /// move when `has_move` says so (asked only when `after` is in check).
    pub(crate) fn san_after(
        &self,
        mv: Move,
        legal: &[Move],
        after: &Position,
        has_move: impl FnOnce() -> bool,
    ) -> String {
        let mut text = self.san_without_check(mv, legal);
        if after.in_check() {
            text.push(if has_move() { '+' } else { '#' });
        }
        text
    }

    /// `mv` in SAN without its check mark.
    fn san_without_check(&self, Move(mv): Move, legal: &[Move]) -> String {
        if self.is_castle(mv) {
            return if mv.to.file() > mv.from.file() {
                "O-O".to_owned()
            } else {
                "O-O-O".to_owned()
            };
        }
        let mut text = String::with_capacity(8);
        let piece = self.piece_on(mv.from).unwrap_or(Piece::Pawn);
        let capture = self.board.color_on(mv.to).is_some()
            || (piece == Piece::Pawn && mv.from.file() != mv.to.file());
        if piece == Piece::Pawn {
            if capture {
                text.push(char::from(mv.from.file()));
            }
        } else {
            text.push(char::from(piece).to_ascii_uppercase());
            // Disambiguation: the file if it tells the movers apart, else the rank,
            // else both.
            let rivals: Vec<Square> = legal
                .iter()
                .map(|&Move(other)| other)
                .filter(|other| {
                    other.to == mv.to
                        && other.from != mv.from
                        && self.piece_on(other.from) == Some(piece)
                        && !self.is_castle(*other)
                })
                .map(|other| other.from)
                .collect();
            if !rivals.is_empty() {
                let file_alone = rivals.iter().all(|r| r.file() != mv.from.file());
                let rank_alone = rivals.iter().all(|r| r.rank() != mv.from.rank());
                if file_alone {
                    text.push(char::from(mv.from.file()));
                } else if rank_alone {
                    text.push(char::from(mv.from.rank()));
                } else {
                    push_square(&mut text, mv.from);
                }
            }
        }
        if capture {
            text.push('x');
        }
        push_square(&mut text, mv.to);
        if let Some(promotion) = mv.promotion {
            text.push('=');
            text.push(char::from(promotion).to_ascii_uppercase());
        }
        text
    }
}

fn push_square(text: &mut String, square: Square) {
    text.push(char::from(square.file()));
    text.push(char::from(square.rank()));
}

/// Whether `text` is a move in UCI or SAN, legal or not in any position.
pub fn well_formed_move(text: &str) -> bool {
    uci(text).is_some() || san(text).is_some()
}

/// `text` as a UCI move (`e2e4`, `e7e8q`), if it is one.
fn uci(text: &str) -> Option<CozyMove> {
    let bytes = text.as_bytes();
    if !(bytes.len() == 4 || bytes.len() == 5) {
        return None;
    }
    let from = square(bytes.first()?, bytes.get(1)?)?;
    let to = square(bytes.get(2)?, bytes.get(3)?)?;
    let promotion = match bytes.get(4) {
        None => None,
        Some(b'n') => Some(Piece::Knight),
        Some(b'b') => Some(Piece::Bishop),
        Some(b'r') => Some(Piece::Rook),
        Some(b'q') => Some(Piece::Queen),
        Some(_) => return None,
    };
    Some(CozyMove {
        from,
        to,
        promotion,
    })
}

/// The square of a file letter and a rank digit.
fn square(file: &u8, rank: &u8) -> Option<Square> {
    let file = File::try_index(usize::from(file.checked_sub(b'a')?))?;
    let rank = Rank::try_index(usize::from(rank.checked_sub(b'1')?))?;
    Some(Square::new(file, rank))
}

/// `text` as SAN, if it is: check and mate marks and annotations (`!`, `?`) optional.
fn san(text: &str) -> Option<San> {
    let text = text.trim_end_matches(['!', '?']);
    let text = text.strip_suffix(['+', '#']).unwrap_or(text);
    match text {
        "O-O" | "0-0" => return Some(San::Castle { short: true }),
        "O-O-O" | "0-0-0" => return Some(San::Castle { short: false }),
        _ => {}
    }
    let bytes = text.as_bytes();
    let (piece, rest) = match bytes.first()? {
        b'N' => (Piece::Knight, bytes.get(1..)?),
        b'B' => (Piece::Bishop, bytes.get(1..)?),
        b'R' => (Piece::Rook, bytes.get(1..)?),
        b'Q' => (Piece::Queen, bytes.get(1..)?),
        b'K' => (Piece::King, bytes.get(1..)?),
        b'a'..=b'h' => (Piece::Pawn, bytes),
        _ => return None,
    };
    // The promotion, for a pawn: `=Q` or `Q` at the end.
    let (rest, promotion) = match (piece, rest) {
        (Piece::Pawn, [head @ .., b'=', p]) | (Piece::Pawn, [head @ .., p @ (b'N' | b'B' | b'R' | b'Q')]) => {
            let promotion = match p {
                b'N' => Piece::Knight,
                b'B' => Piece::Bishop,
                b'R' => Piece::Rook,
                b'Q' => Piece::Queen,
                _ => return None,
            };
            (head, Some(promotion))
        }
        _ => (rest, None),
    };
    let [head @ .., to_file, to_rank] = rest else {
        return None;
    };
    let to = square(to_file, to_rank)?;
    let head = head.strip_suffix(b"x").unwrap_or(head);
    let (from_file, from_rank) = match head {
        [] => (None, None),
        [f @ b'a'..=b'h'] => (File::try_index(usize::from(f - b'a')), None),
        [r @ b'1'..=b'8'] if piece != Piece::Pawn => (None, Rank::try_index(usize::from(r - b'1'))),
        [f @ b'a'..=b'h', r @ b'1'..=b'8'] if piece != Piece::Pawn => (
            File::try_index(usize::from(f - b'a')),
            Rank::try_index(usize::from(r - b'1')),
        ),
        _ => return None,
    };
    if piece == Piece::Pawn && head.contains(&b'x') {
        return None;
    }
    Some(San::Move {
        piece,
        from_file,
        from_rank,
        to,
        promotion,
    })
}
