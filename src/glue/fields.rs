//! The checks every game's requests share: boards, cells on them, colours. Each game's
//! module checks its own requests with them.
//!
//! Every field is checked before any rule runs, and every problem found is reported,
//! each as one [`Violation`] naming its field.

use std::num::NonZeroUsize;

use crate::kit::color::Color;
use crate::kit::grid::{self, BadRows, Cell, Grid, GridError};
use crate::kit::rows::{Rows, RowsView};
use crate::proto;

use super::error::{describe, echo, indexed, text_of, ServiceError, Violation, Violations};

/// The most rows, and the most columns, a board may have.
pub(crate) const MAX_SIDE: usize = 100;

/// A length a request gives (a board's side, a run length): 1 to [`MAX_SIDE`], or 0 for
/// `default`; anything else is a violation of `field`.
pub(crate) fn length_or_default(
    field: &str,
    value: i32,
    default: usize,
    violations: &mut Violations,
) -> Option<NonZeroUsize> {
    let checked = match value {
        0 => NonZeroUsize::new(default),
        n => usize::try_from(n)
            .ok()
            .filter(|&n| n <= MAX_SIDE)
            .and_then(NonZeroUsize::new),
    };
    if checked.is_none() {
        violations.push(Violation::new(
            field,
            format!("must be 1 to {MAX_SIDE}, or 0 for the default ({default}); got {value}"),
        ));
    }
    checked
}

/// A malformed `message`'s error, from its violations (never empty).
pub(crate) fn invalid(message: &'static str, violations: Violations) -> ServiceError {
    ServiceError::InvalidRequest {
        message,
        violations,
    }
}

/// Refuses a bulk `message` whose repeated `field` holds more than `max` items (its
/// `count`), in one `unit` (a call, a message).
pub(crate) fn at_most(
    message: &'static str,
    field: &'static str,
    count: usize,
    max: usize,
    unit: &str,
) -> Result<(), ServiceError> {
    if count <= max {
        return Ok(());
    }
    let description = format!("has {count} {field}; at most {max} are allowed in one {unit}");
    Err(invalid(message, Violation::new(field, description).into()))
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
            Violation::new("setup.history", description).into(),
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
                    Violation::new(field, describe(error)).into(),
                ));
            }
        }
    }
    Ok(last)
}

/// Checks the board's size, then parses it as the game's board; `field` names the
/// board in violations, one per problem found (each bad row, not only the first).
pub(crate) fn board<B: GameBoard>(
    field: &str,
    board: Option<impl BoardRows>,
    violations: &mut Violations,
) -> Option<B> {
    parse_board(field, board, violations).ok()
}

/// A game's board as requests carry it: parsed from the wire's rows, and laid on the
/// grid that coordinates are checked against.
pub(crate) trait GameBoard: Sized {
    /// The board of `rows`, or every problem with them.
    fn parse_rows(rows: Rows) -> Result<Self, BadRows>;
    /// The board of borrowed `rows`, copied into `cells` (an earlier board's buffer).
    fn parse_rows_into(rows: RowsView<'_>, cells: Vec<u8>) -> Result<Self, BadRows>;
    /// The board's cells.
    fn grid(&self) -> &Grid;
}

/// [`GameBoard`] for a board whose inherent `parse_rows`, `parse_rows_into` and `grid`
/// are those (in its game's `wire` module).
macro_rules! game_board {
    ($board:ty) => {
        impl $crate::glue::fields::GameBoard for $board {
            fn parse_rows(
                rows: $crate::kit::rows::Rows,
            ) -> Result<Self, $crate::kit::grid::BadRows> {
                <$board>::parse_rows(rows)
            }
            fn parse_rows_into(
                rows: $crate::kit::rows::RowsView<'_>,
                cells: Vec<u8>,
            ) -> Result<Self, $crate::kit::grid::BadRows> {
                <$board>::parse_rows_into(rows, cells)
            }
            fn grid(&self) -> &$crate::kit::grid::Grid {
                <$board>::grid(self)
            }
        }
    };
}
pub(crate) use game_board;

/// A request's board, as the service has it: decoded on its own ([`proto::Board`], a
/// one-check call's), or borrowed from a bulk request ([`InPlace`]: read in place, or
/// decoded by prost when its check was not in the plain form).
/// Both are checked by the same code, so both get the same answers and errors.
pub(crate) trait BoardRows {
    /// The board's rows.
    fn view(&self) -> RowsView<'_>;
    /// The game's board of these rows, or every problem with them.
    fn parse<B: GameBoard>(self) -> Result<B, BadRows>;
}

impl BoardRows for proto::Board {
    fn view(&self) -> RowsView<'_> {
        self.rows.view()
    }

    /// Without a copy: the rows' buffer becomes the board's.
    fn parse<B: GameBoard>(self) -> Result<B, BadRows> {
        B::parse_rows(self.rows)
    }
}

/// A bulk request's board, borrowed, with the buffer its cells are to be copied into
/// (given back by the board of the check before, so that a bulk call allocates one for
/// all).
pub(crate) struct InPlace<'a> {
    /// The board's rows, in the bulk request.
    pub(crate) rows: RowsView<'a>,
    /// The buffer the board's cells are copied into.
    pub(crate) cells: Vec<u8>,
}

