//! Connect Four: does the piece just placed complete a winning run through its cell?
//!
//! Only the four lines through the placed piece are looked at, so the cost grows
//! with the board's side, never with its area. The board need not come from a
//! legal game: floating pieces and uneven piece counts are judged like any other.

use std::num::NonZeroUsize;

use crate::kit::clock::{Seat, Turns};
use crate::kit::grid::{self, BadRows, Cell, Grid, GridError, OffBoard};
use crate::kit::rows::{Rows, RowsView};

/// The characters of a Connect Four board: `0` empty, `1` and `2` the players' pieces.
pub const ALPHABET: &str = "012";

/// The empty cell.
const EMPTY: u8 = b'0';

/// The run length that wins when none is asked for.
pub const DEFAULT_RUN_LENGTH: usize = 4;

/// The four lines through a cell, as (row, col) steps, in the order they are checked:
/// horizontal, vertical, diagonal down-right, diagonal down-left.
const LINES: [(isize, isize); 4] = [(0, 1), (1, 0), (1, 1), (1, -1)];

/// One of the two players.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Player {
    /// Pieces written `1`.
    One,
    /// Pieces written `2`.
    Two,
}

impl Player {
    /// The player numbered `number`, if it is 1 or 2.
    pub fn from_number(number: i64) -> Option<Self> {
        match number {
            1 => Some(Self::One),
            2 => Some(Self::Two),
            _ => None,
        }
    }

    /// The board character of this player's pieces.
    pub const fn byte(self) -> u8 {
        match self {
            Self::One => b'1',
            Self::Two => b'2',
        }
    }

    /// The player's number, 1 or 2.
    pub const fn number(self) -> u8 {
        match self {
            Self::One => 1,
            Self::Two => 2,
        }
    }

    /// The other player.
    pub const fn opponent(self) -> Self {
        match self {
            Self::One => Self::Two,
            Self::Two => Self::One,
        }
    }
}

/// The asked cell does not hold the player's piece, so it cannot be the piece just placed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cell {cell} holds {found:?}, not player {expected}'s piece", expected = char::from(*.player))]
pub struct NotPlayersPiece {
    /// The asked cell.
    pub cell: Cell,
    /// The player asked about, as its board character.
    pub player: u8,
    /// What the cell holds.
    pub found: char,
}

/// A player's piece on a board, as [`Board::check_piece`] found it: the only way to
/// have one, so a run is only ever looked for through a piece that is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    cell: Cell,
    player: Player,
}

impl Piece {
    /// The piece's cell.
    pub fn cell(&self) -> Cell {
        self.cell
    }

    /// Whose piece it is.
    pub fn player(&self) -> Player {
        self.player
    }
}

/// A Connect Four board of any rectangular size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Board {
    grid: Grid,
}

impl Board {
    /// Parses rows of `0`, `1` and `2`, row 0 at the top.
    pub fn parse<S: AsRef<str>>(rows: &[S]) -> Result<Self, GridError> {
        Grid::parse(rows, ALPHABET).map(|grid| Self { grid })
    }

    /// Parses `rows` as [`Board::parse`] does, keeping their buffer as the board's; rows
    /// that are not a board come back in the error, which names every problem in them.
    pub fn parse_rows(rows: Rows) -> Result<Self, BadRows> {
        Grid::parse_rows(rows, ALPHABET).map(|grid| Self { grid })
    }

    /// Parses borrowed `rows` as [`Board::parse_rows`] does, into `cells`, the buffer
    /// of an earlier board ([`Board::into_cells`]); see [`Grid::parse_rows_into`].
    pub fn parse_rows_into(rows: RowsView<'_>, cells: Vec<u8>) -> Result<Self, BadRows> {
        Grid::parse_rows_into(rows, ALPHABET, cells).map(|grid| Self { grid })
    }

    /// The board's buffer, for [`Board::parse_rows_into`] to fill again.
    pub fn into_cells(self) -> Vec<u8> {
        self.grid.into_cells()
    }

    /// The board's cells.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Checks that `cell` (a cell this board located, see [`Grid::locate`]) holds
    /// `player`'s piece, as the piece just placed must: the piece, which
    /// [`Board::winning_run`] takes, so that the check is made once.
    pub fn check_piece(&self, cell: Cell, player: Player) -> Result<Piece, NotPlayersPiece> {
        match self.grid.get(cell) {
            Some(found) if found == player.byte() => Ok(Piece { cell, player }),
            found => Err(NotPlayersPiece {
                cell,
                player: player.byte(),
                found: found.map_or(char::REPLACEMENT_CHARACTER, char::from),
            }),
        }
    }

    /// The winning run through `piece` (handed out by [`Board::check_piece`] for this
    /// board), end to end, if it is part of an unbroken run of at least `run_length` of
    /// its player's pieces on one line.
    ///
    /// The lines are checked horizontal, vertical, diagonal down-right, diagonal
    /// down-left, and the first that wins gives the run. Runs longer than `run_length`
    /// win too; a `run_length` of 0 or 1 is met by the piece alone.
    pub fn winning_run(&self, piece: Piece, run_length: usize) -> Option<Vec<Cell>> {
        debug_assert_eq!(self.grid.get(piece.cell), Some(piece.player.byte()));
        self.run_through(piece.cell, piece.player.byte(), run_length)
    }

