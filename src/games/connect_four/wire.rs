//! Connect Four, everything about its requests in one place: CheckConnectFour (parsed,
//! decided by [`crate::games::connect_four`], answered), and the live game of
//! PlayConnectFour (a setup with its history, then drops).

use std::num::NonZeroUsize;

use crate::proto::play_connect_four_request::Action;
use crate::proto::replies::CheckBatchReply;
use crate::proto::replies::Writer;
use crate::proto::requests::CheckRef;
use crate::proto::wire::{fields as wire, Len};
use crate::proto::{
    self, CheckConnectFourRequest, CheckConnectFourResponse, ConnectFourSetup,
    PlayConnectFourRequest, PlayConnectFourResponse,
};
use super::{Board, Game, Outcome, Player, DEFAULT_RUN_LENGTH};
use crate::kit::grid::Cell;

use crate::games::{GameKind, LiveGame};

use crate::glue::answer::Answer;
use crate::glue::batch::{self, BatchCheck, Scratch};
use crate::glue::timing::{self, Timekeeper, Timing, TimingFields};
use crate::glue::convert;
use crate::glue::error::{describe, ServiceError, Violation, Violations};
use crate::glue::fields::{self, BoardRows};
use crate::glue::placement::{Asked, Placed};
use crate::glue::play::{self, Handled, Opened};
use crate::kit::clock::{Clock, Moment};

fields::game_board!(Board);

/// The rows of a Connect Four game set up without them.
pub(crate) const DEFAULT_ROWS: NonZeroUsize = NonZeroUsize::MIN.saturating_add(5);

/// The columns of a Connect Four game set up without them.
pub(crate) const DEFAULT_COLS: NonZeroUsize = NonZeroUsize::MIN.saturating_add(6);

/// Answers a CheckConnectFour request, including the check that the cell holds the
/// player's piece.
pub(crate) fn check(request: CheckConnectFourRequest) -> Result<RunAnswer, ServiceError> {
    let at = (request.row, request.col);
    check_of(request.board, at, request.player, request.run_length).map(|(answer, _)| answer)
}

/// Answers a CheckConnectFour request of these fields (the board decoded on its own or
/// read in place), with the board, whose buffer a bulk call uses again.
pub(crate) fn check_of(
    board: Option<impl BoardRows>,
    at: (i32, i32),
    player_number: i32,
    run_length: i32,
) -> Result<(RunAnswer, Board), ServiceError> {
    let mut violations = Violations::new();
    let (board, cell) = fields::board_and_cell::<Board>(board, at, &mut violations);
    let player = Player::from_number(player_number.into());
    if player.is_none() {
        violations.push(Violation::new(
            "player",
            format!("must be 1 or 2, got {player_number}"),
        ));
    }
    let run = match run_length {
        0 => Some(DEFAULT_RUN_LENGTH),
        n => usize::try_from(n).ok(),
    };
    if run.is_none() {
        violations.push(Violation::new(
            "run_length",
            format!(
                "must not be negative, got {run_length} (0 means the default, \
                 {DEFAULT_RUN_LENGTH})",
            ),
        ));
    }
    // Whose piece the cell holds does not depend on the run length: checked whenever
    // the board, the cell and the player are good.
    let piece = match (&board, cell, player) {
        (Some(board), Some(cell), Some(player)) => board
            .check_piece(cell, player)
            .map_err(|error| violations.push(Violation::new("player", describe(error))))
            .ok(),
        _ => None,
    };
    match (board, piece, run) {
        (Some(board), Some(piece), Some(run)) if violations.is_empty() => {
            Ok((RunAnswer(board.winning_run(piece, run)), board))
        }
        _ => Err(fields::invalid("CheckConnectFourRequest", violations)),
    }
}

/// CheckBatch's `check_connect_four`: a CheckConnectFour in a batch.
pub(crate) struct CheckRun;

impl BatchCheck for CheckRun {
    const CHECK: Len = wire::check::CHECK_CONNECT_FOUR;
    const RESULT: Len = wire::check_result::CHECK_CONNECT_FOUR;
    const RESULT_BYTES: usize = 32;

    fn corpus() -> Vec<proto::check::Check> {
        let rows = [
            "0000000", "0000000", "0000000", "1000000", "1000000", "1222200",
        ];
        vec![proto::check::Check::CheckConnectFour(
            CheckConnectFourRequest {
                board: Some(proto::Board::from_rows(rows)),
                row: 5,
                col: 4,
                player: 2,
                run_length: 0,
            },
        )]
    }

    /// The board is parsed into the scratch cells.
    fn answer(
        check: CheckRef<'_>,
        scratch: &mut Scratch,
        out: &mut CheckBatchReply,
    ) -> Result<usize, ServiceError> {
        use wire::check_connect_four_request as request;
        let at = (check.int32(request::ROW), check.int32(request::COL));
        let board = scratch.board(check.board());
        let (player, run) = (
            check.int32(request::PLAYER),
            check.int32(request::RUN_LENGTH),
        );
        let (answer, board) = check_of(board, at, player, run)?;
        let len = batch::write(&answer, Self::RESULT, out);
        scratch.cells = board.into_cells();
        Ok(len)
    }
}

/// The answer to a CheckConnectFour request: the winning run through the cell, if any.
#[derive(Debug)]
pub(crate) struct RunAnswer(Option<Vec<Cell>>);

impl Answer for RunAnswer {
    type Response = CheckConnectFourResponse;

    fn write(&self, w: &mut Writer) {
        use wire::check_connect_four_response as reply;
        w.bool(reply::WINS, self.0.is_some());
        w.grid_cells(reply::RUN, self.0.as_deref().unwrap_or_default());
    }
}

impl LiveGame for Game {
    const KIND: GameKind = GameKind::ConnectFour;
}

