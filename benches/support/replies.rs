//! Arbiter's replies to a load call, from the real service called in-process
//! (`arbiter::Arbiter`): what `examples/h2load.rs` checks every reply against,
//! and what the same-bytes baseline (`examples/baseline_server.rs --same-bytes`) sends.
//! A live game's replies are the ones the server writes (`Arbiter::open_game` decodes
//! them), so they check the transport, not the writer: `play/many.rs`'s property test
//! holds each written answer to its built reply.

use arbiter::games::{connect_four, gomoku, othello, tic_tac_toe};
use arbiter::proto::arbiter_service_server::ArbiterService;
use arbiter::Arbiter;
use arbiter::LiveGame;
use futures_util::{stream, StreamExt, TryStreamExt};
use prost::Message;
use tonic::{Request, Response, Status};

use super::requests::LoadCall;

/// Every message of a live game of kind `G` fed `moves`, encoded.
async fn play<G: LiveGame>(service: &Arbiter, moves: &[G::Request]) -> Result<Vec<Vec<u8>>, Status>
where
    G::Request: Clone,
    G::Response: Message,
{
    let replies = service.open_game::<G, _>(stream::iter(moves.to_vec()).map(Ok))?;
    let replies: Vec<_> = replies.try_collect().await?;
    Ok(replies.iter().map(Message::encode_to_vec).collect())
}

/// A unary call's request, `request` cloned.
fn ask<R: Clone>(request: &R) -> Request<R> {
    Request::new(request.clone())
}

/// A unary call's one reply message, encoded.
fn one<M: Message>(reply: Result<Response<M>, Status>) -> Result<Vec<Vec<u8>>, Status> {
    reply.map(|r| vec![r.into_inner().encode_to_vec()])
}

/// Arbiter's reply messages to `call`, each encoded with prost (no gRPC frame prefix):
/// one for a unary call, one per request message for a stream.
pub async fn in_process(call: &LoadCall) -> Vec<Vec<u8>> {
    let service = Arbiter::default();
    let replies = match call {
        LoadCall::CheckOthelloMove(r) => one(service.check_othello_move(ask(r)).await),
        LoadCall::ListOthelloMoves(r) => one(service.list_othello_moves(ask(r)).await),
        LoadCall::CheckConnectFour(r) => one(service.check_connect_four(ask(r)).await),
        LoadCall::JudgeTicTacToe(r) => one(service.judge_tic_tac_toe(ask(r)).await),
        LoadCall::CheckGomokuMove(r) => one(service.check_gomoku_move(ask(r)).await),
        LoadCall::CheckBatch(r) => {
            let request = Request::new(r.clone().into());
            one(service.check_batch(request).await)
        }
        LoadCall::PlayTicTacToe(moves) => play::<tic_tac_toe::Game>(&service, moves).await,
        LoadCall::PlayOthello(moves) => play::<othello::Game>(&service, moves).await,
        LoadCall::PlayConnectFour(drops) => play::<connect_four::Game>(&service, drops).await,
        LoadCall::PlayGomoku(moves) => play::<gomoku::Game>(&service, moves).await,
        LoadCall::PlayMany(messages) => {
            let replies = service.open_many(stream::iter(messages.clone()).map(Ok));
            replies
                .try_collect::<Vec<_>>()
                .await
                .map(|r| r.iter().map(Message::encode_to_vec).collect())
        }
    };
    replies.unwrap_or_else(|status| panic!("the workload's own request fails: {status:?}"))
}
