//! The `arbiter.v1.ArbiterService` handlers: wire requests in, rule answers out.
//!
//! Handlers only validate ([`validate`]), call the rule engines ([`crate::rules`]),
//! and translate the answers ([`convert`]); errors become statuses in [`error`].

pub mod convert;
pub mod error;
pub mod play;
pub mod validate;

use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status, Streaming};

use crate::proto::arbiter_service_server::ArbiterService;
use crate::proto::{
    CheckConnectFourRequest, CheckConnectFourResponse, CheckOthelloMoveRequest,
    CheckOthelloMoveResponse, JudgeTicTacToeRequest, JudgeTicTacToeResponse,
    ListOthelloMovesRequest, ListOthelloMovesResponse, OthelloMove, PlayTicTacToeRequest,
};

use self::convert::TicTacToeState;
use self::error::ServiceError;
use self::play::{LiveGames, ReplyStream, StreamLimits};

/// The ArbiterService implementation, cheap to clone: clones share the live-game count
/// and the shutdown signal.
#[derive(Debug, Clone, Default)]
pub struct Arbiter {
    limits: StreamLimits,
    live_games: LiveGames,
    closing: CancellationToken,
}

impl Arbiter {
    /// A service whose live games obey `limits` and end when `closing` is cancelled.
    pub fn new(limits: StreamLimits, closing: CancellationToken) -> Self {
        Self {
            limits,
            live_games: LiveGames::default(),
            closing,
        }
    }

    /// The count of live PlayTicTacToe games.
    pub fn live_games(&self) -> &LiveGames {
        &self.live_games
    }
}

/// Runs a unary handler body: its answer becomes the response, its error the status.
fn unary<T>(body: impl FnOnce() -> Result<T, ServiceError>) -> Result<Response<T>, Status> {
    body().map(Response::new).map_err(Status::from)
}

#[tonic::async_trait]
impl ArbiterService for Arbiter {
    async fn check_othello_move(
        &self,
        request: Request<CheckOthelloMoveRequest>,
    ) -> Result<Response<CheckOthelloMoveResponse>, Status> {
        unary(|| {
            let check = validate::othello_check(request.get_ref())?;
            let answer = check
                .board
                .check_move(check.cell, check.color)
                .map_err(|e| ServiceError::InvalidRequest {
                    message: "CheckOthelloMoveRequest",
                    violations: vec![validate::othello_violation(&e)],
                })?;
            Ok(CheckOthelloMoveResponse {
                legal: answer.legal,
                flips: convert::cells(&answer.flips),
            })
        })
    }

    async fn list_othello_moves(
        &self,
        request: Request<ListOthelloMovesRequest>,
    ) -> Result<Response<ListOthelloMovesResponse>, Status> {
        unary(|| {
            let listing = validate::othello_listing(request.get_ref())?;
            let moves = listing
                .board
                .legal_moves(listing.color)
                .into_iter()
                .map(|m| OthelloMove {
                    cell: Some(convert::cell(m.cell)),
                    flips: convert::cells(&m.flips),
                })
                .collect();
            Ok(ListOthelloMovesResponse { moves })
        })
    }

    async fn check_connect_four(
        &self,
        request: Request<CheckConnectFourRequest>,
    ) -> Result<Response<CheckConnectFourResponse>, Status> {
        unary(|| {
            let check = validate::connect_four_check(request.get_ref())?;
            let run = check
                .board
                .winning_run(check.cell, check.player, check.run_length)
                .map_err(|e| ServiceError::InvalidRequest {
                    message: "CheckConnectFourRequest",
                    violations: vec![validate::connect_four_violation(&e)],
                })?;
            Ok(CheckConnectFourResponse {
                wins: run.is_some(),
                run: run.as_deref().map(convert::cells).unwrap_or_default(),
            })
        })
    }

    async fn judge_tic_tac_toe(
        &self,
        request: Request<JudgeTicTacToeRequest>,
    ) -> Result<Response<JudgeTicTacToeResponse>, Status> {
        unary(|| {
            let game = validate::tic_tac_toe_game(request.get_ref())?;
            Ok(TicTacToeState::from(&game).into())
        })
    }

    type PlayTicTacToeStream = ReplyStream;

    async fn play_tic_tac_toe(
        &self,
        request: Request<Streaming<PlayTicTacToeRequest>>,
    ) -> Result<Response<Self::PlayTicTacToeStream>, Status> {
        let opened = play::open(
            request.into_inner(),
            self.limits,
            &self.live_games,
            self.closing.clone(),
        );
        Ok(Response::new(opened?))
    }
}
