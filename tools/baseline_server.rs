//! The yardstick for the load benchmark: a bare tonic server for the same proto, built
//! with the same build settings as `arbiter`, whose handlers do no work at all and return
//! empty replies. It is tonic's default `Server` on a TCP listener with TCP_NODELAY and
//! nothing else: no layers (metrics, logging, limits), no HTTP/2 or TCP keepalive
//! settings, no health or reflection service, no graceful shutdown. So it measures
//! the transport alone, and no implementation of the service can beat it.
//!
//! With `--same-bytes` it is instead the same-bytes baseline: the same default server,
//! whose handlers reply, whatever they are sent, the very bytes Arbiter replies to the
//! load workloads (`benches/support/requests.rs`), each reply a message of prost's stock
//! types built once (from Arbiter's in-process replies, on the first call of its kind)
//! and cloned for every call or stream message, as a typical tonic service that builds
//! its replies from its state would send them: a `String` per board row, a `Vec` per
//! cell list, prost's generated encoding. Each stream's i-th message is answered with
//! the workload's i-th reply (cycling); which workload a call is is read from its
//! request (the board's size, the first check's or action's kind). No rules run.
//!
//! An RPC it does not implement answers UNIMPLEMENTED (the generated trait's default
//! stubs), so that a game added to the contract asks nothing of it until its workloads
//! are measured here.
//!
//! Built and started by `benches/load.sh`; by hand:
//! `cargo run --release --example baseline_server -- --listen 127.0.0.1:50052`.

use std::pin::Pin;
use std::sync::Arc;

#[path = "../benches/support/replies.rs"]
mod replies;
#[path = "../benches/support/requests.rs"]
mod requests;

/// The stubs as tonic-prost-build generates them, without Arbiter's hand-written
/// `Board` (see build.rs): the baseline decodes every row into a `String`, as a typical
/// tonic service does.
mod stock {
    #![allow(dead_code, missing_docs, clippy::all, clippy::pedantic)]
    include!(concat!(env!("OUT_DIR"), "/stock/arbiter.v1.rs"));
}

use clap::Parser;
use futures_util::{stream, Stream, StreamExt};
use prost::Message;
use requests::LoadCall;
use stock::arbiter_service_server::{ArbiterService, ArbiterServiceServer};
use stock::{check, game_action};
use stock::{
    CheckBatchRequest, CheckBatchResponse, CheckConnectFourRequest, CheckConnectFourResponse,
    CheckGomokuMoveRequest, CheckGomokuMoveResponse, CheckOthelloMoveRequest,
    CheckOthelloMoveResponse, JudgeTicTacToeRequest, JudgeTicTacToeResponse,
    ListOthelloMovesRequest, ListOthelloMovesResponse, PlayConnectFourRequest,
    PlayConnectFourResponse, PlayGomokuRequest, PlayGomokuResponse, PlayManyRequest,
    PlayManyResponse, PlayOthelloRequest, PlayOthelloResponse, PlayTicTacToeRequest,
    PlayTicTacToeResponse,
};
use tokio::net::TcpListener;
use tokio::sync::OnceCell;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status, Streaming};

/// The empty-handler baseline server.
#[derive(Parser)]
struct Options {
    /// The address to serve gRPC on.
    #[arg(long, default_value = "127.0.0.1:50052")]
    listen: std::net::SocketAddr,
    /// Reply Arbiter's bytes to the load workloads (built once, cloned per reply)
    /// instead of empty messages.
    #[arg(long)]
    same_bytes: bool,
}

/// Handlers that answer every call with an empty reply, or with `same`'s replies.
struct Empty {
    same: Option<Same>,
}

/// One workload's replies in stock types, built on first use.
type Built<R> = OnceCell<Arc<Vec<R>>>;

