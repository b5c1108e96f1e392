//! Gomoku, everything about its requests in one place: CheckGomokuMove (parsed, decided
//! by [`crate::games::gomoku`], answered; alone or in a CheckBatch), and the live game
//! of PlayGomoku (a setup with its history, then moves).

use std::num::NonZeroUsize;

use crate::proto::play_gomoku_request::Action;
use crate::proto::replies::{CheckBatchReply, Writer};
use crate::proto::requests::CheckRef;
use crate::proto::wire::{fields as wire, Len};
use crate::proto::{
    self, CheckGomokuMoveRequest, CheckGomokuMoveResponse, GomokuSetup, PlayGomokuRequest,
    PlayGomokuResponse,
};
use crate::kit::clock::{Clock, Moment};
use super::{Board, Color, Game, Move, Outcome, DEFAULT_RUN_LENGTH, DEFAULT_SIDE};
use crate::kit::grid::{Cell, Grid};
use crate::kit::rows::{Rows, RowsView};
use crate::games::{GameKind, LiveGame};

use crate::glue::answer::Answer;
use crate::glue::batch::{self, BatchCheck, Scratch};
use crate::glue::timing::{self, Timekeeper, Timing, TimingFields};
use crate::glue::convert;
use crate::glue::error::{describe, ServiceError, Violations};
use crate::glue::fields::{self, BoardRows, GameBoard};
use crate::glue::placement::{Asked, Placed};
use crate::glue::play::{self, Handled, Opened};
use crate::kit::grid::BadRows;

/// The sides of a Gomoku board set up without them.
const DEFAULT: NonZeroUsize = match NonZeroUsize::new(DEFAULT_SIDE) {
    Some(side) => side,
    None => NonZeroUsize::MIN,
};

/// Answers a CheckGomokuMove request.
pub(crate) fn check_move(request: CheckGomokuMoveRequest) -> Result<MoveAnswer, ServiceError> {
    let at = (request.row, request.col);
    let rule = (request.run_length, request.exact);
    check_move_of(request.board, at, &request.color, rule).map(|(answer, _)| answer)
}

/// Answers a CheckGomokuMove request of these fields (the board decoded on its own or
/// read in place; `rule`, the run length and whether it is exact), with the board,
/// whose buffer a bulk call uses again.
pub(crate) fn check_move_of(
    board: Option<impl BoardRows>,
    at: (i32, i32),
    color: &str,
    (run_length, exact): (i32, bool),
) -> Result<(MoveAnswer, Board), ServiceError> {
    let mut violations = Violations::new();
    let (board, cell) = fields::board_and_cell::<Board>(board, at, &mut violations);
    let color = fields::color("color", color, &mut violations);
    let run = run_length_of("run_length", run_length, &mut violations);
    let (Some(board), Some(cell), Some(color), Some(run)) = (board, cell, color, run) else {
        return Err(fields::invalid("CheckGomokuMoveRequest", violations));
    };
    let answer = MoveAnswer(board.check_move(cell, color, run.get(), exact));
    Ok((answer, board))
}

/// A run length as a request gives it: 1 to [`fields::MAX_SIDE`], or 0 for the default (5).
fn run_length_of(field: &str, value: i32, violations: &mut Violations) -> Option<NonZeroUsize> {
    fields::length_or_default(field, value, DEFAULT_RUN_LENGTH, violations)
}

/// CheckBatch's `check_gomoku_move`: a CheckGomokuMove in a batch.
pub(crate) struct CheckMove;

impl BatchCheck for CheckMove {
    const CHECK: Len = wire::check::CHECK_GOMOKU_MOVE;
    const RESULT: Len = wire::check_result::CHECK_GOMOKU_MOVE;
    const RESULT_BYTES: usize = 32;

    fn corpus() -> Vec<proto::check::Check> {
        let check = |color: &str| {
            proto::check::Check::CheckGomokuMove(CheckGomokuMoveRequest {
                board: Some(proto::Board::from_rows([".BBBB.", "......"])),
                row: 0,
                col: 5,
                color: color.into(),
                run_length: 0,
                exact: true,
            })
        };
        vec![check("B"), check("G")]
    }

