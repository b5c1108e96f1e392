//! Othello: which moves are legal, and which discs each one turns over.
//!
//! A disc placed on an empty cell is legal when, in at least one of the eight
//! directions, it closes a "good line": one or more contiguous discs of the
//! other colour followed by a disc of the mover's colour, with no empty cell
//! in between and without leaving the board.

use std::fmt;

use super::grid::{Cell, Grid, GridError, OffBoard};
use super::rows::Rows;

/// The characters of an Othello board: `.` empty, `B` black, `W` white.
pub const ALPHABET: &str = ".BW";

const EMPTY: u8 = b'.';

/// The eight directions a line can run from the placed disc, as (row, col) steps.
const DIRECTIONS: [(isize, isize); 8] = [
    (-1, -1),
    (-1, 0),
    (-1, 1),
    (0, -1),
    (0, 1),
    (1, -1),
    (1, 0),
    (1, 1),
];

/// The colour of a disc, and of the player who places it.
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

/// An Othello board of any rectangular size (8x8 is the standard).
///
/// Boards of at most 8x8 are also held as bitboards, on which moves, flips and legal
/// moves are computed with shifts; larger ones are walked cell by cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Board {
    grid: Grid,
    bits: Option<Bits>,
}

impl Board {
    /// Parses rows of `.`, `B` and `W`, row 0 at the top.
    pub fn parse<S: AsRef<str>>(rows: &[S]) -> Result<Self, GridError> {
        Grid::parse(rows, ALPHABET).map(Self::from_grid)
    }

    /// Parses `rows` as [`Board::parse`] does, keeping their buffer as the board's.
    pub fn from_rows(rows: Rows) -> Result<Self, GridError> {
        Grid::from_rows(rows, ALPHABET).map(Self::from_grid)
    }

    fn from_grid(grid: Grid) -> Self {
        Self {
            bits: Bits::of(&grid),
            grid,
        }
    }

    /// The same board answered by the cell-by-cell walk even when it is small enough
    /// for bitboards: for comparing the two in tests and benchmarks.
    #[doc(hidden)]
    pub fn walked(mut self) -> Self {
        self.bits = None;
        self
    }

    /// Puts a `color` disc at `cell` and turns `flips` over.
    fn place(&mut self, cell: Cell, color: Color, flips: &[Cell]) {
        self.grid.set(cell, color.byte());
        for &flip in flips {
            self.grid.set(flip, color.byte());
        }
        if let Some(bits) = &mut self.bits {
            bits.place(cell, color, flips);
        }
    }

    /// Fills `flips` (cleared first) with the discs a `color` disc at `cell` would turn
    /// over, row-major: empty when the move is not legal.
    fn flips_into(&self, cell: Cell, color: Color, flips: &mut Vec<Cell>) {
        match &self.bits {
            Some(bits) => {
                flips.clear();
                flips.extend(cells_of(bits.flips(cell, color)));
            }
            None => self.collect_flips(cell, color, flips),
        }
    }

    /// The board's cells.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Whether a disc of `color` at `cell` (a cell this board located, see
    /// [`Grid::locate`]) is legal, and what it turns over.
    ///
    /// An occupied cell is simply not a legal move.
    pub fn check_move(&self, cell: Cell, color: Color) -> MoveCheck {
        let mut flips = Vec::new();
        self.flips_into(cell, color, &mut flips);
        MoveCheck {
            legal: !flips.is_empty(),
            flips,
        }
    }

    /// Every legal move of `color`, row-major, each with the discs it turns over.
    ///
    /// Empty when the player must pass.
    pub fn legal_moves(&self, color: Color) -> Vec<Move> {
        let mut moves = Vec::new();
        self.visit_legal_moves(color, |cell, flips| {
            moves.push(Move {
                cell,
                flips: flips.to_vec(),
            });
        });
        moves
    }

