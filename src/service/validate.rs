//! Turns wire requests into checked inputs for the rule engines, or into violations.
//!
//! Every field is checked before any rule runs, and every problem found is reported,
//! each as one [`Violation`] naming its field.

use std::num::NonZeroUsize;

use crate::proto;
use crate::rules::connect_four;
use crate::rules::grid::{Cell, Grid, GridError};
use crate::rules::othello::{self, Color};
use crate::rules::rows::Rows;
use crate::rules::tic_tac_toe::{self, Game};

use super::error::{echo, ServiceError, Violation};

/// The most rows, and the most columns, a board may have.
pub(crate) const MAX_SIDE: usize = 100;

/// A checked CheckOthelloMove request.
#[derive(Debug)]
pub(crate) struct OthelloCheck {
    /// The board.
    pub board: othello::Board,
    /// The target cell, on the board.
    pub cell: Cell,
    /// The mover's colour.
    pub color: Color,
}

/// A checked ListOthelloMoves request.
#[derive(Debug)]
pub(crate) struct OthelloListing {
    /// The board.
    pub board: othello::Board,
    /// The colour whose moves are listed.
    pub color: Color,
}

/// A checked CheckConnectFour request.
#[derive(Debug)]
pub(crate) struct ConnectFourCheck {
    /// The board.
    pub board: connect_four::Board,
    /// The placed piece's cell, on the board and holding `player`'s piece.
    pub cell: Cell,
    /// The player who placed it.
    pub player: connect_four::Player,
    /// How many pieces in a line win.
    pub run_length: usize,
}

/// Checks a CheckOthelloMove request.
pub(crate) fn othello_check(
    request: proto::CheckOthelloMoveRequest,
) -> Result<OthelloCheck, ServiceError> {
    let mut violations = Vec::new();
    let (board, cell) = board_and_cell(
        request.board,
        (request.row, request.col),
        othello::Board::from_rows,
        othello::Board::grid,
        &mut violations,
    );
    let color = color("color", &request.color, &mut violations);
    match (board, cell, color) {
        (Some(board), Some(cell), Some(color)) if violations.is_empty() => {
            Ok(OthelloCheck { board, cell, color })
        }
        _ => Err(invalid("CheckOthelloMoveRequest", violations)),
    }
}

/// Checks a ListOthelloMoves request.
pub(crate) fn othello_listing(
    request: proto::ListOthelloMovesRequest,
) -> Result<OthelloListing, ServiceError> {
    let mut violations = Vec::new();
    let board = board(
        "board",
        request.board,
        othello::Board::from_rows,
        &mut violations,
    );
    let color = color("color", &request.color, &mut violations);
    match (board, color) {
        (Some(board), Some(color)) if violations.is_empty() => Ok(OthelloListing { board, color }),
        _ => Err(invalid("ListOthelloMovesRequest", violations)),
    }
}

/// Checks a CheckConnectFour request, including that the cell holds the player's piece.
pub(crate) fn connect_four_check(
    request: proto::CheckConnectFourRequest,
) -> Result<ConnectFourCheck, ServiceError> {
    const MESSAGE: &str = "CheckConnectFourRequest";
    let mut violations = Vec::new();
    let (board, cell) = board_and_cell(
        request.board,
        (request.row, request.col),
        connect_four::Board::from_rows,
        connect_four::Board::grid,
        &mut violations,
    );
    let player = connect_four::Player::from_number(request.player.into());
    if player.is_none() {
        violations.push(Violation::new(
            "player",
            format!("must be 1 or 2, got {}", request.player),
        ));
    }
    let run_length = match request.run_length {
        0 => Some(connect_four::DEFAULT_RUN_LENGTH),
        n => usize::try_from(n).ok(),
    };
    if run_length.is_none() {
        violations.push(Violation::new(
            "run_length",
            format!(
                "must not be negative, got {} (0 means the default, {})",
                request.run_length,
                connect_four::DEFAULT_RUN_LENGTH
            ),
        ));
    }
    // Whose piece the cell holds does not depend on the run length: checked whenever
    // the board, the cell and the player are good.
    if let (Some(board), Some(cell), Some(player)) = (&board, cell, player) {
        if let Err(error) = board.check_piece(cell, player) {
            violations.push(Violation::new("player", error.to_string()));
        }
    }
    match (board, cell, player, run_length) {
        (Some(board), Some(cell), Some(player), Some(run_length)) if violations.is_empty() => {
            Ok(ConnectFourCheck {
                board,
                cell,
                player,
                run_length,
            })
        }
        _ => Err(invalid(MESSAGE, violations)),
    }
}

/// A checked PlayOthello setup.
#[derive(Debug)]
pub(crate) struct OthelloSetup {
    /// The starting board.
    pub board: othello::Board,
    /// The colour due to play first.
    pub to_move: Color,
}

