//! One client cannot take the service from the others: each attack runs against a fresh
//! server on its defaults (the binary, a process of its own) from 127.0.0.1, while a
//! steady client from 127.0.0.2 makes a unary call every 50 ms and a health check every
//! 200 ms (each with a 2 s deadline) and plays Tic-Tac-Toe games, a move every 100 ms.
//! An attack passes when at least 99% of the steady client's calls and checks are
//! answered in time, its games are never lost, the server's peak RSS stays under the
//! Deployment's 256 MiB, and the server answers afterwards. Each prints its figures.

mod common;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::game_action::Action;
use arbiter::proto::{
    Check, CheckBatchRequest, GameAction, JudgeTicTacToeRequest, PlayManyRequest,
    PlayTicTacToeRequest,
};
use common::callers::{
    call_headers, channel_from, connect_from, h2_from, h2_not_reading, stall_a_call, ELSEWHERE,
    HERE,
};
use common::messages::{compression_bomb, grpc_frame};
use common::process::Spawned;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::codegen::http;
use tonic::transport::Channel;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

/// One attack at a time: they share the machine's two cores with the steady client.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// How long the steady client measures, once the attack is under way.
const MEASURED: Duration = Duration::from_secs(4);
/// What the steady client's every call must be answered within.
const DEADLINE: Duration = Duration::from_secs(2);

/// What the steady client saw.
#[derive(Debug, Default)]
struct Steady {
    calls: usize,
    late_calls: usize,
    checks: usize,
    late_checks: usize,
    moves: usize,
    lost: Option<String>,
}

/// Runs `call` with the deadline: whether it was answered in time.
async fn in_time<T, E>(call: impl Future<Output = Result<T, E>>) -> bool {
    matches!(tokio::time::timeout(DEADLINE, call).await, Ok(Ok(_)))
}

/// The steady client, for `measured`, on its own connection from 127.0.0.2.
async fn steady(server: SocketAddr, measured: Duration) -> Steady {
    let channel = tokio::time::timeout(DEADLINE, channel_from(server, ELSEWHERE))
        .await
        .expect("the steady client connects in time")
        .expect("the steady client connects");
    let until = Instant::now() + measured;
    let unary = every(Duration::from_millis(50), until, || {
        let mut client = ArbiterServiceClient::new(channel.clone());
        async move { in_time(client.judge_tic_tac_toe(JudgeTicTacToeRequest::default())).await }
    });
    let health = every(Duration::from_millis(200), until, || {
        let mut client = HealthClient::new(channel.clone());
        async move { in_time(client.check(HealthCheckRequest::default())).await }
    });
    let games = async {
        let mut moves = 0;
        while Instant::now() < until {
            if let Err(lost) = play_a_game(&channel, &mut moves).await {
                return (moves, Some(lost));
            }
        }
        (moves, None)
    };
    let ((calls, late_calls), (checks, late_checks), (moves, lost)) =
        tokio::join!(unary, health, games);
    Steady {
        calls,
        late_calls,
        checks,
        late_checks,
        moves,
        lost,
    }
}

/// Runs `call` every `period` until `until`: how many calls, and how many were late.
async fn every<F, C>(period: Duration, until: Instant, mut call: F) -> (usize, usize)
where
    F: FnMut() -> C,
    C: Future<Output = bool>,
{
    let (mut calls, mut late) = (0, 0);
    let mut ticks = tokio::time::interval(period);
    while Instant::now() < until {
        ticks.tick().await;
        calls += 1;
        if !call().await {
            late += 1;
        }
    }
    (calls, late)
}

