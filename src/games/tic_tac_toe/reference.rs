//! A deliberately naive Tic-Tac-Toe (hidden, for the project's own tests and fuzz
//! targets): a full board, its eight lines listed one by one and every one rescanned
//! after every move. It calls none of the rules it checks.

use super::{Outcome, Player};
use crate::kit::grid::Cell;

/// A naive Tic-Tac-Toe referee: a full board, rescanned line by line after every move.
#[derive(Debug, Clone, Default)]
pub struct NaiveReferee {
    /// The board, `squares[row][col]`: 0 empty, else `X` or `O`.
    pub squares: [[u8; 3]; 3],
    /// Moves applied so far.
    pub moves: usize,
    /// Whether the game is over (won or drawn).
    pub over: bool,
}

impl NaiveReferee {
    /// Applies a move and returns the verdict after it, or says why not ("over",
    /// "outside", "taken") and changes nothing.
    pub fn play(&mut self, row: i64, col: i64) -> Result<Outcome, &'static str> {
        if self.over {
            return Err("over");
        }
        if !(0..3).contains(&row) || !(0..3).contains(&col) {
            return Err("outside");
        }
        let (r, c) = (row as usize, col as usize);
        if self.squares[r][c] != 0 {
            return Err("taken");
        }
        let mark = if self.moves.is_multiple_of(2) {
            b'X'
        } else {
            b'O'
        };
        self.squares[r][c] = mark;
        self.moves += 1;
        let mut lines: Vec<[Cell; 3]> = Vec::new();
        for i in 0..3 {
            lines.push([Cell::new(i, 0), Cell::new(i, 1), Cell::new(i, 2)]);
        }
        for i in 0..3 {
            lines.push([Cell::new(0, i), Cell::new(1, i), Cell::new(2, i)]);
        }
        lines.push([Cell::new(0, 0), Cell::new(1, 1), Cell::new(2, 2)]);
        lines.push([Cell::new(0, 2), Cell::new(1, 1), Cell::new(2, 0)]);
        for line in lines {
            if line
                .iter()
                .all(|cell| self.squares[cell.row][cell.col] == mark)
            {
                self.over = true;
                let player = if mark == b'X' { Player::A } else { Player::B };
                return Ok(Outcome::Won { player, line });
            }
        }
        if self.moves == 9 {
            self.over = true;
            return Ok(Outcome::Draw);
        }
        Ok(Outcome::Pending)
    }
}