    /// Calls `visit` with every legal move of `color`, row-major, and the discs it turns
    /// over (row-major): [`Board::legal_moves`] for callers that keep the flips in a form
    /// of their own, without a `Vec` per move in between.
    pub fn visit_legal_moves(&self, color: Color, mut visit: impl FnMut(Cell, &[Cell])) {
        // One scratch buffer for every move.
        let mut flips = Vec::new();
        if let Some(bits) = &self.bits {
            for cell in cells_of(bits.legal(color)) {
                flips.clear();
                flips.extend(cells_of(bits.flips(cell, color)));
                visit(cell, &flips);
            }
            return;
        }
        for row in 0..self.grid.rows() {
            for col in 0..self.grid.cols() {
                let cell = Cell { row, col };
                self.collect_flips(cell, color, &mut flips);
                if !flips.is_empty() {
                    visit(cell, &flips);
                }
            }
        }
    }

    /// How many legal moves `color` has, when that costs no walk (boards on bitboards):
    /// room to reserve before [`Board::visit_legal_moves`].
    pub fn known_legal_move_count(&self, color: Color) -> Option<usize> {
        self.bits
            .as_ref()
            .map(|bits| bits.legal(color).count_ones() as usize)
    }

    /// Every cell where `color` may play, row-major: [`Board::legal_moves`] without the
    /// flips.
    pub fn legal_cells(&self, color: Color) -> Vec<Cell> {
        if let Some(bits) = &self.bits {
            return cells_of(bits.legal(color)).collect();
        }
        let mut scratch = Vec::new();
        let cols = self.grid.cols();
        (0..self.grid.cells().len())
            .map(|at| Cell::new(at / cols, at % cols))
            .filter(|&cell| {
                self.collect_flips(cell, color, &mut scratch);
                !scratch.is_empty()
            })
            .collect()
    }

    /// Fills `flips` (cleared first) with the discs a `color` disc at `cell` would turn
    /// over, row-major: empty when the move is not legal (a cell off this board, which
    /// only a caller mixing up boards could pass, is not legal either).
    fn collect_flips(&self, cell: Cell, color: Color, flips: &mut Vec<Cell>) {
        flips.clear();
        if self.grid.get(cell) != Some(EMPTY) {
            return;
        }
        let (rows, cols) = (self.grid.rows(), self.grid.cols());
        let cells = self.grid.cells();
        let start = cell.row * cols + cell.col;
        let (own, other) = (color.byte(), color.opponent().byte());
        for (dr, dc) in DIRECTIONS {
            // How many steps from `cell` stay on the board in this direction.
            let room = |delta: isize, at: usize, len: usize| match delta {
                -1 => at,
                0 => usize::MAX,
                _ => len - 1 - at,
            };
            let steps = room(dr, cell.row, rows).min(room(dc, cell.col, cols));
            let stride = dr * cols as isize + dc;
            // Count the opponent's discs in a row, then look at the cell after them.
            let mut run = 0;
            let mut at = start;
            let closed = loop {
                if run == steps {
                    break false;
                }
                at = at.wrapping_add_signed(stride);
                match cells[at] {
                    b if b == other => run += 1,
                    b => break b == own && run > 0,
                }
            };
            if closed {
                flips.extend((1..=run as isize).map(|k| Cell {
                    row: cell.row.wrapping_add_signed(k * dr),
                    col: cell.col.wrapping_add_signed(k * dc),
                }));
            }
        }
        flips.sort_unstable();
    }
}

/// The side of the largest board held as bitboards.
const BITS_SIDE: usize = 8;

/// A board of at most 8x8 as bit masks: bit `row * 8 + col` stands for cell (row, col).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bits {
    black: u64,
    white: u64,
    /// The cells of the board (the rest of the 8x8 frame is off it).
    board: u64,
}

/// Every bit but those of column 0, and every bit but those of column 7.
const NOT_COL_0: u64 = !0x0101_0101_0101_0101;
const NOT_COL_7: u64 = !0x8080_8080_8080_8080;