/// A drawn game of Tic-Tac-Toe, a move every 100 ms, each answered within the deadline.
async fn play_a_game(channel: &Channel, moves: &mut usize) -> Result<(), String> {
    const DRAW: [(i32, i32); 9] = [
        (0, 0),
        (1, 1),
        (0, 1),
        (0, 2),
        (2, 0),
        (1, 0),
        (1, 2),
        (2, 1),
        (2, 2),
    ];
    let (sender, receiver) = tokio::sync::mpsc::channel(1);
    let mut client = ArbiterServiceClient::new(channel.clone());
    let opened = client.play_tic_tac_toe(tokio_stream::wrappers::ReceiverStream::new(receiver));
    let mut replies = match tokio::time::timeout(DEADLINE, opened).await {
        Ok(Ok(replies)) => replies.into_inner(),
        Ok(Err(status)) => return Err(format!("opening: {status:?}")),
        Err(_) => return Err("opening: no answer in time".into()),
    };
    for (row, col) in DRAW {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let sent = sender.send(PlayTicTacToeRequest {
            row,
            col,
            setup: None,
        });
        match tokio::time::timeout(DEADLINE, sent).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err("the stream closed".into()),
            Err(_) => return Err("a move not taken in time".into()),
        }
        match tokio::time::timeout(DEADLINE, replies.message()).await {
            Ok(Ok(Some(reply))) if reply.rejected.is_empty() => *moves += 1,
            Ok(Ok(Some(reply))) => return Err(format!("rejected: {}", reply.rejected)),
            Ok(Ok(None)) => return Err("the stream ended".into()),
            Ok(Err(status)) => return Err(format!("{status:?}")),
            Err(_) => return Err("a move not answered in time".into()),
        }
    }
    Ok(())
}

/// Runs `attack` (given the server's address) against a fresh server, measures the steady
/// client once it has been under way for a second, and checks what the module says.
async fn under_attack<F, A>(name: &str, attack: F)
where
    F: FnOnce(SocketAddr) -> A,
    A: Future<Output = ()> + Send + 'static,
{
    let _alone = ONE_AT_A_TIME.lock().await;
    let server = Spawned::start(&[]);
    let addr = server.addr;
    let attacking = tokio::spawn(attack(addr));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let seen = steady(addr, MEASURED).await;
    let peak = server.peak_resident_bytes();
    attacking.abort();
    let _ = attacking.await;
    eprintln!(
        "{name}: {} of {} calls and {} of {} health checks in time, {} moves, game lost: {:?}, peak RSS {} MiB",
        seen.calls - seen.late_calls,
        seen.calls,
        seen.checks - seen.late_checks,
        seen.checks,
        seen.moves,
        seen.lost,
        peak >> 20,
    );
    assert!(seen.calls >= 40, "{name}: only {} calls made", seen.calls);
    assert!(
        seen.late_calls * 100 <= seen.calls,
        "{name}: {} of {} calls late",
        seen.late_calls,
        seen.calls
    );
    assert!(
        seen.late_checks * 100 <= seen.checks,
        "{name}: {} of {} health checks late",
        seen.late_checks,
        seen.checks
    );
    assert!(seen.lost.is_none(), "{name}: a game lost: {:?}", seen.lost);
    assert!(seen.moves >= 9, "{name}: only {} moves", seen.moves);
    assert!(peak < 256 << 20, "{name}: peak RSS {} MiB", peak >> 20);
    let after = steady(addr, Duration::from_millis(500)).await;
    assert_eq!(after.late_calls, 0, "{name}: after the attack: {after:?}");
}

/// Keeps `held` (an attacker's connections or calls) until the attack is stopped.
async fn hold<T>(held: T) {
    std::future::pending::<()>().await;
    drop(held);
}

/// An HTTP/2 frame.
fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut frame = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    frame.extend_from_slice(&[kind, flags]);
    frame.extend_from_slice(&stream.to_be_bytes());
    frame.extend_from_slice(payload);
    frame
}

/// The client's preface and an empty SETTINGS frame.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";

/// The GOAWAY frames the server sent the attacker: each one's error code and debug data.
type Goaways = Arc<Mutex<Vec<(u32, String)>>>;

