//! The connections a server takes and the shares of its calls in flight, over the wire:
//! a connection past `--max-connections` is closed at once, one that makes no call within
//! `--handshake-timeout` is closed when it runs out, the accept loop does not spin at the
//! descriptor limit, and no connection or caller holds more than its share of
//! `--max-in-flight`.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::JudgeTicTacToeRequest;
use bytes::Bytes;
use common::callers::{call_headers, channel_from, connect_from, h2_from, ELSEWHERE, HERE};
use common::process::Spawned;
use common::status::assert_status;
use common::TestServer;
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

/// A unary call whose headers and first bytes of its message are sent, and whose rest
/// never comes: it holds a place in flight for as long as it is kept.
type Stalled = (h2::client::ResponseFuture, h2::SendStream<Bytes>);

fn stall(sender: &mut h2::client::SendRequest<Bytes>, server: SocketAddr) -> Stalled {
    stall_as(sender, server, None)
}

/// The same, with a bearer token if given.
fn stall_as(
    sender: &mut h2::client::SendRequest<Bytes>,
    server: SocketAddr,
    token: Option<&str>,
) -> Stalled {
    common::callers::stall_a_call(sender, server, "JudgeTicTacToe", token).unwrap()
}

/// A JudgeTicTacToe call of no moves on a raw connection: its status code and message.
async fn raw_call(
    sender: &mut h2::client::SendRequest<Bytes>,
    server: SocketAddr,
) -> (Code, String) {
    raw_call_as(sender, server, None).await
}

/// The same, with a bearer token if given.
async fn raw_call_as(
    sender: &mut h2::client::SendRequest<Bytes>,
    server: SocketAddr,
    token: Option<&str>,
) -> (Code, String) {
    let body = JudgeTicTacToeRequest::default().encode_to_vec();
    let mut framed = vec![0];
    framed.extend_from_slice(&(body.len() as u32).to_be_bytes());
    framed.extend_from_slice(&body);
    let mut sender = sender.clone().ready().await.unwrap();
    let (reply, mut stream) = sender
        .send_request(call_headers(server, "JudgeTicTacToe", token), false)
        .unwrap();
    stream.send_data(framed.into(), true).unwrap();
    let reply = reply.await.unwrap();
    let mut status = Status::from_header_map(reply.headers());
    let mut body = reply.into_body();
    while let Some(data) = body.data().await {
        data.unwrap();
    }
    if status.is_none() {
        let trailers = body.trailers().await.unwrap().unwrap_or_default();
        status = Status::from_header_map(&trailers);
    }
    let status = status.expect("a grpc-status");
    (status.code(), status.message().to_owned())
}

/// A JudgeTicTacToe call over `channel`.
async fn call(channel: &Channel) -> Result<(), Status> {
    call_as(channel, None).await
}

