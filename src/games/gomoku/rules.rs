//! Gomoku: may a stone go on a cell, and does it complete a winning line there?
//!
//! Black moves first, and a stone may go on any empty cell. A line of `run_length`
//! stones of one colour through the stone just placed wins: that many or more in
//! freestyle, exactly that many in standard Gomoku (`exact`), where an overline does
//! not. Only the four lines through the stone are looked at, so the cost grows with the
//! board's side, never with its area. The board need not come from a legal game:
//! uneven stone counts are judged like any other.

use std::num::NonZeroUsize;

use crate::kit::clock::Turns;
use crate::kit::grid::{BadRows, Cell, Grid, GridError, OffBoard};
use crate::kit::rows::{Rows, RowsView};

/// The colour of a stone, and of the player who places it, `B` or `W`. Black moves
/// first (its [`Seat`](crate::kit::clock::Seat) is the first).
pub use crate::kit::color::Color;

/// The characters of a Gomoku board: `.` empty, `B` black, `W` white.
pub use crate::kit::color::ALPHABET;

/// The empty cell.
const EMPTY: u8 = b'.';

/// The run length that wins when none is asked for.
pub const DEFAULT_RUN_LENGTH: usize = 5;

/// A board's number of rows, and of columns, when none is asked for.
pub const DEFAULT_SIDE: usize = 15;

/// The four lines through a cell, as (row, col) steps, in the order they are checked:
/// horizontal, vertical, diagonal down-right, diagonal down-left (as Connect Four's).
const LINES: [(isize, isize); 4] = [(0, 1), (1, 0), (1, 1), (1, -1)];

/// A winning line: the whole unbroken line of one colour through a stone, end to end,
/// held as its first cell, its step and its length, so that finding it allocates
/// nothing; [`Line::cells`] lists its cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Line {
    start: Cell,
    step: (isize, isize),
    length: usize,
}

impl Line {
    /// The line's first cell: its left end, or its top end for the other three lines.
    pub fn start(&self) -> Cell {
        self.start
    }

    /// The (row, col) step from one cell of the line to the next: (0, 1) horizontal,
    /// (1, 0) vertical, (1, 1) diagonal down-right, (1, -1) diagonal down-left.
    pub fn step(&self) -> (isize, isize) {
        self.step
    }

    /// The number of stones in the line (at least one).
    pub fn length(&self) -> usize {
        self.length
    }

    /// The line's cells, from [`Line::start`] one [`Line::step`] at a time.
    pub fn cells(self) -> impl ExactSizeIterator<Item = Cell> {
        let Self { start, step, .. } = self;
        // Every cell of a line was walked over on the board, so none wraps around.
        (0..self.length as isize).map(move |i| Cell {
            row: start.row.wrapping_add_signed(i * step.0),
            col: start.col.wrapping_add_signed(i * step.1),
        })
    }

    /// The line's cells as a list ([`Line::cells`]).
    pub fn to_vec(self) -> Vec<Cell> {
        self.cells().collect()
    }
}

/// What a stone of a colour would do at a cell, as [`Board::check_move`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    /// The cell holds a stone already (or is off the board): the move is not legal.
    Occupied,
    /// The cell is empty, so the stone may go there.
    Legal {
        /// The winning line the stone would complete, if it would.
        line: Option<Line>,
    },
}

impl Move {
    /// Whether the stone may go there (the cell is empty).
    pub fn is_legal(&self) -> bool {
        matches!(self, Self::Legal { .. })
    }

    /// The winning line the stone would complete; `None` if none, or if it may not go
    /// there.
    pub fn line(&self) -> Option<Line> {
        match *self {
            Self::Occupied => None,
            Self::Legal { line } => line,
        }
    }
}

/// A Gomoku board of any rectangular size (15x15 is the standard).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Board {
    grid: Grid,
}

impl Board {
    /// Parses rows of `.`, `B` and `W`, row 0 at the top.
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

    /// Whether a `color` stone may go on `cell` (a cell this board located, see
    /// [`Grid::locate`]; one off the board is never legal), and the winning line it
    /// would complete there, as if it were placed: the board is not changed, and
    /// nothing is allocated.
    ///
    /// A line wins when it holds at least `run_length` stones (a `run_length` of 0 or 1
    /// is met by the stone alone), or, `exact`, exactly `run_length` (0 never). The
    /// lines are checked horizontal, vertical, diagonal down-right, diagonal down-left,
    /// and the first that wins is the line; with `exact`, a longer line does not win and
    /// the next is checked.
    pub fn check_move(&self, cell: Cell, color: Color, run_length: usize, exact: bool) -> Move {
        if self.grid.get(cell) != Some(EMPTY) {
            return Move::Occupied;
        }
        Move::Legal {
            line: self.line_through(cell, color.byte(), run_length, exact),
        }
    }

