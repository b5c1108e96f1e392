//! The checks every game's requests share: boards, cells on them, colours. Each game's
//! module checks its own requests with them.
//!
//! Every field is checked before any rule runs, and every problem found is reported,
//! each as one [`Violation`] naming its field.

use crate::proto;
use crate::rules::grid::{self, Cell, Grid, GridError};
use crate::rules::othello::Color;
use crate::rules::rows::Rows;

use super::error::{echo, ServiceError, Violation};

/// The most rows, and the most columns, a board may have.
pub(crate) const MAX_SIDE: usize = 100;

/// A malformed `message`'s error, from its violations (never empty).
pub(crate) fn invalid(message: &'static str, violations: Vec<Violation>) -> ServiceError {
    ServiceError::InvalidRequest {
        message,
        violations,
    }
}

/// Replays a setup's `history` with `play`, the game's own move, on a board of `cells`
/// cells: what the last move returned (`None` for an empty history), or the error of a
/// malformed `message` naming the first move `play` refuses (`setup.history[i]`, with
/// the text the stream would reject it with) or a history longer than the board.
pub(crate) fn replay_history<M, T, E: std::fmt::Display>(
    message: &'static str,
    history: &[M],
    cells: usize,
    mut play: impl FnMut(&M) -> Result<T, E>,
) -> Result<Option<T>, ServiceError> {
    if history.len() > cells {
        let description = format!(
            "has {} moves, more than the board's {cells} cells",
            history.len()
        );
        return Err(invalid(
            message,
            vec![Violation::new("setup.history", description)],
        ));
    }
    let mut last = None;
    for (index, step) in history.iter().enumerate() {
        match play(step) {
            Ok(done) => last = Some(done),
            Err(error) => {
                let field = format!("setup.history[{index}]");
                return Err(invalid(
                    message,
                    vec![Violation::new(field, error.to_string())],
                ));
            }
        }
    }
    Ok(last)
}

/// Checks the board's size, then parses it with the game's `parse`; `field` names the
/// board in violations.
pub(crate) fn board<B>(
    field: &str,
    board: Option<proto::Board>,
    parse: impl FnOnce(Rows) -> Result<B, GridError>,
    violations: &mut Vec<Violation>,
) -> Option<B> {
    let Some(board) = board else {
        violations.push(Violation::new(field, "is required"));
        return None;
    };
    let rows = board.rows;
    if rows.len() > MAX_SIDE {
        violations.push(Violation::new(
            field,
            format!("has {} rows; at most {MAX_SIDE} are allowed", rows.len()),
        ));
        return None;
    }
    let before = violations.len();
    for (index, row) in rows.iter().enumerate() {
        // A row of more than MAX_SIDE bytes is too long unless some of its characters
        // are wider than a byte, which parsing reports as a bad character.
        if row.len() > MAX_SIDE {
            // Characters, each byte that is not UTF-8 counted as one, without a copy.
            let cells: usize = row
                .utf8_chunks()
                .map(|chunk| chunk.valid().chars().count() + chunk.invalid().len())
                .sum();
            if cells > MAX_SIDE {
                violations.push(Violation::new(
                    format!("{field}.rows[{index}]"),
                    format!("has {cells} cells; at most {MAX_SIDE} are allowed"),
                ));
            }
        }
    }
    if violations.len() > before {
        return None;
    }
    parse(rows)
        .map_err(|error| violations.push(grid_violation(field, &error)))
        .ok()
}

/// The violation for a board that does not parse.
fn grid_violation(field: &str, error: &GridError) -> Violation {
    let description = error.to_string();
    match error {
        GridError::NoRows => Violation::new(field, "must have at least one row"),
        GridError::EmptyRow { row }
        | GridError::RaggedRow { row, .. }
        | GridError::BadCell { row, .. } => {
            Violation::new(format!("{field}.rows[{row}]"), description)
        }
    }
}

/// Checks a request's `board` and its (`row`, `col`) on it.
pub(crate) fn board_and_cell<B>(
    request_board: Option<proto::Board>,
    (row, col): (i32, i32),
    parse: impl FnOnce(Rows) -> Result<B, GridError>,
    grid: impl Fn(&B) -> &Grid,
    violations: &mut Vec<Violation>,
) -> (Option<B>, Option<Cell>) {
    let board = board("board", request_board, parse, violations);
    let cell = cell(row, col, board.as_ref().map(grid), violations);
    (board, cell)
}

/// Checks (`row`, `col`): on `grid` when the board is valid (the grid decides, see
/// [`Grid::locate`]), and never negative whatever the board.
fn cell(row: i32, col: i32, grid: Option<&Grid>, violations: &mut Vec<Violation>) -> Option<Cell> {
    let Some(grid) = grid else {
        for (field, value) in [("row", row), ("col", col)] {
            if value < 0 {
                violations.push(Violation::new(field, negative(value)));
            }
        }
        return None;
    };
    let off = match grid.locate(row.into(), col.into()) {
        Ok(cell) => return Some(cell),
        Err(off) => off,
    };
    let axes = [
        ("row", row, off.row_is_off(), off.rows, "row"),
        ("col", col, off.col_is_off(), off.cols, "column"),
    ];
    for (field, value, is_off, len, unit) in axes {
        if !is_off {
            continue;
        }
        let description = if value < 0 {
            negative(value)
        } else if len == 1 {
            format!("{value} is outside the board, which has 1 {unit} (only 0)")
        } else {
            format!(
                "{value} is outside the board, which has {} (0 to {})",
                grid::counted(len, unit),
                len - 1
            )
        };
        violations.push(Violation::new(field, description));
    }
    None
}

fn negative(value: i32) -> String {
    format!("must not be negative, got {value}")
}

/// Checks an Othello colour, `"B"` or `"W"`, named `field` in its violation.
pub(crate) fn color(field: &str, text: &str, violations: &mut Vec<Violation>) -> Option<Color> {
    let color = Color::from_letter(text);
    if color.is_none() {
        violations.push(Violation::new(
            field,
            format!("must be \"B\" or \"W\", got {}", echo(text)),
        ));
    }
    color
}