/// The same-bytes replies of every load workload.
#[derive(Default)]
struct Same {
    check_othello_move: Built<CheckOthelloMoveResponse>,
    list_othello_moves: Built<ListOthelloMovesResponse>,
    check_connect_four: [Built<CheckConnectFourResponse>; 2],
    judge_tic_tac_toe: Built<JudgeTicTacToeResponse>,
    check_gomoku_move: Built<CheckGomokuMoveResponse>,
    play_tic_tac_toe: Built<PlayTicTacToeResponse>,
    play_othello: Built<PlayOthelloResponse>,
    play_connect_four: Built<PlayConnectFourResponse>,
    play_gomoku: Built<PlayGomokuResponse>,
    check_chess_move: Built<stock::CheckChessMoveResponse>,
    list_chess_moves: Built<stock::ListChessMovesResponse>,
    play_chess: Built<stock::PlayChessResponse>,
    check_batch: [Built<CheckBatchResponse>; 8],
    play_many: [Built<PlayManyResponse>; 5],
}

/// The replies of the workload named `name` (of `requests.rs`), in stock types.
async fn build<R: Message + Default>(cell: &Built<R>, name: &str) -> Arc<Vec<R>> {
    cell.get_or_init(|| async {
        let call: LoadCall = requests::unary_workloads()
            .into_iter()
            .chain(requests::game_workloads())
            .chain(requests::batch_workloads())
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("no workload {name}"))
            .1;
        let replies = replies::in_process(&call).await;
        Arc::new(
            replies
                .iter()
                .map(|bytes| R::decode(bytes.as_slice()).expect("Arbiter's reply decodes"))
                .collect(),
        )
    })
    .await
    .clone()
}

/// The one reply of a unary workload, cloned.
async fn one<R: Message + Default + Clone>(
    cell: &Built<R>,
    name: &str,
) -> Result<Response<R>, Status> {
    Ok(Response::new(build(cell, name).await[0].clone()))
}

/// Answers the i-th message of `inbound` with `replies[i]` (cycling), cloned; `first`
/// is the stream's first message, already read.
fn cloned<Req: Send + 'static, R: Clone + Send + Sync + 'static>(
    first: Req,
    inbound: Streaming<Req>,
    replies: Arc<Vec<R>>,
) -> Replies<R> {
    let mut i = 0;
    let messages = stream::once(async move { Ok(first) }).chain(inbound);
    Box::pin(messages.map(move |message| {
        message.map(|_| {
            let reply = replies[i % replies.len()].clone();
            i += 1;
            reply
        })
    }))
}

/// A same-bytes stream: its replies chosen by `pick` from its first message.
async fn same_stream<'a, Req, R>(
    request: Request<Streaming<Req>>,
    pick: impl FnOnce(&Req) -> (&'a Built<R>, &'static str),
) -> Result<Response<Replies<R>>, Status>
where
    Req: Send + 'static,
    R: Message + Default + Clone + Send + Sync + 'static,
{
    let mut inbound = request.into_inner();
    let Some(first) = inbound.message().await? else {
        return Ok(Response::new(Box::pin(stream::empty())));
    };
    let (cell, name) = pick(&first);
    let replies = build(cell, name).await;
    Ok(Response::new(cloned(first, inbound, replies)))
}

/// The CheckConnectFour workload of a request, by its board's size.
fn connect_four_index(request: &CheckConnectFourRequest) -> usize {
    match &request.board {
        Some(board) if board.rows.len() > 50 => 1,
        _ => 0,
    }
}

const CHECK_CONNECT_FOUR: [&str; 2] = ["CheckConnectFour 6x7", "CheckConnectFour 100x100"];

/// A stream of replies, as the generated trait's default stubs type them (tonic's
/// `BoxStream`).
type Replies<R> = Pin<Box<dyn Stream<Item = Result<R, Status>> + Send + 'static>>;

/// One empty reply per message received.
fn empty_replies<Req: Send + 'static, R: Default + Send + 'static>(
    request: Request<Streaming<Req>>,
) -> Result<Response<Replies<R>>, Status> {
    let replies = request
        .into_inner()
        .map(|message| message.map(|_| R::default()));
    Ok(Response::new(Box::pin(replies)))
}

