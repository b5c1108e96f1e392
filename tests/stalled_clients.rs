//! Clients that never read their replies cannot hold live games past the idle timeout or
//! the game lifetime: a raw HTTP/2 client advertises a zero flow-control window (so the
//! server can send no reply and the transport stops polling the game), answers PINGs,
//! and keeps its streams open.

mod common;

use std::time::Duration;

use arbiter::proto::game_action::Action;
use arbiter::proto::{GameAction, PlayManyRequest};
use bytes::Bytes;
use common::messages::{grpc_frame, tic_tac_toe_move};
use common::status::assert_status;
use common::TestServer;
use tokio::net::TcpStream;
use tonic::codegen::http;
use tonic::Code;

/// The streams a [`StalledClient`] opens.
#[derive(Clone, Copy, Debug)]
enum Streams {
    /// This many PlayTicTacToe streams, a game on each.
    TicTacToe(usize),
    /// This many PlayMany streams, 10 Tic-Tac-Toe games on each.
    PlayMany(usize),
}

impl Streams {
    /// How many live games the streams hold.
    fn games(self) -> usize {
        match self {
            Self::TicTacToe(streams) => streams,
            Self::PlayMany(streams) => 10 * streams,
        }
    }
}

/// A connection that reads nothing: its streams' windows are zero.
struct StalledClient {
    streams: Vec<(h2::client::ResponseFuture, h2::SendStream<Bytes>)>,
    next: Bytes,
    _connection: tokio::task::JoinHandle<()>,
}

impl StalledClient {
    /// Opens `streams` and sends a first message on each (a move in every game), then
    /// waits until the server holds all their games.
    async fn open(server: &TestServer, streams: Streams) -> Self {
        let stalled = match streams {
            Streams::TicTacToe(count) => {
                let (first, next) = (tic_tac_toe_move(1, 1), tic_tac_toe_move(9, 9));
                Self::open_streams(
                    server,
                    count,
                    "PlayTicTacToe",
                    grpc_frame(&first),
                    grpc_frame(&next),
                )
                .await
            }
            Streams::PlayMany(count) => {
                let (first, next) = (many_moves(10, 1, 1), many_moves(10, 9, 9));
                Self::open_streams(server, count, "PlayMany", first, next).await
            }
        };
        server.wait_for_live_games(streams.games()).await;
        stalled
    }

    /// Opens `streams` streams of `method`, sends `first` on each, and `next` on each
    /// at every [`Self::send_moves`].
    async fn open_streams(
        server: &TestServer,
        streams: usize,
        method: &str,
        first: Bytes,
        next: Bytes,
    ) -> Self {
        let tcp = TcpStream::connect(server.addr).await.unwrap();
        let (mut sender, connection) = h2::client::Builder::new()
            .initial_window_size(0)
            .handshake::<_, Bytes>(tcp)
            .await
            .unwrap();
        // The connection task answers PINGs and SETTINGS; nothing reads the streams.
        let connection = tokio::spawn(async move {
            let _ = connection.await;
        });
        let mut opened = Vec::new();
        for _ in 0..streams {
            sender = sender.ready().await.unwrap();
            let request = http::Request::post(format!(
                "http://{}/arbiter.v1.ArbiterService/{method}",
                server.addr
            ))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .unwrap();
            let (response, mut send) = sender.send_request(request, false).unwrap();
            send.send_data(first.clone(), false).unwrap();
            opened.push((response, send));
        }
        Self {
            streams: opened,
            next,
            _connection: connection,
        }
    }

    /// Sends one more message (a refused move) on every stream, still reading nothing.
    fn send_moves(&mut self) {
        for (_, send) in &mut self.streams {
            let _ = send.send_data(self.next.clone(), false);
        }
    }
}

/// Opens one normal game with a tonic client and plays a move: proof that the server
/// has room for a new game.
async fn a_new_game_is_served(server: &TestServer) {
    let mut client = server.client().await;
    let mut replies = client
        .play_tic_tac_toe(tokio_stream::iter([tic_tac_toe_move(0, 0)]))
        .await
        .unwrap()
        .into_inner();
    let reply = replies.message().await.unwrap().unwrap();
    assert_eq!(reply.moves_played, 1);
}

/// A short idle timeout, and room for 20 games.
const IDLE_TIMEOUT: &str = "--stream-idle-timeout 500ms --max-live-games 20";

/// A game lifetime of 2 s, and room for 10 games.
const LIFETIME: &str = "--max-game-duration 2s --max-live-games 10";

