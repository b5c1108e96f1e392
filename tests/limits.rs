//! Limits and overload, through a real client: request size, live games, calls in flight.

mod common;

use arbiter::proto::{Board, CheckConnectFourRequest, PlayTicTacToeRequest, PlayTicTacToeResponse};
use common::status::assert_status;
use common::TestServer;
use tonic::codegen::http;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::{Code, Request};

fn big_board(side: usize) -> CheckConnectFourRequest {
    CheckConnectFourRequest {
        board: Some(Board::from_rows(vec!["1".repeat(side); side])),
        row: 0,
        col: 0,
        player: 1,
        run_length: 0,
    }
}

#[tokio::test]
async fn a_request_over_the_size_limit_is_refused_with_resource_exhausted() {
    let server = TestServer::start_with_flags("--max-request-bytes 4096").await;
    let mut client = server.client().await;

    // 100x100 is about 10 KB: over this server's 4 KiB limit.
    let status = client.check_connect_four(big_board(100)).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    let bytes = prost::Message::encoded_len(&big_board(100));
    assert_eq!(
        status.message(),
        format!(
            "the request is {bytes} bytes; the server accepts at most 4096 \
             (--max-request-bytes)"
        )
    );

    // The connection stays usable, and requests under the limit are answered.
    let reply = client.check_connect_four(big_board(20)).await.unwrap();
    assert!(reply.into_inner().wins);
}

#[tokio::test]
async fn the_default_size_limit_lets_the_largest_board_through() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    assert!(
        client
            .check_connect_four(big_board(100))
            .await
            .unwrap()
            .into_inner()
            .wins
    );
}

/// A live-game move carrying an unknown field, as a newer client might send: the padding
/// makes it as large as a test needs.
#[derive(Clone, PartialEq, prost::Message)]
struct PaddedMove {
    #[prost(int32, tag = "1")]
    row: i32,
    #[prost(int32, tag = "2")]
    col: i32,
    #[prost(bytes = "vec", tag = "99")]
    padding: Vec<u8>,
}

#[tokio::test]
async fn an_oversized_move_ends_the_stream_with_resource_exhausted() {
    let server = TestServer::start_with_flags("--max-request-bytes 4096").await;
    let mut grpc = tonic::client::Grpc::new(server.channel().await);
    grpc.ready().await.unwrap();
    let moves = vec![
        // Unknown fields are skipped: this move is applied.
        PaddedMove {
            row: 1,
            col: 1,
            padding: vec![7; 100],
        },
        PaddedMove {
            row: 0,
            col: 0,
            padding: vec![7; 10_000],
        },
    ];
    let codec = tonic_prost::ProstCodec::<PaddedMove, PlayTicTacToeResponse>::default();
    let mut replies = grpc
        .streaming(
            Request::new(tokio_stream::iter(moves.clone())),
            PathAndQuery::from_static("/arbiter.v1.ArbiterService/PlayTicTacToe"),
            codec,
        )
        .await
        .unwrap()
        .into_inner();
    let first = replies.message().await.unwrap().unwrap();
    assert_eq!((first.moves_played, first.rejected.as_str()), (1, ""));
    let status = replies.message().await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    let bytes = prost::Message::encoded_len(&moves[1]);
    assert_eq!(
        status.message(),
        format!(
            "the request is {bytes} bytes; the server accepts at most 4096 \
             (--max-request-bytes)"
        )
    );
    server.wait_for_live_games(0).await;
}

type Moves = tokio::sync::mpsc::Sender<PlayTicTacToeRequest>;
type Opened = Result<tonic::Response<tonic::Streaming<PlayTicTacToeResponse>>, tonic::Status>;

/// Opens a live game and returns its move sender and the call's outcome.
async fn open(
    client: &mut arbiter::proto::arbiter_service_client::ArbiterServiceClient<
        tonic::transport::Channel,
    >,
) -> (Moves, Opened) {
    let (moves, outgoing) = tokio::sync::mpsc::channel(1);
    let call = client
        .play_tic_tac_toe(tokio_stream::wrappers::ReceiverStream::new(outgoing))
        .await;
    (moves, call)
}

