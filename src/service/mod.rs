//! The `arbiter.v1.ArbiterService` handlers, above the games: each RPC handed to its
//! game's `wire` module (`crate::games`), which parses its requests, decides them by the
//! game's rules and writes the answer. [`batch`] answers many checks in one call through
//! those same modules, and [`play`] drives the live-game streams, one game or many.
//! Which module answers which check, and the kinds of game PlayMany holds, are
//! registered once, in `registration.rs`. What the games share is in `crate::kit`,
//! errors becoming statuses among it, in one place.

pub(crate) mod batch;
#[cfg(test)]
mod every_game;
pub(crate) mod play;
pub(crate) mod registration;
#[cfg(test)]
mod written_checks;
#[cfg(test)]
mod written_fields;

use futures_util::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status, Streaming};

use crate::games;
use crate::proto::arbiter_service_server::ArbiterService;
use crate::proto::replies::{self, CheckBatchReply, PlayManyReply, WrittenAs};
use crate::proto::requests::{CheckBatchChecks, PlayManyActions};
use crate::proto::{self, PlayManyRequest};

use self::play::many::ManyGames;
use self::play::{GameHolder, LiveGames, ReplyStream, StreamLimits, WrittenReplyOf};
use crate::games::LiveGame;
use crate::glue::answer::Answer;
use crate::glue::error::ServiceError;
use crate::proto::replies::WrittenReply;

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

    /// Opens a live game of kind `G` fed by `messages`, played as the Play* handlers
    /// play their request streams: its replies, one per message, as the generated
    /// messages (the same replies the handlers write, decoded; one that would not
    /// decode comes as an INTERNAL item, and the fuzz target holds that none does). A
    /// game refused (the live-game limit is full) is refused at its first message: the
    /// stream's one item is the refusal.
    pub fn open_game<G, S>(&self, messages: S) -> ReplyStream<G::Response>
    where
        G: LiveGame,
        S: Stream<Item = Result<G::Request, Status>> + Unpin + Send + 'static,
    {
        let replies = self.open_written::<G, S>(messages, None);
        Box::pin(replies.map(|reply| {
            reply?
                .to_response()
                .map_err(|error| Status::internal(format!("a reply that does not decode: {error}")))
        }))
    }

    /// Opens a live game of kind `G` fed by `messages`, counted in `holder`'s shares:
    /// its replies as they go on the wire.
    fn open_written<G, S>(
        &self,
        messages: S,
        holder: Option<GameHolder>,
    ) -> ReplyStream<WrittenReplyOf<G>>
    where
        G: LiveGame,
        S: Stream<Item = Result<G::Request, Status>> + Unpin + Send + 'static,
    {
        play::open::<G, S>(
            messages,
            self.limits,
            &self.live_games,
            holder,
            &self.end_streams,
        )
    }

    /// Opens a PlayMany stream fed by `messages`, as the PlayMany handler does with its
    /// request stream: its replies, one per message, as they go on the wire
    /// ([`PlayManyReply::to_response`] reads one as a `PlayManyResponse`).
    pub fn open_many<S>(&self, messages: S) -> ReplyStream<PlayManyReply>
    where
        S: Stream<Item = Result<PlayManyRequest, Status>> + Unpin + Send + 'static,
    {
        self.open_many_held(messages, None)
    }

    /// Opens a PlayMany stream whose games count in `holder`'s shares.
    fn open_many_held<S>(
        &self,
        messages: S,
        holder: Option<GameHolder>,
    ) -> ReplyStream<PlayManyReply>
    where
        S: Stream<Item = Result<PlayManyRequest, Status>> + Unpin + Send + 'static,
    {
        let games = ManyGames::new(self.limits, self.live_games.clone(), holder);
        play::session(
            games,
            messages,
            self.limits,
            &self.live_games,
            &self.end_streams,
        )
    }

    /// Answers a Play* call: its game's replies written straight from the game.
    fn play<G>(
        &self,
        mut request: Request<Streaming<G::Request>>,
    ) -> Result<Response<ReplyStream<WrittenReplyOf<G>>>, Status>
    where
        G: LiveGame,
        G::Request: prost::Message + Default,
    {
        let holder = request.extensions_mut().remove::<GameHolder>();
        Ok(Response::new(
            self.open_written::<G, _>(request.into_inner(), holder),
        ))
    }
}

