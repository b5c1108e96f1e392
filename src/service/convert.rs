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

/// How a two-player game stands, whatever its rules call the players: the first to
/// move is A, the other B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing {
    /// The game goes on.
    Pending,
    /// The first player won.
    FirstWon,
    /// The second player won.
    SecondWon,
    /// Nobody won.
    Draw,
}

impl Standing {
    /// The standing of a game won by the first player to move, or else by the second.
    pub(crate) fn won(by_first: bool) -> Self {
        if by_first {
            Self::FirstWon
        } else {
            Self::SecondWon
        }
    }
}

/// The wire verdict of a game that stands so, as an `int32` field holds it.
pub(crate) fn verdict(standing: Standing) -> i32 {
    let verdict = match standing {
        Standing::Pending => proto::Verdict::Pending,
        Standing::FirstWon => proto::Verdict::AWins,
        Standing::SecondWon => proto::Verdict::BWins,
        Standing::Draw => proto::Verdict::Draw,
    };
    verdict.into()
}
