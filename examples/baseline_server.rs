//! The yardstick for the load benchmark: a bare tonic server for the same proto, built
//! with the same build settings as `arbiter`, whose handlers do no work at all and return
//! empty replies. It is tonic's default `Server` on a TCP listener with TCP_NODELAY and
//! nothing else: no layers (metrics, logging, limits), no HTTP/2 or TCP keepalive
//! settings, no health or reflection service, no graceful shutdown. So it measures
//! the transport alone, and no implementation of the service can beat it.
//!
//! Built and started by `benches/load.sh`; by hand:
//! `cargo run --release --example baseline_server -- --listen 127.0.0.1:50052`.

use std::pin::Pin;

/// The stubs as tonic-prost-build generates them, without Arbiter's hand-written
/// `Board` (see build.rs): the baseline decodes every row into a `String`, as a typical
/// tonic service does.
mod stock {
    #![allow(dead_code, missing_docs, clippy::all, clippy::pedantic)]
    include!(concat!(env!("OUT_DIR"), "/stock/arbiter.v1.rs"));
}

use clap::Parser;
use futures_util::{Stream, StreamExt};
use stock::arbiter_service_server::{ArbiterService, ArbiterServiceServer};
use stock::{
    CheckBatchRequest, CheckBatchResponse, CheckConnectFourRequest, CheckConnectFourResponse,
    CheckOthelloMoveRequest, CheckOthelloMoveResponse, JudgeTicTacToeRequest,
    JudgeTicTacToeResponse, ListOthelloMovesRequest, ListOthelloMovesResponse,
    PlayConnectFourRequest, PlayConnectFourResponse, PlayManyRequest, PlayManyResponse,
    PlayOthelloRequest, PlayOthelloResponse, PlayTicTacToeRequest, PlayTicTacToeResponse,
};
use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status, Streaming};

/// The empty-handler baseline server.
#[derive(Parser)]
struct Options {
    /// The address to serve gRPC on.
    #[arg(long, default_value = "127.0.0.1:50052")]
    listen: std::net::SocketAddr,
}

/// Handlers that answer every call with an empty reply.
struct Empty;

type Replies<R> = Pin<Box<dyn Stream<Item = Result<R, Status>> + Send>>;

/// One empty reply per message received.
fn empty_replies<Req: Send + 'static, R: Default + Send + 'static>(
    request: Request<Streaming<Req>>,
) -> Result<Response<Replies<R>>, Status> {
    let replies = request
        .into_inner()
        .map(|message| message.map(|_| R::default()));
    Ok(Response::new(Box::pin(replies)))
}

#[tonic::async_trait]
impl ArbiterService for Empty {
    async fn check_othello_move(
        &self,
        _: Request<CheckOthelloMoveRequest>,
    ) -> Result<Response<CheckOthelloMoveResponse>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn list_othello_moves(
        &self,
        _: Request<ListOthelloMovesRequest>,
    ) -> Result<Response<ListOthelloMovesResponse>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn check_connect_four(
        &self,
        _: Request<CheckConnectFourRequest>,
    ) -> Result<Response<CheckConnectFourResponse>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn judge_tic_tac_toe(
        &self,
        _: Request<JudgeTicTacToeRequest>,
    ) -> Result<Response<JudgeTicTacToeResponse>, Status> {
        Ok(Response::new(Default::default()))
    }

    type PlayTicTacToeStream = Replies<PlayTicTacToeResponse>;

    async fn play_tic_tac_toe(
        &self,
        request: Request<Streaming<PlayTicTacToeRequest>>,
    ) -> Result<Response<Self::PlayTicTacToeStream>, Status> {
        empty_replies(request)
    }

    type PlayOthelloStream = Replies<PlayOthelloResponse>;

    async fn play_othello(
        &self,
        request: Request<Streaming<PlayOthelloRequest>>,
    ) -> Result<Response<Self::PlayOthelloStream>, Status> {
        empty_replies(request)
    }

    type PlayConnectFourStream = Replies<PlayConnectFourResponse>;

    async fn play_connect_four(
        &self,
        request: Request<Streaming<PlayConnectFourRequest>>,
    ) -> Result<Response<Self::PlayConnectFourStream>, Status> {
        empty_replies(request)
    }

    async fn check_batch(
        &self,
        _: Request<CheckBatchRequest>,
    ) -> Result<Response<CheckBatchResponse>, Status> {
        Ok(Response::new(Default::default()))
    }

    type PlayManyStream = Replies<PlayManyResponse>;

    async fn play_many(
        &self,
        request: Request<Streaming<PlayManyRequest>>,
    ) -> Result<Response<Self::PlayManyStream>, Status> {
        empty_replies(request)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    let listener = TcpListener::bind(options.listen).await?;
    println!("baseline listening on {}", listener.local_addr()?);
    tonic::transport::Server::builder()
        .add_service(ArbiterServiceServer::new(Empty))
        .serve_with_incoming(TcpIncoming::from(listener).with_nodelay(Some(true)))
        .await?;
    Ok(())
}
