//! Clients that never read their replies cannot hold live games past the idle timeout or
//! the game lifetime: a raw HTTP/2 client advertises a zero flow-control window (so the
//! server can send no reply and the transport stops polling the game), answers PINGs,
//! and keeps its streams open.

mod common;

use std::time::Duration;

use arbiter::proto::PlayTicTacToeRequest;
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
    _connection: tokio::task::JoinHandle<()>,
}

impl StalledClient {
    /// Opens `games` PlayTicTacToe streams and sends one move on each.
    async fn open(server: &TestServer, games: usize) -> Self {
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
        let mut streams = Vec::new();
        for _ in 0..games {
            sender = sender.ready().await.unwrap();
            let request = http::Request::post(format!(
                "http://{}/arbiter.v1.ArbiterService/PlayTicTacToe",
                server.addr
            ))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .unwrap();
            let (response, mut send) = sender.send_request(request, false).unwrap();
            send.send_data(
                frame(&PlayTicTacToeRequest {
                    row: 1,
                    col: 1,
                    setup: None,
                }),
                false,
            )
            .unwrap();
            streams.push((response, send));
        }
        Self {
            streams,
            _connection: connection,
        }
    }

    /// Sends one more (refused) move on every stream, still reading nothing.
    fn send_moves(&mut self) {
        for (_, send) in &mut self.streams {
            let _ = send.send_data(
                frame(&PlayTicTacToeRequest {
                    row: 9,
                    col: 9,
                    setup: None,
                }),
                false,
            );
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