/// Writes `frames` over and over on raw connections from 127.0.0.1 after the preface,
/// a new connection each time one is closed, until aborted; what the server sends is
/// read, and its GOAWAY frames kept in `goaways`.
async fn flood(server: SocketAddr, frames: Vec<u8>, goaways: Goaways) {
    let batch = frames.repeat(1000);
    loop {
        let mut write = raw_connection(server, &goaways).await;
        while write.write_all(&batch).await.is_ok() {}
    }
}

/// A raw connection from 127.0.0.1 that has sent the client's preface, once one can be
/// made: its writing half. What the server sends on it is read, and its GOAWAY frames
/// kept in `goaways`.
async fn raw_connection(server: SocketAddr, goaways: &Goaways) -> tokio::net::tcp::OwnedWriteHalf {
    loop {
        let Ok(tcp) = connect_from(server, HERE).await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let (read, mut write) = tcp.into_split();
        tokio::spawn(read_goaways(read, Arc::clone(goaways)));
        if write.write_all(PREFACE).await.is_ok() {
            return write;
        }
    }
}

/// Reads the server's frames until the connection ends, keeping its GOAWAYs.
async fn read_goaways(mut read: tokio::net::tcp::OwnedReadHalf, goaways: Goaways) {
    let mut bytes = Vec::new();
    let mut buffer = vec![0; 1 << 16];
    while let Ok(count @ 1..) = read.read(&mut buffer).await {
        bytes.extend_from_slice(&buffer[..count]);
        while bytes.len() >= 9 {
            let length =
                usize::from(bytes[0]) << 16 | usize::from(bytes[1]) << 8 | usize::from(bytes[2]);
            if bytes.len() < 9 + length {
                break;
            }
            if bytes[3] == 7 && length >= 8 {
                let code = u32::from_be_bytes([bytes[13], bytes[14], bytes[15], bytes[16]]);
                let debug = String::from_utf8_lossy(&bytes[17..9 + length]).into_owned();
                goaways.lock().unwrap().push((code, debug));
            }
            bytes.drain(..9 + length);
        }
    }
}

/// Runs a flood of `frames` under attack, then checks that the server ended the
/// attacker's connections with GOAWAY ENHANCE_YOUR_CALM and `reason`.
async fn flood_ended(name: &str, frames: Vec<u8>, reason: &str) {
    let goaways = Goaways::default();
    let seen = Arc::clone(&goaways);
    under_attack(name, move |server| flood(server, frames, seen)).await;
    assert_ended(name, &goaways, reason);
}

/// Checks that the server ended the attacker's connections with GOAWAY ENHANCE_YOUR_CALM
/// and `reason` (FrameWatch's words: h2's own GOAWAYs say other things).
fn assert_ended(name: &str, goaways: &Goaways, reason: &str) {
    let goaways = goaways.lock().unwrap();
    eprintln!("{name}: {} connections ended with GOAWAY", goaways.len());
    assert!(
        goaways
            .iter()
            .any(|(code, debug)| *code == 0xb && debug == reason),
        "{name}: no GOAWAY ENHANCE_YOUR_CALM {reason:?}: {:?}",
        goaways.iter().take(3).collect::<Vec<_>>()
    );
}

/// 1,024 unary calls that send their headers and the first bytes of a message and never
/// the rest, over four connections: every place in flight the server has (a call takes
/// one with its first message), were it not for each connection's and caller's share.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_unary_calls() {
    under_attack("stalled unary calls", |server| async move {
        let mut held = Vec::new();
        for _ in 0..4 {
            let mut sender = h2_from(server, HERE).await;
            for _ in 0..256 {
                match stall_a_call(&mut sender, server, "JudgeTicTacToe", None) {
                    Ok(stalled) => held.push(stalled),
                    Err(_) => break,
                }
            }
        }
        hold(held).await;
    })
    .await;
}