/// Calls `attempt` until it gives `Some`, for at most five seconds (a stalled call
/// reaches the server some time after its headers are sent).
async fn within_five_seconds<T, F, Fut>(what: &str, mut attempt: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(found) = attempt().await {
            return found;
        }
        assert!(Instant::now() < deadline, "{what}: not within 5 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether the server closes `tcp` within `within` (reading gives its end or a reset)
/// while the client sends `sent` and nothing more.
async fn closed_within(mut tcp: TcpStream, sent: &[u8], within: Duration) -> bool {
    tcp.write_all(sent).await.unwrap();
    let mut buffer = [0; 4096];
    let reading = async {
        loop {
            match tcp.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(within, reading).await.is_ok()
}

/// The client's HTTP/2 preface and an empty SETTINGS frame.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";

/// With `--max-connections 2`, a third connection is closed as it is accepted (its
/// client's call fails UNAVAILABLE) while the two open ones are served, and once one
/// closes a new one is taken. Fails against a server with no connection limit (the third
/// stays open), or one that never gives a closed connection's place back.
#[tokio::test]
async fn a_connection_past_the_limit_is_closed_at_once() {
    let server = TestServer::start_with_flags("--max-connections 2").await;
    let first = channel_from(server.addr, HERE).await.unwrap();
    let second = channel_from(server.addr, HERE).await.unwrap();
    call(&first).await.unwrap();
    call(&second).await.unwrap();

    // Told why in HTTP/2 (GOAWAY, REFUSED_STREAM), then closed.
    let mut third = TcpStream::connect(server.addr).await.unwrap();
    let mut told = Vec::new();
    tokio::time::timeout(Duration::from_secs(3), third.read_to_end(&mut told))
        .await
        .expect("a third connection was kept open")
        .unwrap();
    let goaway = b"\0\0\x1c\x07\0\0\0\0\0\0\0\0\0\0\0\0\x07too many connections";
    assert!(told.ends_with(goaway), "{told:?}");
    // Tonic calls a connection closed under its call CANCELLED; other clients UNAVAILABLE.
    if let Ok(channel) = channel_from(server.addr, HERE).await {
        let status = call(&channel).await.unwrap_err();
        assert!(
            matches!(status.code(), Code::Unavailable | Code::Cancelled),
            "{status:?}"
        );
    }
    call(&first).await.unwrap();

    drop(second);
    within_five_seconds("a new connection once one closed", || async {
        let channel = channel_from(server.addr, HERE).await.ok()?;
        call(&channel).await.ok()
    })
    .await;
}

/// With `--max-connections-per-caller 2`, a caller's third connection is closed as it is
/// accepted (told so in HTTP/2) while another caller still connects and is answered, and
/// once one of the first two closes the caller connects again. Fails against a server
/// whose connection limit has no share per caller (the third stays open).
#[tokio::test]
async fn a_caller_past_its_share_of_connections_is_closed_at_once() {
    let server =
        TestServer::start_with_flags("--max-connections 10 --max-connections-per-caller 2").await;
    let first = channel_from(server.addr, HERE).await.unwrap();
    let second = channel_from(server.addr, HERE).await.unwrap();
    call(&first).await.unwrap();
    call(&second).await.unwrap();
    let mut third = connect_from(server.addr, HERE).await.unwrap();
    let mut told = Vec::new();
    tokio::time::timeout(Duration::from_secs(3), third.read_to_end(&mut told))
        .await
        .expect("a third connection from one caller was kept open")
        .unwrap();
    assert!(told.ends_with(b"too many connections"), "{told:?}");
    let elsewhere = channel_from(server.addr, ELSEWHERE).await.unwrap();
    call(&elsewhere).await.unwrap();

    drop(second);
    within_five_seconds(
        "a new connection once one of the caller's closed",
        || async {
            let channel = channel_from(server.addr, HERE).await.ok()?;
            call(&channel).await.ok()
        },
    )
    .await;
}

/// With `--handshake-timeout 1s`, connections that make no call are closed when it runs
/// out: one silent, one that sent only the HTTP/2 preface, one that stopped inside a
/// HEADERS frame. A connection that has made a call stays open past it. Fails against a
/// server with no handshake timeout (the three stay open), or one whose deadline also
/// ends connections that have called (the second call finds its connection closed).
#[tokio::test]
async fn a_connection_that_makes_no_call_is_closed_at_the_handshake_timeout() {
    let server = TestServer::start_with_flags("--handshake-timeout 1s").await;
    let mut working = h2_from(server.addr, HERE).await;
    assert_eq!(raw_call(&mut working, server.addr).await.0, Code::Ok);

    let started = Instant::now();
    // A HEADERS frame announcing 100 bytes, of which 3 come.
    let mut inside_headers = PREFACE.to_vec();
    inside_headers.extend_from_slice(&[0, 0, 100, 1, 4, 0, 0, 0, 1, 0x83, 0x86, 0x84]);
    let sent: [&[u8]; 3] = [b"", PREFACE, &inside_headers];
    let mut closing = Vec::new();
    for sent in sent {
        let tcp = TcpStream::connect(server.addr).await.unwrap();
        closing.push(async move { closed_within(tcp, sent, Duration::from_secs(5)).await });
    }
    let closed = futures_util::future::join_all(closing).await;
    assert_eq!(closed, [true; 3], "silent, preface only, inside HEADERS");
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(900),
        "closed after {elapsed:?}, before the timeout"
    );
    // Past the timeout, the connection that called is still served.
    assert_eq!(raw_call(&mut working, server.addr).await.0, Code::Ok);
}

/// A connection and a caller each have their share of the calls in flight: with
/// `--max-in-flight 8 --max-in-flight-per-connection 2 --max-in-flight-per-caller 3`, a
/// connection holding two calls has its third refused (naming its share), a caller
/// holding three over two connections has a call on a third refused (naming itself),
/// while another caller and a health check are answered; when the first connection's
/// calls end, the caller is answered again. Fails against a server with only the
/// server-wide limit (nothing is refused below 8), or one that counts every caller as
/// one (the other caller is refused), or one that never gives a share's place back.
#[tokio::test]
async fn each_connection_and_each_caller_have_a_share_of_the_calls_in_flight() {
    let server = TestServer::start_with_flags(
        "--max-in-flight 8 --max-in-flight-per-connection 2 --max-in-flight-per-caller 3 --request-timeout 60s",
    )
    .await;
    let addr = server.addr;
    let mut first = h2_from(addr, HERE).await;
    let held = vec![stall(&mut first, addr), stall(&mut first, addr)];
    let (code, message) = within_five_seconds("a refusal on the first connection", || {
        let mut first = first.clone();
        async move { Some(raw_call(&mut first, addr).await).filter(|(code, _)| *code != Code::Ok) }
    })
    .await;
    assert_eq!(code, Code::ResourceExhausted, "{message}");
    assert!(
        message.contains("this connection is at its share of 2 calls in flight"),
        "{message}"
    );

    let mut second = h2_from(addr, HERE).await;
    let _also_held = stall(&mut second, addr);
    let third = channel_from(addr, HERE).await.unwrap();
    let refused = within_five_seconds("a refusal of the caller", || async {
        call(&third).await.err()
    })
    .await;
    assert_status(
        &refused,
        Code::ResourceExhausted,
        "this caller (127.0.0.1) is at its share of 3 calls in flight",
    );
    // Health checks are no caller's work.
    let health = HealthClient::new(third.clone())
        .check(HealthCheckRequest::default())
        .await
        .unwrap();
    assert_eq!(health.get_ref().status(), ServingStatus::Serving);
    // Another caller has its own share.
    let elsewhere = channel_from(addr, ELSEWHERE).await.unwrap();
    call(&elsewhere).await.unwrap();

    drop(held);
    within_five_seconds("the caller answered once its calls ended", || async {
        call(&third).await.ok()
    })
    .await;
}

/// At the descriptor limit the accept loop waits rather than spins: the server, its
/// descriptors capped with prlimit a few above those it holds, is sent 40 connections it
/// cannot take, and uses under a quarter of a core meanwhile; once they close, it is
/// answered again. Fails against a server that retries accept at once on EMFILE (tonic's
/// own loop: about 80% of a core).
#[tokio::test]
async fn the_accept_loop_waits_at_the_descriptor_limit() {
    let server = Spawned::start(&[]);
    let pid = server.child.id();
    let channel = channel_from(server.addr, HERE).await.unwrap();
    call(&channel).await.unwrap();
    let held = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    let cap = held + 4;
    let status = std::process::Command::new("prlimit")
        .args(["--pid", &pid.to_string(), &format!("--nofile={cap}:{cap}")])
        .status()
        .expect("prlimit (util-linux)");
    assert!(status.success(), "prlimit failed");

    let mut waiting = Vec::new();
    for _ in 0..40 {
        waiting.push(TcpStream::connect(server.addr).await.unwrap());
    }
    server.wait_for_line("cannot accept connections", Duration::from_secs(5));
    let ticks = || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        // utime and stime, the 14th and 15th fields (the 12th and 13th after the name).
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    };
    let before = ticks();
    let measured = Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let used = (ticks() - before) as f64 / 100.0 / measured.elapsed().as_secs_f64();
    assert!(
        used < 0.25,
        "the server used {used:.2} of a core while it could not accept"
    );

    drop(waiting);
    drop(channel);
    within_five_seconds("an answer once descriptors are free", || async {
        let channel = channel_from(server.addr, HERE).await.ok()?;
        call(&channel).await.ok()
    })
    .await;
}

/// A live Tic-Tac-Toe game opened over `channel` and its first move answered (a game
/// counts as live from its first message): where to send its moves, and its replies; or
/// the status refusing it.
async fn open_game(channel: &Channel) -> Result<LiveGame, Status> {
    let (moves, receiver) = tokio::sync::mpsc::channel(4);
    moves
        .send(common::messages::tic_tac_toe_move(1, 1))
        .await
        .map_err(|_| Status::internal("the moves' channel closed"))?;
    let mut replies = ArbiterServiceClient::new(channel.clone())
        .play_tic_tac_toe(tokio_stream::wrappers::ReceiverStream::new(receiver))
        .await?
        .into_inner();
    match replies.message().await? {
        Some(_) => Ok((moves, replies)),
        None => Err(Status::internal("the game ended without a reply")),
    }
}

type LiveGame = (
    tokio::sync::mpsc::Sender<arbiter::proto::PlayTicTacToeRequest>,
    tonic::Streaming<arbiter::proto::PlayTicTacToeResponse>,
);

/// A connection and a caller each have their share of the live games: with
/// `--max-live-games 10 --max-live-games-per-connection 2 --max-live-games-per-caller 3`,
/// a connection holding two games has its third refused, a caller holding three over
/// two connections has its fourth refused, on a single stream and in PlayMany alike,
/// each naming its share; another caller still opens one; when a game ends, the caller
/// opens one again. Fails against a server with only the server-wide limit, or one that
/// counts every caller as one, or one that never gives a game's place back.
#[tokio::test]
async fn each_connection_and_each_caller_have_a_share_of_the_live_games() {
    use arbiter::proto::game_action::Action;
    use arbiter::proto::{GameAction, PlayManyRequest};

    let server = TestServer::start_with_flags(
        "--max-live-games 10 --max-live-games-per-connection 2 --max-live-games-per-caller 3",
    )
    .await;
    let first = channel_from(server.addr, HERE).await.unwrap();
    let mut held = vec![
        open_game(&first).await.unwrap(),
        open_game(&first).await.unwrap(),
    ];
    let refused = open_game(&first).await.unwrap_err();
    assert_status(
        &refused,
        Code::ResourceExhausted,
        "this connection already holds its share of 2 live games",
    );

    let second = channel_from(server.addr, HERE).await.unwrap();
    held.push(open_game(&second).await.unwrap());
    let refused = open_game(&second).await.unwrap_err();
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    let caller_full = "this caller (127.0.0.1) already holds its share of 3 live games";
    assert!(refused.message().contains(caller_full), "{refused:?}");
    // A PlayMany game is refused alike, alone: `invalid` on `game`.
    let start = PlayManyRequest {
        actions: vec![GameAction {
            game: 1,
            action: Some(Action::TicTacToe(common::messages::tic_tac_toe_move(1, 1))),
        }],
    };
    let mut many = ArbiterServiceClient::new(second.clone())
        .play_many(tokio_stream::iter([start]))
        .await
        .unwrap()
        .into_inner();
    let reply = many.message().await.unwrap().expect("a reply");
    let invalid = &reply.states[0].invalid;
    assert_eq!(invalid.len(), 1, "{reply:?}");
    assert_eq!(invalid[0].field, "game", "{reply:?}");
    assert!(invalid[0].description.contains(caller_full), "{reply:?}");

    // Another caller has its own share.
    let elsewhere = channel_from(server.addr, ELSEWHERE).await.unwrap();
    let _theirs = open_game(&elsewhere).await.unwrap();

    drop(held.pop());
    within_five_seconds("a game once one of the caller's ended", || async {
        open_game(&second).await.ok()
    })
    .await;
}

/// A JudgeTicTacToe call over `channel` with `token` as its bearer token, if any.
async fn call_as(channel: &Channel, token: Option<&str>) -> Result<(), Status> {
    let mut request = tonic::Request::new(JudgeTicTacToeRequest::default());
    if let Some(token) = token {
        let value = format!("Bearer {token}").parse().unwrap();
        request.metadata_mut().insert("authorization", value);
    }
    ArbiterServiceClient::new(channel.clone())
        .judge_tic_tac_toe(request)
        .await
        .map(drop)
}

/// A token file of the test's own, holding `text`.
fn token_file(test: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("arbiter-tokens-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tokens");
    std::fs::write(&path, text).unwrap();
    path
}

/// With `--tokens FILE`, a call without a bearer token or with one the file does not
/// hold gets UNAUTHENTICATED saying what to send, one with a token of the file is
/// answered, and a health check needs none; when the file changes, its new tokens are
/// let in and those it dropped refused within a few seconds, while a file that no
/// longer parses changes nothing. Fails against a server that admits every call, or one
/// that reads the file only at start.
#[tokio::test]
async fn bearer_tokens_admit_callers_and_are_read_again_when_the_file_changes() {
    let path = token_file("admit", "# who may call\nalice tok-alice\n");
    let server = TestServer::start_with_flags(&format!("--tokens {}", path.display())).await;
    let channel = channel_from(server.addr, HERE).await.unwrap();
    for token in [None, Some("tok-bob")] {
        let refused = call_as(&channel, token).await.unwrap_err();
        assert_eq!(
            refused.code(),
            Code::Unauthenticated,
            "{token:?}: {refused:?}"
        );
        assert!(refused.message().contains("authorization"), "{refused:?}");
    }
    call_as(&channel, Some("tok-alice")).await.unwrap();
    let health = HealthClient::new(channel.clone())
        .check(HealthCheckRequest::default())
        .await
        .unwrap();
    assert_eq!(health.get_ref().status(), ServingStatus::Serving);

    std::fs::write(&path, "bob tok-bob\n").unwrap();
    within_five_seconds("the new token let in", || async {
        call_as(&channel, Some("tok-bob")).await.ok()
    })
    .await;
    let refused = call_as(&channel, Some("tok-alice")).await.unwrap_err();
    assert_eq!(refused.code(), Code::Unauthenticated, "{refused:?}");

    std::fs::write(&path, "a line of four fields\n").unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    call_as(&channel, Some("tok-bob")).await.unwrap();
}

/// A caller with a token is the token's name, not its address: with
/// `--max-in-flight-per-caller 1`, alice holding a stalled call has her next refused,
/// naming her, while bob, from the same address, is answered. Fails against a server
/// that counts callers by address alone (bob is refused too).
#[tokio::test]
async fn a_caller_with_a_token_is_counted_under_its_name() {
    let path = token_file("named", "alice tok-alice\nbob tok-bob\n");
    let server = TestServer::start_with_flags(&format!(
        "--tokens {} --max-in-flight-per-caller 1 --request-timeout 60s",
        path.display()
    ))
    .await;
    let addr = server.addr;
    let mut alice = h2_from(addr, HERE).await;
    let _held = stall_as(&mut alice, addr, Some("tok-alice"));
    let (code, message) = within_five_seconds("alice refused", || {
        let mut alice = alice.clone();
        async move {
            Some(raw_call_as(&mut alice, addr, Some("tok-alice")).await)
                .filter(|(code, _)| *code != Code::Ok)
        }
    })
    .await;
    assert_eq!(code, Code::ResourceExhausted, "{message}");
    assert!(
        message.contains("this caller (alice) is at its share of 1 calls in flight"),
        "{message}"
    );
    let bob = channel_from(addr, HERE).await.unwrap();
    call_as(&bob, Some("tok-bob")).await.unwrap();
}

/// With `--max-calls-per-second-per-caller 5`, a caller's sixth call within a second is
/// refused naming the quota, another caller is answered meanwhile, and the first is
/// answered again in the next second. Fails against a server with no quota, or one
/// whose quota is server-wide, or never refills.
#[tokio::test]
async fn a_caller_over_its_quota_is_refused_until_the_next_second() {
    let server = TestServer::start_with_flags("--max-calls-per-second-per-caller 5").await;
    let here = channel_from(server.addr, HERE).await.unwrap();
    for _ in 0..5 {
        call(&here).await.unwrap();
    }
    let refused = call(&here).await.unwrap_err();
    assert_status(
        &refused,
        Code::ResourceExhausted,
        "this caller (127.0.0.1) is over its quota of 5 calls a second",
    );
    let elsewhere = channel_from(server.addr, ELSEWHERE).await.unwrap();
    call(&elsewhere).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    call(&here).await.unwrap();
}