impl Empty {
    /// A unary call's reply: an empty message, or the same-bytes reply of the workload
    /// that `pick` names.
    async fn unary<R: Message + Default + Clone>(
        &self,
        pick: impl FnOnce(&Same) -> (&Built<R>, &'static str),
    ) -> Result<Response<R>, Status> {
        match &self.same {
            Some(same) => {
                let (cell, name) = pick(same);
                one(cell, name).await
            }
            None => Ok(Response::new(R::default())),
        }
    }

    /// A stream's replies: an empty message per message received, or the same-bytes
    /// replies of the workload that `pick` names from the stream's first message.
    async fn stream<'s, Req, R>(
        &'s self,
        request: Request<Streaming<Req>>,
        pick: impl FnOnce(&'s Same, &Req) -> (&'s Built<R>, &'static str),
    ) -> Result<Response<Replies<R>>, Status>
    where
        Req: Send + 'static,
        R: Message + Default + Clone + Send + Sync + 'static,
    {
        match &self.same {
            Some(same) => same_stream(request, |first| pick(same, first)).await,
            None => empty_replies(request),
        }
    }
}

#[tonic::async_trait]
impl ArbiterService for Empty {
    async fn check_othello_move(
        &self,
        _: Request<CheckOthelloMoveRequest>,
    ) -> Result<Response<CheckOthelloMoveResponse>, Status> {
        self.unary(|same| (&same.check_othello_move, "CheckOthelloMove 8x8"))
            .await
    }

    async fn list_othello_moves(
        &self,
        _: Request<ListOthelloMovesRequest>,
    ) -> Result<Response<ListOthelloMovesResponse>, Status> {
        self.unary(|same| (&same.list_othello_moves, "ListOthelloMoves 8x8"))
            .await
    }

    async fn check_connect_four(
        &self,
        request: Request<CheckConnectFourRequest>,
    ) -> Result<Response<CheckConnectFourResponse>, Status> {
        let i = connect_four_index(request.get_ref());
        self.unary(|same| (&same.check_connect_four[i], CHECK_CONNECT_FOUR[i]))
            .await
    }

    async fn judge_tic_tac_toe(
        &self,
        _: Request<JudgeTicTacToeRequest>,
    ) -> Result<Response<JudgeTicTacToeResponse>, Status> {
        self.unary(|same| (&same.judge_tic_tac_toe, "JudgeTicTacToe 9 moves"))
            .await
    }

    async fn check_gomoku_move(
        &self,
        _: Request<CheckGomokuMoveRequest>,
    ) -> Result<Response<CheckGomokuMoveResponse>, Status> {
        self.unary(|same| (&same.check_gomoku_move, "CheckGomokuMove 15x15"))
            .await
    }

    async fn play_tic_tac_toe(
        &self,
        request: Request<Streaming<PlayTicTacToeRequest>>,
    ) -> Result<Response<Replies<PlayTicTacToeResponse>>, Status> {
        self.stream(request, |same, _| {
            (&same.play_tic_tac_toe, "PlayTicTacToe game of 9 moves")
        })
        .await
    }

    async fn play_othello(
        &self,
        request: Request<Streaming<PlayOthelloRequest>>,
    ) -> Result<Response<Replies<PlayOthelloResponse>>, Status> {
        self.stream(request, |same, _| {
            (&same.play_othello, "PlayOthello whole game")
        })
        .await
    }

    async fn play_connect_four(
        &self,
        request: Request<Streaming<PlayConnectFourRequest>>,
    ) -> Result<Response<Replies<PlayConnectFourResponse>>, Status> {
        self.stream(request, |same, _| {
            (&same.play_connect_four, "PlayConnectFour game on 6x7")
        })
        .await
    }