/// Eleven PlayMany streams of 1,000 games each on one connection: more than the
/// server's 10,000 live games, were it not for the shares.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_live_games() {
    under_attack("a flood of live games", |server| async move {
        let mut sender = h2_from(server, HERE).await;
        let mut held = Vec::new();
        for stream in 0..11u64 {
            let Ok(mut ready) = sender.clone().ready().await else {
                break;
            };
            let Ok((reply, mut body)) =
                ready.send_request(call_headers(server, "PlayMany", None), false)
            else {
                break;
            };
            let games = PlayManyRequest {
                actions: (0..1000)
                    .map(|game| GameAction {
                        game: stream * 1000 + game,
                        action: Some(Action::TicTacToe(PlayTicTacToeRequest {
                            row: 1,
                            col: 1,
                            setup: None,
                        })),
                    })
                    .collect(),
            };
            let _ = body.send_data(grpc_frame(&games), false);
            held.push((reply, body));
            sender = ready;
        }
        hold(held).await;
    })
    .await;
}

/// 500 connections that send nothing and 500 that stop inside a HEADERS frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_half_sent_connections() {
    under_attack("silent and half-sent connections", |server| async move {
        let mut inside_headers = PREFACE.to_vec();
        inside_headers.extend_from_slice(&[0, 0, 100, 1, 4, 0, 0, 0, 1, 0x83, 0x86]);
        let mut held = Vec::new();
        for index in 0..1000 {
            let Ok(mut tcp) = connect_from(server, HERE).await else {
                continue;
            };
            if index % 2 == 1 {
                let _ = tcp.write_all(&inside_headers).await;
            }
            held.push(tcp);
        }
        hold(held).await;
    })
    .await;
}

/// Streams opened and reset at once by the client, as fast as it can (rapid reset).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rapid_reset() {
    under_attack("rapid reset", |server| async move {
        loop {
            let mut sender = h2_from(server, HERE).await;
            loop {
                let Ok(ready) = sender.clone().ready().await else {
                    break;
                };
                sender = ready;
                match sender.send_request(call_headers(server, "JudgeTicTacToe", None), false) {
                    // Dropped at once: RST_STREAM (CANCEL).
                    Ok(opened) => drop(opened),
                    Err(_) => break,
                }
                // Lets the connection write what it queued (and the attack be stopped).
                tokio::task::yield_now().await;
            }
        }
    })
    .await;
}

/// PING frames, a thousand a write, without end: each connection is ended at its third
/// PING too soon.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_flood() {
    flood_ended("a PING flood", h2_frame(6, 0, 0, &[0; 8]), "too_many_pings").await;
}

/// SETTINGS frames, a thousand a write, without end: each connection is ended at its
/// eleventh in a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settings_flood() {
    let settings = h2_frame(4, 0, 0, &[0, 3, 0, 0, 0, 100]);
    flood_ended("a SETTINGS flood", settings, "too_many_settings").await;
}

/// Streams opened and reset one by one, each in a write of its own a millisecond after
/// its headers, so that the server has taken it: h2's guard against rapid reset counts
/// only streams reset before they are taken (its GOAWAY says `too_many_resets`); this
/// connection is ended once more than half of its first 100 streams are reset before
/// they are answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_taken_then_reset() {
    let name = "streams taken then reset";
    let goaways = Goaways::default();
    let seen = Arc::clone(&goaways);
    under_attack(name, move |server| async move {
        loop {
            let mut write = raw_connection(server, &seen).await;
            for stream in (1..).step_by(2) {
                let taken = write.write_all(&judge_headers(stream)).await;
                tokio::time::sleep(Duration::from_millis(1)).await;
                let reset = write
                    .write_all(&h2_frame(3, 0, stream, &[0, 0, 0, 8]))
                    .await;
                if taken.is_err() || reset.is_err() {
                    break;
                }
            }
        }
    })
    .await;
    assert_ended(name, &goaways, "too_many_early_resets");
}

/// A HEADERS frame (END_HEADERS) opening a JudgeTicTacToe call on `stream`.
fn judge_headers(stream: u32) -> Vec<u8> {
    header_frames(stream, &judge_block())
}

