//! Deliberately naive references for the rule engines: they walk the board cell by cell
//! and build every line explicitly. Shared by the property tests and the fuzz targets.
#![allow(dead_code)]

/// Only the property tests (built as tests) have proptest.
#[cfg(test)]
pub mod boards;
pub mod games;

use std::collections::BTreeSet;

use arbiter::games::othello::Color;
use arbiter::games::tic_tac_toe::{Outcome, Player};
use arbiter::kit::grid::{Cell, GridError};

pub fn at(rows: &[String], r: usize, c: usize) -> u8 {
    rows[r].as_bytes()[c]
}

/// The discs `color` would flip by playing the empty cell `target`, found without
/// walking: every `color` disc on the board aligned with `target` (same row, column,
/// r - c or r + c) closes a line when every cell strictly between them holds the
/// opponent, and those cells are flipped. Empty when `target` is occupied.
pub fn naive_othello_flips(rows: &[String], target: Cell, color: Color) -> BTreeSet<Cell> {
    let (h, w) = (rows.len(), rows[0].len());
    let own = color.byte();
    let other = color.opponent().byte();
    let mut flips = BTreeSet::new();
    if at(rows, target.row, target.col) != b'.' {
        return flips;
    }
    // Try every other cell as the closing disc and check the cells strictly between.
    for r in 0..h {
        for c in 0..w {
            let (dr, dc) = (r as i64 - target.row as i64, c as i64 - target.col as i64);
            let aligned = (dr != 0 || dc != 0) && (dr == 0 || dc == 0 || dr.abs() == dc.abs());
            if !aligned || at(rows, r, c) != own {
                continue;
            }
            let steps = dr.abs().max(dc.abs());
            if steps < 2 {
                continue;
            }
            let between: Vec<Cell> = (1..steps)
                .map(|i| {
                    Cell::new(
                        (target.row as i64 + dr.signum() * i) as usize,
                        (target.col as i64 + dc.signum() * i) as usize,
                    )
                })
                .collect();
            if between
                .iter()
                .all(|cell| at(rows, cell.row, cell.col) == other)
            {
                flips.extend(between);
            }
        }
    }
    flips
}

/// The cells of the whole board line through `target` of kind `line` (0 horizontal,
/// 1 vertical, 2 down-right, 3 down-left), ordered along the engine's direction.
pub fn naive_line(h: usize, w: usize, target: Cell, line: usize) -> Vec<Cell> {
    let (tr, tc) = (target.row as i64, target.col as i64);
    let mut cells: Vec<Cell> = (0..h)
        .flat_map(|r| (0..w).map(move |c| Cell::new(r, c)))
        .filter(|cell| {
            let (r, c) = (cell.row as i64, cell.col as i64);
            match line {
                0 => r == tr,
                1 => c == tc,
                2 => r - c == tr - tc,
                _ => r + c == tr + tc,
            }
        })
        .collect();
    // Row-major order already runs left to right, top to bottom and down-right; the
    // down-left diagonal also runs top to bottom, which is its direction.
    cells.sort();
    cells
}

pub fn naive_connect_four(
    rows: &[String],
    target: Cell,
    player: u8,
    run_length: usize,
) -> Option<Vec<Cell>> {
    (0..4)
        .map(|line| naive_run(rows, target, player, line))
        .find(|run| run.len() >= run_length)
}

/// The whole run of `own` through `target` along line `line` (see [`naive_line`]), end
/// to end, the target counted as `own` whatever it holds.
pub fn naive_run(rows: &[String], target: Cell, own: u8, line: usize) -> Vec<Cell> {
    let (h, w) = (rows.len(), rows[0].len());
    let cells = naive_line(h, w, target, line);
    let pos = cells.iter().position(|&c| c == target).unwrap();
    let owned = |i: usize| at(rows, cells[i].row, cells[i].col) == own;
    let mut start = pos;
    while start > 0 && owned(start - 1) {
        start -= 1;
    }
    let mut end = pos;
    while end + 1 < cells.len() && owned(end + 1) {
        end += 1;
    }
    cells[start..=end].to_vec()
}

/// The winning Gomoku line a stone `own` at `target` would make (the cell counted as
/// `own` whatever it holds): the whole line of `own` through it, on the first of the
/// four lines (as Connect Four orders them) whose length is at least `run_length`, or
/// exactly `run_length` when `exact`.
pub fn naive_gomoku(
    rows: &[String],
    target: Cell,
    own: u8,
    run_length: usize,
    exact: bool,
) -> Option<Vec<Cell>> {
    (0..4)
        .map(|line| naive_run(rows, target, own, line))
        .find(|run| run.len() == run_length || (!exact && run.len() > run_length))
}

/// A naive Tic-Tac-Toe referee: a full board, rescanned line by line after every move.
#[derive(Default)]
pub struct NaiveReferee {
    pub squares: [[u8; 3]; 3],
    pub moves: usize,
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

pub fn naive_grid_problem(rows: &[String], alphabet: &'static str) -> Option<GridError> {
    naive_grid_problems(rows, alphabet).into_iter().next()
}

/// Every bad row's first problem, in row order (row lengths held to row 0's unless it
/// is empty).
pub fn naive_grid_problems(rows: &[String], alphabet: &'static str) -> Vec<GridError> {
    if rows.is_empty() {
        return vec![GridError::NoRows];
    }
    let width = rows[0].chars().count();
    let mut problems = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        if let Some((c, ch)) = row
            .chars()
            .enumerate()
            .find(|&(_, ch)| !alphabet.contains(ch))
        {
            problems.push(GridError::BadCell {
                row: r,
                col: c,
                found: ch,
                alphabet,
            });
        } else if row.is_empty() {
            problems.push(GridError::EmptyRow { row: r });
        } else if width > 0 && row.chars().count() != width {
            problems.push(GridError::RaggedRow {
                row: r,
                expected: width,
                found: row.chars().count(),
            });
        }
    }
    problems
}
