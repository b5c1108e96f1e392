//! Tic-Tac-Toe: the outcome of a game, one move at a time.
//!
//! A plays `X` and moves first; the players alternate. Each move costs O(1): the
//! game keeps, for each player, how many of their marks stand on each row,
//! column and diagonal, so a line is won the moment one of those counts reaches 3.

use std::fmt;

use crate::kit::clock::{Seat, Turns};
use crate::kit::grid::{self, Cell, OffBoard, Text};

/// The side of the board.
pub const SIZE: usize = 3;

/// The most moves a game can hold.
pub const MAX_MOVES: usize = SIZE * SIZE;

/// The eight lines of the board, in the order a win is reported when one move
/// completes two at once: rows, columns, the main diagonal, the anti-diagonal.
const LINE_COUNT: usize = 2 * SIZE + 2;
const MAIN_DIAGONAL: usize = 2 * SIZE;
const ANTI_DIAGONAL: usize = 2 * SIZE + 1;

/// One of the two players.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Player {
    /// Moves first and plays `X`.
    A,
    /// Moves second and plays `O`.
    B,
}

impl Player {
    /// The mark this player writes on the board.
    pub const fn mark(self) -> u8 {
        match self {
            Self::A => b'X',
            Self::B => b'O',
        }
    }

    const fn index(self) -> usize {
        match self {
            Self::A => 0,
            Self::B => 1,
        }
    }

    const fn opponent(self) -> Self {
        match self {
            Self::A => Self::B,
            Self::B => Self::A,
        }
    }
}

impl fmt::Display for Player {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::A => "A",
            Self::B => "B",
        })
    }
}

/// Where a game stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// No one has won and squares are left.
    Pending,
    /// `player` holds all three cells of `line`.
    Won {
        /// The winner.
        player: Player,
        /// The winning line's cells, in board order.
        line: [Cell; 3],
    },
    /// All nine squares are taken and no one has won.
    Draw,
    /// `player` won as the other forfeited (its time ran out).
    Forfeited {
        /// The winner.
        player: Player,
    },
}

impl Outcome {
    /// Whether no further move may be played.
    pub const fn is_over(self) -> bool {
        !matches!(self, Self::Pending)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Pending => f.write_str("pending"),
            Self::Won { player, .. } => write!(f, "{player} won"),
            Self::Draw => f.write_str("it is a draw"),
            Self::Forfeited { player } => write!(f, "{player} won on time"),
        }
    }
}

/// Why a move was not applied. The game is left as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The square is not on the 3x3 board.
    #[error(transparent)]
    OffBoard(#[from] OffBoard),
    /// The square already holds a mark.
    #[error("square {cell} is taken")]
    Occupied {
        /// The square.
        cell: Cell,
    },
    /// The game was already won or drawn.
    #[error("the game is over: {outcome}")]
    GameOver {
        /// How it ended.
        outcome: Outcome,
    },
}

impl Text for MoveError {
    fn write_text<W: fmt::Write + ?Sized>(&self, out: &mut W) -> fmt::Result {
        match self {
            Self::OffBoard(off) => off.write_text(out),
            other => write!(out, "{other}"),
        }
    }
}

impl Seat for Player {
    const FIRST: Self = Player::A;
    const SECOND: Self = Player::B;
}

impl Turns for Game {
    type Player = Player;

    fn player_to_move(&self) -> Option<Player> {
        (!self.outcome().is_over()).then(|| self.to_move())
    }

    fn forfeit_player(&mut self, loser: Player) {
        self.forfeit(loser);
    }
}

/// A game in progress: the board, whose turn it is, and the outcome so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    squares: [[Option<Player>; SIZE]; SIZE],
    /// For each player, how many of their marks stand on each of the eight lines.
    line_counts: [[u8; LINE_COUNT]; 2],
    moves_played: usize,
    outcome: Outcome,
}

impl Default for Game {
    fn default() -> Self {
        Self::new()
    }
}

impl Game {
    /// An empty board, A to move.
    pub const fn new() -> Self {
        Self {
            squares: [[None; SIZE]; SIZE],
            line_counts: [[0; LINE_COUNT]; 2],
            moves_played: 0,
            outcome: Outcome::Pending,
        }
    }

    /// Ends the game with a loss for `loser` (its time ran out), whatever the board
    /// says.
    pub fn forfeit(&mut self, loser: Player) {
        self.outcome = Outcome::Forfeited {
            player: loser.opponent(),
        };
    }