/// The header block of a JudgeTicTacToe call, its fields as HPACK literals, never
/// indexed.
fn judge_block() -> Vec<u8> {
    let mut block = vec![0x83, 0x86]; // :method POST, :scheme http
    for (name, value) in [
        (":path", "/arbiter.v1.ArbiterService/JudgeTicTacToe"),
        (":authority", "arbiter"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
    ] {
        hpack_literal(&mut block, name, value);
    }
    block
}

/// Appends a header field to `block` as an HPACK literal never indexed, with a new name.
fn hpack_literal(block: &mut Vec<u8>, name: &str, value: &str) {
    /// An HPACK string length: a 7-bit prefix, then 7 bits a byte (RFC 7541, 5.1).
    fn length(block: &mut Vec<u8>, mut length: usize) {
        if length < 127 {
            block.push(length as u8);
            return;
        }
        block.push(127);
        length -= 127;
        while length >= 128 {
            block.push((length % 128) as u8 | 0x80);
            length /= 128;
        }
        block.push(length as u8);
    }
    block.push(0x10);
    length(block, name.len());
    block.extend_from_slice(name.as_bytes());
    length(block, value.len());
    block.extend_from_slice(value.as_bytes());
}

/// `block` on `stream` as a HEADERS frame and as many CONTINUATION frames as the
/// default frame size of 16 KiB needs, the last with END_HEADERS.
fn header_frames(stream: u32, block: &[u8]) -> Vec<u8> {
    let pieces: Vec<&[u8]> = block.chunks(16 << 10).collect();
    let mut frames = Vec::new();
    for (index, piece) in pieces.iter().enumerate() {
        let kind = if index == 0 { 1 } else { 9 };
        let flags = if index + 1 == pieces.len() { 4 } else { 0 };
        frames.extend(h2_frame(kind, flags, stream, piece));
    }
    frames
}

/// Bulk calls whose replies are never read: connections that announce a window of zero
/// for every stream send 192 CheckBatch calls of 10,000 checks with no kind set (20 kB
/// each; about 1 MB of reply each). Without the budget of unread reply bytes, 192 of them held
/// about 300 MiB; with it the attacker holds at most its caller's share (32 MiB), and
/// the rest of its calls are answered RESOURCE_EXHAUSTED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_left_unread() {
    let refused = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = Arc::clone(&refused);
    under_attack("replies left unread", move |server| async move {
        // Checks with no kind set: cheap to answer, each answered with a field violation.
        let batch = CheckBatchRequest {
            checks: vec![Check { check: None }; 10_000],
        };
        let body = grpc_frame(&batch);
        let mut held = Vec::new();
        for _ in 0..8 {
            held.push(h2_not_reading(server, HERE).await);
        }
        let mut calls = Vec::new();
        for _ in 0..24 {
            for (sender, _) in &mut held {
                let Ok(mut ready) = sender.clone().ready().await else {
                    continue;
                };
                if let Ok((reply, mut request)) =
                    ready.send_request(call_headers(server, "CheckBatch", None), false)
                {
                    let _ = request.send_data(body.clone(), true);
                    calls.push((reply, request));
                }
                *sender = ready;
            }
        }
        // The calls refused are answered in their headers or trailers, which no window
        // holds back.
        let refused = |headers: &http::HeaderMap| {
            headers.get("grpc-status").map(|status| status.as_bytes()) == Some(&b"8"[..])
        };
        for (reply, _request) in &mut calls {
            let Ok(Ok(reply)) = tokio::time::timeout(Duration::from_millis(50), reply).await else {
                continue;
            };
            if refused(reply.headers()) {
                counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                continue;
            }
            let mut body = reply.into_body();
            let trailers = tokio::time::timeout(Duration::from_millis(50), body.trailers()).await;
            if let Ok(Ok(Some(trailers))) = trailers {
                if refused(&trailers) {
                    counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
        hold((held, calls)).await;
    })
    .await;
    let refused = refused.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!("replies left unread: {refused} of 192 calls answered RESOURCE_EXHAUSTED");
    assert!(refused >= 100, "only {refused} of 192 calls refused");
}

/// A HEADERS frame without END_HEADERS followed by CONTINUATION frames without end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continuation_flood() {
    under_attack("a CONTINUATION flood", |server| async move {
        let mut frames = h2_frame(1, 0, 1, &[0x83, 0x86]);
        // A literal header field, name and value 8 bytes each, a CONTINUATION each.
        let field = [&[0x00, 8][..], b"x-floods", &[8], b"aaaaaaaa"].concat();
        for _ in 0..1000 {
            frames.extend(h2_frame(9, 0, 1, &field));
        }
        flood(server, frames, Goaways::default()).await;
    })
    .await;
}

/// Compression bombs (4 MiB inflated each, past the 1 MiB request limit) in gzip,
/// deflate and zstd in turn, four calls at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compression_bombs() {
    under_attack("compression bombs", |server| async move {
        let bombs = ["gzip", "deflate", "zstd"].map(|encoding| {
            (
                http::HeaderValue::from_static(encoding),
                compression_bomb(encoding, 4 << 20),
            )
        });
        let mut sender = h2_from(server, HERE).await;
        for (encoding, bomb) in bombs.iter().cycle() {
            let mut calls = Vec::new();
            for _ in 0..4 {
                let Ok(ready) = sender.clone().ready().await else {
                    sender = h2_from(server, HERE).await;
                    continue;
                };
                sender = ready;
                let mut request = call_headers(server, "CheckConnectFour", None);
                request
                    .headers_mut()
                    .insert("grpc-encoding", encoding.clone());
                if let Ok((reply, mut body)) = sender.send_request(request, false) {
                    let _ = body.send_data(bomb.clone(), true);
                    calls.push(reply);
                }
            }
            for reply in calls {
                let _ = reply.await;
            }
        }
    })
    .await;
}

/// Calls whose headers pass h2's limit on a header list (a 64 KiB value, in a HEADERS
/// frame and CONTINUATION frames), one after another on raw connections without end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_headers() {
    under_attack("oversized headers", |server| async move {
        let value = "x".repeat(64 << 10);
        let goaways = Goaways::default();
        loop {
            let mut write = raw_connection(server, &goaways).await;
            for stream in (1..).step_by(2) {
                let mut block = judge_block();
                hpack_literal(&mut block, "x-oversized", &value);
                if write
                    .write_all(&header_frames(stream, &block))
                    .await
                    .is_err()
                {
                    break;
                }
            }
        }
    })
    .await;
}