    /// The first line's run of `own` pieces through the on-board `cell` (which holds
    /// one) that is at least `run_length` long, end to end.
    fn run_through(&self, cell: Cell, own: u8, run_length: usize) -> Option<Vec<Cell>> {
        for (dr, dc) in LINES {
            let (start, before) = self.walk(cell, (-dr, -dc), own);
            let (_, after) = self.walk(cell, (dr, dc), own);
            let length = before + 1 + after;
            if length >= run_length {
                // Every cell from `start` for `length` steps was just walked over, so all
                // of them lie on the board.
                let run = (0..length as isize)
                    .map(|i| Cell {
                        row: start.row.wrapping_add_signed(i * dr),
                        col: start.col.wrapping_add_signed(i * dc),
                    })
                    .collect();
                return Some(run);
            }
        }
        None
    }

    /// Walks from `cell` along the line of (`dr`, `dc`) over `own` pieces: the last such
    /// cell reached and the number of steps taken.
    fn walk(&self, cell: Cell, (dr, dc): (isize, isize), own: u8) -> (Cell, usize) {
        let ray = self.grid.ray(cell, (dr, dc));
        let steps = ray.take_while(|&byte| byte == own).count();
        let end = Cell {
            row: cell.row.wrapping_add_signed(steps as isize * dr),
            col: cell.col.wrapping_add_signed(steps as isize * dc),
        };
        (end, steps)
    }
}

/// Why a drop in a live Connect Four game was not applied; the game is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The column is not on the board.
    #[error(transparent)]
    OffBoard(#[from] OffBoard),
    /// The column has no empty cell left.
    #[error("column {col} is full")]
    ColumnFull {
        /// The asked column.
        col: usize,
    },
    /// The game is already won or drawn.
    #[error("the game is over")]
    GameOver,
}

/// How a live Connect Four game stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The game goes on.
    Pending,
    /// `player` completed `run`, end to end, or won as the other forfeited (no run).
    Won {
        /// The winner.
        player: Player,
        /// The winning run through the last piece placed; empty after a forfeit.
        run: Vec<Cell>,
    },
    /// The board filled without a win.
    Draw,
}

impl Seat for Player {
    const FIRST: Self = Player::One;
    const SECOND: Self = Player::Two;
}

impl Turns for Game {
    type Player = Player;

    fn player_to_move(&self) -> Option<Player> {
        self.to_move()
    }

    fn forfeit_player(&mut self, loser: Player) {
        self.forfeit(loser);
    }
}

/// A live Connect Four game: pieces dropped by column fall to the lowest empty cell.
#[derive(Debug, Clone)]
pub struct Game {
    board: Board,
    run_length: usize,
    /// Per column, how many cells are still empty (the next piece lands in row
    /// `empty[col] - 1`).
    empty: Vec<usize>,
    to_move: Player,
    moves_played: usize,
    outcome: Outcome,
}

impl Game {
    /// An empty `rows` x `cols` board on which `run_length` pieces in a line win (0 and 1
    /// are met by any piece alone); player 1 moves first.
    pub fn new(rows: NonZeroUsize, cols: NonZeroUsize, run_length: usize) -> Self {
        Self {
            board: Board {
                grid: Grid::filled(rows, cols, EMPTY),
            },
            run_length,
            empty: vec![rows.get(); cols.get()],
            to_move: Player::One,
            moves_played: 0,
            outcome: Outcome::Pending,
        }
    }

    /// Drops a piece of the player to move into column `col`: the cell it lands on.
    pub fn drop_piece(&mut self, col: i64) -> Result<Cell, MoveError> {
        let index = grid::locate_column(self.empty.len(), col)?;
        if self.outcome != Outcome::Pending {
            return Err(MoveError::GameOver);
        }
        let empty = &mut self.empty[index];
        if *empty == 0 {
            return Err(MoveError::ColumnFull { col: index });
        }
        *empty -= 1;
        let cell = Cell::new(*empty, index);
        let player = self.to_move;
        self.board.grid.set(cell, player.byte());
        self.moves_played += 1;
        if let Some(run) = self.board.run_through(cell, player.byte(), self.run_length) {
            self.outcome = Outcome::Won { player, run };
        } else if self.moves_played == self.board.grid.cells().len() {
            self.outcome = Outcome::Draw;
        } else {
            self.to_move = player.opponent();
        }
        Ok(cell)
    }

    /// The board as it stands.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The player to move; `None` once the game is over.
    pub fn to_move(&self) -> Option<Player> {
        (self.outcome == Outcome::Pending).then_some(self.to_move)
    }

    /// The pieces dropped so far.
    pub fn moves_played(&self) -> usize {
        self.moves_played
    }

