//! The `arbiter.v1.ArbiterService` handlers: wire requests in, rule answers out.
//!
//! Handlers only validate (`validate.rs`), call the rule engines ([`crate::rules`]),
//! and translate the answers (`convert.rs`); errors become statuses in `error.rs`.

pub(crate) mod convert;
pub(crate) mod error;
pub mod play;
pub(crate) mod validate;

use futures_util::Stream;
use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status, Streaming};

use crate::proto::arbiter_service_server::ArbiterService;
use crate::proto::{
    CheckConnectFourRequest, CheckConnectFourResponse, CheckOthelloMoveRequest,
    CheckOthelloMoveResponse, JudgeTicTacToeRequest, JudgeTicTacToeResponse,
    ListOthelloMovesRequest, ListOthelloMovesResponse, OthelloMove, PlayConnectFourRequest,
    PlayConnectFourResponse, PlayOthelloRequest, PlayOthelloResponse, PlayTicTacToeRequest,
    PlayTicTacToeResponse,
};
use crate::rules::{connect_four, othello, tic_tac_toe};

use self::convert::TicTacToeState;
use self::error::ServiceError;
use self::play::{LiveGame, LiveGames, ReplyStream, StreamLimits};

/// The ArbiterService implementation, cheap to clone: clones share the live-game count
/// and the shutdown signal.
#[derive(Debug, Clone, Default)]
pub struct Arbiter {
    limits: StreamLimits,
    live_games: LiveGames,
    end_streams: CancellationToken,
}

impl Arbiter {
    /// A service whose live games obey `limits` and end with UNAVAILABLE when
    /// `end_streams` is cancelled (the server's shutdown grace period is over).
    pub fn new(limits: StreamLimits, end_streams: CancellationToken) -> Self {
        Self {
            limits,
            live_games: LiveGames::default(),
            end_streams,
        }
    }

    /// The count of live games of every kind.
    pub fn live_games(&self) -> &LiveGames {
        &self.live_games
    }

    /// Opens a live game of kind `G` fed by `messages`, as the Play* handlers do with
    /// their request streams: its replies, one per message, or the status refusing it.
    pub fn open_game<G, S>(&self, messages: S) -> Result<ReplyStream<G::Response>, Status>
    where
        G: LiveGame,
        S: Stream<Item = Result<G::Request, Status>> + Unpin + Send + 'static,
    {
        Ok(play::open::<G, S>(
            messages,
            self.limits,
            &self.live_games,
            &self.end_streams,
        )?)
    }

    fn play<G>(
        &self,
        request: Request<Streaming<G::Request>>,
    ) -> Result<Response<ReplyStream<G::Response>>, Status>
    where
        G: LiveGame,
        G::Request: prost::Message + Default,
    {
        self.open_game::<G, _>(request.into_inner())
            .map(Response::new)
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
            let check = validate::othello_check(request.into_inner())?;
            let answer = check.board.check_move(check.cell, check.color);
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
            let listing = validate::othello_listing(request.into_inner())?;
            let mut moves = Vec::with_capacity(
                listing
                    .board
                    .known_legal_move_count(listing.color)
                    .unwrap_or_default(),
            );
            listing
                .board
                .visit_legal_moves(listing.color, |cell, flips| {
                    moves.push(OthelloMove {
                        cell: Some(convert::cell(cell)),
                        flips: convert::cells(flips),
                    });
                });
            Ok(ListOthelloMovesResponse { moves })
        })
    }

    async fn check_connect_four(
        &self,
        request: Request<CheckConnectFourRequest>,
    ) -> Result<Response<CheckConnectFourResponse>, Status> {
        unary(|| {
            let check = validate::connect_four_check(request.into_inner())?;
            let run = check
                .board
                .winning_run(check.cell, check.player, check.run_length);
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

    type PlayTicTacToeStream = ReplyStream<PlayTicTacToeResponse>;

    async fn play_tic_tac_toe(
        &self,
        request: Request<Streaming<PlayTicTacToeRequest>>,
    ) -> Result<Response<Self::PlayTicTacToeStream>, Status> {
        self.play::<tic_tac_toe::Game>(request)
    }

    type PlayOthelloStream = ReplyStream<PlayOthelloResponse>;

    async fn play_othello(
        &self,
        request: Request<Streaming<PlayOthelloRequest>>,
    ) -> Result<Response<Self::PlayOthelloStream>, Status> {
        self.play::<othello::Game>(request)
    }

    type PlayConnectFourStream = ReplyStream<PlayConnectFourResponse>;

    async fn play_connect_four(
        &self,
        request: Request<Streaming<PlayConnectFourRequest>>,
    ) -> Result<Response<Self::PlayConnectFourStream>, Status> {
        self.play::<connect_four::Game>(request)
    }
}