#[tokio::test]
async fn live_games_beyond_the_limit_are_refused() {
    let server = TestServer::start_with_flags("--max-live-games 2").await;
    let mut client = server.client().await;
    let (first_moves, first) = open(&mut client).await;
    let (_second_moves, second) = open(&mut client).await;
    assert!(first.is_ok() && second.is_ok());
    server.wait_for_live_games(2).await;

    let (_third_moves, third) = open(&mut client).await;
    assert_status(
        &third.unwrap_err(),
        Code::ResourceExhausted,
        "limit of 2 live games",
    );

    // One game ends: there is room again.
    drop(first_moves);
    drop(first);
    server.wait_for_live_games(1).await;
    let (_fourth_moves, fourth) = open(&mut client).await;
    assert!(fourth.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_beyond_the_in_flight_limit_are_refused_at_once() {
    let server = TestServer::start_with_flags("--max-in-flight 1").await;
    let clients = server.clients(4).await;
    // Bursts of concurrent calls against a limit of one: every call is either answered
    // or refused with RESOURCE_EXHAUSTED at once, and some are refused.
    let (mut answered, mut refused) = (0, 0);
    for _ in 0..20 {
        let calls: Vec<_> = (0..200)
            .map(|i| {
                let mut client = clients[i % clients.len()].clone();
                tokio::spawn(async move { client.check_connect_four(big_board(100)).await })
            })
            .collect();
        for call in calls {
            match call.await.unwrap() {
                Ok(reply) => {
                    assert!(reply.into_inner().wins);
                    answered += 1;
                }
                Err(status) => {
                    let limit = "limit of 1 calls in flight";
                    assert_status(&status, Code::ResourceExhausted, limit);
                    refused += 1;
                }
            }
        }
        if refused > 0 && answered > 0 {
            break;
        }
    }
    assert!(answered > 0, "no call was answered");
    assert!(refused > 0, "no call was refused");
}

#[tokio::test]
async fn connections_are_closed_after_their_age_and_clients_reconnect() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let server =
        TestServer::start_with_flags("--max-connection-age 300ms --max-connection-age-grace 1s")
            .await;
    // A connector that counts the connections the client opens.
    let opened = Arc::new(AtomicUsize::new(0));
    let counter = opened.clone();
    let addr = server.addr;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_with_connector(tower::service_fn(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move {
                let stream = tokio::net::TcpStream::connect(addr).await?;
                Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(stream))
            }
        }))
        .await
        .unwrap();
    let mut client = arbiter::proto::arbiter_service_client::ArbiterServiceClient::new(channel);
    let ask = || arbiter::proto::JudgeTicTacToeRequest { moves: vec![] };
    client.judge_tic_tac_toe(ask()).await.unwrap();
    assert_eq!(opened.load(Ordering::SeqCst), 1);

    // Past the age the server says GOAWAY and closes; the next calls still succeed, on
    // a new connection.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    for _ in 0..3 {
        let mut attempt = 0;
        loop {
            match client.judge_tic_tac_toe(ask()).await {
                Ok(_) => break,
                // A call racing the close may see UNAVAILABLE once; clients retry it.
                Err(status) if status.code() == Code::Unavailable && attempt < 3 => attempt += 1,
                Err(status) => panic!("{status:?}"),
            }
        }
    }
    assert!(
        opened.load(Ordering::SeqCst) >= 2,
        "the client never reconnected"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_opens_never_pass_the_live_game_limit() {
    let server = TestServer::start_with_flags("--max-live-games 5").await;
    let clients = server.clients(4).await;
    let opens: Vec<_> = (0..60)
        .map(|i| {
            let mut client = clients[i % clients.len()].clone();
            tokio::spawn(async move { open(&mut client).await })
        })
        .collect();
    let mut kept = Vec::new();
    for opened in opens {
        let (moves, call) = opened.await.unwrap();
        match call {
            Ok(replies) => kept.push((moves, replies)),
            Err(status) => assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}"),
        }
    }
    assert_eq!(kept.len(), 5, "games opened past the limit");
    assert_eq!(server.live_games.count(), 5);
}