    /// The board is parsed into the scratch cells.
    fn answer(
        check: CheckRef<'_>,
        scratch: &mut Scratch,
        out: &mut CheckBatchReply,
    ) -> Result<usize, ServiceError> {
        use wire::check_gomoku_move_request as request;
        let at = (check.int32(request::ROW), check.int32(request::COL));
        let rule = (check.int32(request::RUN_LENGTH), check.bool(request::EXACT));
        let board = scratch.board(check.board());
        let (answer, board) = check_move_of(board, at, check.text(request::COLOR), rule)?;
        let len = batch::write(&answer, Self::RESULT, out);
        scratch.cells = board.into_cells();
        Ok(len)
    }
}

/// The answer to a CheckGomokuMove request: whether the stone may go there, and the
/// line it would win with.
#[derive(Debug)]
pub(crate) struct MoveAnswer(Move);

impl Answer for MoveAnswer {
    type Response = CheckGomokuMoveResponse;

    fn write(&self, w: &mut Writer) {
        use wire::check_gomoku_move_response as reply;
        w.bool(reply::LEGAL, self.0.is_legal());
        if let Some(line) = self.0.line() {
            w.bool(reply::WINS, true);
            // Cell by cell from the line: no list of them is made.
            for cell in line.cells() {
                w.grid_cell(reply::RUN, cell);
            }
        }
    }
}

impl GameBoard for Board {
    fn parse_rows(rows: Rows) -> Result<Self, BadRows> {
        Board::parse_rows(rows)
    }

    fn parse_rows_into(rows: RowsView<'_>, cells: Vec<u8>) -> Result<Self, BadRows> {
        Board::parse_rows_into(rows, cells)
    }

    fn grid(&self) -> &Grid {
        Board::grid(self)
    }
}

impl LiveGame for Game {
    const KIND: GameKind = GameKind::Gomoku;
}

impl play::sealed::Play for Game {
    type Request = PlayGomokuRequest;
    type Response = PlayGomokuResponse;
    const RPC: &'static str = "PlayGomoku";
    const TIMING: TimingFields = timing::timing_fields!(play_gomoku_response);
    type Played<'a> = Played<'a>;

    fn open(first: PlayGomokuRequest, now: Moment) -> Opened<Self> {
        if let Some(Action::Setup(setup)) = &first.action {
            let (game, placed, clock) = set_up(setup)?;
            return play::set_up(game, clock, now, |game, timing| {
                Placed::set_up(game, placed, timing)
            });
        }
        let game = Game::new(DEFAULT, DEFAULT, DEFAULT_RUN_LENGTH, false);
        play::first_move(game, first)
    }

    /// A 3x4 game of three in a row, won by Black on the top row; (0, 0) a second
    /// time is rejected.
    #[cfg(test)]
    fn corpus() -> Vec<PlayGomokuRequest> {
        let setup = GomokuSetup {
            rows: 3,
            cols: 4,
            run_length: 3,
            ..Default::default()
        };
        let mut messages = vec![PlayGomokuRequest {
            action: Some(Action::Setup(Box::new(setup))),
        }];
        for (row, col) in [(0, 0), (0, 0), (1, 0), (0, 1), (1, 1), (0, 2)] {
            messages.push(PlayGomokuRequest {
                action: Some(Action::Move(proto::Cell { row, col })),
            });
        }
        messages
    }



    fn standing<'a>(&'a self, timing: &'a Timing) -> Played<'a> {
        Placed::standing(self, timing)
    }

    fn answer<'a>(
        &'a mut self,
        request: PlayGomokuRequest,
        keeper: Option<&'a mut Timekeeper>,
    ) -> (Handled, Played<'a>) {
        let asked = match request.action {
            Some(Action::Move(cell)) => Asked::Move(
                self.place(i64::from(cell.row), i64::from(cell.col))
                    .map_err(describe),
            ),
            Some(Action::Setup(_)) => Asked::Setup,
            None => Asked::Nothing("the message sets no action: send `move` (or `setup` first)"),
        };
        Placed::after(self, asked, keeper)
    }
}