/// Opens `streams`, 20 games in all, on a server of [`IDLE_TIMEOUT`] and sends nothing
/// more: while they hold every place a new game is refused; though nothing polls their
/// streams they end with the idle timeout, and then a new game is served.
async fn silent_games_are_freed_after_the_idle_timeout(streams: Streams) {
    let server = TestServer::start_with_flags(IDLE_TIMEOUT).await;
    let stalled = StalledClient::open(&server, streams).await;
    // A game counts from its first message, which is refused.
    let refused = server
        .client()
        .await
        .play_tic_tac_toe(tokio_stream::iter([tic_tac_toe_move(0, 0)]))
        .await
        .unwrap()
        .into_inner()
        .message()
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::ResourceExhausted, "{streams:?}");

    server.wait_for_live_games(0).await;
    a_new_game_is_served(&server).await;
    drop(stalled);
}

/// Opens `streams`, 10 games in all, on a server of [`LIFETIME`] and keeps sending moves
/// on every stream (so the idle timeout never applies) while never reading, until the
/// games are gone: they must end, and not before their lifetime; then a new game is
/// served.
///
/// Nothing here depends on how fast the machine is: the clock starts before the games
/// open, so a server that keeps to the lifetime frees them no sooner than 2 s after it
/// however slowly the test runs; the 60 s bound only keeps a server that never frees
/// them from hanging the test.
async fn busy_games_are_freed_after_the_game_lifetime(streams: Streams) {
    let server = TestServer::start_with_flags(LIFETIME).await;
    let before_opening = tokio::time::Instant::now();
    let mut stalled = StalledClient::open(&server, streams).await;
    while server.live_games.count() > 0 {
        assert!(
            before_opening.elapsed() < Duration::from_secs(60),
            "the games were never freed"
        );
        stalled.send_moves();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        before_opening.elapsed() >= Duration::from_secs(2),
        "games ended {:?} after they opened, before their lifetime of 2 s",
        before_opening.elapsed()
    );
    a_new_game_is_served(&server).await;
}

/// Runs `check` on each of `streams` in turn, each on a server of its own, naming the
/// streams of a check that fails.
async fn for_each<Fut>(streams: [Streams; 2], check: fn(Streams) -> Fut)
where
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    for streams in streams {
        if let Err(error) = tokio::spawn(check(streams)).await {
            panic!("{streams:?}: {error}");
        }
    }
}

/// Twenty PlayTicTacToe streams, then two PlayMany streams of 10 games each, whose
/// client never reads: all 20 games are freed by the idle timeout, and a new game is
/// served. Fails against a server whose reaper does not see PlayMany games.
#[tokio::test]
async fn silent_games_of_a_client_that_never_reads_are_freed_after_the_idle_timeout() {
    let streams = [Streams::TicTacToe(20), Streams::PlayMany(2)];
    for_each(streams, silent_games_are_freed_after_the_idle_timeout).await;
}

/// Ten PlayTicTacToe streams, then a PlayMany stream of 10 games, whose client keeps
/// sending messages and never reads: the server reads at most what its windows hold (the
/// replies it cannot send stop it reading), so the games are not kept alive by the
/// messages, and the reaper frees them at the game lifetime. Fails against a server that
/// keeps them while messages come.
#[tokio::test]
async fn busy_games_of_a_client_that_never_reads_are_freed_after_the_game_lifetime() {
    let streams = [Streams::TicTacToe(10), Streams::PlayMany(1)];
    for_each(streams, busy_games_are_freed_after_the_game_lifetime).await;
}

#[tokio::test]
async fn a_game_that_outlives_its_lifetime_ends_with_deadline_exceeded() {
    let server = TestServer::start_with_flags("--max-game-duration 300ms").await;
    let mut client = server.client().await;
    let (sender, outgoing) = tokio::sync::mpsc::channel(1);
    let mut replies = client
        .play_tic_tac_toe(tokio_stream::wrappers::ReceiverStream::new(outgoing))
        .await
        .unwrap()
        .into_inner();
    let status = loop {
        // Refused moves keep the game busy without ending it.
        let _ = sender.send(tic_tac_toe_move(5, 5)).await;
        match replies.message().await {
            Ok(reply) => assert!(reply.is_some()),
            Err(status) => break status,
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_status(&status, Code::DeadlineExceeded, "lasted");
    server.wait_for_live_games(0).await;
}

/// A PlayMany message: a Tic-Tac-Toe move at (`row`, `col`) in each of games 0 to
/// `games` - 1 (the first starts them, a later one off the board is refused).
fn many_moves(games: u64, row: i32, col: i32) -> Bytes {
    grpc_frame(&PlayManyRequest {
        actions: (0..games)
            .map(|game| GameAction {
                game,
                action: Some(Action::TicTacToe(tic_tac_toe_move(row, col))),
            })
            .collect(),
    })
}
