//! Every registered live game, for the tests that hold for every game: each test is a
//! [`GameTest`], run for every game [`arbiter::visit_live_games`] hands out, and plays a
//! game through its [`arbiter::games::Fixture`] (its setups, its next messages, what its
//! replies say), so that a game registered is a game covered, with no line here.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;

use arbiter::{visit_live_games, LiveGame, LiveGameVisitor};
use futures_util::future::BoxFuture;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;
use tonic::codec::Streaming;
use tonic::transport::Channel;
use tonic::{Request, Status};
use tonic_prost::ProstCodec;

/// A test that holds for every live game.
pub trait GameTest {
    /// Runs the test on the game `G`.
    fn run<G: LiveGame>(&self) -> impl Future<Output = ()>;
}

/// One game's run of a test, named by the game's RPC.
type Run<'a> = (&'static str, Pin<Box<dyn Future<Output = ()> + 'a>>);

/// Runs `test` on every registered live game in turn, saying which as it goes; fails
/// if none is registered.
pub async fn for_each_game(test: &impl GameTest) {
    struct Collect<'a, T> {
        test: &'a T,
        runs: Vec<Run<'a>>,
    }
    impl<T: GameTest> LiveGameVisitor for Collect<'_, T> {
        fn visit<G: LiveGame>(&mut self) {
            self.runs.push((G::RPC, Box::pin(self.test.run::<G>())));
        }
    }
    let mut collect = Collect {
        test,
        runs: Vec::new(),
    };
    visit_live_games(&mut collect);
    assert!(!collect.runs.is_empty(), "no live game is registered");
    for (rpc, run) in collect.runs {
        println!("{rpc}");
        run.await;
    }
}

/// The RPCs of every registered live game, in the registration's order.
pub fn live_rpcs() -> Vec<&'static str> {
    struct Names(Vec<&'static str>);
    impl LiveGameVisitor for Names {
        fn visit<G: LiveGame>(&mut self) {
            self.0.push(G::RPC);
        }
    }
    let mut names = Names(Vec::new());
    visit_live_games(&mut names);
    names.0
}

/// The path of the live game `G`'s RPC.
pub fn path<G: LiveGame>() -> String {
    format!("/arbiter.v1.ArbiterService/{}", G::RPC)
}

/// Opens a stream of the live game `G` on `channel`, by its RPC's path, sending
/// `requests`: its replies, or the call's status.
pub async fn open<G: LiveGame>(
    channel: &Channel,
    requests: impl Stream<Item = G::Request> + Send + 'static,
) -> Result<Streaming<G::Response>, Status> {
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready()
        .await
        .map_err(|error| Status::unavailable(error.to_string()))?;
    let path = path::<G>().parse().expect("an RPC's path");
    grpc.streaming(
        Request::new(requests),
        path,
        ProstCodec::<G::Request, G::Response>::default(),
    )
    .await
    .map(tonic::Response::into_inner)
}

/// What keeps a live stream open while it is held: its sender and its replies.
pub type Held = Box<dyn Any + Send>;

/// A stream of `G` opened over the wire on `channel` and sent its fixture's setup (a game
/// counts as live from its first message), its reply read: what keeps it open, or the
/// status refusing it.
pub fn hold_open<G: LiveGame>(channel: Channel) -> BoxFuture<'static, Result<Held, Status>> {
    Box::pin(async move {
        let (sender, requests) = tokio::sync::mpsc::channel::<G::Request>(1);
        sender
            .send(G::setup(None, None, &[]))
            .await
            .map_err(|_| Status::internal("the request stream closed"))?;
        let mut replies = open::<G>(&channel, ReceiverStream::new(requests)).await?;
        match replies.message().await? {
            Some(_) => Ok(Box::new((sender, replies)) as Held),
            None => Err(Status::internal("the stream ended without a reply")),
        }
    })
}

/// A stream of `G` opened over the wire on `channel` and sent nothing: what keeps it
/// open, or the status refusing it.
pub fn hold_silent<G: LiveGame>(channel: Channel) -> BoxFuture<'static, Result<Held, Status>> {
    Box::pin(async move {
        let (sender, requests) = tokio::sync::mpsc::channel::<G::Request>(1);
        let replies = open::<G>(&channel, ReceiverStream::new(requests)).await?;
        Ok(Box::new((sender, replies)) as Held)
    })
}
