//! Othello, everything about its requests in one place: CheckOthelloMove and
//! ListOthelloMoves (parsed, decided by [`crate::games::othello`], answered), and the
//! live game of PlayOthello (a setup with its history, then moves).

use crate::proto::play_othello_request::Action;
use crate::proto::replies::CheckBatchReply;
use crate::proto::replies::Writer;
use crate::proto::requests::CheckRef;
use crate::proto::wire::{fields as wire, Len};
use crate::proto::{
    self, CheckOthelloMoveRequest, CheckOthelloMoveResponse, ListOthelloMovesRequest,
    ListOthelloMovesResponse, PlayOthelloRequest, PlayOthelloResponse,
};
use crate::kit::grid::Cell;
use super::{Board, Color, Game, MoveCheck, Outcome};

use crate::games::{GameKind, LiveGame};

use crate::glue::answer::Answer;
use crate::glue::batch::{self, BatchCheck, Scratch};
use crate::glue::timing::{self, Timekeeper, Timing, TimingFields};
use crate::glue::error::{describe, ServiceError, Violations};
use crate::glue::fields::{self, BoardRows};
use crate::glue::play::{self, Handled, Opened, Reply};
use crate::kit::clock::{Clock, Moment, Turns};

fields::game_board!(Board);

/// Answers a CheckOthelloMove request.
pub(crate) fn check_move(request: CheckOthelloMoveRequest) -> Result<MoveAnswer, ServiceError> {
    let at = (request.row, request.col);
    check_move_of(request.board, at, &request.color, Vec::new()).map(|(answer, _)| answer)
}

/// Answers a CheckOthelloMove request of these fields (the board decoded on its own or
/// read in place), its flips written into `flips` (cleared first); with the board,
/// whose buffer a bulk call uses again, as it does the answer's flips.
pub(crate) fn check_move_of(
    board: Option<impl BoardRows>,
    at: (i32, i32),
    color: &str,
    flips: Vec<Cell>,
) -> Result<(MoveAnswer, Board), ServiceError> {
    let mut violations = Violations::new();
    let (board, cell) = fields::board_and_cell::<Board>(board, at, &mut violations);
    let color = fields::color("color", color, &mut violations);
    let (Some(board), Some(cell), Some(color)) = (board, cell, color) else {
        return Err(fields::invalid("CheckOthelloMoveRequest", violations));
    };
    Ok((MoveAnswer(board.check_move_into(cell, color, flips)), board))
}

/// CheckBatch's `check_othello_move`: a CheckOthelloMove in a batch.
pub(crate) struct CheckMove;

impl BatchCheck for CheckMove {
    const CHECK: Len = wire::check::CHECK_OTHELLO_MOVE;
    const RESULT: Len = wire::check_result::CHECK_OTHELLO_MOVE;
    const RESULT_BYTES: usize = 32;

    fn corpus() -> Vec<proto::check::Check> {
        let check = |color: &str| {
            proto::check::Check::CheckOthelloMove(CheckOthelloMoveRequest {
                board: Some(proto::Board::from_rows(
                    crate::games::othello::STANDARD_START,
                )),
                row: 2,
                col: 3,
                color: color.into(),
            })
        };
        vec![check("B"), check("G")]
    }

    /// The board is parsed into the scratch cells, the flips into its marks.
    fn answer(
        check: CheckRef<'_>,
        scratch: &mut Scratch,
        out: &mut CheckBatchReply,
    ) -> Result<usize, ServiceError> {
        use wire::check_othello_move_request as request;
        let at = (check.int32(request::ROW), check.int32(request::COL));
        let flips = std::mem::take(&mut scratch.marks);
        let board = scratch.board(check.board());
        let (answer, board) = check_move_of(board, at, check.text(request::COLOR), flips)?;
        let len = batch::write(&answer, Self::RESULT, out);
        scratch.cells = board.into_cells();
        scratch.marks = answer.into_flips();
        Ok(len)
    }
}

/// The answer to a CheckOthelloMove request.
#[derive(Debug)]
pub(crate) struct MoveAnswer(MoveCheck);

impl MoveAnswer {
    /// The flips' buffer, for a bulk call's next check.
    pub(crate) fn into_flips(self) -> Vec<Cell> {
        self.0.flips
    }
}

impl Answer for MoveAnswer {
    type Response = CheckOthelloMoveResponse;

    fn write(&self, w: &mut Writer) {
        use wire::check_othello_move_response as reply;
        w.bool(reply::LEGAL, self.0.legal);
        w.grid_cells(reply::FLIPS, &self.0.flips);
    }
}

/// Answers a ListOthelloMoves request.
pub(crate) fn list_moves(request: ListOthelloMovesRequest) -> Result<Listing, ServiceError> {
    list_moves_of(request.board, &request.color)
}

