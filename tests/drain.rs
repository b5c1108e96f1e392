//! The shutdown drain: after the stop signal, health says NOT_SERVING at once, yet a new
//! connection is still accepted and served for `--shutdown-drain`; only then is the
//! listener closed, while calls already in flight carry on through the grace period.

mod common;

use std::time::Duration;

use arbiter::proto::JudgeTicTacToeRequest;
use common::messages::{live_tic_tac_toe, tic_tac_toe_move};
use common::TestServer;
use tokio::time::Instant;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{health_client::HealthClient, HealthCheckRequest};

const DRAIN: Duration = Duration::from_secs(3);

async fn health(channel: Channel, service: &str) -> ServingStatus {
    HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: service.into(),
        })
        .await
        .unwrap()
        .into_inner()
        .status()
}

#[tokio::test]
async fn new_connections_are_served_during_the_drain_and_refused_after_it() {
    let mut server = TestServer::start_with_flags("--shutdown-drain 3s --shutdown-grace 10s").await;
    let before = server.channel().await;
    // A game open before the stop keeps the server in its grace period after the drain.
    let mut client =
        arbiter::proto::arbiter_service_client::ArbiterServiceClient::new(before.clone());
    let (moves, mut replies) = live_tic_tac_toe(&mut client).await;

    server.begin_shutdown();
    let stopped = Instant::now();
    // Health turns NOT_SERVING as soon as the stop is seen, for the service and the server.
    let deadline = stopped + Duration::from_secs(1);
    while health(before.clone(), "arbiter.v1.ArbiterService").await != ServingStatus::NotServing {
        assert!(
            Instant::now() < deadline,
            "health still SERVING after the stop"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(health(before.clone(), "").await, ServingStatus::NotServing);

    // During the drain: a brand new connection is accepted and a unary call on it is
    // answered, and its health check says NOT_SERVING.
    let fresh = Endpoint::from_shared(format!("http://{}", server.addr))
        .unwrap()
        .connect()
        .await
        .expect("a new connection during the drain");
    let reply = arbiter::proto::arbiter_service_client::ArbiterServiceClient::new(fresh.clone())
        .judge_tic_tac_toe(JudgeTicTacToeRequest { moves: vec![] })
        .await
        .expect("a call on a new connection during the drain");
    assert_eq!(reply.into_inner().moves_played, 0);
    assert_eq!(
        health(fresh, "arbiter.v1.ArbiterService").await,
        ServingStatus::NotServing
    );
    assert!(
        stopped.elapsed() < DRAIN,
        "the checks above took {:?}, longer than the drain: the test proves nothing",
        stopped.elapsed()
    );

    // After the drain: the listener is closed, so connecting is refused (polled, so that
    // a slow machine does not fail the test: only the outcome matters here)...
    tokio::time::sleep_until(stopped + DRAIN).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match tokio::net::TcpStream::connect(server.addr).await {
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionRefused => break,
            other => assert!(
                Instant::now() < deadline,
                "connections still not refused 5 s after the drain: {other:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // ... while the game in flight goes on: the server is in its grace period, not gone.
    moves.send(tic_tac_toe_move(0, 0)).await.unwrap();
    assert_eq!(replies.message().await.unwrap().unwrap().moves_played, 2);
    drop(moves);
    while replies.message().await.unwrap().is_some() {}
    drop((replies, client, before));
    server.shutdown().await.unwrap();
}

/// What ends each kind of single-game stream at shutdown, once the grace is over:
/// UNAVAILABLE with the one message that tells a client to resume elsewhere, so that it
/// can tell a drain from a fault. The games are live (a move applied on each) and the
/// streams open until the server ends them. Fails against a server that says anything
/// else, or ends them with another code.
/// The status that ends `replies`, which must come within 10 s.
async fn end_within_10s<T: std::fmt::Debug>(replies: &mut tonic::Streaming<T>) -> tonic::Status {
    tokio::time::timeout(Duration::from_secs(10), replies.message())
        .await
        .expect("the stream did not end within 10 s")
        .unwrap_err()
}

#[tokio::test]
async fn single_game_streams_at_shutdown_are_told_how_to_resume() {
    use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
    use arbiter::proto::{
        play_connect_four_request, play_othello_request, Cell, PlayConnectFourRequest,
        PlayOthelloRequest,
    };
    use common::messages::open_stream;

    const RESUME: &str = "server shutting down: resume the game with a setup and its history";
    let mut server =
        TestServer::start_with_flags("--shutdown-drain 0s --shutdown-grace 200ms").await;
    let mut client = ArbiterServiceClient::new(server.channel().await);
    let (tic_tac_toe, mut tic_tac_toe_replies) = live_tic_tac_toe(&mut client).await;
    let (othello, mut othello_replies) = open_stream(|s| client.play_othello(s)).await;
    let first = PlayOthelloRequest {
        action: Some(play_othello_request::Action::Move(Cell { row: 2, col: 3 })),
    };
    othello.send(first).await.unwrap();
    let reply = othello_replies.message().await.unwrap().unwrap();
    assert_eq!(reply.moves_played, 1);
    let (connect_four, mut connect_four_replies) =
        open_stream(|s| client.play_connect_four(s)).await;
    let first = PlayConnectFourRequest {
        action: Some(play_connect_four_request::Action::Drop(3)),
    };
    connect_four.send(first).await.unwrap();
    let reply = connect_four_replies.message().await.unwrap().unwrap();
    assert_eq!(reply.moves_played, 1);
    server.wait_for_live_games(3).await;

    server.begin_shutdown();
    let statuses = [
        (
            "PlayTicTacToe",
            end_within_10s(&mut tic_tac_toe_replies).await,
        ),
        ("PlayOthello", end_within_10s(&mut othello_replies).await),
        (
            "PlayConnectFour",
            end_within_10s(&mut connect_four_replies).await,
        ),
    ];
    for (rpc, status) in statuses {
        assert_eq!(status.code(), tonic::Code::Unavailable, "{rpc}: {status:?}");
        assert_eq!(status.message(), RESUME, "{rpc}");
    }
    server.wait_for_live_games(0).await;
    drop((tic_tac_toe, othello, connect_four));
}