    /// The outcome after the moves applied so far.
    pub const fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// How many moves have been applied.
    pub const fn moves_played(&self) -> usize {
        self.moves_played
    }

    /// Whose turn it is (meaningful while the game is pending).
    pub const fn to_move(&self) -> Player {
        if self.moves_played.is_multiple_of(2) {
            Player::A
        } else {
            Player::B
        }
    }

    /// The board as three rows of `X` (A), `O` (B) and `.` (empty).
    pub fn rows(&self) -> [String; SIZE] {
        self.row_bytes()
            .map(|row| row.iter().map(|&mark| char::from(mark)).collect())
    }

    /// The board as [`Game::rows`] draws it, as bytes: what goes on the wire, with no
    /// allocation.
    pub fn row_bytes(&self) -> [[u8; SIZE]; SIZE] {
        self.squares
            .map(|row| row.map(|square| square.map_or(b'.', |player| player.mark())))
    }

    /// Plays the next player's mark at (`row`, `col`) and returns the new outcome.
    ///
    /// A move off the board, on a taken square or after the game is over is refused
    /// and leaves the game unchanged.
    pub fn play(&mut self, row: i64, col: i64) -> Result<Outcome, MoveError> {
        if self.outcome.is_over() {
            return Err(MoveError::GameOver {
                outcome: self.outcome,
            });
        }
        let Cell { row: r, col: c } = locate(row, col)?;
        if self.squares[r][c].is_some() {
            return Err(MoveError::Occupied {
                cell: Cell::new(r, c),
            });
        }
        let player = self.to_move();
        self.squares[r][c] = Some(player);
        self.moves_played += 1;

        let counts = &mut self.line_counts[player.index()];
        let mut won = None;
        for &line in LINES_THROUGH[r * SIZE + c] {
            counts[line] += 1;
            if counts[line] as usize == SIZE && won.is_none() {
                won = Some(line);
            }
        }
        self.outcome = match won {
            Some(line) => Outcome::Won {
                player,
                line: line_cells(line),
            },
            None if self.moves_played == MAX_MOVES => Outcome::Draw,
            None => Outcome::Pending,
        };
        debug_assert!(self.outcome.is_over() || self.to_move() == player.opponent());
        Ok(self.outcome)
    }
}

/// The square at (`row`, `col`), or the error a move there gets when it is off the
/// 3x3 board: the one check of a Tic-Tac-Toe coordinate.
pub fn locate(row: i64, col: i64) -> Result<Cell, MoveError> {
    Ok(grid::locate(SIZE, SIZE, row, col)?)
}

/// The lines through each square, row-major, as `lines_through` lists them: looked
/// up rather than worked out at every move (a unit test holds the two equal).
const LINES_THROUGH: [&[usize]; SIZE * SIZE] = [
    &[0, SIZE, MAIN_DIAGONAL],
    &[0, SIZE + 1],
    &[0, SIZE + 2, ANTI_DIAGONAL],
    &[1, SIZE],
    &[1, SIZE + 1, MAIN_DIAGONAL, ANTI_DIAGONAL],
    &[1, SIZE + 2],
    &[2, SIZE, ANTI_DIAGONAL],
    &[2, SIZE + 1],
    &[2, SIZE + 2, MAIN_DIAGONAL],
];

/// The lines through square (`r`, `c`), in reporting order: its row, its column, and
/// the diagonals it lies on.
#[cfg(test)]
fn lines_through(r: usize, c: usize) -> [Option<usize>; 4] {
    [
        Some(r),
        Some(SIZE + c),
        (r == c).then_some(MAIN_DIAGONAL),
        (r + c == SIZE - 1).then_some(ANTI_DIAGONAL),
    ]
}

/// The three cells of line number `line`, in board order.
fn line_cells(line: usize) -> [Cell; 3] {
    let cell = |i: usize| match line {
        r if r < SIZE => Cell::new(r, i),
        c if c < 2 * SIZE => Cell::new(i, c - SIZE),
        MAIN_DIAGONAL => Cell::new(i, i),
        _ => Cell::new(i, SIZE - 1 - i),
    };
    [cell(0), cell(1), cell(2)]
}

/// A move of a whole-game list that could not be applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("move {index}: {error}")]
pub struct JudgeError {
    /// The move's position in the list, from 0.
    pub index: usize,
    /// Why it was refused.
    pub error: MoveError,
}

