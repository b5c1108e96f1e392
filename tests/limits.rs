//! Limits and overload, through a real client: request size, live games, calls in flight.
//! The live-game limits hold for every registered live game
//! ([`arbiter::visit_live_games`]), each played through its `Fixture`: the limit filled
//! by streams of every game, and a stream of each refused past it.

mod common;

use std::time::{Duration, Instant};

use arbiter::proto::{Board, CheckConnectFourRequest};
use arbiter::{Arbiter, LiveGame, LiveGameVisitor};
use common::games::{
    for_each_game, hold_open, hold_silent, open as open_stream, path, GameTest, Held,
};
use common::status::assert_status;
use common::TestServer;
use futures_util::future::BoxFuture;
use futures_util::StreamExt;
use prost::bytes::{Buf, BufMut};
use prost::encoding::{DecodeContext, WireType};
use prost::{DecodeError, Message};
use tokio_stream::wrappers::ReceiverStream;
use tonic::codegen::http;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};

/// A registered live game's kind, whatever its game: its RPC, and how to open a stream of
/// it over the wire.
#[derive(Clone, Copy)]
struct Kind {
    rpc: &'static str,
    /// A stream of this kind opened on a channel, sent its fixture's setup and answered:
    /// what keeps it open, or the status refusing it.
    hold: fn(Channel) -> BoxFuture<'static, Result<Held, Status>>,
    /// A stream of this kind opened on a channel and sent nothing: what keeps it open, or
    /// the status refusing it.
    silent: fn(Channel) -> BoxFuture<'static, Result<Held, Status>>,
    /// A stream of this kind opened on a channel and sent its fixture's setup: how long
    /// its first reply took (checked to be that setup's), and what keeps it open.
    set_up: fn(Channel) -> BoxFuture<'static, (Duration, Held)>,
}

impl Kind {
    /// What keeps a stream of this kind open, or a failure naming its RPC.
    fn kept(&self, opened: Result<Held, Status>) -> Held {
        opened.unwrap_or_else(|status| panic!("{}: {status:?}", self.rpc))
    }
}

/// Every registered live game's kind, in the registration's order.
fn kinds() -> Vec<Kind> {
    struct Kinds(Vec<Kind>);
    impl LiveGameVisitor for Kinds {
        fn visit<G: LiveGame>(&mut self) {
            self.0.push(Kind {
                rpc: G::RPC,
                hold: hold_open::<G>,
                silent: hold_silent::<G>,
                set_up: set_up::<G>,
            });
        }
    }
    let mut kinds = Kinds(Vec::new());
    arbiter::visit_live_games(&mut kinds);
    assert!(!kinds.0.is_empty(), "no live game is registered");
    kinds.0
}

/// [`Kind::set_up`] for `G`.
fn set_up<G: LiveGame>(channel: Channel) -> BoxFuture<'static, (Duration, Held)> {
    Box::pin(async move {
        let started = Instant::now();
        let (sender, requests) = tokio::sync::mpsc::channel::<G::Request>(2);
        sender.send(G::setup(None, None, &[])).await.unwrap();
        let mut replies = open_stream::<G>(&channel, ReceiverStream::new(requests))
            .await
            .unwrap_or_else(|status| panic!("{}: {status:?}", G::RPC));
        let first = match replies.message().await {
            Ok(Some(first)) => first,
            Ok(None) => panic!("{}: no reply", G::RPC),
            Err(status) => panic!("{}: {status:?}", G::RPC),
        };
        let seen = G::seen(&first);
        assert_eq!((seen.moves_played, seen.rejected), (0, ""), "{}", G::RPC);
        assert!(seen.to_move.is_some(), "{}: the game is over", G::RPC);
        (started.elapsed(), Box::new((sender, replies)) as Held)
    })
}

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

/// A live game's message with an unknown field (99) after its own, as a newer client
/// might send: the padding makes it as large as a test needs.
#[derive(Debug, Default)]
struct Padded<M> {
    message: M,
    padding: Vec<u8>,
}

impl<M: Message> Padded<M> {
    fn new(message: M, padding: usize) -> Self {
        Self {
            message,
            padding: vec![7; padding],
        }
    }
}

