//! PlayConnectFour: an optional setup, then drops.

use crate::proto::play_connect_four_request::Action;
use crate::proto::{self, PlayConnectFourRequest, PlayConnectFourResponse};
use crate::rules::connect_four::{Game, Outcome, Player, DEFAULT_RUN_LENGTH};
use crate::rules::grid::Cell;
use crate::service::convert;
use crate::service::error::ServiceError;
use crate::service::validate::{self, DEFAULT_COLS, DEFAULT_ROWS};

use super::{GameKind, Handled, LiveGame, Reply};

impl LiveGame for Game {
    type Request = PlayConnectFourRequest;
    type Response = PlayConnectFourResponse;
    const KIND: GameKind = GameKind::ConnectFour;

    fn open(
        first: PlayConnectFourRequest,
    ) -> Result<(Self, Reply<PlayConnectFourResponse>), ServiceError> {
        if let Some(Action::Setup(setup)) = &first.action {
            let shape = validate::connect_four_setup(setup)?;
            let game = Game::new(shape.rows, shape.cols, shape.run_length);
            let response = state(&game, None, String::new());
            return Ok((
                game,
                Reply {
                    response,
                    handled: Handled::Setup,
                },
            ));
        }
        let game = Game::new(DEFAULT_ROWS, DEFAULT_COLS, DEFAULT_RUN_LENGTH);
        super::first_move(game, first)
    }

    fn reply(&mut self, request: PlayConnectFourRequest) -> Reply<PlayConnectFourResponse> {
        let dropped = match request.action {
            Some(Action::Drop(col)) => self
                .drop_piece(i64::from(col))
                .map_err(|error| error.to_string()),
            Some(Action::Setup(_)) => Err(super::SETUP_NOT_FIRST.to_owned()),
            None => Err("the message sets no action: send `drop` (or `setup` first)".to_owned()),
        };
        match dropped {
            Ok(placed) => Reply {
                response: state(self, Some(placed), String::new()),
                handled: Handled::Applied,
            },
            Err(rejected) => Reply {
                response: state(self, None, rejected),
                handled: Handled::Rejected,
            },
        }
    }
}

/// The whole state of `game` as a reply; `placed` is the piece just dropped, if any.
fn state(game: &Game, placed: Option<Cell>, rejected: String) -> PlayConnectFourResponse {
    let (verdict, run) = match game.outcome() {
        Outcome::Pending => (proto::Verdict::Pending, Vec::new()),
        Outcome::Draw => (proto::Verdict::Draw, Vec::new()),
        Outcome::Won { player, run } => (
            match player {
                Player::One => proto::Verdict::AWins,
                Player::Two => proto::Verdict::BWins,
            },
            // The run is reported with the move that made it, not after.
            if placed.is_some() {
                convert::cells(run)
            } else {
                Vec::new()
            },
        ),
    };
    PlayConnectFourResponse {
        verdict: verdict.into(),
        board: Some(proto::Board {
            rows: game.board().grid().to_row_buffer(),
        }),
        placed: placed.map(convert::cell),
        run,
        to_move: game
            .to_move()
            .map_or(0, |player| i32::from(player.number())),
        // A board holds at most 100x100 cells.
        moves_played: game.moves_played() as i32,
        rejected,
    }
}