/// The eight directions as bit shifts (positive: towards higher bits) and the mask that
/// keeps a shifted disc from wrapping into the other edge's column.
const SHIFTS: [(i32, u64); 8] = [
    (-9, NOT_COL_7), // up-left
    (-8, !0),        // up
    (-7, NOT_COL_0), // up-right
    (-1, NOT_COL_7), // left
    (1, NOT_COL_0),  // right
    (7, NOT_COL_7),  // down-left
    (8, !0),         // down
    (9, NOT_COL_0),  // down-right
];

impl Bits {
    /// The bitboards of `grid`, if it fits in 8x8.
    fn of(grid: &Grid) -> Option<Self> {
        if grid.rows() > BITS_SIDE || grid.cols() > BITS_SIDE {
            return None;
        }
        let mut bits = Self {
            black: 0,
            white: 0,
            board: 0,
        };
        for (row, cells) in grid.cells().chunks_exact(grid.cols()).enumerate() {
            for (col, &byte) in cells.iter().enumerate() {
                let bit = 1 << (row * BITS_SIDE + col);
                bits.board |= bit;
                bits.black |= bit & (u64::from(byte == b'B')).wrapping_neg();
                bits.white |= bit & (u64::from(byte == b'W')).wrapping_neg();
            }
        }
        Some(bits)
    }

    /// `color`'s discs and the other colour's.
    fn sides(&self, color: Color) -> (u64, u64) {
        match color {
            Color::Black => (self.black, self.white),
            Color::White => (self.white, self.black),
        }
    }

    /// `x` moved one step along the direction `(shift, mask)`, kept on the board.
    fn step(&self, x: u64, (shift, mask): (i32, u64)) -> u64 {
        let moved = if shift > 0 { x << shift } else { x >> -shift };
        moved & mask & self.board
    }

    /// The empty cells where `color` may play: in each direction, runs of the other
    /// colour's discs that start next to one of `color`'s are grown a step at a time
    /// (at most six discs fit between two on an 8-cell line), and the empty cell just
    /// past a run is a legal move.
    fn legal(&self, color: Color) -> u64 {
        let (own, other) = self.sides(color);
        let empty = self.board & !(own | other);
        let mut legal = 0;
        for direction in SHIFTS {
            let mut run = self.step(own, direction) & other;
            for _ in 0..5 {
                run |= self.step(run, direction) & other;
            }
            legal |= self.step(run, direction) & empty;
        }
        legal
    }

    /// The discs a `color` disc at `cell` turns over: in each direction, the run of the
    /// other colour's discs closed by one of `color`'s. None unless `cell` is empty.
    fn flips(&self, cell: Cell, color: Color) -> u64 {
        let (own, other) = self.sides(color);
        let Some(at) = bit_of(cell).filter(|bit| bit & self.board & !(own | other) != 0) else {
            return 0;
        };
        let mut flips = 0;
        for direction in SHIFTS {
            let mut run = 0;
            let mut next = self.step(at, direction);
            while next & other != 0 {
                run |= next;
                next = self.step(next, direction);
            }
            if next & own != 0 {
                flips |= run;
            }
        }
        flips
    }

    /// Puts a `color` disc at `cell` and turns `flips` over.
    fn place(&mut self, cell: Cell, color: Color, flips: &[Cell]) {
        let changed = flips
            .iter()
            .chain(std::iter::once(&cell))
            .filter_map(|&c| bit_of(c))
            .fold(0, |all, bit| all | bit);
        let (own, other) = match color {
            Color::Black => (&mut self.black, &mut self.white),
            Color::White => (&mut self.white, &mut self.black),
        };
        *own |= changed;
        *other &= !changed;
    }
}

/// The bit of `cell` in an 8x8 frame, if it lies in the frame.
fn bit_of(cell: Cell) -> Option<u64> {
    (cell.row < BITS_SIDE && cell.col < BITS_SIDE).then(|| 1 << (cell.row * BITS_SIDE + cell.col))
}

/// The cells of the set bits of `mask`, row-major.
fn cells_of(mask: u64) -> BitCells {
    BitCells(mask)
}

/// The cells of a bit mask's set bits, lowest bit (row-major first) first; its exact
/// length lets a `collect` allocate once.
struct BitCells(u64);

impl Iterator for BitCells {
    type Item = Cell;