/// Answers a ListOthelloMoves request of these fields (the board decoded on its own or
/// read in place).
pub(crate) fn list_moves_of(
    board: Option<impl BoardRows>,
    color: &str,
) -> Result<Listing, ServiceError> {
    let mut violations = Violations::new();
    let board = fields::board::<Board>("board", board, &mut violations);
    let color = fields::color("color", color, &mut violations);
    let (Some(board), Some(color)) = (board, color) else {
        return Err(fields::invalid("ListOthelloMovesRequest", violations));
    };
    Ok(Listing { board, color })
}

/// CheckBatch's `list_othello_moves`: a ListOthelloMoves in a batch.
pub(crate) struct ListMoves;

impl BatchCheck for ListMoves {
    const CHECK: Len = wire::check::LIST_OTHELLO_MOVES;
    const RESULT: Len = wire::check_result::LIST_OTHELLO_MOVES;
    const RESULT_BYTES: usize = 512;

    fn corpus() -> Vec<proto::check::Check> {
        vec![proto::check::Check::ListOthelloMoves(
            ListOthelloMovesRequest {
                board: Some(proto::Board::from_rows(
                    crate::games::othello::STANDARD_START,
                )),
                color: "W".into(),
            },
        )]
    }

    /// The board is parsed into the scratch cells.
    fn answer(
        check: CheckRef<'_>,
        scratch: &mut Scratch,
        out: &mut CheckBatchReply,
    ) -> Result<usize, ServiceError> {
        let listing = list_moves_of(
            scratch.board(check.board()),
            check.text(wire::list_othello_moves_request::COLOR),
        )?;
        let len = batch::write(&listing, Self::RESULT, out);
        scratch.cells = listing.into_cells();
        Ok(len)
    }
}

/// The answer to a ListOthelloMoves request: the board and the colour whose moves it
/// lists, each move found as the reply is made.
#[derive(Debug)]
pub(crate) struct Listing {
    board: Board,
    color: Color,
}

impl Listing {
    /// The board's buffer, for a bulk call's next board.
    pub(crate) fn into_cells(self) -> Vec<u8> {
        self.board.into_cells()
    }
}

impl Answer for Listing {
    type Response = ListOthelloMovesResponse;

    fn write(&self, w: &mut Writer) {
        self.board.visit_legal_moves(self.color, |cell, flips| {
            w.message(wire::list_othello_moves_response::MOVES, |w| {
                w.grid_cell(wire::othello_move::CELL, cell);
                w.grid_cells(wire::othello_move::FLIPS, flips);
            });
        });
    }
}

impl LiveGame for Game {
    const KIND: GameKind = GameKind::Othello;
}

impl play::sealed::Play for Game {
    type Request = PlayOthelloRequest;
    type Response = PlayOthelloResponse;
    const RPC: &'static str = "PlayOthello";
    const TIMING: TimingFields = timing::timing_fields!(play_othello_response);
    type Played<'a> = Played<'a>;

    fn open(first: PlayOthelloRequest, now: Moment) -> Opened<Self> {
        let action = match first.action {
            Some(Action::Setup(setup)) => {
                // Not `play::set_up`: this reply borrows the setup's last flips.
                let (game, last, clock) = set_up(*setup)?;
                let to_move = game.side_to_move();
                let keeper = clock.map(|clock| Timekeeper::open(clock, now, to_move));
                let answer = Played {
                    game: &game,
                    flips: &last.flips,
                    passed: last.passed,
                    rejected: String::new(),
                    timing: keeper.as_ref().map(Timekeeper::said),
                };
                let reply = Reply::setup(answer.written());
                return Ok((game, keeper, reply));
            }
            action => action,
        };
        play::first_move(Game::standard(), PlayOthelloRequest { action })
    }

    /// A board where White must pass: Black at (0, 2) flips (0, 1), White passes,
    /// and Black's (0, 4) ends the game; (9, 9) is off the board.
    #[cfg(test)]
    fn corpus() -> Vec<PlayOthelloRequest> {
        let setup = proto::OthelloSetup {
            board: Some(proto::Board::from_rows(["BW.W.", "....."])),
            to_move: "B".into(),
            ..Default::default()
        };
        let mut messages = vec![PlayOthelloRequest {
            action: Some(Action::Setup(Box::new(setup))),
        }];
        for (row, col) in [(9, 9), (0, 2), (0, 4)] {
            messages.push(PlayOthelloRequest {
                action: Some(Action::Move(proto::Cell { row, col })),
            });
        }
        messages
    }



    fn standing<'a>(&'a self, timing: &'a Timing) -> Played<'a> {
        let timing = Some(timing);
        Played {
            game: self,
            flips: &[],
            passed: false,
            rejected: String::new(),
            timing,
        }
    }