    /// The first line through the on-board `cell` whose `own` stones, with one at
    /// `cell` (whatever it holds now), win, end to end.
    fn line_through(&self, cell: Cell, own: u8, run_length: usize, exact: bool) -> Option<Line> {
        LINES.into_iter().find_map(|(dr, dc)| {
            let (start, before) = self.walk(cell, (-dr, -dc), own);
            let after = self.walk(cell, (dr, dc), own).1;
            let length = before + 1 + after;
            let wins = length == run_length || (!exact && length > run_length);
            wins.then_some(Line {
                start,
                step: (dr, dc),
                length,
            })
        })
    }

    /// Walks from `cell` along the line of (`dr`, `dc`) over `own` stones: the last such
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

/// Why a move of a live Gomoku game was not applied; the game is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The cell is not on the board.
    #[error(transparent)]
    OffBoard(#[from] OffBoard),
    /// The cell already holds a stone.
    #[error("{cell} is already taken")]
    Occupied {
        /// The asked cell.
        cell: Cell,
    },
    /// The game is already won or drawn.
    #[error("the game is over")]
    GameOver,
}

/// How a live Gomoku game stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The game goes on.
    Pending,
    /// `color` completed `run`, end to end, or won as the other forfeited (no run).
    Won {
        /// The winner.
        color: Color,
        /// The winning line through the last stone placed; empty after a forfeit.
        run: Vec<Cell>,
    },
    /// The board filled without a win.
    Draw,
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

/// A live Gomoku game: the colours take turns placing a stone on any empty cell, Black
/// first, until one completes a winning line or the board fills.
#[derive(Debug, Clone)]
pub struct Game {
    board: Board,
    run_length: usize,
    exact: bool,
    to_move: Color,
    moves_played: usize,
    outcome: Outcome,
}

impl Game {
    /// An empty `rows` x `cols` board on which a line of `run_length` stones wins (or
    /// more, unless `exact`; see [`Board::check_move`]); Black moves first.
    pub fn new(rows: NonZeroUsize, cols: NonZeroUsize, run_length: usize, exact: bool) -> Self {
        Self {
            board: Board {
                grid: Grid::filled(rows, cols, EMPTY),
            },
            run_length,
            exact,
            to_move: Color::Black,
            moves_played: 0,
            outcome: Outcome::Pending,
        }
    }

    /// Places a stone of the colour to move at (`row`, `col`): the cell it went on.
    pub fn place(&mut self, row: i64, col: i64) -> Result<Cell, MoveError> {
        let cell = self.board.grid.locate(row, col)?;
        if self.outcome != Outcome::Pending {
            return Err(MoveError::GameOver);
        }
        if self.board.grid.get(cell) != Some(EMPTY) {
            return Err(MoveError::Occupied { cell });
        }
        let color = self.to_move;
        self.board.grid.set(cell, color.byte());
        self.moves_played += 1;
        let line = self
            .board
            .line_through(cell, color.byte(), self.run_length, self.exact);
        if let Some(run) = line.map(Line::to_vec) {
            self.outcome = Outcome::Won { color, run };
        } else if self.moves_played == self.board.grid.cells().len() {
            self.outcome = Outcome::Draw;
        } else {
            self.to_move = color.opponent();
        }
        Ok(cell)
    }

    /// The board as it stands.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The board's cells as they stand.
    pub fn grid(&self) -> &Grid {
        self.board.grid()
    }

    /// The stones in a line that win.
    pub fn run_length(&self) -> usize {
        self.run_length
    }

    /// Whether only a line of exactly [`Game::run_length`] wins (standard Gomoku), not a
    /// longer one (freestyle).
    pub fn exact(&self) -> bool {
        self.exact
    }

    /// The colour to move; `None` once the game is over.
    pub fn to_move(&self) -> Option<Color> {
        (self.outcome == Outcome::Pending).then_some(self.to_move)
    }

    /// The stones placed so far.
    pub fn moves_played(&self) -> usize {
        self.moves_played
    }

