//! Compressed calls, through real clients: every encoding gRPC clients send (gzip,
//! deflate, zstd) is accepted on every service, a reply is compressed with the request's
//! encoding only when the request came compressed, and `--max-request-bytes` bounds a
//! message once inflated, so that a small request that inflates to 64 MB is refused
//! without the server's memory growing.

mod common;

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::{Board, CheckConnectFourRequest, Verdict};
use bytes::Bytes;
use common::messages::{gzip_bomb, tic_tac_toe_move};
use common::process::Spawned;
use common::TestServer;
use tokio_stream::wrappers::ReceiverStream;
use tonic::codec::CompressionEncoding::{self, Deflate, Gzip, Zstd};
use tonic::codegen::http;
use tonic::metadata::MetadataMap;
use tonic::transport::Channel;
use tonic::Code;

/// The 100x100 Connect Four board filled with player 1: the largest request, about
/// 10 KB, which compresses well.
fn big_board() -> CheckConnectFourRequest {
    CheckConnectFourRequest {
        board: Some(Board::from_rows(vec!["1".repeat(100); 100])),
        row: 0,
        col: 0,
        player: 1,
        run_length: 0,
    }
}

/// Checks [`big_board`] with `client`: a win.
async fn assert_big_board_wins(client: &mut ArbiterServiceClient<Channel>) {
    let reply = client.check_connect_four(big_board()).await.unwrap();
    assert!(reply.into_inner().wins);
}

/// The encoding a reply's headers say its messages carry, if any.
fn reply_encoding(metadata: &MetadataMap) -> Option<String> {
    metadata
        .get("grpc-encoding")
        .map(|value| value.to_str().unwrap().to_owned())
}

fn name(encoding: CompressionEncoding) -> &'static str {
    match encoding {
        Gzip => "gzip",
        Deflate => "deflate",
        Zstd => "zstd",
        _ => unreachable!("no other encoding is enabled"),
    }
}

/// The encodings the replies to one unary call and one live game came in.
#[derive(Debug, PartialEq, Eq)]
struct Replies {
    unary: Option<String>,
    stream: Option<String>,
}

impl Replies {
    /// Both replies uncompressed.
    const PLAIN: Self = Self {
        unary: None,
        stream: None,
    };

    /// Both replies in `encoding`.
    fn both_in(encoding: CompressionEncoding) -> Self {
        Self {
            unary: Some(name(encoding).to_owned()),
            stream: Some(name(encoding).to_owned()),
        }
    }
}

/// A client of `server` on a new connection, set up by `configure` (what it sends
/// compressed, what it accepts), and the encodings of its replies to
/// [`unary_and_stream`].
async fn replies_to(
    server: &TestServer,
    configure: impl FnOnce(ArbiterServiceClient<Channel>) -> ArbiterServiceClient<Channel>,
) -> Replies {
    let mut client = configure(ArbiterServiceClient::new(server.channel().await));
    unary_and_stream(&mut client).await
}

/// A unary call (the 100x100 board) and a whole live game (A's top row, B between) with
/// `client`, each answer checked: returns the encodings their replies came in.
async fn unary_and_stream(client: &mut ArbiterServiceClient<Channel>) -> Replies {
    let reply = client.check_connect_four(big_board()).await.unwrap();
    let unary = reply_encoding(reply.metadata());
    let reply = reply.into_inner();
    assert!(reply.wins);
    assert_eq!(reply.run.len(), 100, "the whole top row");

    let (moves, outgoing) = tokio::sync::mpsc::channel(1);
    let call = client
        .play_tic_tac_toe(ReceiverStream::new(outgoing))
        .await
        .unwrap();
    let stream = reply_encoding(call.metadata());
    let mut replies = call.into_inner();
    for (count, (row, col)) in [(0, 0), (1, 1), (0, 1), (2, 2), (0, 2)]
        .into_iter()
        .enumerate()
    {
        moves.send(tic_tac_toe_move(row, col)).await.unwrap();
        let reply = replies.message().await.unwrap().unwrap();
        assert_eq!(reply.moves_played, count as i32 + 1);
        assert_eq!(reply.rejected, "");
        let expected = if count == 4 {
            Verdict::AWins
        } else {
            Verdict::Pending
        };
        assert_eq!(reply.verdict(), expected, "after move {count}");
    }
    drop(moves);
    assert!(replies.message().await.unwrap().is_none());
    Replies { unary, stream }
}