    fn next(&mut self) -> Option<Cell> {
        (self.0 != 0).then(|| {
            let at = self.0.trailing_zeros() as usize;
            self.0 &= self.0 - 1;
            Cell::new(at / BITS_SIDE, at % BITS_SIDE)
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.0.count_ones() as usize;
        (len, Some(len))
    }
}

impl ExactSizeIterator for BitCells {}

/// The answer to "is this move legal?".
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MoveCheck {
    /// Whether the move is legal.
    pub legal: bool,
    /// The discs the move turns over, row-major; empty unless legal.
    pub flips: Vec<Cell>,
}

/// A legal move and the discs it turns over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// Where the disc goes.
    pub cell: Cell,
    /// The discs it turns over, row-major; never empty.
    pub flips: Vec<Cell>,
}

/// The standard 8x8 start: White on (3,3) and (4,4), Black on (3,4) and (4,3).
pub const STANDARD_START: [&str; 8] = [
    "........", "........", "........", "...WB...", "...BW...", "........", "........", "........",
];

/// Why a move of a live Othello game was not applied; the game is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
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

/// A live Othello game: the board, whose turn it is, and the moves so far.
///
/// A side with no legal move passes automatically; the game ends when neither side can
/// move.
#[derive(Debug, Clone)]
pub struct Game {
    board: Board,
    to_move: Option<Color>,
    legal_moves: Vec<Cell>,
    black: usize,
    white: usize,
    moves_played: usize,
}

impl Game {
    /// A game from the standard 8x8 start, Black to move.
    pub fn standard() -> Self {
        let board = Board::parse(&STANDARD_START).expect("the standard start is a board");
        Self::from_position(board, Color::Black).0
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
            legal_moves: Vec::new(),
            black,
            white,
            moves_played: 0,
        };
        let passed = game.hand_turn_to(to_move);
        (game, passed)
    }

    /// Places a disc of the colour to move at (`row`, `col`), turns over what it
    /// brackets, and hands the turn on.
    pub fn play(&mut self, row: i64, col: i64) -> Result<Turn, PlayError> {
        let grid = self.board.grid();
        let cell = grid.locate(row, col)?;
        let color = self.to_move.ok_or(PlayError::GameOver)?;
        if grid.get(cell) != Some(EMPTY) {
            return Err(PlayError::Occupied { cell });
        }
        let mut flips = Vec::new();
        self.board.flips_into(cell, color, &mut flips);
        if flips.is_empty() {
            return Err(PlayError::NoFlips { cell, color });
        }
        self.board.place(cell, color, &flips);
        let (own, other) = match color {
            Color::Black => (&mut self.black, &mut self.white),
            Color::White => (&mut self.white, &mut self.black),
        };
        *own += flips.len() + 1;
        *other -= flips.len();
        self.moves_played += 1;
        let passed = self.hand_turn_to(color.opponent());
        Ok(Turn { flips, passed })
    }