    async fn play_gomoku(
        &self,
        request: Request<Streaming<PlayGomokuRequest>>,
    ) -> Result<Response<Replies<PlayGomokuResponse>>, Status> {
        self.stream(request, |same, _| {
            (&same.play_gomoku, "PlayGomoku game on 15x15")
        })
        .await
    }

    async fn check_chess_move(
        &self,
        _: Request<stock::CheckChessMoveRequest>,
    ) -> Result<Response<stock::CheckChessMoveResponse>, Status> {
        self.unary(|same| (&same.check_chess_move, "CheckChessMove middlegame SAN"))
            .await
    }

    async fn list_chess_moves(
        &self,
        _: Request<stock::ListChessMovesRequest>,
    ) -> Result<Response<stock::ListChessMovesResponse>, Status> {
        self.unary(|same| (&same.list_chess_moves, "ListChessMoves middlegame"))
            .await
    }

    async fn play_chess(
        &self,
        request: Request<Streaming<stock::PlayChessRequest>>,
    ) -> Result<Response<Replies<stock::PlayChessResponse>>, Status> {
        self.stream(request, |same, _| {
            (&same.play_chess, "PlayChess game of 80 plies")
        })
        .await
    }

    async fn check_batch(
        &self,
        request: Request<CheckBatchRequest>,
    ) -> Result<Response<CheckBatchResponse>, Status> {
        const NAMES: [&str; 8] = [
            "CheckBatch 1000 CheckOthelloMove 8x8",
            "CheckBatch 1000 ListOthelloMoves 8x8",
            "CheckBatch 1000 CheckConnectFour 6x7",
            "CheckBatch 50 CheckConnectFour 100x100",
            "CheckBatch 1000 JudgeTicTacToe 9 moves",
            "CheckBatch 1000 CheckGomokuMove 15x15",
            "CheckBatch 1000 CheckChessMove middlegame SAN",
            "CheckBatch 1000 ListChessMoves middlegame",
        ];
        let first = request
            .get_ref()
            .checks
            .first()
            .and_then(|c| c.check.as_ref());
        let i = match first {
            Some(check::Check::ListOthelloMoves(_)) => 1,
            Some(check::Check::CheckConnectFour(r)) => 2 + connect_four_index(r),
            Some(check::Check::JudgeTicTacToe(_)) => 4,
            Some(check::Check::CheckGomokuMove(_)) => 5,
            Some(check::Check::CheckChessMove(_)) => 6,
            Some(check::Check::ListChessMoves(_)) => 7,
            _ => 0,
        };
        self.unary(|same| (&same.check_batch[i], NAMES[i])).await
    }

    async fn play_many(
        &self,
        request: Request<Streaming<PlayManyRequest>>,
    ) -> Result<Response<Replies<PlayManyResponse>>, Status> {
        self.stream(request, |same, first: &PlayManyRequest| {
            match first.actions.first().and_then(|a| a.action.as_ref()) {
                Some(game_action::Action::Othello(_)) => {
                    (&same.play_many[1], "PlayMany 1000 Othello whole games")
                }
                Some(game_action::Action::ConnectFour(_)) => {
                    (&same.play_many[2], "PlayMany 1000 ConnectFour games on 6x7")
                }
                Some(game_action::Action::Gomoku(_)) => {
                    (&same.play_many[3], "PlayMany 1000 Gomoku games on 15x15")
                }
                Some(game_action::Action::Chess(_)) => {
                    (&same.play_many[4], "PlayMany 1000 chess games of 80 plies")
                }
                _ => (
                    &same.play_many[0],
                    "PlayMany 1000 TicTacToe games of 9 moves",
                ),
            }
        })
        .await
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    let listener = TcpListener::bind(options.listen).await?;
    println!("baseline listening on {}", listener.local_addr()?);
    let same = options.same_bytes.then(Same::default);
    tonic::transport::Server::builder()
        .add_service(ArbiterServiceServer::new(Empty { same }))
        .serve_with_incoming(TcpIncoming::from(listener).with_nodelay(Some(true)))
        .await?;
    Ok(())
}
