//! Clients that never read their replies cannot hold live games past the idle timeout or
//! the game lifetime: a raw HTTP/2 client advertises a zero flow-control window (so the
//! server can send no reply and the transport stops polling the game), answers PINGs,
//! and keeps its streams open.

mod common;

use std::time::Duration;

use arbiter::proto::game_action::Action;
use arbiter::proto::{GameAction, PlayManyRequest, PlayTicTacToeRequest};
use bytes::Bytes;
use common::TestServer;
use prost::Message;
use tokio::net::TcpStream;
use tonic::codegen::http;
use tonic::Code;

/// A gRPC message frame: uncompressed flag, big-endian length, the message.
fn frame(message: &impl Message) -> Bytes {
    let body = message.encode_to_vec();
    let mut framed = vec![0];
    framed.extend_from_slice(&(body.len() as u32).to_be_bytes());
    framed.extend_from_slice(&body);
    framed.into()
}

/// A connection that reads nothing: its streams' windows are zero.
struct StalledClient {
    streams: Vec<(h2::client::ResponseFuture, h2::SendStream<Bytes>)>,
    next: Bytes,
    _connection: tokio::task::JoinHandle<()>,
}

impl StalledClient {
    /// Opens `games` PlayTicTacToe streams and sends one move on each.
    async fn open(server: &TestServer, games: usize) -> Self {
        let first = frame(&PlayTicTacToeRequest {
            row: 1,
            col: 1,
            setup: None,
        });
        let next = frame(&PlayTicTacToeRequest {
            row: 9,
            col: 9,
            setup: None,
        });
        Self::open_streams(server, games, "PlayTicTacToe", first, next).await
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
        .play_tic_tac_toe(tokio_stream::iter([PlayTicTacToeRequest {
            row: 0,
            col: 0,
            setup: None,
        }]))
        .await
        .unwrap()
        .into_inner();
    let reply = replies.message().await.unwrap().unwrap();
    assert_eq!(reply.moves_played, 1);
}

#[tokio::test]
async fn silent_games_of_a_client_that_never_reads_are_freed_after_the_idle_timeout() {
    let server = TestServer::start_with(common::options(&[
        "--stream-idle-timeout",
        "500ms",
        "--max-live-games",
        "20",
    ]))
    .await;
    let stalled = StalledClient::open(&server, 20).await;
    server.wait_for_live_games(20).await;
    let refused = server
        .client()
        .await
        .play_tic_tac_toe(tokio_stream::iter([PlayTicTacToeRequest {
            row: 0,
            col: 0,
            setup: None,
        }]))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::ResourceExhausted);

    // Nothing polls these games' streams, yet they end with the idle timeout.
    server.wait_for_live_games(0).await;
    a_new_game_is_served(&server).await;
    drop(stalled);
}

#[tokio::test]
async fn busy_games_of_a_client_that_never_reads_are_freed_after_the_game_lifetime() {
    let server = TestServer::start_with(common::options(&[
        "--max-game-duration",
        "2s",
        "--max-live-games",
        "10",
    ]))
    .await;
    let mut stalled = StalledClient::open(&server, 10).await;
    server.wait_for_live_games(10).await;
    // The client keeps sending moves (so the idle timeout never applies) and never reads.
    let started = tokio::time::Instant::now();
    while server.live_games.count() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "the games outlived their lifetime"
        );
        stalled.send_moves();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "games ended after {:?}, before their lifetime",
        started.elapsed()
    );
    a_new_game_is_served(&server).await;
}

#[tokio::test]
async fn a_game_that_outlives_its_lifetime_ends_with_deadline_exceeded() {
    let server = TestServer::start_with(common::options(&["--max-game-duration", "300ms"])).await;
    let mut client = server.client().await;
    let (sender, outgoing) = tokio::sync::mpsc::channel(1);
    let mut replies = client
        .play_tic_tac_toe(tokio_stream::wrappers::ReceiverStream::new(outgoing))
        .await
        .unwrap()
        .into_inner();
    let status = loop {
        // Refused moves keep the game busy without ending it.
        let _ = sender
            .send(PlayTicTacToeRequest {
                row: 5,
                col: 5,
                setup: None,
            })
            .await;
        match replies.message().await {
            Ok(reply) => assert!(reply.is_some()),
            Err(status) => break status,
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(status.message().contains("lasted"), "{status:?}");
    server.wait_for_live_games(0).await;
}

/// A PlayMany message: a Tic-Tac-Toe move at (`row`, `col`) in each of games 0 to
/// `games` - 1 (the first starts them, a later one off the board is refused).
fn many_moves(games: u64, row: i32, col: i32) -> Bytes {
    frame(&PlayManyRequest {
        actions: (0..games)
            .map(|game| GameAction {
                game,
                action: Some(Action::TicTacToe(PlayTicTacToeRequest {
                    row,
                    col,
                    setup: None,
                })),
            })
            .collect(),
    })
}

/// Two PlayMany streams of 10 games each whose client never reads: all 20 games are
/// freed by the idle timeout like any stream's, and a new game is served. Fails against
/// a server whose reaper does not see PlayMany games.
#[tokio::test]
async fn silent_playmany_games_of_a_client_that_never_reads_are_freed_after_the_idle_timeout() {
    let server = TestServer::start_with(common::options(&[
        "--stream-idle-timeout",
        "500ms",
        "--max-live-games",
        "20",
    ]))
    .await;
    let stalled = StalledClient::open_streams(
        &server,
        2,
        "PlayMany",
        many_moves(10, 1, 1),
        many_moves(10, 9, 9),
    )
    .await;
    server.wait_for_live_games(20).await;
    server.wait_for_live_games(0).await;
    a_new_game_is_served(&server).await;
    drop(stalled);
}

/// A PlayMany stream of 10 games whose client keeps sending messages and never reads:
/// the server reads at most what its windows hold (the replies it cannot send stop it
/// reading), so the games are not kept alive by the messages, and the reaper frees them
/// at the game lifetime at the latest. Fails against a server that keeps them while
/// messages come.
#[tokio::test]
async fn busy_playmany_games_of_a_client_that_never_reads_are_freed() {
    let server = TestServer::start_with(common::options(&[
        "--max-game-duration",
        "2s",
        "--max-live-games",
        "10",
    ]))
    .await;
    let mut stalled = StalledClient::open_streams(
        &server,
        1,
        "PlayMany",
        many_moves(10, 1, 1),
        many_moves(10, 9, 9),
    )
    .await;
    server.wait_for_live_games(10).await;
    let started = tokio::time::Instant::now();
    while server.live_games.count() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "the games outlived their lifetime"
        );
        stalled.send_moves();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "games ended after {:?}, before their lifetime",
        started.elapsed()
    );
    a_new_game_is_served(&server).await;
}