/// Runs a unary check: its answer, written, becomes the reply, its error the status.
fn unary<A: Answer>(answer: Result<A, ServiceError>) -> Result<Response<AnswerReply<A>>, Status> {
    answer
        .map(|answer| Response::new(answer.written()))
        .map_err(Status::from)
}

/// The reply an answer of type `A` is written as.
type AnswerReply<A> = <<A as Answer>::Response as WrittenAs>::Reply;

/// The `ArbiterService` implementation: each game's RPCs as a line each, a unary check
/// (its name, request, written reply, and the game's function that answers it) or a
/// live game (its name, its stream type's name, its request, and the game's `Game`);
/// then CheckBatch and PlayMany, which every game's checks and live games go through.
macro_rules! handlers {
    (
        unary { $($check:ident($request:ty) -> $reply:ty = $answer:path;)* }
        live { $($play:ident, $stream:ident($message:ty) = $game:ty;)* }
    ) => {
        #[tonic::async_trait]
        impl ArbiterService for Arbiter {
            $(
                async fn $check(
                    &self,
                    request: Request<$request>,
                ) -> Result<Response<$reply>, Status> {
                    unary($answer(request.into_inner()))
                }
            )*

            $(
                type $stream = ReplyStream<WrittenReplyOf<$game>>;

                async fn $play(
                    &self,
                    request: Request<Streaming<$message>>,
                ) -> Result<Response<Self::$stream>, Status> {
                    self.play::<$game>(request)
                }
            )*

            async fn check_batch(
                &self,
                request: Request<CheckBatchChecks>,
            ) -> Result<Response<CheckBatchReply>, Status> {
                batch::check_batch(request.get_ref())
                    .map(Response::new)
                    .map_err(Status::from)
            }

            type PlayManyStream = ReplyStream<PlayManyReply>;

            async fn play_many(
                &self,
                request: Request<Streaming<PlayManyActions>>,
            ) -> Result<Response<Self::PlayManyStream>, Status> {
                let holder = request.extensions().get::<GameHolder>().cloned();
                let messages = request.into_inner().map(|message| message.map(Into::into));
                Ok(Response::new(self.open_many_held(messages, holder)))
            }
        }
    };
}

handlers! {
    unary {
        check_othello_move(proto::CheckOthelloMoveRequest)
            -> replies::CheckOthelloMoveReply = games::othello::wire::check_move;
        list_othello_moves(proto::ListOthelloMovesRequest)
            -> replies::ListOthelloMovesReply = games::othello::wire::list_moves;
        check_connect_four(proto::CheckConnectFourRequest)
            -> replies::CheckConnectFourReply = games::connect_four::wire::check;
        judge_tic_tac_toe(proto::JudgeTicTacToeRequest)
            -> replies::JudgeTicTacToeReply = games::tic_tac_toe::wire::judge;
        check_gomoku_move(proto::CheckGomokuMoveRequest)
            -> replies::CheckGomokuMoveReply = games::gomoku::wire::check_move;
        check_chess_move(proto::CheckChessMoveRequest)
            -> replies::CheckChessMoveReply = games::chess::wire::check_move;
        list_chess_moves(proto::ListChessMovesRequest)
            -> replies::ListChessMovesReply = games::chess::wire::list_moves;
        judge_chess_game(proto::JudgeChessGameRequest)
            -> replies::JudgeChessGameReply = games::chess::wire::judge;
    }
    live {
        play_tic_tac_toe, PlayTicTacToeStream(proto::PlayTicTacToeRequest)
            = games::tic_tac_toe::Game;
        play_othello, PlayOthelloStream(proto::PlayOthelloRequest)
            = games::othello::Game;
        play_connect_four, PlayConnectFourStream(proto::PlayConnectFourRequest)
            = games::connect_four::Game;
        play_gomoku, PlayGomokuStream(proto::PlayGomokuRequest)
            = games::gomoku::Game;
        play_chess, PlayChessStream(proto::PlayChessRequest)
            = games::chess::Game;
    }
}