impl play::sealed::Play for Game {
    type Request = PlayConnectFourRequest;
    type Response = PlayConnectFourResponse;
    const RPC: &'static str = "PlayConnectFour";
    const TIMING: TimingFields = timing::timing_fields!(play_connect_four_response);
    type Played<'a> = Played<'a>;

    fn open(first: PlayConnectFourRequest, now: Moment) -> Opened<Self> {
        if let Some(Action::Setup(setup)) = &first.action {
            let (game, placed, clock) = set_up(setup)?;
            return play::set_up(game, clock, now, |game, timing| {
                Placed::set_up(game, placed, timing)
            });
        }
        let game = Game::new(DEFAULT_ROWS, DEFAULT_COLS, DEFAULT_RUN_LENGTH);
        play::first_move(game, first)
    }

    /// A 6x7 game won by player 1 in column 0; column 9 is off the board.
    #[cfg(test)]
    fn corpus() -> Vec<PlayConnectFourRequest> {
        let setup = ConnectFourSetup {
            rows: 6,
            cols: 7,
            run_length: 4,
            ..Default::default()
        };
        let mut messages = vec![PlayConnectFourRequest {
            action: Some(Action::Setup(Box::new(setup))),
        }];
        for col in [0, 1, 0, 1, 0, 1, 9, 0] {
            messages.push(PlayConnectFourRequest {
                action: Some(Action::Drop(col)),
            });
        }
        messages
    }



    fn standing<'a>(&'a self, timing: &'a Timing) -> Played<'a> {
        Placed::standing(self, timing)
    }

    fn answer<'a>(
        &'a mut self,
        request: PlayConnectFourRequest,
        keeper: Option<&'a mut Timekeeper>,
    ) -> (Handled, Played<'a>) {
        let asked = match request.action {
            Some(Action::Drop(col)) => Asked::Move(self.drop_piece(i64::from(col)).map_err(describe)),
            Some(Action::Setup(_)) => Asked::Setup,
            None => Asked::Nothing("the message sets no action: send `drop` (or `setup` first)"),
        };
        Placed::after(self, asked, keeper)
    }
}

/// The answer to a PlayConnectFour message, before it is a reply: the game after the
/// message, and where the piece landed. It becomes a `PlayConnectFourResponse`, or is
/// written straight into a PlayMany reply as one.
pub(crate) type Played<'a> = Placed<'a, Game>;

impl Played<'_> {
    /// The wire verdict, and the winning run: reported with the move that made it,
    /// not after.
    fn verdict_and_run(&self) -> (i32, &[Cell]) {
        let (verdict, run) = match self.game.outcome() {
            Outcome::Pending => (proto::Verdict::Pending, &[][..]),
            Outcome::Draw => (proto::Verdict::Draw, &[][..]),
            Outcome::Won { player, run } => (convert::won(*player == Player::One), self.shown(run)),
        };
        (i32::from(verdict), run)
    }

    /// `to_move` (1 or 2; 0 once the game is over) and the pieces dropped, as the
    /// wire's `int32`s (a board holds at most 100x100 cells).
    fn counts(&self) -> [i32; 2] {
        let to_move = self.game.to_move().map_or(0, |player| player.number());
        [i32::from(to_move), self.game.moves_played() as i32]
    }
}

impl Answer for Played<'_> {
    type Response = PlayConnectFourResponse;

    /// The whole state of the game as a reply.
    fn write(&self, w: &mut Writer) {
        use wire::play_connect_four_response as reply;
        let (verdict, run) = self.verdict_and_run();
        let [to_move, moves_played] = self.counts();
        w.int32(reply::VERDICT, verdict);
        w.grid(reply::BOARD, self.game.board().grid());
        if let Some(placed) = self.placed {
            w.grid_cell(reply::PLACED, placed);
        }
        w.grid_cells(reply::RUN, run);
        w.int32(reply::TO_MOVE, to_move);
        w.int32(reply::MOVES_PLAYED, moves_played);
        w.string(reply::REJECTED, &self.rejected);
        let over = self.game.to_move().is_none();
        timing::write_timing(self.timing, over, <Game as play::sealed::Play>::TIMING, w);
    }
}

/// The game a PlayConnectFour setup starts (0 means the default for each of its
/// sizes), its history replayed by the game's own rules, and where the history's last
/// piece landed. Fields are named under `setup.`.
fn set_up(setup: &ConnectFourSetup) -> Result<(Game, Option<Cell>, Option<Clock>), ServiceError> {
    const MESSAGE: &str = "PlayConnectFourRequest";
    let mut violations = Violations::new();
    let mut side = |field: &str, value: i32, default: usize| {
        fields::length_or_default(field, value, default, &mut violations)
    };
    let rows = side("setup.rows", setup.rows, DEFAULT_ROWS.get());
    let cols = side("setup.cols", setup.cols, DEFAULT_COLS.get());
    let run_length = side("setup.run_length", setup.run_length, DEFAULT_RUN_LENGTH);
    let clock = timing::set_up(
        setup.time_control.as_ref(),
        setup.clock.as_ref(),
        &mut violations,
    );
    let (Some(rows), Some(cols), Some(run_length), true) =
        (rows, cols, run_length, violations.is_empty())
    else {
        return Err(fields::invalid(MESSAGE, violations));
    };
    let cells = rows.get() * cols.get();
    let mut game = Game::new(rows, cols, run_length.get());
    let placed = fields::replay_history(MESSAGE, &setup.history, cells, |&col| {
        game.drop_piece(i64::from(col))
    })?;
    Ok((game, placed, clock))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glue::error::fields;

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
        let error = check(request).unwrap_err();
        assert_eq!(fields(error), ["run_length", "player"]);
    }
}
