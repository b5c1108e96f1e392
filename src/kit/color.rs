//! Black and white: the two sides of the games whose pieces are discs or stones, and
//! how a board writes them.

use std::fmt;

use super::clock::Seat;

/// The characters of a board of black and white pieces (Othello's discs, Gomoku's
/// stones): `.` empty, `B` black, `W` white.
pub const ALPHABET: &str = ".BW";

/// The colour of a disc or a stone, and of the player who places it. Black is the
/// [`Seat`]'s first: it moves first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Color {
    /// `B`.
    Black,
    /// `W`.
    White,
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Black => "black",
            Self::White => "white",
        })
    }
}

impl Color {
    /// The colour written as `B` or `W`, if the text is exactly one of them.
    pub fn from_letter(text: &str) -> Option<Self> {
        match text {
            "B" => Some(Self::Black),
            "W" => Some(Self::White),
            _ => None,
        }
    }

    /// The board character of this colour's discs.
    pub const fn byte(self) -> u8 {
        match self {
            Self::Black => b'B',
            Self::White => b'W',
        }
    }

    /// The other colour.
    pub const fn opponent(self) -> Self {
        match self {
            Self::Black => Self::White,
            Self::White => Self::Black,
        }
    }
}

impl Seat for Color {
    const FIRST: Self = Color::Black;
    const SECOND: Self = Color::White;
}