impl BoardRows for InPlace<'_> {
    fn view(&self) -> RowsView<'_> {
        self.rows
    }

    fn parse<B: GameBoard>(self) -> Result<B, BadRows> {
        B::parse_rows_into(self.rows, self.cells)
    }
}

/// The size of a board that was refused, as far as its rows show it: coordinates are
/// checked against it all the same.
#[derive(Default)]
struct Shape {
    /// The number of rows, if any were given.
    rows: Option<usize>,
    /// The number of cells in every row, if every row has as many.
    cols: Option<usize>,
}

impl Shape {
    /// The shape of `rows` rows of `cols` cells each (`None`: ragged or no rows).
    fn new(rows: usize, cols: Option<usize>) -> Self {
        Self {
            rows: (rows > 0).then_some(rows),
            cols,
        }
    }
}

/// [`board`], with the refused board's [`Shape`] as the error.
fn parse_board<B: GameBoard>(
    field: &str,
    board: Option<impl BoardRows>,
    violations: &mut Violations,
) -> Result<B, Shape> {
    let Some(board) = board else {
        violations.push(Violation::new(field, "is required"));
        return Err(Shape::default());
    };
    let rows = board.view();
    let shape = |rows: RowsView<'_>| Shape::new(rows.len(), grid::common_width(rows));
    if rows.len() > MAX_SIDE {
        violations.push(Violation::new(
            field,
            format!("has {} rows; at most {MAX_SIDE} are allowed", rows.len()),
        ));
        return Err(shape(rows));
    }
    let before = violations.len();
    for (index, row) in rows.iter().enumerate() {
        // A row of more than MAX_SIDE bytes is too long unless some of its characters
        // are wider than a byte, which parsing reports as a bad character.
        if row.len() > MAX_SIDE {
            let cells = grid::cell_count(row);
            if cells > MAX_SIDE {
                violations.push(Violation::new(
                    indexed(&[field, ".rows"], index),
                    format!("has {cells} cells; at most {MAX_SIDE} are allowed"),
                ));
            }
        }
    }
    if violations.len() > before {
        return Err(shape(rows));
    }
    board.parse::<B>().map_err(|bad| {
        violations.extend(bad.problems().map(|error| grid_violation(field, &error)));
        Shape::new(bad.row_count(), bad.col_count())
    })
}

/// The violation for a problem of a board that does not parse.
fn grid_violation(field: &str, error: &GridError) -> Violation {
    match error {
        GridError::NoRows => Violation::new(field, "must have at least one row"),
        GridError::EmptyRow { row }
        | GridError::RaggedRow { row, .. }
        | GridError::BadCell { row, .. } => {
            Violation::new(indexed(&[field, ".rows"], *row), text_of(error))
        }
    }
}

/// Checks a request's `board` and its (`row`, `col`) on it: against the board's size
/// even when the board is refused, as far as its rows show the size.
pub(crate) fn board_and_cell<B: GameBoard>(
    request_board: Option<impl BoardRows>,
    (row, col): (i32, i32),
    violations: &mut Violations,
) -> (Option<B>, Option<Cell>) {
    match parse_board::<B>("board", request_board, violations) {
        Ok(board) => {
            let cell = cell(row, col, board.grid(), violations);
            (Some(board), cell)
        }
        Err(shape) => {
            axis_violation("row", row, shape.rows, "row", violations);
            axis_violation("col", col, shape.cols, "column", violations);
            (None, None)
        }
    }
}

/// Checks (`row`, `col`) on `grid` (the grid decides, see [`Grid::locate`]).
fn cell(row: i32, col: i32, grid: &Grid, violations: &mut Violations) -> Option<Cell> {
    let off = match grid.locate(row.into(), col.into()) {
        Ok(cell) => return Some(cell),
        Err(off) => off,
    };
    if off.row_is_off() {
        axis_violation("row", row, Some(off.rows), "row", violations);
    }
    if off.col_is_off() {
        axis_violation("col", col, Some(off.cols), "column", violations);
    }
    None
}

/// The violation, if any, of a coordinate `field` of `value` on an axis of `len` `unit`s
/// (`None` when the board's length along it is not known: then only negative values
/// are refused).
fn axis_violation(
    field: &str,
    value: i32,
    len: Option<usize>,
    unit: &str,
    violations: &mut Violations,
) {
    let description = match (usize::try_from(value), len) {
        (Err(_), _) => negative(value),
        (Ok(index), Some(len)) if index >= len => {
            if len == 1 {
                format!("{value} is outside the board, which has 1 {unit} (only 0)")
            } else {
                format!(
                    "{value} is outside the board, which has {} (0 to {})",
                    grid::counted(len, unit),
                    len - 1
                )
            }
        }
        _ => return,
    };
    violations.push(Violation::new(field, description));
}

fn negative(value: i32) -> String {
    format!("must not be negative, got {value}")
}

/// Checks a colour, `"B"` or `"W"`, named `field` in its violation.
pub(crate) fn color(field: &str, text: &str, violations: &mut Violations) -> Option<Color> {
    let color = Color::from_letter(text);
    if color.is_none() {
        violations.push(Violation::new(
            field,
            format!("must be \"B\" or \"W\", got {}", echo(text)),
        ));
    }
    color
}
