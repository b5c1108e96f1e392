//! PlayTicTacToe: each message is a move.

use crate::proto::{PlayTicTacToeRequest, PlayTicTacToeResponse};
use crate::rules::tic_tac_toe::Game;
use crate::service::convert::TicTacToeState;
use crate::service::error::ServiceError;

use super::{GameKind, Handled, LiveGame, Reply};

impl LiveGame for Game {
    type Request = PlayTicTacToeRequest;
    type Response = PlayTicTacToeResponse;
    const KIND: GameKind = GameKind::TicTacToe;

    fn open(
        first: PlayTicTacToeRequest,
    ) -> Result<(Self, Reply<PlayTicTacToeResponse>), ServiceError> {
        super::first_move(Game::new(), first)
    }

    fn reply(&mut self, request: PlayTicTacToeRequest) -> Reply<PlayTicTacToeResponse> {
        let (handled, rejected) = match self.play(i64::from(request.row), i64::from(request.col)) {
            Ok(_) => (Handled::Applied, String::new()),
            Err(error) => (Handled::Rejected, error.to_string()),
        };
        Reply {
            response: TicTacToeState::from(&*self).into_play_response(rejected),
            handled,
        }
    }
}
