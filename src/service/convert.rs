//! Rule-engine answers written as wire fields, for every game's replies.

use crate::proto;
use crate::rules::grid::Cell;

/// A board cell as a wire `Cell`.
pub(crate) fn cell(cell: Cell) -> proto::Cell {
    // Boards are at most 100x100 (and Tic-Tac-Toe 3x3), so coordinates fit an i32.
    proto::Cell {
        row: cell.row as i32,
        col: cell.col as i32,
    }
}

/// Board cells as wire `Cell`s, in the same order.
pub(crate) fn cells(cells: &[Cell]) -> Vec<proto::Cell> {
    cells.iter().copied().map(cell).collect()
}

/// The wire verdict of a game won by the side that moved first (A: X, Black, player 1),
/// or else by the other (B).
pub(crate) fn won(by_first: bool) -> proto::Verdict {
    if by_first {
        proto::Verdict::AWins
    } else {
        proto::Verdict::BWins
    }
}