/// Plays every move of `moves` as (row, col), A first, and returns the finished game.
///
/// The first move that cannot be applied is the error, with its index.
pub fn judge<I>(moves: I) -> Result<Game, JudgeError>
where
    I: IntoIterator<Item = (i64, i64)>,
{
    let mut game = Game::new();
    for (index, (row, col)) in moves.into_iter().enumerate() {
        game.play(row, col)
            .map_err(|error| JudgeError { index, error })?;
    }
    Ok(game)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_table_is_the_lines_through_each_square() {
        for r in 0..SIZE {
            for c in 0..SIZE {
                let lines: Vec<usize> = lines_through(r, c).into_iter().flatten().collect();
                assert_eq!(LINES_THROUGH[r * SIZE + c], lines, "square ({r}, {c})");
            }
        }
    }

    use crate::games::tic_tac_toe::fixtures;

    fn outcome_of(moves: &[(i64, i64)]) -> Outcome {
        judge(moves.iter().copied()).unwrap().outcome()
    }

    #[test]
    fn seed_example_a_wins_on_the_diagonal() {
        let outcome = outcome_of(&[(0, 0), (2, 0), (1, 1), (2, 1), (2, 2)]);
        assert_eq!(
            outcome,
            Outcome::Won {
                player: Player::A,
                line: [Cell::new(0, 0), Cell::new(1, 1), Cell::new(2, 2)]
            }
        );
    }

    #[test]
    fn b_wins_on_the_anti_diagonal() {
        let outcome = outcome_of(&[(0, 0), (1, 1), (0, 1), (0, 2), (1, 0), (2, 0)]);
        assert_eq!(
            outcome,
            Outcome::Won {
                player: Player::B,
                line: [Cell::new(0, 2), Cell::new(1, 1), Cell::new(2, 0)]
            }
        );
    }

    #[test]
    fn draw_and_pending() {
        let draw: Vec<(i64, i64)> = fixtures::TIC_TAC_TOE_DRAW
            .iter()
            .map(|&(row, col)| (row.into(), col.into()))
            .collect();
        assert_eq!(outcome_of(&draw), Outcome::Draw);
        assert_eq!(outcome_of(&[(0, 0), (1, 1)]), Outcome::Pending);
        assert_eq!(outcome_of(&[]), Outcome::Pending);
    }

    #[test]
    fn a_win_on_the_ninth_move_is_a_win() {
        // X O X / O X O / O X X: the ninth move, X at (2, 2), completes the main diagonal.
        let moves = [
            (0, 0),
            (0, 1),
            (0, 2),
            (1, 0),
            (1, 1),
            (1, 2),
            (2, 1),
            (2, 0),
            (2, 2),
        ];
        let game = judge(moves.iter().copied()).unwrap();
        assert_eq!(game.moves_played(), 9);
        assert_eq!(
            game.outcome(),
            Outcome::Won {
                player: Player::A,
                line: [Cell::new(0, 0), Cell::new(1, 1), Cell::new(2, 2)]
            }
        );
    }

    #[test]
    fn refused_moves_leave_the_game_unchanged() {
        let mut game = Game::new();
        game.play(1, 1).unwrap();
        let before = game.clone();
        assert_eq!(
            game.play(1, 1),
            Err(MoveError::Occupied {
                cell: Cell::new(1, 1)
            })
        );
        assert_eq!(
            game.play(-1, 0),
            Err(MoveError::OffBoard(OffBoard {
                row: Some(-1),
                col: 0,
                rows: 3,
                cols: 3
            }))
        );
        assert_eq!(
            game.play(0, 3),
            Err(MoveError::OffBoard(OffBoard {
                row: Some(0),
                col: 3,
                rows: 3,
                cols: 3
            }))
        );
        assert_eq!(game, before);
        assert_eq!(game.to_move(), Player::B);
    }

    #[test]
    fn judging_names_the_refused_move() {
        let err = judge([(0, 0), (0, 0)]).unwrap_err();
        assert_eq!(err.index, 1);
        let err = judge([(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (2, 2)]).unwrap_err();
        assert_eq!(err.index, 5);
        assert_eq!(err.error.to_string(), "the game is over: A won");
    }

    #[test]
    fn rows_render_marks() {
        let game = judge([(0, 0), (2, 1)]).unwrap();
        assert_eq!(game.rows(), ["X..", "...", ".O."]);
    }
}
