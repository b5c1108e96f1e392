//! A live Othello game: the board, whose turn it is, passes and the end.

use super::{Board, Color, EMPTY};
use crate::kit::clock::Turns;
use crate::kit::grid::{Cell, OffBoard};

/// Why a move of a live Othello game was not applied; the game is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The cell is not on the board.
    #[error(transparent)]
    OffBoard(#[from] OffBoard),
    /// The cell already holds a disc.
    #[error("{cell} is already taken")]
    Occupied {
        /// The asked cell.
        cell: Cell,
    },
    /// A disc there would turn nothing over.
    #[error("a {color} disc at {cell} turns over no disc, so it is not a legal move")]
    NoFlips {
        /// The asked cell.
        cell: Cell,
        /// The colour to move.
        color: Color,
    },
    /// Neither side can move any more.
    #[error("the game is over")]
    GameOver,
}

/// How a live Othello game stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A side can still move.
    Pending,
    /// Neither side can move, and this colour has more discs.
    Won(Color),
    /// Neither side can move, and the disc counts are equal.
    Draw,
}

/// What an applied move did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// The discs the move turned over, row-major.
    pub flips: Vec<Cell>,
    /// The side due next had no legal move, so the mover moves again.
    pub passed: bool,
}

impl Turns for Game {
    type Player = Color;

    fn player_to_move(&self) -> Option<Color> {
        self.to_move()
    }

    fn forfeit_player(&mut self, loser: Color) {
        self.forfeit(loser);
    }
}

/// A live Othello game: the board, whose turn it is, and the moves so far.
///
/// A side with no legal move passes automatically; the game ends when neither side can
/// move.
#[derive(Debug, Clone)]
pub struct Game {
    board: Board,
    to_move: Option<Color>,
    legal_cells: Vec<Cell>,
    /// The discs the last applied move turned over.
    last_flips: Vec<Cell>,
    /// Where a move's flips are found before it is known to be legal.
    scratch: Vec<Cell>,
    black: usize,
    white: usize,
    moves_played: usize,
    /// The side that lost without the board deciding (its time ran out).
    forfeited: Option<Color>,
}

impl Game {
    /// A game from the standard 8x8 start, Black to move.
    pub fn standard() -> Self {
        Self::from_position(Board::standard(), Color::Black).0
    }

    /// A game from `board` with `to_move` due to play, and whether `to_move` had to pass
    /// at once.
    pub fn from_position(board: Board, to_move: Color) -> (Self, bool) {
        let grid = board.grid();
        let (black, white) = (
            grid.count(Color::Black.byte()),
            grid.count(Color::White.byte()),
        );
        let mut game = Self {
            board,
            to_move: None,
            legal_cells: Vec::new(),
            last_flips: Vec::new(),
            scratch: Vec::new(),
            black,
            white,
            moves_played: 0,
            forfeited: None,
        };
        let passed = game.hand_turn_to(to_move);
        (game, passed)
    }

    /// Places a disc of the colour to move at (`row`, `col`), turns over what it
    /// brackets, and hands the turn on.
    pub fn play(&mut self, row: i64, col: i64) -> Result<Turn, MoveError> {
        let passed = self.play_move(row, col)?;
        let flips = self.last_flips.clone();
        Ok(Turn { flips, passed })
    }

    /// [`Game::play`] without handing out the flips, which [`Game::last_flips`] then
    /// shows: returns whether the side due next passed. On a board of 8x8 or less
    /// (bitboards) it allocates nothing once the game's buffers have grown to a move's
    /// flips; a larger board's walk for the next side's moves takes a scratch buffer.
    pub fn play_move(&mut self, row: i64, col: i64) -> Result<bool, MoveError> {
        let grid = self.board.grid();
        let cell = grid.locate(row, col)?;
        let color = self.to_move.ok_or(MoveError::GameOver)?;
        if grid.get(cell) != Some(EMPTY) {
            return Err(MoveError::Occupied { cell });
        }
        self.board.flips_into(cell, color, &mut self.scratch);
        if self.scratch.is_empty() {
            return Err(MoveError::NoFlips { cell, color });
        }
        std::mem::swap(&mut self.scratch, &mut self.last_flips);
        let flipped = self.last_flips.len();
        self.board.place(cell, color, &self.last_flips);
        let (own, other) = match color {
            Color::Black => (&mut self.black, &mut self.white),
            Color::White => (&mut self.white, &mut self.black),
        };
        *own += flipped + 1;
        *other -= flipped;
        self.moves_played += 1;
        Ok(self.hand_turn_to(color.opponent()))
    }