    fn answer<'a>(
        &'a mut self,
        request: PlayOthelloRequest,
        keeper: Option<&'a mut Timekeeper>,
    ) -> (Handled, Played<'a>) {
        let played = match request.action {
            Some(Action::Move(cell)) => self
                .play_move(i64::from(cell.row), i64::from(cell.col))
                .map_err(describe),
            Some(Action::Setup(_)) => Err(play::SETUP_NOT_FIRST.to_owned()),
            None => Err("the message sets no action: send `move` (or `setup` first)".to_owned()),
        };
        let game: &Game = self;
        let (handled, flips, passed, rejected) = match played {
            Ok(passed) => (Handled::Applied, game.last_flips(), passed, String::new()),
            Err(rejected) => (Handled::Rejected, &[][..], false, rejected),
        };
        let timing =
            keeper.map(|keeper| keeper.after(handled == Handled::Applied, game.side_to_move()));
        let answer = Played {
            game,
            flips,
            passed,
            rejected,
            timing,
        };
        (handled, answer)
    }
}

/// The answer to a PlayOthello message, before it is a reply: the game after the
/// message, and what the message did. It becomes a `PlayOthelloResponse`, or is
/// written straight into a PlayMany reply as one.
pub struct Played<'a> {
    game: &'a Game,
    /// The discs the move turned over; empty unless a move was applied.
    flips: &'a [Cell],
    /// Whether the side due next had to pass.
    passed: bool,
    /// Why the message was not applied; empty when it was.
    rejected: String,
    /// The clock and the end as of the message, for a game on the clock.
    timing: Option<&'a Timing>,
}

impl Played<'_> {
    /// The game's verdict, as the wire's `int32`.
    fn verdict(&self) -> i32 {
        i32::from(match self.game.outcome() {
            Outcome::Pending => proto::Verdict::Pending,
            Outcome::Won(Color::Black) => proto::Verdict::AWins,
            Outcome::Won(Color::White) => proto::Verdict::BWins,
            Outcome::Draw => proto::Verdict::Draw,
        })
    }

    /// `to_move`: "B" or "W", or empty once the game is over.
    fn to_move(&self) -> &'static str {
        match self.game.to_move() {
            Some(Color::Black) => "B",
            Some(Color::White) => "W",
            None => "",
        }
    }

    /// The counts of black and white discs, the moves played: as `int32`s, which they
    /// fit, since a board holds at most 100x100 cells.
    fn counts(&self) -> [i32; 3] {
        let (black, white) = self.game.discs();
        [black, white, self.game.moves_played()].map(|count| count as i32)
    }
}

impl Answer for Played<'_> {
    type Response = PlayOthelloResponse;

    /// The whole state of the game as a reply.
    fn write(&self, w: &mut Writer) {
        use wire::play_othello_response as reply;
        let [black_discs, white_discs, moves_played] = self.counts();
        w.int32(reply::VERDICT, self.verdict());
        w.grid(reply::BOARD, self.game.board().grid());
        w.grid_cells(reply::FLIPS, self.flips);
        w.string(reply::TO_MOVE, self.to_move());
        w.bool(reply::PASSED, self.passed);
        w.grid_cells(reply::LEGAL_MOVES, self.game.legal_cells());
        w.int32(reply::BLACK_DISCS, black_discs);
        w.int32(reply::WHITE_DISCS, white_discs);
        w.int32(reply::MOVES_PLAYED, moves_played);
        w.string(reply::REJECTED, &self.rejected);
        let over = self.game.to_move().is_none();
        timing::write_timing(self.timing, over, <Game as play::sealed::Play>::TIMING, w);
    }
}

/// What the last move of a setup's history did (nothing, without a history, but
/// perhaps a pass at once).
struct LastMove {
    flips: Vec<Cell>,
    passed: bool,
}

/// The game a PlayOthello setup starts: its board with `to_move` due, and its history
/// replayed by the game's own rules. Fields are named under `setup.`.
fn set_up(setup: proto::OthelloSetup) -> Result<(Game, LastMove, Option<Clock>), ServiceError> {
    const MESSAGE: &str = "PlayOthelloRequest";
    let mut violations = Violations::new();
    let board = fields::board::<Board>("setup.board", setup.board, &mut violations);
    let to_move = fields::color("setup.to_move", &setup.to_move, &mut violations);
    let clock = timing::set_up(
        setup.time_control.as_ref(),
        setup.clock.as_ref(),
        &mut violations,
    );
    let (Some(board), Some(to_move), true) = (board, to_move, violations.is_empty()) else {
        return Err(fields::invalid(MESSAGE, violations));
    };
    let cells = board.grid().cells().len();
    let (mut game, passed) = Game::from_position(board, to_move);
    let last = fields::replay_history(MESSAGE, &setup.history, cells, |cell| {
        game.play(i64::from(cell.row), i64::from(cell.col))
    })?;
    let last = match last {
        Some(turn) => LastMove {
            flips: turn.flips,
            passed: turn.passed,
        },
        None => LastMove {
            flips: Vec::new(),
            passed,
        },
    };
    Ok((game, last, clock))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glue::error::fields;

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
        assert_eq!(fields(check_move(request.clone()).unwrap_err()), ["row"]);
        request.col = 3;
        assert_eq!(
            fields(check_move(request.clone()).unwrap_err()),
            ["row", "col"]
        );
        request.board = None;
        request.row = -1;
        assert_eq!(fields(check_move(request).unwrap_err()), ["board", "row"]);
    }
}
