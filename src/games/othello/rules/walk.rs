//! The cell-by-cell walk that answers for boards too large for bitboards: from the
//! placed disc along each of the eight directions, over the opponent's discs, to the
//! cell that closes the line or does not.

use super::{Board, Color, EMPTY};
use crate::kit::grid::Cell;

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

impl Board {
    /// Fills `flips` (cleared first) with the discs a `color` disc at `cell` would turn
    /// over, row-major: empty when the move is not legal (a cell off this board, which
    /// only a caller mixing up boards could pass, is not legal either).
    pub(super) fn collect_flips(&self, cell: Cell, color: Color, flips: &mut Vec<Cell>) {
        flips.clear();
        if self.grid.get(cell) != Some(EMPTY) {
            return;
        }
        let (own, other) = (color.byte(), color.opponent().byte());
        for (dr, dc) in DIRECTIONS {
            // Count the opponent's discs in a row, then look at the cell after them.
            let mut line = self.grid.ray(cell, (dr, dc));
            let mut run = 0;
            let closed = loop {
                match line.next() {
                    Some(b) if b == other => run += 1,
                    Some(b) => break b == own && run > 0,
                    None => break false,
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

    /// Calls `visit` with every legal move of `color`, row-major, and its flips
    /// (gathered in `flips`), walking every cell.
    pub(super) fn walk_legal_moves(
        &self,
        color: Color,
        flips: &mut Vec<Cell>,
        mut visit: impl FnMut(Cell, &[Cell]),
    ) {
        for row in 0..self.grid.rows() {
            for col in 0..self.grid.cols() {
                let cell = Cell { row, col };
                self.collect_flips(cell, color, flips);
                if !flips.is_empty() {
                    visit(cell, flips);
                }
            }
        }
    }

    /// Every cell where `color` may play, row-major, walking every cell.
    pub(super) fn walk_legal_cells(&self, color: Color, cells: &mut Vec<Cell>) {
        let mut scratch = Vec::new();
        let cols = self.grid.cols();
        cells.extend(
            (0..self.grid.cells().len())
                .map(|at| Cell::new(at / cols, at % cols))
                .filter(|&cell| {
                    self.collect_flips(cell, color, &mut scratch);
                    !scratch.is_empty()
                }),
        );
    }
}