    /// Ends the game with a loss for `loser` (its time ran out): the other player wins,
    /// with no run.
    pub fn forfeit(&mut self, loser: Player) {
        self.outcome = Outcome::Won {
            player: loser.opponent(),
            run: Vec::new(),
        };
    }

    /// How the game stands.
    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::connect_four::fixtures::{
        CONNECT_FOUR_EXAMPLE_1, CONNECT_FOUR_EXAMPLE_2, CONNECT_FOUR_EXAMPLE_3,
    };
    use crate::kit::grid::cells;

    fn wins(rows: &[&str], row: usize, col: usize, player: Player) -> Option<Vec<Cell>> {
        let board = Board::parse(rows).unwrap();
        let piece = board.check_piece(Cell::new(row, col), player).ok()?;
        board.winning_run(piece, DEFAULT_RUN_LENGTH)
    }

    #[test]
    fn seed_example_1_horizontal_run() {
        let run = wins(&CONNECT_FOUR_EXAMPLE_1, 5, 4, Player::One).unwrap();
        assert_eq!(run, (1..=4).map(|c| Cell::new(5, c)).collect::<Vec<_>>());
    }

    #[test]
    fn seed_example_2_diagonal_down_left() {
        let run = wins(&CONNECT_FOUR_EXAMPLE_2, 2, 3, Player::Two).unwrap();
        assert_eq!(run, cells(&[(2, 3), (3, 2), (4, 1), (5, 0)]));
    }

    #[test]
    fn seed_example_3_run_elsewhere_does_not_count() {
        assert_eq!(wins(&CONNECT_FOUR_EXAMPLE_3, 3, 6, Player::One), None);
    }

    #[test]
    fn seed_example_one_by_one_board() {
        assert_eq!(wins(&["1"], 0, 0, Player::One), None);
    }

    #[test]
    fn seed_example_full_three_by_three() {
        assert_eq!(wins(&["222", "222", "222"], 1, 1, Player::Two), None);
    }

    #[test]
    fn piece_in_the_middle_of_a_long_run() {
        let run = wins(&["1111111"], 0, 3, Player::One).unwrap();
        assert_eq!(run.len(), 7);
        assert_eq!(run[0], Cell::new(0, 0));
    }

    #[test]
    fn vertical_run_is_top_to_bottom() {
        let run = wins(&["1", "1", "1", "1", "2"], 2, 0, Player::One).unwrap();
        assert_eq!(run, (0..4).map(|r| Cell::new(r, 0)).collect::<Vec<_>>());
    }

    #[test]
    fn only_the_players_piece_is_checked() {
        let board = Board::parse(&["120"]).unwrap();
        let piece = board.check_piece(Cell::new(0, 0), Player::One).unwrap();
        assert_eq!(
            (piece.cell(), piece.player()),
            (Cell::new(0, 0), Player::One)
        );
        assert_eq!(
            board.check_piece(Cell::new(0, 1), Player::One),
            Err(NotPlayersPiece {
                cell: Cell::new(0, 1),
                player: b'1',
                found: '2'
            })
        );
    }

    #[test]
    fn run_length_longer_than_the_board_cannot_win() {
        let board = Board::parse(&["1111"]).unwrap();
        let piece = board.check_piece(Cell::new(0, 0), Player::One).unwrap();
        assert_eq!(board.winning_run(piece, 5), None);
        assert_eq!(board.winning_run(piece, usize::MAX), None);
    }

    fn side(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    #[test]
    fn pieces_fall_to_the_lowest_empty_cell_until_the_column_is_full() {
        let mut game = Game::new(side(2), side(2), 4);
        assert_eq!(game.drop_piece(0), Ok(Cell::new(1, 0)));
        assert_eq!(game.to_move(), Some(Player::Two));
        assert_eq!(game.drop_piece(0), Ok(Cell::new(0, 0)));
        assert_eq!(game.drop_piece(0), Err(MoveError::ColumnFull { col: 0 }));
        assert_eq!(
            game.drop_piece(2),
            Err(MoveError::OffBoard(OffBoard {
                row: None,
                col: 2,
                rows: 0,
                cols: 2
            }))
        );
        assert_eq!(game.drop_piece(1), Ok(Cell::new(1, 1)));
        assert_eq!(game.drop_piece(1), Ok(Cell::new(0, 1)));
        assert_eq!(game.outcome(), &Outcome::Draw);
        assert_eq!(game.to_move(), None);
        assert_eq!(game.drop_piece(1), Err(MoveError::GameOver));
    }

    #[test]
    fn a_run_through_the_last_piece_wins() {
        let mut game = Game::new(side(6), side(7), 4);
        for col in [0, 0, 1, 1, 2, 2] {
            game.drop_piece(col).unwrap();
        }
        game.drop_piece(3).unwrap();
        assert_eq!(
            game.outcome(),
            &Outcome::Won {
                player: Player::One,
                run: (0..4).map(|c| Cell::new(5, c)).collect()
            }
        );
        assert_eq!(
            game.board().grid().to_row_buffer().to_strings()[5],
            "1111000"
        );
    }
}