/// A client that sends a unary call's headers and never its body holds the server's only
/// in-flight place until `--request-timeout`, not forever: the stalled call then ends with
/// CANCELLED "Timeout expired" and other calls are answered again. (A server without the
/// deadline keeps refusing them.)
#[tokio::test]
async fn a_unary_call_whose_body_never_comes_ends_at_the_request_timeout() {
    let server = TestServer::start_with_flags("--max-in-flight 1 --request-timeout 500ms").await;
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let (sender, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut sender = sender.ready().await.unwrap();
    let request = http::Request::post(format!(
        "http://{}/arbiter.v1.ArbiterService/CheckConnectFour",
        server.addr
    ))
    .header("content-type", "application/grpc")
    .header("te", "trailers")
    .body(())
    .unwrap();
    let started = std::time::Instant::now();
    // Headers only; the body stream stays open and empty.
    let (stalled, _body) = sender.send_request(request, false).unwrap();

    // While it waits, it holds the only place.
    let mut client = server.client().await;
    let refused = loop {
        match client.check_connect_four(big_board(10)).await {
            Err(status) => break status,
            // The stalled call may not have reached the server yet.
            Ok(_) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
        }
    };
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");

    let reply = tokio::time::timeout(std::time::Duration::from_secs(5), stalled)
        .await
        .expect("the stalled call was not ended within 5 s")
        .unwrap();
    let waited = started.elapsed();
    assert!(
        waited >= std::time::Duration::from_millis(500),
        "{waited:?}"
    );
    let headers = reply.headers();
    assert_eq!(headers["grpc-status"], "1", "{headers:?}");
    // Percent-encoded on the wire.
    assert_eq!(headers["grpc-message"], "Timeout%20expired", "{headers:?}");
    let reply = client.check_connect_four(big_board(10)).await.unwrap();
    assert!(reply.into_inner().wins);
}

/// Hundreds of live games on one connection: 400 PlayTicTacToe streams opened at once on
/// one HTTP/2 connection (one tonic channel), as a game server multiplexes its matches.
/// Every game gets its first reply within a second, and unary calls made on the same
/// connection while all 400 are open answer within their 2 s deadline. Fails on a server
/// whose `--max-concurrent-streams` default is below the games and calls of one such
/// client (it was 256: the games past the 256th, and every call behind them, waited for
/// a game to end).
#[tokio::test]
async fn four_hundred_live_games_on_one_connection_and_calls_beside_them() {
    use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
    use std::time::{Duration, Instant};
    use tokio_stream::wrappers::ReceiverStream;

    const GAMES: usize = 400;
    let server = TestServer::start().await;
    let channel = server.channel().await;
    let mut opening = tokio::task::JoinSet::new();
    for _ in 0..GAMES {
        let mut client = ArbiterServiceClient::new(channel.clone());
        opening.spawn(async move {
            let started = Instant::now();
            let (sender, requests) = tokio::sync::mpsc::channel(2);
            sender
                .send(common::messages::tic_tac_toe_move(1, 1))
                .await
                .unwrap();
            let mut replies = client
                .play_tic_tac_toe(ReceiverStream::new(requests))
                .await
                .unwrap()
                .into_inner();
            let first = replies.message().await.unwrap().unwrap();
            assert_eq!(first.moves_played, 1, "{first:?}");
            (started.elapsed(), sender, replies)
        });
    }
    let mut games = Vec::with_capacity(GAMES);
    while let Some(opened) = opening.join_next().await {
        games.push(opened.unwrap());
    }
    let slowest = games.iter().map(|(waited, ..)| *waited).max().unwrap();
    assert!(
        slowest < Duration::from_secs(1),
        "a game waited {slowest:?} for its first reply"
    );
    server.wait_for_live_games(GAMES).await;
    // All 400 open: calls on the same connection are answered within their deadline.
    let mut client = ArbiterServiceClient::new(channel);
    for _ in 0..20 {
        let mut request = Request::new(big_board(7));
        request.set_timeout(Duration::from_secs(2));
        let reply = client.check_connect_four(request).await;
        assert!(reply.unwrap().into_inner().wins);
    }
    drop(games);
    server.wait_for_live_games(0).await;
}