    /// Gives the turn to `due` if it can move, else to its opponent if that one can
    /// (returning true: `due` passed), else ends the game.
    fn hand_turn_to(&mut self, due: Color) -> bool {
        for (color, passed) in [(due, false), (due.opponent(), true)] {
            let moves = self.board.legal_cells(color);
            if !moves.is_empty() {
                self.to_move = Some(color);
                self.legal_moves = moves;
                return passed;
            }
        }
        self.to_move = None;
        self.legal_moves.clear();
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
    pub fn legal_moves(&self) -> &[Cell] {
        &self.legal_moves
    }

    /// The black and the white discs on the board.
    pub fn discs(&self) -> (usize, usize) {
        (self.black, self.white)
    }

    /// The discs placed so far in this game; passes are not moves.
    pub fn moves_played(&self) -> usize {
        self.moves_played
    }

    /// How the game stands: decided by disc count once neither side can move.
    pub fn outcome(&self) -> Outcome {
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

    use crate::rules::shared_games as games;

    fn board(rows: &[&str]) -> Board {
        Board::parse(rows).unwrap()
    }

    /// The seed's problem (LeetCode 1958), example 1: good lines up column 3 and along
    /// row 4; the move is legal.
    #[test]
    fn seed_problem_example_1_is_legal() {
        let b = board(&games::LC1958_EXAMPLE_1);
        let check = b.check_move(Cell::new(4, 3), Color::Black);
        assert!(check.legal);
        assert_eq!(
            check.flips,
            vec![
                Cell::new(1, 3),
                Cell::new(2, 3),
                Cell::new(3, 3),
                Cell::new(4, 4),
                Cell::new(4, 5),
                Cell::new(4, 6)
            ]
        );
    }

    /// The seed's problem (LeetCode 1958), example 2: no line closes; not legal.
    #[test]
    fn seed_problem_example_2_is_not_legal() {
        let b = board(&[
            "........", ".B..W...", "..W.....", "...WB...", "........", "....BW..", "......W.",
            ".......B",
        ]);
        let check = b.check_move(Cell::new(4, 4), Color::White);
        assert_eq!(check, MoveCheck::default());
    }

    #[test]
    fn occupied_cell_is_not_legal() {
        let b = board(&["BWB"]);
        assert!(!b.check_move(Cell::new(0, 1), Color::Black).legal);
    }

    #[test]
    fn adjacent_own_disc_is_no_line() {
        let b = board(&[".B"]);
        assert!(!b.check_move(Cell::new(0, 0), Color::Black).legal);
    }

    #[test]
    fn line_reaching_the_edge_does_not_close() {
        let b = board(&[".WW"]);
        assert!(!b.check_move(Cell::new(0, 0), Color::Black).legal);
    }

    #[test]
    fn gap_breaks_a_line() {
        let b = board(&[".W.B"]);
        assert!(!b.check_move(Cell::new(0, 0), Color::Black).legal);
    }

    #[test]
    fn opening_position_has_four_moves() {
        let b = board(&[
            "........", "........", "........", "...WB...", "...BW...", "........", "........",
            "........",
        ]);
        let moves = b.legal_moves(Color::Black);
        let cells: Vec<Cell> = moves.iter().map(|m| m.cell).collect();
        assert_eq!(
            cells,
            vec![
                Cell::new(2, 3),
                Cell::new(3, 2),
                Cell::new(4, 5),
                Cell::new(5, 4)
            ]
        );
        assert_eq!(moves[0].flips, vec![Cell::new(3, 3)]);
    }

    #[test]
    fn a_game_passes_when_the_side_due_cannot_move_and_ends_when_neither_can() {
        let (mut game, passed) = Game::from_position(board(&[".WB.WB"]), Color::Black);
        assert!(!passed);
        assert_eq!(game.legal_moves(), [Cell::new(0, 0), Cell::new(0, 3)]);
        let turn = game.play(0, 0).unwrap();
        assert_eq!(turn.flips, [Cell::new(0, 1)]);
        assert!(turn.passed);
        assert_eq!(game.to_move(), Some(Color::Black));
        game.play(0, 3).unwrap();
        assert_eq!(game.to_move(), None);
        assert_eq!(game.outcome(), Outcome::Won(Color::Black));
        assert_eq!((game.discs(), game.moves_played()), ((6, 0), 2));
        assert_eq!(game.play(0, 0), Err(PlayError::GameOver));
    }

    #[test]
    fn a_refused_move_changes_nothing() {
        let mut game = Game::standard();
        let before = game.board().clone();
        assert!(matches!(
            game.play(-1, 0),
            Err(PlayError::OffBoard(OffBoard { row: -1, .. }))
        ));
        assert!(matches!(game.play(8, 0), Err(PlayError::OffBoard { .. })));
        assert_eq!(
            game.play(3, 3),
            Err(PlayError::Occupied {
                cell: Cell::new(3, 3)
            })
        );
        assert!(matches!(game.play(0, 0), Err(PlayError::NoFlips { .. })));
        assert_eq!(game.board(), &before);
        assert_eq!((game.discs(), game.moves_played()), ((2, 2), 0));
    }
}
