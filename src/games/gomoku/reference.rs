//! A deliberately naive Gomoku (hidden, for the project's own tests and fuzz targets),
//! twice over: the winning line a stone makes found on the whole board lines through
//! it, built cell by cell ([`naive_gomoku`]), and found by stepping from the stone back
//! to one end of each line, then forward ([`naive_check_move`]). Neither calls the rules
//! it checks.

use crate::kit::grid::Cell;
use crate::kit::naive::naive_run;

/// The winning Gomoku line a stone `own` at `target` would make (the cell counted as
/// `own` whatever it holds): the whole line of `own` through it, on the first of the
/// four lines (horizontal, vertical, down-right, down-left) whose length is at least
/// `run_length`, or exactly `run_length` when `exact`. `None` when there is none, or
/// when `target` is off the board.
pub fn naive_gomoku(
    rows: &[String],
    target: Cell,
    own: u8,
    run_length: usize,
    exact: bool,
) -> Option<Vec<Cell>> {
    (0..4)
        .filter_map(|line| naive_run(rows, target, own, line))
        .find(|run| run.len() == run_length || (!exact && run.len() > run_length))
}

/// A stone `color` put down at `cell` of `rows` (rows of bytes, `.` empty): whether the
/// cell was empty (`false`, and no line, when it is taken or off the board), and the
/// winning line, if any. The stone is put down on a copy of the board, and for each
/// line in turn (horizontal, vertical, down-right, down-left) the stones of its colour
/// are counted from the cell back to one end, then listed from that end forward; the
/// first line `run_length` long, or longer unless `exact`, wins.
pub fn naive_check_move(
    rows: &[Vec<u8>],
    Cell { row, col }: Cell,
    color: u8,
    run_length: usize,
    exact: bool,
) -> (bool, Option<Vec<Cell>>) {
    if rows.get(row).and_then(|r| r.get(col)) != Some(&b'.') {
        return (false, None);
    }
    let mut board = rows.to_vec();
    if let Some(stone) = board.get_mut(row).and_then(|r| r.get_mut(col)) {
        *stone = color;
    }
    let holds = |r: i64, c: i64| {
        let cell = usize::try_from(r)
            .ok()
            .zip(usize::try_from(c).ok())
            .and_then(|(r, c)| board.get(r)?.get(c));
        cell == Some(&color)
    };
    for (dr, dc) in [(0, 1), (1, 0), (1, 1), (1, -1)] {
        let (mut r, mut c) = (row as i64, col as i64);
        while holds(r - dr, c - dc) {
            r -= dr;
            c -= dc;
        }
        let mut line = Vec::new();
        while holds(r, c) {
            line.push(Cell::new(r as usize, c as usize));
            r += dr;
            c += dc;
        }
        if line.len() == run_length || (!exact && line.len() > run_length) {
            return (true, Some(line));
        }
    }
    (true, None)
}