    /// Ends the game with a loss for `loser` (its time ran out): the other colour wins,
    /// with no run.
    pub fn forfeit(&mut self, loser: Color) {
        self.outcome = Outcome::Won {
            color: loser.opponent(),
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
    use crate::kit::clock::{Seat, Side};
    use crate::games::gomoku::reference::naive_check_move;
    use crate::games::tic_tac_toe::fixtures::{TIC_TAC_TOE_DRAW, TIC_TAC_TOE_DRAW_BOARD};
    use proptest::prelude::*;

    fn strings(rows: &[Vec<u8>]) -> Vec<String> {
        let text = |row: &Vec<u8>| String::from_utf8(row.clone()).unwrap();
        rows.iter().map(text).collect()
    }

    fn side(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    /// The cells written as `"row,col row,col ..."`.
    fn at(text: &str) -> Vec<Cell> {
        let number = |n: &str| n.parse().unwrap();
        let cell = |(r, c)| Cell::new(number(r), number(c));
        let pairs = text.split_whitespace();
        pairs
            .map(|pair| cell(pair.split_once(',').unwrap()))
            .collect()
    }

    /// A game of `rows` x `cols` with the stones at `moves` ([`at`]) placed in turn.
    fn play(rows: usize, cols: usize, run: usize, exact: bool, moves: &str) -> Game {
        let mut game = Game::new(side(rows), side(cols), run, exact);
        for cell in at(moves) {
            assert_eq!(game.place(cell.row as i64, cell.col as i64), Ok(cell));
        }
        game
    }

    fn won(color: Color, run: &str) -> Outcome {
        let run = at(run);
        Outcome::Won { color, run }
    }

    /// The line a Black stone at `cell` would complete on `rows`, where it is legal;
    /// empty for none.
    fn check(rows: &[&str], cell: &str, run: usize, exact: bool) -> Vec<Cell> {
        let board = Board::parse(rows).unwrap();
        let found = board.check_move(at(cell)[0], Color::Black, run, exact);
        assert!(found.is_legal());
        found.line().map(Line::to_vec).unwrap_or_default()
    }

    #[test]
    fn five_in_a_row_wins_end_to_end() {
        // Black's fifth stone goes between its others; White plays along the top.
        let mut game = play(15, 15, 5, false, "7,5 0,0 7,3 0,2 7,4 0,4 7,7 0,6");
        assert_eq!(game.outcome(), &Outcome::Pending);
        assert_eq!(game.to_move(), Some(Color::Black));
        assert_eq!(game.place(7, 6), Ok(Cell::new(7, 6)));
        assert_eq!(game.outcome(), &won(Color::Black, "7,3 7,4 7,5 7,6 7,7"));
        assert_eq!((game.to_move(), game.moves_played()), (None, 9));
        let rows = game.grid().to_row_buffer().to_strings();
        assert_eq!(rows[7], "...BBBBB.......");
    }

    #[test]
    fn a_vertical_line_runs_top_to_bottom() {
        // White fills column 2 from row 8 upwards; Black's stones are scattered.
        let game = play(10, 10, 5, true, "0,0 8,2 0,9 6,2 9,9 5,2 9,0 7,2 3,3 4,2");
        assert_eq!(game.outcome(), &won(Color::White, "4,2 5,2 6,2 7,2 8,2"));
    }

    #[test]
    fn both_diagonals_win() {
        // Down-right, the last stone in the middle; White plays down column 9.
        let game = play(10, 10, 5, false, "2,2 0,9 3,3 1,9 6,6 2,9 5,5 3,9 4,4");
        assert_eq!(game.outcome(), &won(Color::Black, "2,2 3,3 4,4 5,5 6,6"));
        // Down-left: listed from the top-right end, down to the left.
        let game = play(10, 10, 5, false, "1,5 0,0 2,4 0,1 4,2 0,3 5,1 9,9 3,3");
        assert_eq!(game.outcome(), &won(Color::Black, "1,5 2,4 3,3 4,2 5,1"));
    }

    #[test]
    fn an_overline_wins_only_in_freestyle() {
        let (rows, six) = (["BBB.BB", "......"], "0,0 0,1 0,2 0,3 0,4 0,5");
        assert_eq!(check(&rows, "0,3", 5, true), []);
        assert_eq!(check(&rows, "0,3", 5, false), at(six));
        assert_eq!(check(&rows, "0,3", 6, true), at(six));
        // In a game: Black's six leaves the game going on in standard Gomoku.
        let moves = "0,0 5,0 0,1 5,1 0,2 5,2 0,4 5,4 0,5 3,3 0,3";
        let standard = play(6, 6, 5, true, moves);
        assert_eq!(standard.outcome(), &Outcome::Pending);
        assert_eq!(standard.to_move(), Some(Color::White));
        let freestyle = play(6, 6, 5, false, moves);
        assert_eq!(freestyle.outcome(), &won(Color::Black, six));
    }

    #[test]
    fn an_exact_five_is_found_past_a_horizontal_overline() {
        let rows = ["...B...", "...B...", "BBB.BB.", "...B...", "...B..."];
        assert_eq!(check(&rows, "2,3", 5, true), at("0,3 1,3 2,3 3,3 4,3"));
        // Freestyle, the horizontal six comes first.
        assert_eq!(check(&rows, "2,3", 5, false), at("2,0 2,1 2,2 2,3 2,4 2,5"));
        // The other colour completes nothing there, and a stone cannot go on a stone.
        let board = Board::parse(&rows).unwrap();
        let white = board.check_move(Cell::new(2, 3), Color::White, 5, false);
        assert_eq!(white, Move::Legal { line: None });
        for taken in [Cell::new(0, 3), Cell::new(5, 0)] {
            let found = board.check_move(taken, Color::Black, 1, false);
            assert_eq!(found, Move::Occupied);
        }
    }

    #[test]
    fn a_full_board_without_a_line_is_a_draw() {
        let mut game = play(1, 2, DEFAULT_RUN_LENGTH, false, "0,0");
        assert_eq!(game.outcome(), &Outcome::Pending);
        game.place(0, 1).unwrap();
        assert_eq!((game.outcome(), game.to_move()), (&Outcome::Draw, None));
        // Tic-Tac-Toe's drawn game is Gomoku's on 3x3 with lines of three.
        let mut game = play(3, 3, 3, false, "");
        for (row, col) in TIC_TAC_TOE_DRAW {
            assert_eq!(game.outcome(), &Outcome::Pending);
            game.place(row.into(), col.into()).unwrap();
        }
        assert_eq!(game.outcome(), &Outcome::Draw);
        let marks = TIC_TAC_TOE_DRAW_BOARD.map(|row| row.replace('X', "B").replace('O', "W"));
        assert_eq!(game.grid().to_row_buffer().to_strings(), marks);
    }

    #[test]
    fn a_run_length_of_one_is_won_by_the_first_stone() {
        for exact in [false, true] {
            let game = play(4, 4, 1, exact, "2,1");
            assert_eq!(game.outcome(), &won(Color::Black, "2,1"));
        }
    }

    #[test]
    fn a_refused_move_changes_nothing() {
        let mut game = play(3, 4, 3, false, "1,1");
        let before = game.board().clone();
        let cell = Cell::new(1, 1);
        assert_eq!(game.place(1, 1), Err(MoveError::Occupied { cell }));
        let text = "(3, 0) is outside the board, which has 3 rows and 4 columns";
        let off = game.place(3, 0).unwrap_err();
        assert!(matches!(off, MoveError::OffBoard(_)));
        assert_eq!(off.to_string(), text);
        assert!(matches!(game.place(0, -1), Err(MoveError::OffBoard(_))));
        assert_eq!(game.board(), &before);
        assert_eq!(game.to_move(), Some(Color::White));
        assert_eq!(game.moves_played(), 1);
        let taken = MoveError::Occupied { cell };
        assert_eq!(taken.to_string(), "(1, 1) is already taken");
    }

    #[test]
    fn no_move_after_the_end() {
        let mut game = play(5, 5, 2, false, "0,0 4,4 0,1");
        assert_eq!(game.outcome(), &won(Color::Black, "0,0 0,1"));
        assert_eq!(game.place(2, 2), Err(MoveError::GameOver));
        assert_eq!(MoveError::GameOver.to_string(), "the game is over");
        assert_eq!(game.moves_played(), 3);
        // A forfeit ends the game too: the other colour wins, with no run.
        let mut game = play(5, 5, 5, false, "2,2");
        assert_eq!(Color::FIRST, Color::Black);
        assert_eq!(game.side_to_move(), Some(Side::B));
        game.lose_on_time(Side::B);
        assert_eq!(game.outcome(), &won(Color::Black, ""));
        assert_eq!(game.player_to_move(), None);
        assert_eq!(game.place(0, 0), Err(MoveError::GameOver));
    }

    #[test]
    fn boards_read_in_place_are_the_same() {
        let rows = ["B.W", "WWB"];
        let board = Board::parse(&rows).unwrap();
        let owned: Rows = rows.iter().collect();
        assert_eq!(Board::parse_rows(owned.clone()).unwrap(), board);
        let again = Board::parse_rows_into(owned.view(), board.clone().into_cells()).unwrap();
        assert_eq!(again, board);
        let bad = Board::parse(&["B.", "X."]).unwrap_err();
        assert_eq!(
            bad.to_string(),
            "row 1, column 0: 'X' is not one of \".BW\""
        );
    }

    /// Mostly small, sometimes up to 100.
    fn small_mostly(most: usize, max: usize) -> impl Strategy<Value = usize> {
        prop_oneof![4 => 1..=most, 1 => 1..=max]
    }

    /// A board of any size with a random fill, leaning towards one byte of `.BW` so
    /// that long lines are common; and a cell of it, emptied three times in four.
    fn board_and_cell() -> impl Strategy<Value = (Vec<Vec<u8>>, (usize, usize))> {
        (small_mostly(20, 100), small_mostly(20, 100), 0..3usize)
            .prop_flat_map(|(h, w, lean)| {
                let any = prop::sample::select(b".BW".to_vec());
                let byte = prop_oneof![3 => Just(b".BW"[lean]), 1 => any];
                let rows = prop::collection::vec(prop::collection::vec(byte, w), h);
                (rows, (0..h, 0..w), 0..4)
            })
            .prop_map(|(mut rows, (row, col), clear)| {
                if clear > 0 {
                    rows[row][col] = b'.';
                }
                (rows, (row, col))
            })
    }

    proptest! {
        /// The check says what the naive reference says, legal and the same line: for
        /// the drawn rule, and for every short run length in both modes, so that lines
        /// of exactly the run length are common.
        #[test]
        fn check_move_matches_the_reference(
            (rows, (row, col)) in board_and_cell(),
            run_length in small_mostly(7, 100),
            exact in any::<bool>(),
            black in any::<bool>(),
        ) {
            let color = if black { Color::Black } else { Color::White };
            let board = Board::parse(&strings(&rows)).unwrap();
            let rules = (1..=8).flat_map(|n| [(n, false), (n, true)]);
            let cell = Cell::new(row, col);
            for (run_length, exact) in [(run_length, exact)].into_iter().chain(rules) {
                let found = board.check_move(cell, color, run_length, exact);
                let (legal, line) = naive_check_move(&rows, cell, color.byte(), run_length, exact);
                prop_assert_eq!(found.is_legal(), legal);
                prop_assert_eq!(found.line().map(Line::to_vec), line);
            }
        }
    }

    proptest! {
        /// Whole games: each move is applied or refused as the reference says, and the
        /// game stands as it says after it. Most moves go on the `n`th empty cell
        /// (counted round), so that games end; the rest anywhere, on the board or off.
        #[test]
        fn games_match_the_reference(
            (h, w) in (small_mostly(6, 12), small_mostly(6, 12)),
            run_length in small_mostly(4, 8),
            exact in any::<bool>(),
            steps in prop::collection::vec(
                (0..7, any::<usize>(), -1..14i64, -1..14i64),
                0..160,
            ),
        ) {
            let mut game = Game::new(side(h), side(w), run_length, exact);
            let mut rows = vec![vec![b'.'; w]; h];
            let (mut color, mut over, mut played) = (Color::Black, false, 0);
            for (kind, n, mut row, mut col) in steps {
                let empty: Vec<usize> =
                    (0..h * w).filter(|&i| rows[i / w][i % w] == b'.').collect();
                if let Some(&i) = empty.get(n % empty.len().max(1)).filter(|_| kind > 0) {
                    (row, col) = ((i / w) as i64, (i % w) as i64);
                }
                let result = game.place(row, col);
                if row < 0 || col < 0 || row >= h as i64 || col >= w as i64 {
                    prop_assert!(matches!(result, Err(MoveError::OffBoard(_))));
                    continue;
                }
                let cell = Cell::new(row as usize, col as usize);
                let (legal, line) = naive_check_move(&rows, cell, color.byte(), run_length, exact);
                if over || !legal {
                    let occupied = MoveError::Occupied { cell };
                    prop_assert_eq!(result, Err(if over { MoveError::GameOver } else { occupied }));
                    continue;
                }
                prop_assert_eq!(result, Ok(cell));
                rows[cell.row][cell.col] = color.byte();
                played += 1;
                let expected = match line {
                    Some(run) => Outcome::Won { color, run },
                    None if played == h * w => Outcome::Draw,
                    None => {
                        color = color.opponent();
                        Outcome::Pending
                    }
                };
                over = expected != Outcome::Pending;
                prop_assert_eq!(game.outcome(), &expected);
                prop_assert_eq!(game.to_move(), (!over).then_some(color));
                prop_assert_eq!(game.moves_played(), played);
                prop_assert_eq!(game.grid().to_row_buffer().to_strings(), strings(&rows));
            }
        }
    }
}
