//! What the games' naive references share (hidden, for the project's own tests and fuzz
//! targets): a board read cell by cell, the whole line through a cell built explicitly,
//! the run of one piece along it, a grid's problems found row by row, and what a naive
//! referee expects of one message. Deliberately naive and independent of the rules it
//! checks: nothing here calls [`super::grid`]'s parsing or walks, and no game is named.

use super::grid::{Cell, GridError};

/// The byte at (`r`, `c`) of `rows`, or 0 (in no game's alphabet) off the board.
pub fn at(rows: &[String], r: usize, c: usize) -> u8 {
    rows.get(r)
        .and_then(|row| row.as_bytes().get(c))
        .copied()
        .unwrap_or(0)
}

/// The length of row 0 in bytes (0 for no rows): the board's width.
pub fn width(rows: &[String]) -> usize {
    rows.first().map_or(0, String::len)
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

/// The whole run of `own` through `target` along line `line` (see [`naive_line`]), end
/// to end, the target counted as `own` whatever it holds; `None` when `target` is off
/// the board.
pub fn naive_run(rows: &[String], target: Cell, own: u8, line: usize) -> Option<Vec<Cell>> {
    let cells = naive_line(rows.len(), width(rows), target, line);
    let pos = cells.iter().position(|&c| c == target)?;
    let owned = |i: usize| cells.get(i).is_some_and(|c| at(rows, c.row, c.col) == own);
    let mut start = pos;
    while start > 0 && owned(start - 1) {
        start -= 1;
    }
    let mut end = pos;
    while end + 1 < cells.len() && owned(end + 1) {
        end += 1;
    }
    cells.get(start..=end).map(<[Cell]>::to_vec)
}

/// The first problem of `rows` as a board of `alphabet` (see [`naive_grid_problems`]).
pub fn naive_grid_problem(rows: &[String], alphabet: &'static str) -> Option<GridError> {
    naive_grid_problems(rows, alphabet).into_iter().next()
}

/// Every bad row's first problem, in row order (row lengths held to row 0's unless it
/// is empty).
pub fn naive_grid_problems(rows: &[String], alphabet: &'static str) -> Vec<GridError> {
    let Some(first) = rows.first() else {
        return vec![GridError::NoRows];
    };
    let width = first.chars().count();
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

/// What a naive referee says of one message of a live game: the expected reply, and
/// the word its `rejected` text must contain (`None` when the message is applied).
#[derive(Debug, Clone, PartialEq)]
pub struct Expected<R> {
    /// The reply, its `rejected` text left empty.
    pub reply: R,
    /// The word the reply's `rejected` text must contain; `None` for an applied message.
    pub rejected: Option<&'static str>,
}