/// A server without `accept_compressed` refuses each of these with UNIMPLEMENTED; one
/// without `send_compressed` replies plain.
#[tokio::test]
async fn every_encoding_is_accepted_and_the_reply_comes_back_in_it() {
    let server = TestServer::start().await;
    for encoding in [Gzip, Deflate, Zstd] {
        let replies = replies_to(&server, |client| {
            client.send_compressed(encoding).accept_compressed(encoding)
        })
        .await;
        assert_eq!(replies, Replies::both_in(encoding), "{encoding:?}");
    }
}

/// Tonic left to itself compresses every reply to a client that accepts gzip, as
/// grpcio and grpc-go clients say they do on every call.
#[tokio::test]
async fn an_uncompressed_request_gets_a_plain_reply_even_when_the_client_accepts_gzip() {
    let server = TestServer::start().await;
    let replies = replies_to(&server, |client| {
        client.accept_compressed(Gzip).accept_compressed(Zstd)
    })
    .await;
    assert_eq!(replies, Replies::PLAIN);
}

/// Tonic left to itself replies in the first encoding the client lists (here deflate),
/// whatever the request came in.
#[tokio::test]
async fn the_reply_takes_the_requests_encoding_not_the_first_one_accepted() {
    let server = TestServer::start().await;
    let replies = replies_to(&server, |client| {
        client
            .send_compressed(Zstd)
            .accept_compressed(Deflate)
            .accept_compressed(Gzip)
            .accept_compressed(Zstd)
    })
    .await;
    assert_eq!(replies, Replies::both_in(Zstd));
}

/// A client that compresses but accepts no compressed reply gets plain ones (a server
/// that answered every compressed request in its encoding would make the client fail
/// with "Content is compressed with `gzip` which isn't supported").
#[tokio::test]
async fn a_client_that_does_not_accept_its_own_encoding_gets_plain_replies() {
    let server = TestServer::start().await;
    let replies = replies_to(&server, |client| client.send_compressed(Gzip)).await;
    assert_eq!(replies, Replies::PLAIN);
}

/// Health and reflection take compressed calls too (a client compresses its whole
/// channel), and answer in kind.
#[tokio::test]
async fn health_and_reflection_accept_compressed_calls() {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{health_client::HealthClient, HealthCheckRequest};
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    use tonic_reflection::pb::v1::ServerReflectionRequest;

    let server = TestServer::start().await;
    let channel = server.channel().await;
    for encoding in [Gzip, Deflate, Zstd] {
        let mut health = HealthClient::new(channel.clone())
            .send_compressed(encoding)
            .accept_compressed(encoding);
        let reply = health
            .check(HealthCheckRequest {
                service: "arbiter.v1.ArbiterService".into(),
            })
            .await
            .unwrap();
        assert_eq!(
            reply_encoding(reply.metadata()).as_deref(),
            Some(name(encoding))
        );
        assert_eq!(reply.into_inner().status(), ServingStatus::Serving);

        let mut reflection = ServerReflectionClient::new(channel.clone())
            .send_compressed(encoding)
            .accept_compressed(encoding);
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let call = reflection
            .server_reflection_info(tokio_stream::iter([request]))
            .await
            .unwrap();
        assert_eq!(
            reply_encoding(call.metadata()).as_deref(),
            Some(name(encoding))
        );
        let reply = call.into_inner().message().await.unwrap().unwrap();
        let Some(MessageResponse::ListServicesResponse(list)) = reply.message_response else {
            panic!("not a service list: {reply:?}");
        };
        assert!(
            list.service
                .iter()
                .any(|service| service.name == "arbiter.v1.ArbiterService"),
            "{list:?}"
        );
    }
}