    /// The discs the last applied move turned over, row-major; empty before the first.
    pub fn last_flips(&self) -> &[Cell] {
        &self.last_flips
    }

    /// Gives the turn to `due` if it can move, else to its opponent if that one can
    /// (returning true: `due` passed), else ends the game.
    fn hand_turn_to(&mut self, due: Color) -> bool {
        for (color, passed) in [(due, false), (due.opponent(), true)] {
            self.board.legal_cells_into(color, &mut self.legal_cells);
            if !self.legal_cells.is_empty() {
                self.to_move = Some(color);
                return passed;
            }
        }
        self.to_move = None;
        false
    }

    /// The board as it stands.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The colour to move; `None` once the game is over.
    pub fn to_move(&self) -> Option<Color> {
        self.to_move
    }

    /// Where the colour to move may play, row-major; empty once the game is over.
    pub fn legal_cells(&self) -> &[Cell] {
        &self.legal_cells
    }

    /// The black and the white discs on the board.
    pub fn discs(&self) -> (usize, usize) {
        (self.black, self.white)
    }

    /// The discs placed so far in this game; passes are not moves.
    pub fn moves_played(&self) -> usize {
        self.moves_played
    }

    /// Ends the game with a loss for `loser` (its time ran out), whatever the board
    /// says: no side moves any more.
    pub fn forfeit(&mut self, loser: Color) {
        self.to_move = None;
        self.legal_cells.clear();
        self.forfeited = Some(loser);
    }

    /// How the game stands: decided by disc count once neither side can move, or won by
    /// the other side of one that forfeited.
    pub fn outcome(&self) -> Outcome {
        if let Some(loser) = self.forfeited {
            return Outcome::Won(loser.opponent());
        }
        match (self.to_move, self.black.cmp(&self.white)) {
            (Some(_), _) => Outcome::Pending,
            (None, std::cmp::Ordering::Greater) => Outcome::Won(Color::Black),
            (None, std::cmp::Ordering::Less) => Outcome::Won(Color::White),
            (None, std::cmp::Ordering::Equal) => Outcome::Draw,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::super::tests::board;

    #[test]
    fn a_game_passes_when_the_side_due_cannot_move_and_ends_when_neither_can() {
        let (mut game, passed) = Game::from_position(board(&[".WB.WB"]), Color::Black);
        assert!(!passed);
        assert_eq!(game.legal_cells(), [Cell::new(0, 0), Cell::new(0, 3)]);
        let turn = game.play(0, 0).unwrap();
        assert_eq!(turn.flips, [Cell::new(0, 1)]);
        assert!(turn.passed);
        assert_eq!(game.to_move(), Some(Color::Black));
        game.play(0, 3).unwrap();
        assert_eq!(game.to_move(), None);
        assert_eq!(game.outcome(), Outcome::Won(Color::Black));
        assert_eq!((game.discs(), game.moves_played()), ((6, 0), 2));
        assert_eq!(game.play(0, 0), Err(MoveError::GameOver));
    }

    #[test]
    fn a_refused_move_changes_nothing() {
        let mut game = Game::standard();
        let before = game.board().clone();
        assert!(matches!(
            game.play(-1, 0),
            Err(MoveError::OffBoard(OffBoard { row: Some(-1), .. }))
        ));
        assert!(matches!(game.play(8, 0), Err(MoveError::OffBoard { .. })));
        assert_eq!(
            game.play(3, 3),
            Err(MoveError::Occupied {
                cell: Cell::new(3, 3)
            })
        );
        assert!(matches!(game.play(0, 0), Err(MoveError::NoFlips { .. })));
        assert_eq!(game.board(), &before);
        assert_eq!((game.discs(), game.moves_played()), ((2, 2), 0));
    }
}
