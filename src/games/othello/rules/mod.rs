//! Othello: which moves are legal, and which discs each one turns over.
//!
//! A disc placed on an empty cell is legal when, in at least one of the eight
//! directions, it closes a "good line": one or more contiguous discs of the
//! other colour followed by a disc of the mover's colour, with no empty cell
//! in between and without leaving the board.
//!
//! [`Board`] answers on bitboards (`bits`) when it fits in 8x8 and walks its cells
//! (`walk`) otherwise; [`Game`] (`game`) plays a live game on it.

use std::num::NonZeroUsize;

use crate::kit::grid::{BadRows, Cell, Grid, GridError};
use crate::kit::rows::{Rows, RowsView};

use bits::{cells_of, Bits};

mod bits;
mod game;
mod walk;

pub use game::{Game, MoveError, Outcome, Turn};

/// The characters of an Othello board: `.` empty, `B` black, `W` white.
pub use crate::kit::color::ALPHABET;
pub use crate::kit::color::Color;

const EMPTY: u8 = b'.';

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

    /// Parses `rows` as [`Board::parse`] does, keeping their buffer as the board's; rows
    /// that are not a board come back in the error, which names every problem in them.
    pub fn parse_rows(rows: Rows) -> Result<Self, BadRows> {
        Grid::parse_rows(rows, ALPHABET).map(Self::from_grid)
    }

    /// Parses borrowed `rows` as [`Board::parse_rows`] does, into `cells`, the buffer
    /// of an earlier board ([`Board::into_cells`]); see [`Grid::parse_rows_into`].
    pub fn parse_rows_into(rows: RowsView<'_>, cells: Vec<u8>) -> Result<Self, BadRows> {
        Grid::parse_rows_into(rows, ALPHABET, cells).map(Self::from_grid)
    }

    /// The board's buffer, for [`Board::parse_rows_into`] to fill again.
    pub fn into_cells(self) -> Vec<u8> {
        self.grid.into_cells()
    }

    /// The standard 8x8 start ([`STANDARD_START`]).
    pub fn standard() -> Self {
        let eight = NonZeroUsize::MIN.saturating_add(7);
        let mut grid = Grid::filled(eight, eight, EMPTY);
        for (row, col, color) in [
            (3, 3, Color::White),
            (3, 4, Color::Black),
            (4, 3, Color::Black),
            (4, 4, Color::White),
        ] {
            grid.set(Cell { row, col }, color.byte());
        }
        Self::from_grid(grid)
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
        self.check_move_into(cell, color, Vec::new())
    }

    /// [`Board::check_move`], with the flips written into `flips` (cleared first): the
    /// buffer of an earlier check ([`MoveCheck::flips`]), so that many checks in a row
    /// allocate one.
    pub fn check_move_into(&self, cell: Cell, color: Color, mut flips: Vec<Cell>) -> MoveCheck {
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
        self.walk_legal_moves(color, &mut flips, visit);
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
        let mut cells = Vec::new();
        self.legal_cells_into(color, &mut cells);
        cells
    }

    /// [`Board::legal_cells`] into `cells`, which is cleared first: for a caller that
    /// keeps one buffer for every turn.
    pub fn legal_cells_into(&self, color: Color, cells: &mut Vec<Cell>) {
        cells.clear();
        match &self.bits {
            Some(bits) => cells.extend(cells_of(bits.legal(color))),
            None => self.walk_legal_cells(color, cells),
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::games::othello::fixtures;
    use crate::kit::grid::cells;

    /// The board of `rows`, which must parse: for this module's tests and `game.rs`'s.
    pub(super) fn board(rows: &[&str]) -> Board {
        Board::parse(rows).unwrap()
    }

    /// The seed's problem (LeetCode 1958), example 1: good lines up column 3 and along
    /// row 4; the move is legal.
    #[test]
    fn the_standard_board_is_the_standard_start() {
        assert_eq!(Board::standard(), board(&STANDARD_START));
    }

    #[test]
    fn seed_problem_example_1_is_legal() {
        let b = board(&fixtures::LC1958_EXAMPLE_1);
        let check = b.check_move(Cell::new(4, 3), Color::Black);
        assert!(check.legal);
        let flips = cells(&[(1, 3), (2, 3), (3, 3), (4, 4), (4, 5), (4, 6)]);
        assert_eq!(check.flips, flips);
    }

    /// The seed's problem (LeetCode 1958), example 2: no line closes; not legal.
    #[test]
    fn seed_problem_example_2_is_not_legal() {
        let b = board(&fixtures::LC1958_EXAMPLE_2);
        let check = b.check_move(Cell::new(4, 4), Color::White);
        assert_eq!(check, MoveCheck::default());
    }

    /// Black's move at the cell is not legal: each case names why.
    #[test]
    fn moves_that_close_no_line_are_not_legal() {
        let cases: [(&str, &[&str], Cell); 4] = [
            ("an occupied cell", &["BWB"], Cell::new(0, 1)),
            ("an adjacent own disc is no line", &[".B"], Cell::new(0, 0)),
            ("a line reaching the edge", &[".WW"], Cell::new(0, 0)),
            ("a gap breaks the line", &[".W.B"], Cell::new(0, 0)),
        ];
        for (case, rows, cell) in cases {
            let check = board(rows).check_move(cell, Color::Black);
            assert!(!check.legal, "{case}: {rows:?} at {cell:?} is legal");
        }
    }

    #[test]
    fn opening_position_has_four_moves() {
        let b = board(&STANDARD_START);
        let moves = b.legal_moves(Color::Black);
        let played: Vec<Cell> = moves.iter().map(|m| m.cell).collect();
        assert_eq!(played, cells(&[(2, 3), (3, 2), (4, 5), (5, 4)]));
        assert_eq!(moves[0].flips, vec![Cell::new(3, 3)]);
    }
}