impl<M: Message> Message for Padded<M> {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        self.message.encode_raw(buf);
        if !self.padding.is_empty() {
            prost::encoding::bytes::encode(99, &self.padding, buf);
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        self.message.merge_field(tag, wire_type, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        let padding = match self.padding.len() {
            0 => 0,
            _ => prost::encoding::bytes::encoded_len(99, &self.padding),
        };
        self.message.encoded_len() + padding
    }

    fn clear(&mut self) {
        self.message.clear();
        self.padding.clear();
    }
}

/// A message the fixture of `G` has applied, from its setup, the game going on (by its
/// own stream, in process).
async fn applied_move<G: LiveGame>() -> G::Request {
    let service = Arbiter::default();
    let setup = G::setup(None, None, &[]);
    let replies = |messages: Vec<G::Request>| {
        service
            .open_game::<G, _>(futures_util::stream::iter(messages.into_iter().map(Ok)))
            .collect::<Vec<_>>()
    };
    let Some(Ok(start)) = replies(vec![setup.clone()]).await.pop() else {
        panic!("{}: the fixture's setup is refused", G::RPC);
    };
    for pick in 0..1000 {
        let message = G::next(pick, &start);
        if let Some(Ok(reply)) = replies(vec![setup.clone(), message.clone()]).await.pop() {
            let seen = G::seen(&reply);
            if seen.rejected.is_empty() && seen.moves_played == 1 && seen.to_move.is_some() {
                return message;
            }
        }
    }
    panic!("{}: none of a thousand messages was applied", G::RPC)
}

/// On a server whose requests are at most 4 KiB, a stream of every registered game: its
/// setup, then a move applied though it carries 100 bytes of an unknown field, then a
/// message of 10,000 bytes of it.
struct OversizedMessages {
    server: TestServer,
    channel: Channel,
}

impl GameTest for OversizedMessages {
    async fn run<G: LiveGame>(&self) {
        let mut grpc = tonic::client::Grpc::new(self.channel.clone());
        grpc.ready().await.unwrap();
        let messages = vec![
            Padded::new(G::setup(None, None, &[]), 0),
            // Unknown fields are skipped: this move is applied.
            Padded::new(applied_move::<G>().await, 100),
            Padded::new(G::rejected(), 10_000),
        ];
        let too_large = messages[2].encoded_len();
        let codec = tonic_prost::ProstCodec::<Padded<G::Request>, G::Response>::default();
        let mut replies = grpc
            .streaming(
                Request::new(tokio_stream::iter(messages)),
                path::<G>().parse().unwrap(),
                codec,
            )
            .await
            .unwrap()
            .into_inner();
        for moves in [0, 1] {
            let Ok(Some(reply)) = replies.message().await else {
                panic!("{}: no reply {moves}", G::RPC);
            };
            let seen = G::seen(&reply);
            assert_eq!(
                (seen.moves_played, seen.rejected),
                (moves, ""),
                "{}",
                G::RPC
            );
        }
        let Err(status) = replies.message().await else {
            panic!("{}: the stream went on", G::RPC);
        };
        assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
        assert_eq!(
            status.message(),
            format!(
                "the request is {too_large} bytes; the server accepts at most 4096 \
                 (--max-request-bytes)"
            )
        );
        self.server.wait_for_live_games(0).await;
    }
}

/// A live game's message over `--max-request-bytes` ends its stream with
/// RESOURCE_EXHAUSTED saying its size and the limit, for every registered game, its
/// earlier messages answered, one with an unknown field among them. Fails against a
/// server that lets the message through, says otherwise, or refuses unknown fields.
#[tokio::test]
async fn an_oversized_move_ends_the_stream_with_resource_exhausted() {
    let server = TestServer::start_with_flags("--max-request-bytes 4096").await;
    let channel = server.channel().await;
    for_each_game(&OversizedMessages { server, channel }).await;
}

/// Checks a stream of every kind of `kinds` is refused on `channel`, past the limit of
/// `limit` live games.
async fn every_kind_refused(kinds: &[Kind], channel: &Channel, limit: usize) {
    for kind in kinds {
        let Err(status) = (kind.hold)(channel.clone()).await else {
            panic!("{}: a game opened past the limit", kind.rpc);
        };
        assert_status(
            &status,
            Code::ResourceExhausted,
            &format!("limit of {limit} live games"),
        );
    }
}

/// The limit filled by a stream of every registered game, one apiece: a stream of each
/// is then refused; each game ended in turn makes room for one game, of the next kind.
/// Fails against a server without the limit, that counts some game's streams apart, or
/// that does not give a place back when a game ends.
#[tokio::test]
async fn live_games_beyond_the_limit_are_refused() {
    let kinds = kinds();
    let limit = kinds.len();
    let server = TestServer::start_with_flags(&format!("--max-live-games {limit}")).await;
    let channel = server.channel().await;
    let mut held = Vec::new();
    for kind in &kinds {
        held.push(Some(kind.kept((kind.hold)(channel.clone()).await)));
    }
    server.wait_for_live_games(limit).await;
    every_kind_refused(&kinds, &channel, limit).await;

    // One game ends: there is room again, for a game of another kind.
    for i in 0..limit {
        held[i] = None;
        server.wait_for_live_games(limit - 1).await;
        let next = &kinds[(i + 1) % limit];
        held[i] = Some(next.kept((next.hold)(channel.clone()).await));
        server.wait_for_live_games(limit).await;
        every_kind_refused(&kinds, &channel, limit).await;
    }
}

/// A game counts from its stream's first message, not its headers: with the limit at one
/// game of each registered kind, three streams of each kind that send nothing are all
/// opened and hold no place; a game of each kind then still opens, and one more of each
/// is refused. Fails against a server that counts a game from its stream's headers.
#[tokio::test]
async fn streams_with_no_message_hold_no_game() {
    let kinds = kinds();
    let limit = kinds.len();
    let server = TestServer::start_with_flags(&format!("--max-live-games {limit}")).await;
    let channel = server.channel().await;
    let mut held = Vec::new();
    for kind in kinds.iter().cycle().take(3 * limit) {
        held.push(kind.kept((kind.silent)(channel.clone()).await));
    }
    assert_eq!(
        server.live_games.count(),
        0,
        "streams with no message hold games"
    );
    for kind in &kinds {
        held.push(kind.kept((kind.hold)(channel.clone()).await));
    }
    server.wait_for_live_games(limit).await;
    every_kind_refused(&kinds, &channel, limit).await;
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

/// 60 streams opened at once on four connections, of every registered game in turn,
/// against a limit of 5 live games: exactly 5 open, every other is refused with
/// RESOURCE_EXHAUSTED, and a stream of every game is among those refused. Fails against a
/// server whose count races, or that counts some game's streams apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_opens_never_pass_the_live_game_limit() {
    let kinds = kinds();
    let server = TestServer::start_with_flags("--max-live-games 5").await;
    let mut channels = Vec::new();
    for _ in 0..4 {
        channels.push(server.channel().await);
    }
    let opens: Vec<_> = (0..60)
        .map(|i| {
            let kind = kinds[i % kinds.len()];
            (
                kind,
                tokio::spawn((kind.hold)(channels[i % channels.len()].clone())),
            )
        })
        .collect();
    let mut kept = Vec::new();
    let mut refused = Vec::new();
    for (kind, opened) in opens {
        match opened.await.unwrap() {
            Ok(held) => kept.push(held),
            Err(status) => {
                assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
                refused.push(kind.rpc);
            }
        }
    }
    assert_eq!(kept.len(), 5, "games opened past the limit");
    assert_eq!(server.live_games.count(), 5);
    for kind in &kinds {
        assert!(
            refused.contains(&kind.rpc),
            "no {} stream was refused",
            kind.rpc
        );
    }
}

/// Sends a CheckConnectFour call's headers and the first bytes of its message on a
/// connection of its own, and never the rest: the call's reply to come, and its body's
/// sender (dropping it would end the body).
async fn stall_a_unary_call(
    server: &TestServer,
) -> (
    h2::client::ResponseFuture,
    h2::SendStream<prost::bytes::Bytes>,
) {
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
    let (reply, mut body) = sender.send_request(request, false).unwrap();
    // The message begun; the body stream stays open.
    body.send_data(common::callers::first_part_of_a_message(), false)
        .unwrap();
    (reply, body)
}

/// The refusal a CheckConnectFour call from `client` gets while a stalled call holds the
/// only in-flight place (calls are answered until the stalled one reaches the server).
async fn refused_while_stalled(
    client: &mut arbiter::proto::arbiter_service_client::ArbiterServiceClient<Channel>,
) -> Status {
    loop {
        match client.check_connect_four(big_board(10)).await {
            Err(status) => break status,
            Ok(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// Health checks are never refused by the in-flight limit, which is meant for work: with
/// the only place held by a unary call whose body never comes, a CheckConnectFour is
/// refused RESOURCE_EXHAUSTED and a health check still answers SERVING, its Watch too.
/// Fails against a server whose limit counts health checks, as Kubernetes' probes would
/// then fail a server that is merely busy.
#[tokio::test]
async fn health_checks_are_answered_when_every_place_is_held() {
    let server = TestServer::start_with_flags("--max-in-flight 1 --request-timeout 60s").await;
    // The call holds the only place until its body comes.
    let (_stalled, _body) = stall_a_unary_call(&server).await;
    let mut client = server.client().await;
    let refused = refused_while_stalled(&mut client).await;
    assert_status(
        &refused,
        Code::ResourceExhausted,
        "limit of 1 calls in flight",
    );
    common::status::assert_serving(server.channel().await).await;
    let _watch = common::status::watch_serving(server.channel().await).await;
    // The work is still refused: the health checks took no place and gave none back.
    let status = client.check_connect_four(big_board(10)).await.unwrap_err();
    assert_status(
        &status,
        Code::ResourceExhausted,
        "limit of 1 calls in flight",
    );
}

/// A client that sends a unary call's headers and never its body holds the server's only
/// in-flight place until `--request-timeout`, not forever: the stalled call then ends with
/// CANCELLED "Timeout expired" and other calls are answered again. (A server without the
/// deadline keeps refusing them.)
#[tokio::test]
async fn a_unary_call_whose_body_never_comes_ends_at_the_request_timeout() {
    let server = TestServer::start_with_flags("--max-in-flight 1 --request-timeout 500ms").await;
    let started = std::time::Instant::now();
    let (stalled, _body) = stall_a_unary_call(&server).await;

    // While it waits, it holds the only place.
    let mut client = server.client().await;
    let refused = refused_while_stalled(&mut client).await;
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

/// A unary call takes its place among those in flight with its first message, not its
/// headers: with `--max-in-flight 1`, three calls whose headers came and whose message
/// never does hold no place, so a whole call is answered beside them; they end at
/// `--request-timeout` with CANCELLED "Timeout expired". Fails against a server that
/// counts a call from its headers (the whole call is refused), or that lets a call wait
/// for its message past the timeout.
#[tokio::test]
async fn a_unary_call_holds_no_place_until_its_first_message() {
    let server = TestServer::start_with_flags("--max-in-flight 1 --request-timeout 500ms").await;
    let mut sender = common::callers::h2_from(server.addr, "127.0.0.1".parse().unwrap()).await;
    let mut waiting = Vec::new();
    for _ in 0..3 {
        let request = common::callers::call_headers(server.addr, "CheckConnectFour", None);
        waiting.push(sender.send_request(request, false).unwrap());
    }
    // Each has reached the server when a call after them on the connection is answered.
    let (reply, mut body) = sender
        .send_request(
            common::callers::call_headers(server.addr, "CheckConnectFour", None),
            false,
        )
        .unwrap();
    let mut framed = vec![0];
    let message = big_board(10).encode_to_vec();
    framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
    framed.extend_from_slice(&message);
    body.send_data(framed.into(), true).unwrap();
    let reply = reply.await.unwrap();
    let mut trailers = reply.into_body();
    while let Some(data) = trailers.data().await {
        data.unwrap();
    }
    let trailers = trailers.trailers().await.unwrap().unwrap_or_default();
    assert_eq!(trailers["grpc-status"], "0", "{trailers:?}");
    let mut client = server.client().await;
    assert!(
        client
            .check_connect_four(big_board(10))
            .await
            .unwrap()
            .into_inner()
            .wins
    );

    for (reply, _body) in waiting {
        let reply = tokio::time::timeout(Duration::from_secs(5), reply)
            .await
            .expect("a call waiting for its message was not ended within 5 s")
            .unwrap();
        let headers = reply.headers();
        assert_eq!(headers["grpc-status"], "1", "{headers:?}");
        assert_eq!(headers["grpc-message"], "Timeout%20expired", "{headers:?}");
    }
}

/// Hundreds of live games on one connection: 400 streams of every registered game in
/// turn opened at once on one HTTP/2 connection (one tonic channel), as a game server
/// multiplexes its matches. Every game gets its first reply (its setup's) within a
/// second, and unary calls made on the same connection while all 400 are open answer
/// within their 2 s deadline. Fails on a server whose `--max-concurrent-streams` default
/// is below the games and calls of one such client (it was 256: the games past the
/// 256th, and every call behind them, waited for a game to end).
#[tokio::test]
async fn four_hundred_live_games_on_one_connection_and_calls_beside_them() {
    use arbiter::proto::arbiter_service_client::ArbiterServiceClient;

    const GAMES: usize = 400;
    let kinds = kinds();
    let server = TestServer::start().await;
    let channel = server.channel().await;
    let mut opening = tokio::task::JoinSet::new();
    for i in 0..GAMES {
        opening.spawn((kinds[i % kinds.len()].set_up)(channel.clone()));
    }
    let mut games = Vec::with_capacity(GAMES);
    while let Some(opened) = opening.join_next().await {
        games.push(opened.unwrap());
    }
    let slowest = games.iter().map(|(waited, _)| *waited).max().unwrap();
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

/// A connection whose streams the server has to reset for their errors, again and again
/// (here each a body longer than its content-length), is sent GOAWAY after 1,024 of them
/// (h2's guard, which tonic leaves off), and a new connection is served. Fails against a
/// server that resets such streams without end, as one with tonic's defaults does
/// (hundreds of thousands of them on one connection, each costing the server work).
#[tokio::test]
async fn a_connection_that_makes_the_server_reset_its_streams_is_closed() {
    let server = TestServer::start().await;
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let (sender, connection) = h2::client::handshake(tcp).await.unwrap();
    let closed = tokio::spawn(connection);
    let mut sender = sender;
    let mut sent = 0;
    let mut refused = None;
    for _ in 0..4000 {
        sender = match sender.ready().await {
            Ok(sender) => sender,
            Err(error) => {
                refused = Some(error);
                break;
            }
        };
        let request = http::Request::post(format!(
            "http://{}/arbiter.v1.ArbiterService/CheckConnectFour",
            server.addr
        ))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("content-length", "1")
        .body(())
        .unwrap();
        let (response, mut body) = match sender.send_request(request, false) {
            Ok(sent) => sent,
            Err(error) => {
                refused = Some(error);
                break;
            }
        };
        // Ten bytes where one was declared: the server resets the stream.
        let _ = body.send_data(prost::bytes::Bytes::from_static(b"0123456789"), true);
        drop(response);
        sent += 1;
        tokio::task::yield_now().await;
    }
    let outcome = tokio::time::timeout(Duration::from_secs(30), closed)
        .await
        .expect("the connection ends")
        .unwrap();
    assert!(
        sent <= 2000,
        "{sent} streams reset on one connection and it is still open: {refused:?}"
    );
    let error = outcome
        .err()
        .or(refused)
        .expect("the connection ended with an error");
    assert!(
        format!("{error:?}").contains("ENHANCE_YOUR_CALM") || error.is_go_away(),
        "{error:?}"
    );
    // Another client is served.
    let mut client = server.client().await;
    assert!(client.check_connect_four(big_board(10)).await.is_ok());
}