/// The answer to a PlayGomoku message, before it is a reply: the game after the
/// message, and where the stone went. It is written as a `PlayGomokuResponse`, alone or
/// in a PlayMany reply.
pub(crate) type Played<'a> = Placed<'a, Game>;

impl Played<'_> {
    /// The wire verdict, and the winning line: reported with the move that made it,
    /// not after.
    fn verdict_and_run(&self) -> (i32, &[Cell]) {
        let (verdict, run) = match self.game.outcome() {
            Outcome::Pending => (proto::Verdict::Pending, &[][..]),
            Outcome::Draw => (proto::Verdict::Draw, &[][..]),
            Outcome::Won { color, run } => (convert::won(*color == Color::Black), self.shown(run)),
        };
        (i32::from(verdict), run)
    }

    /// `to_move`: "B" or "W", or empty once the game is over.
    fn to_move(&self) -> &'static str {
        match self.game.to_move() {
            Some(Color::Black) => "B",
            Some(Color::White) => "W",
            None => "",
        }
    }
}

impl Answer for Played<'_> {
    type Response = PlayGomokuResponse;

    /// The whole state of the game as a reply.
    fn write(&self, w: &mut Writer) {
        use wire::play_gomoku_response as reply;
        let (verdict, run) = self.verdict_and_run();
        w.int32(reply::VERDICT, verdict);
        w.grid(reply::BOARD, self.game.grid());
        if let Some(placed) = self.placed {
            w.grid_cell(reply::PLACED, placed);
        }
        w.grid_cells(reply::RUN, run);
        w.string(reply::TO_MOVE, self.to_move());
        // A board holds at most 100x100 cells: the count fits an int32.
        w.int32(reply::MOVES_PLAYED, self.game.moves_played() as i32);
        w.string(reply::REJECTED, &self.rejected);
        let over = self.game.to_move().is_none();
        timing::write_timing(self.timing, over, <Game as play::sealed::Play>::TIMING, w);
    }
}

/// The game a PlayGomoku setup starts (0 means the default for each of its sizes and
/// its run length), its history replayed by the game's own rules, and where the
/// history's last stone went. Fields are named under `setup.`.
fn set_up(setup: &GomokuSetup) -> Result<(Game, Option<Cell>, Option<Clock>), ServiceError> {
    const MESSAGE: &str = "PlayGomokuRequest";
    let mut violations = Violations::new();
    let rows = fields::length_or_default("setup.rows", setup.rows, DEFAULT_SIDE, &mut violations);
    let cols = fields::length_or_default("setup.cols", setup.cols, DEFAULT_SIDE, &mut violations);
    let run = run_length_of("setup.run_length", setup.run_length, &mut violations);
    let clock = timing::set_up(
        setup.time_control.as_ref(),
        setup.clock.as_ref(),
        &mut violations,
    );
    let (Some(rows), Some(cols), Some(run), true) = (rows, cols, run, violations.is_empty()) else {
        return Err(fields::invalid(MESSAGE, violations));
    };
    let mut game = Game::new(rows, cols, run.get(), setup.exact);
    let cells = rows.get() * cols.get();
    let placed = fields::replay_history(MESSAGE, &setup.history, cells, |cell| {
        game.place(i64::from(cell.row), i64::from(cell.col))
    })?;
    Ok((game, placed, clock))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glue::error::fields;

    /// Every bad field is named at once: the colour, the run length, and the cell
    /// checked against the board's size.
    #[test]
    fn every_bad_field_is_named() {
        let request = CheckGomokuMoveRequest {
            board: Some(proto::Board::from_rows(["...", "..."])),
            row: 2,
            col: 0,
            color: "black".to_owned(),
            run_length: 101,
            exact: false,
        };
        let error = check_move(request).unwrap_err();
        assert_eq!(fields(error), ["row", "color", "run_length"]);
    }
}