/// Checks a PlayOthello setup; fields are named under `setup.`.
pub(crate) fn othello_setup(setup: proto::OthelloSetup) -> Result<OthelloSetup, ServiceError> {
    let mut violations = Vec::new();
    let board = board(
        "setup.board",
        setup.board,
        othello::Board::from_rows,
        &mut violations,
    );
    let to_move = color("setup.to_move", &setup.to_move, &mut violations);
    match (board, to_move) {
        (Some(board), Some(to_move)) if violations.is_empty() => {
            Ok(OthelloSetup { board, to_move })
        }
        _ => Err(invalid("PlayOthelloRequest", violations)),
    }
}

/// The rows of a Connect Four game set up without them.
pub(crate) const DEFAULT_ROWS: NonZeroUsize = NonZeroUsize::new(6).unwrap();

/// The columns of a Connect Four game set up without them.
pub(crate) const DEFAULT_COLS: NonZeroUsize = NonZeroUsize::new(7).unwrap();

/// A checked PlayConnectFour setup.
#[derive(Debug)]
pub(crate) struct ConnectFourShape {
    /// The board's rows.
    pub rows: NonZeroUsize,
    /// The board's columns.
    pub cols: NonZeroUsize,
    /// How many pieces in a line win.
    pub run_length: usize,
}

/// Checks a PlayConnectFour setup (0 means the default for each field); fields are
/// named under `setup.`.
pub(crate) fn connect_four_setup(
    setup: &proto::ConnectFourSetup,
) -> Result<ConnectFourShape, ServiceError> {
    let mut violations = Vec::new();
    let mut side = |field: &str, value: i32, default: usize| {
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
    };
    let rows = side("setup.rows", setup.rows, DEFAULT_ROWS.get());
    let cols = side("setup.cols", setup.cols, DEFAULT_COLS.get());
    let run_length = side(
        "setup.run_length",
        setup.run_length,
        connect_four::DEFAULT_RUN_LENGTH,
    );
    match (rows, cols, run_length) {
        (Some(rows), Some(cols), Some(run_length)) => Ok(ConnectFourShape {
            rows,
            cols,
            run_length: run_length.get(),
        }),
        _ => Err(invalid("PlayConnectFourRequest", violations)),
    }
}

/// Plays a JudgeTicTacToe request's moves; a move that cannot be applied is a violation
/// on `moves[i]`.
pub(crate) fn tic_tac_toe_game(
    request: &proto::JudgeTicTacToeRequest,
) -> Result<Game, ServiceError> {
    tic_tac_toe::judge(
        request
            .moves
            .iter()
            .map(|m| (i64::from(m.row), i64::from(m.col))),
    )
    .map_err(|error| {
        invalid(
            "JudgeTicTacToeRequest",
            vec![Violation::new(
                format!("moves[{}]", error.index),
                error.error.to_string(),
            )],
        )
    })
}

fn invalid(message: &'static str, violations: Vec<Violation>) -> ServiceError {
    ServiceError::InvalidRequest {
        message,
        violations,
    }
}

/// Checks the board's size, then parses it with the game's `parse`.
fn board<B>(
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
fn board_and_cell<B>(
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
                "{value} is outside the board, which has {len} {unit}s (0 to {})",
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

fn color(field: &str, text: &str, violations: &mut Vec<Violation>) -> Option<Color> {
    let color = Color::from_letter(text);
    if color.is_none() {
        violations.push(Violation::new(
            field,
            format!("must be \"B\" or \"W\", got {}", echo(text)),
        ));
    }
    color
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(error: ServiceError) -> Vec<String> {
        match error {
            ServiceError::InvalidRequest { violations, .. } => {
                violations.into_iter().map(|v| v.field).collect()
            }
            other => panic!("not a violation list: {other:?}"),
        }
    }

    /// Whose piece the cell holds does not depend on the run length: a bad run length
    /// does not hide it.
    #[test]
    fn the_piece_owner_is_checked_even_when_the_run_length_is_bad() {
        let request = proto::CheckConnectFourRequest {
            board: Some(proto::Board::from_rows(["120"])),
            row: 0,
            col: 1,
            player: 1,
            run_length: -1,
        };
        let error = connect_four_check(request).unwrap_err();
        assert_eq!(fields(error), ["run_length", "player"]);
    }

    /// The grid decides which coordinate is off; each is named, and negative ones are
    /// named even without a valid board.
    #[test]
    fn each_coordinate_off_the_board_is_named() {
        let mut request = proto::CheckOthelloMoveRequest {
            board: Some(proto::Board::from_rows(["..."])),
            row: 1,
            col: 2,
            color: "B".into(),
        };
        assert_eq!(fields(othello_check(request.clone()).unwrap_err()), ["row"]);
        request.col = 3;
        assert_eq!(
            fields(othello_check(request.clone()).unwrap_err()),
            ["row", "col"]
        );
        request.board = None;
        request.row = -1;
        assert_eq!(
            fields(othello_check(request).unwrap_err()),
            ["board", "row"]
        );
    }
}