/// Live games whose messages come cut into DATA frames of one byte each, a game after
/// another without end: the most frames for the fewest bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tiny_messages() {
    under_attack("tiny messages", |server| async move {
        let mut game = Vec::new();
        for (row, col) in [(1, 1), (0, 0), (2, 2), (0, 2), (0, 1)] {
            let play = PlayTicTacToeRequest {
                row,
                col,
                setup: None,
            };
            game.extend_from_slice(&grpc_frame(&play));
        }
        loop {
            let mut sender = h2_from(server, HERE).await;
            // The last games, kept until they are long answered: a stream dropped at once
            // would be reset before its answer, which is another attack.
            let mut kept = std::collections::VecDeque::new();
            loop {
                let Ok(ready) = sender.clone().ready().await else {
                    break;
                };
                sender = ready;
                let Ok((reply, mut body)) =
                    sender.send_request(call_headers(server, "PlayTicTacToe", None), false)
                else {
                    break;
                };
                for byte in &game {
                    let _ = body.send_data(bytes::Bytes::copy_from_slice(&[*byte]), false);
                }
                let _ = body.send_data(bytes::Bytes::new(), true);
                kept.push_back((reply, body));
                if kept.len() > 64 {
                    kept.pop_front();
                }
                tokio::task::yield_now().await;
            }
        }
    })
    .await;
}
