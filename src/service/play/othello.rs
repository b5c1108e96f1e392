//! PlayOthello: an optional setup, then moves.

use crate::proto::play_othello_request::Action;
use crate::proto::{self, PlayOthelloRequest, PlayOthelloResponse};
use crate::rules::othello::{Color, Game, Outcome};
use crate::service::convert;
use crate::service::error::ServiceError;
use crate::service::validate;

use super::{GameKind, Handled, LiveGame, Reply};

impl LiveGame for Game {
    type Request = PlayOthelloRequest;
    type Response = PlayOthelloResponse;
    const KIND: GameKind = GameKind::Othello;

    fn open(first: PlayOthelloRequest) -> Result<(Self, Reply<PlayOthelloResponse>), ServiceError> {
        let action = match first.action {
            Some(Action::Setup(setup)) => {
                let setup = validate::othello_setup(setup)?;
                let (game, passed) = Game::from_position(setup.board, setup.to_move);
                let response = state(&game, Vec::new(), passed, String::new());
                return Ok((
                    game,
                    Reply {
                        response,
                        handled: Handled::Setup,
                    },
                ));
            }
            action => action,
        };
        super::first_move(Game::standard(), PlayOthelloRequest { action })
    }

    fn reply(&mut self, request: PlayOthelloRequest) -> Reply<PlayOthelloResponse> {
        let played = match request.action {
            Some(Action::Move(cell)) => self
                .play(i64::from(cell.row), i64::from(cell.col))
                .map_err(|error| error.to_string()),
            Some(Action::Setup(_)) => Err(super::SETUP_NOT_FIRST.to_owned()),
            None => Err("the message sets no action: send `move` (or `setup` first)".to_owned()),
        };
        match played {
            Ok(turn) => Reply {
                response: state(
                    self,
                    convert::cells(&turn.flips),
                    turn.passed,
                    String::new(),
                ),
                handled: Handled::Applied,
            },
            Err(rejected) => Reply {
                response: state(self, Vec::new(), false, rejected),
                handled: Handled::Rejected,
            },
        }
    }
}

/// The whole state of `game` as a reply.
fn state(
    game: &Game,
    flips: Vec<proto::Cell>,
    passed: bool,
    rejected: String,
) -> PlayOthelloResponse {
    let verdict = match game.outcome() {
        Outcome::Pending => proto::Verdict::Pending,
        Outcome::Won(Color::Black) => proto::Verdict::AWins,
        Outcome::Won(Color::White) => proto::Verdict::BWins,
        Outcome::Draw => proto::Verdict::Draw,
    };
    let (black, white) = game.discs();
    PlayOthelloResponse {
        verdict: verdict.into(),
        board: Some(proto::Board {
            rows: game.board().grid().to_row_buffer(),
        }),
        flips,
        to_move: game
            .to_move()
            .map(|color| char::from(color.byte()).to_string())
            .unwrap_or_default(),
        passed,
        legal_moves: convert::cells(game.legal_cells()),
        // A board holds at most 100x100 cells, so every count fits an i32.
        black_discs: black as i32,
        white_discs: white as i32,
        moves_played: game.moves_played() as i32,
        rejected,
    }
}
