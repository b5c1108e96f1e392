//! Tic-Tac-Toe, everything about its requests in one place: JudgeTicTacToe (a whole
//! game's moves, judged by [`crate::games::tic_tac_toe`]), and the live game of
//! PlayTicTacToe (a setup with its history, then moves).

use crate::proto::replies::{CheckBatchReply, Writer};
use crate::proto::requests::CheckRef;
use crate::proto::wire::{fields as wire, Len, Varint};
use crate::proto::{
    self, JudgeTicTacToeRequest, JudgeTicTacToeResponse, PlayTicTacToeRequest,
    PlayTicTacToeResponse, TicTacToeSetup,
};
use crate::kit::grid::Cell;
use super::{Game, Outcome, Player, MAX_MOVES};
use crate::games::tic_tac_toe;

use crate::games::{GameKind, LiveGame};

use crate::glue::answer::Answer;
use crate::glue::batch::{self, BatchCheck, Scratch};
use crate::glue::timing::{self, Timekeeper, Timing, TimingFields};
use crate::glue::convert;
use crate::glue::error::{describe, indexed, text_of, ServiceError, Violation, Violations};
use crate::glue::fields;
use crate::glue::placement::{Asked, Placed};
use crate::glue::play::{self, Handled, Opened};
use crate::kit::clock::{Clock, Moment};

/// Answers a JudgeTicTacToe request: the game its moves make, A first.
///
/// Every move off the board is named; the first move that cannot be applied to the
/// game so far (a taken square, a move after the end) is named too, and the moves after
/// it are then only checked for being on the board.
pub(crate) fn judge(request: JudgeTicTacToeRequest) -> Result<Judged, ServiceError> {
    judge_moves(request.moves.iter().map(|step| (step.row, step.col)))
}

/// Answers a JudgeTicTacToe request of these moves, each its row and column (decoded on
/// their own or read in place).
fn judge_moves(moves: impl Iterator<Item = (i32, i32)>) -> Result<Judged, ServiceError> {
    replay(moves, "moves")
        .map(Judged)
        .map_err(|violations| fields::invalid("JudgeTicTacToeRequest", violations))
}

/// CheckBatch's `judge_tic_tac_toe`: a JudgeTicTacToe in a batch.
pub(crate) struct Judge;

impl BatchCheck for Judge {
    const CHECK: Len = wire::check::JUDGE_TIC_TAC_TOE;
    const RESULT: Len = wire::check_result::JUDGE_TIC_TAC_TOE;
    const RESULT_BYTES: usize = 48;

    fn corpus() -> Vec<proto::check::Check> {
        let moves = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)];
        vec![proto::check::Check::JudgeTicTacToe(JudgeTicTacToeRequest {
            moves: moves
                .into_iter()
                .map(|(row, col)| proto::TicTacToeMove { row, col })
                .collect(),
        })]
    }

    fn answer(
        check: CheckRef<'_>,
        _: &mut Scratch,
        out: &mut CheckBatchReply,
    ) -> Result<usize, ServiceError> {
        let judged = judge_moves(check.pairs().iter().map(|&[row, col]| (row, col)))?;
        Ok(batch::write(&judged, Self::RESULT, out))
    }
}

/// The answer to a JudgeTicTacToe request: the game its moves make.
#[derive(Debug)]
pub(crate) struct Judged(Game);

impl Answer for Judged {
    type Response = JudgeTicTacToeResponse;

    fn write(&self, w: &mut Writer) {
        write_state(&self.0, JUDGED, w);
    }
}

/// The game `moves` make from the empty board, or a violation per bad move, named
/// `{field}[i]` (see [`judge`]).
fn replay(moves: impl Iterator<Item = (i32, i32)>, field: &str) -> Result<Game, Violations> {
    let mut game = Some(Game::new());
    let mut violations = Violations::new();
    for (index, (row, col)) in moves.enumerate() {
        let (row, col) = (i64::from(row), i64::from(col));
        let result = match &mut game {
            Some(game) => game.play(row, col).map(drop),
            None => tic_tac_toe::locate(row, col).map(drop),
        };
        if let Err(error) = result {
            // Past the violations listed, a bad move is only counted: a million of
            // them cost no text.
            violations.push_with(field, || {
                Violation::new(indexed(&[field], index), text_of(&error))
            });
            game = None;
        }
    }
    match game {
        Some(game) if violations.is_empty() => Ok(game),
        _ => Err(violations),
    }
}

impl LiveGame for Game {
    const KIND: GameKind = GameKind::TicTacToe;
}

impl play::sealed::Play for Game {
    type Request = PlayTicTacToeRequest;
    type Response = PlayTicTacToeResponse;
    const RPC: &'static str = "PlayTicTacToe";
    const TIMING: TimingFields = timing::timing_fields!(play_tic_tac_toe_response);
    type Played<'a> = Played<'a>;

    fn open(first: PlayTicTacToeRequest, now: Moment) -> Opened<Self> {
        let Some(setup) = &first.setup else {
            return play::first_move(Game::new(), first);
        };
        let (game, clock) = set_up(setup)?;
        play::set_up(game, clock, now, |game, timing| {
            Placed::set_up(game, None, timing)
        })
    }