/// How far a decompression bomb inflates: 64 MiB.
const INFLATED: usize = 64 << 20;

/// Sends `frame` as the only message of a gzip-compressed call to `path` on `sender`,
/// and returns the call's status, from its trailers (or its headers, for a trailers-only
/// reply).
async fn send_gzip(
    sender: &mut h2::client::SendRequest<Bytes>,
    authority: &str,
    path: &str,
    frame: Bytes,
) -> tonic::Status {
    let request = http::Request::post(format!("http://{authority}{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("grpc-encoding", "gzip")
        .header("grpc-accept-encoding", "gzip")
        .body(())
        .unwrap();
    let (reply, mut body) = sender
        .clone()
        .ready()
        .await
        .unwrap()
        .send_request(request, false)
        .unwrap();
    body.reserve_capacity(frame.len());
    body.send_data(frame, true).unwrap();
    let reply = reply.await.unwrap();
    // Tonic's own reading of a status from headers, percent-decoding included.
    let status = |headers: &http::HeaderMap| tonic::Status::from_header_map(headers);
    if let Some(status) = status(reply.headers()) {
        return status;
    }
    let mut body = reply.into_body();
    while let Some(data) = body.data().await {
        let data = data.unwrap();
        let _ = body.flow_control().release_capacity(data.len());
    }
    let trailers = body.trailers().await.unwrap().expect("trailers");
    status(&trailers).expect("a grpc-status")
}

/// A request of about 64 KB that inflates to 64 MiB, unary and on a live game: refused
/// with RESOURCE_EXHAUSTED naming the limit, and the server's peak memory (the binary,
/// as deployed) grows by nothing like the inflated size (about 10 MB here, the most it
/// allocated for a message at the 1 MiB limit). A server that inflated the whole message
/// would peak at least 64 MiB higher, and then answer it (INVALID_ARGUMENT, a row too
/// long).
#[tokio::test]
async fn a_decompression_bomb_is_refused_without_inflating_it() {
    // One worker thread: the allocator's per-thread heaps would blur the measure.
    let server = Spawned::start_with_env(
        &["--shutdown-drain", "0s", "--shutdown-grace", "0s"],
        &[("TOKIO_WORKER_THREADS", "1")],
    );
    let bomb = gzip_bomb(INFLATED);
    assert!(bomb.len() < 512 * 1024, "the bomb is {} bytes", bomb.len());

    // One ordinary call first, so that the connection's buffers are already counted.
    let authority = server.addr.to_string();
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let (mut sender, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut client = ArbiterServiceClient::connect(format!("http://{authority}"))
        .await
        .unwrap()
        .send_compressed(Gzip);
    assert_big_board_wins(&mut client).await;
    let before = server.peak_resident_bytes();

    for path in [
        "/arbiter.v1.ArbiterService/CheckConnectFour",
        // Refused before it is decoded, so the message's type does not matter.
        "/arbiter.v1.ArbiterService/PlayTicTacToe",
        "/arbiter.v1.ArbiterService/CheckConnectFour",
        "/arbiter.v1.ArbiterService/PlayTicTacToe",
    ] {
        let status = send_gzip(&mut sender, &authority, path, bomb.clone()).await;
        assert_eq!(status.code(), Code::ResourceExhausted, "{path}: {status:?}");
        assert_eq!(
            status.message(),
            "the request inflates to more than 1048576 bytes; the server accepts at most \
             1048576 (--max-request-bytes)",
            "{path}"
        );
    }
    // The peak, which would show the inflated message even had it been freed since.
    let after = server.peak_resident_bytes();
    let grown = after.saturating_sub(before);
    println!(
        "peak resident: {before} bytes before the bombs, {after} after (now {})",
        server.resident_bytes()
    );
    assert!(
        grown < INFLATED as u64 / 2,
        "the server's peak grew by {grown} bytes"
    );
    // Still serving.
    assert_big_board_wins(&mut client).await;
}