    /// A game from a setup, won by A on the top row; (1, 0) a second time is rejected.
    #[cfg(test)]
    fn corpus() -> Vec<PlayTicTacToeRequest> {
        let setup = PlayTicTacToeRequest {
            setup: Some(Box::default()),
            ..Default::default()
        };
        let moves = [(0, 0), (1, 0), (1, 0), (0, 1), (1, 1), (0, 2)];
        let moves = moves.into_iter().map(|(row, col)| PlayTicTacToeRequest {
            row,
            col,
            setup: None,
        });
        std::iter::once(setup).chain(moves).collect()
    }



    fn standing<'a>(&'a self, timing: &'a Timing) -> Played<'a> {
        Placed::standing(self, timing)
    }

    fn answer<'a>(
        &'a mut self,
        request: PlayTicTacToeRequest,
        keeper: Option<&'a mut Timekeeper>,
    ) -> (Handled, Played<'a>) {
        let asked = if request.setup.is_some() {
            Asked::Setup
        } else {
            let (row, col) = (request.row, request.col);
            let played = self.play(i64::from(row), i64::from(col));
            // Applied, the cell is on the board: its coordinates are 0 to 2.
            let cell = || Cell::new(row.unsigned_abs() as usize, col.unsigned_abs() as usize);
            Asked::Move(played.map(|_| cell()).map_err(describe))
        };
        Placed::after(self, asked, keeper)
    }
}

/// The answer to a PlayTicTacToe message, before it is a reply: the game after the
/// message, and why it was not applied (empty when it was). It becomes a
/// `PlayTicTacToeResponse`, or is written straight into a PlayMany reply as one.
pub(crate) type Played<'a> = Placed<'a, Game>;

impl Answer for Played<'_> {
    type Response = PlayTicTacToeResponse;

    /// The whole state of the game as a reply.
    fn write(&self, w: &mut Writer) {
        write_state(self.game, PLAYED, w);
        w.string(wire::play_tic_tac_toe_response::REJECTED, &self.rejected);
        let over = self.game.outcome().is_over();
        timing::write_timing(self.timing, over, <Game as play::sealed::Play>::TIMING, w);
    }
}

/// The fields JudgeTicTacToe's and PlayTicTacToe's replies share.
struct StateFields {
    verdict: Varint,
    line: Len,
    board: Len,
    moves_played: Varint,
}

/// The shared fields in a `JudgeTicTacToeResponse`.
const JUDGED: StateFields = {
    use wire::judge_tic_tac_toe_response as reply;
    StateFields {
        verdict: reply::VERDICT,
        line: reply::LINE,
        board: reply::BOARD,
        moves_played: reply::MOVES_PLAYED,
    }
};

/// The shared fields in a `PlayTicTacToeResponse`.
const PLAYED: StateFields = {
    use wire::play_tic_tac_toe_response as reply;
    StateFields {
        verdict: reply::VERDICT,
        line: reply::LINE,
        board: reply::BOARD,
        moves_played: reply::MOVES_PLAYED,
    }
};

/// Writes the fields JudgeTicTacToe's and PlayTicTacToe's replies share, as `at` numbers
/// them: the verdict, the winning line, the board, the moves played.
fn write_state(game: &Game, at: StateFields, w: &mut Writer) {
    let (verdict, line) = verdict_and_line(game);
    w.int32(at.verdict, verdict);
    w.grid_cells(at.line, line.as_ref().map_or(&[], |line| &line[..]));
    w.rows(at.board, game.row_bytes().iter().map(|row| &row[..]));
    w.int32(at.moves_played, moves_played(game));
}

/// The wire verdict of `game`, and its winning line if it was won.
fn verdict_and_line(game: &Game) -> (i32, Option<[Cell; 3]>) {
    let (verdict, line) = match game.outcome() {
        Outcome::Pending => (proto::Verdict::Pending, None),
        Outcome::Draw => (proto::Verdict::Draw, None),
        Outcome::Won { player, line } => (convert::won(player == Player::A), Some(line)),
        Outcome::Forfeited { player } => (convert::won(player == Player::A), None),
    };
    (i32::from(verdict), line)
}

/// The moves played, as an `int32`: at most nine moves are ever applied.
fn moves_played(game: &Game) -> i32 {
    game.moves_played() as i32
}

/// The game a PlayTicTacToe setup starts: its history replayed from the empty board,
/// A first. Fields are named under `setup.`.
fn set_up(setup: &TicTacToeSetup) -> Result<(Game, Option<Clock>), ServiceError> {
    const MESSAGE: &str = "PlayTicTacToeRequest";
    let mut violations = Violations::new();
    let clock = timing::set_up(
        setup.time_control.as_ref(),
        setup.clock.as_ref(),
        &mut violations,
    );
    if !violations.is_empty() {
        return Err(fields::invalid(MESSAGE, violations));
    }
    let mut game = Game::new();
    fields::replay_history(MESSAGE, &setup.history, MAX_MOVES, |step| {
        game.play(i64::from(step.row), i64::from(step.col))
    })?;
    Ok((game, clock))
}
