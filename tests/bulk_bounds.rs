//! The bulk RPCs hold their bounds whatever one call or one message asks for: a
//! CheckBatch far over the request limit is refused from its length prefix, a PlayMany
//! message that would start 10,000 of the largest games starts only as many as the
//! stream and server limits allow (and the server's memory shows it), and 10,000
//! actions or checks that all fail are each answered with a bounded list.

mod common;

use std::time::Duration;

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::check::Check as Kind;
use arbiter::proto::game_action::Action;
use arbiter::proto::game_state::State;
use arbiter::proto::{
    play_connect_four_request, play_othello_request, Board, Check, CheckBatchRequest,
    CheckConnectFourRequest, ConnectFourSetup, GameAction, GameState, JudgeTicTacToeRequest,
    ListOthelloMovesRequest, OthelloSetup, PlayConnectFourRequest, PlayManyRequest,
    PlayManyResponse, PlayOthelloRequest, PlayTicTacToeRequest, TicTacToeMove, TicTacToeSetup,
};
use bytes::Bytes;
use common::bulk::{
    assert_within_budget, check_batch, exchange, game_action, only_violation, open_many,
    tic_tac_toe, ManyStream,
};
use common::setups::connect_four_setup;
use common::{options, TestServer};
use prost::Message;
use tokio::net::TcpStream;
use tonic::codegen::http;
use tonic::transport::Channel;

/// Replies to thousands of big games are large (1,000 100x100 boards are about 10 MB):
/// a client that asks for them must accept them.
fn client(channel: Channel) -> ArbiterServiceClient<Channel> {
    ArbiterServiceClient::new(channel).max_decoding_message_size(64 << 20)
}

/// A new 100x100 Connect Four game, number `game`.
fn big_connect_four(game: u64) -> GameAction {
    game_action(
        game,
        Action::ConnectFour(connect_four_setup((100, 100, 0), &[])),
    )
}

/// Sends one PlayMany message on a new stream and returns its states, and the stream.
async fn one_message(channel: Channel, actions: Vec<GameAction>) -> (Vec<GameState>, ManyStream) {
    let mut stream = open_many(&mut client(channel)).await;
    let states = exchange(&mut stream, actions).await;
    (states, stream)
}

/// Sends messages of 10,000 actions each starting a new 100x100 game on `stream` until
/// one starts none (a reply holds about 200 empty 100x100 boards before it is full,
/// MAX_REPLY_BYTES, and answers the actions left "not applied"): how many games started
/// in all, and the last message's states.
async fn fill(stream: &mut ManyStream) -> (usize, Vec<GameState>) {
    let mut started = 0;
    for round in 0..20u64 {
        let actions = (0..10_000)
            .map(|game| big_connect_four(round * 10_000 + game))
            .collect();
        let states = exchange(stream, actions).await;
        assert_eq!(states.len(), 10_000);
        assert_within_budget(&PlayManyResponse {
            states: states.clone(),
            ..Default::default()
        });
        let now = states.iter().filter(|s| s.state.is_some()).count();
        started += now;
        if now == 0 {
            return (started, states);
        }
        for state in states.iter().filter(|s| s.state.is_none()) {
            assert_eq!(state.invalid.len(), 1, "{state:?}");
            let why = &state.invalid[0];
            assert!(
                why.field == "game" || why.description.starts_with("not applied"),
                "{why:?}"
            );
        }
    }
    panic!("the games never stopped starting");
}

fn refused_on_game(state: &GameState) -> &str {
    let why = only_violation(state);
    assert_eq!(why.field, "game");
    &why.description
}

/// Fills a new PlayMany stream on `server` with big games until a message starts none,
/// each of whose actions must be refused on `game`, `limit` named: how many games
/// started, and the stream, which holds them.
async fn fill_until_refused(server: &TestServer, limit: &str) -> (usize, ManyStream) {
    let (_, mut stream) = one_message(server.channel().await, Vec::new()).await;
    let (started, last) = fill(&mut stream).await;
    for state in &last {
        let why = refused_on_game(state);
        assert!(why.contains(limit), "{why}");
    }
    (started, stream)
}

/// Messages of 10,000 actions each starting a 100x100 Connect Four game: each reply holds
/// about 200 new boards (then it is full and the rest are not applied), until 1,000 (the
/// default --max-games-per-stream) have started; a message then has all 10,000 refused
/// in place, and the stream holds 1,000 live games until it ends. Fails
/// against a server without the per-stream limit (it would hold 10,000) or that ends
/// the stream instead of answering in place.
#[tokio::test]
async fn a_message_starting_ten_thousand_big_games_starts_the_stream_limit() {
    let server = TestServer::start().await;
    let actions: Vec<GameAction> = (0..10_000).map(big_connect_four).collect();
    assert!(PlayManyRequest { actions }.encoded_len() < 1 << 20);
    let (started, stream) = fill_until_refused(&server, "limit of 1000 games").await;
    assert_eq!(started, 1_000);
    server.wait_for_live_games(1_000).await;
    drop(stream);
    server.wait_for_live_games(0).await;
}

/// The same message on a server whose --max-live-games (300) is below the stream's
/// limit: 300 start, the rest are refused with the server's limit named, and a new
/// single-game stream is refused too, until the PlayMany stream ends. Fails against a
/// server whose PlayMany games do not count toward the live-game limit.
#[tokio::test]
async fn the_live_game_limit_bounds_a_message_of_big_games() {
    let server = TestServer::start_with(options(&["--max-live-games", "300"])).await;
    let (started, stream) = fill_until_refused(&server, "limit of 300 live games").await;
    assert_eq!(started, 300);
    server.wait_for_live_games(300).await;
    // A game counts from its first message, which is refused.
    let status = client(server.channel().await)
        .play_tic_tac_toe(tokio_stream::iter([PlayTicTacToeRequest::default()]))
        .await
        .unwrap()
        .into_inner()
        .message()
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    drop(stream);
    server.wait_for_live_games(0).await;
}

/// Every field violation list is cut as an error reply's is: at most 10 violations and
/// one counting the rest, fields at most 64 bytes, descriptions at most 200.
fn assert_bounded(invalid: &[arbiter::proto::FieldViolation], what: &str) {
    assert!(!invalid.is_empty(), "{what}: no violation");
    assert!(invalid.len() <= 11, "{what}: {} violations", invalid.len());
    for violation in invalid {
        assert!(violation.field.len() <= 64, "{what}: {violation:?}");
        assert!(violation.description.len() <= 200, "{what}: {violation:?}");
    }
}

/// 10,000 actions in one message that all fail, in every way an action can: malformed
/// setups of each kind (Othello boards of 12 rows too wide, a Connect Four board of
/// impossible size, histories that break the rules), actions of the wrong kind, actions
/// with nothing set, closes of numbers that hold no game, int32 and u64 extremes. Each
/// is answered in place, with a bounded list, and starts no game; the one real game
/// is untouched. Fails against a server that lists every violation, starts a game from
/// a malformed setup, or ends the stream.
#[tokio::test]
async fn ten_thousand_failing_actions_are_each_answered_with_a_bounded_list() {
    let server = TestServer::start().await;
    let mut stream = open_many(&mut client(server.channel().await)).await;
    // Game 0: a live Tic-Tac-Toe game, centre taken.
    exchange(&mut stream, vec![tic_tac_toe(0, 1, 1)]).await;
    // A row shorter than the first (one violation: parsing stops there); and for the
    // first few Othello setups, 12 rows wider than the largest board, 12 violations.
    let bad_rows: Vec<String> = vec!["..".into(), ".".into()];
    let wide_rows: Vec<String> = vec![".".repeat(101); 12];
    let failing = |i: u64| -> GameAction {
        let game = match i % 3 {
            0 => u64::MAX - i,
            1 => i + 1,
            _ => 1 << 63 | i,
        };
        let action = match i % 8 {
            0 => Action::Othello(PlayOthelloRequest {
                action: Some(play_othello_request::Action::Setup(Box::new(
                    OthelloSetup {
                        board: Some(Board::from_rows(if i < 80 {
                            &wide_rows
                        } else {
                            &bad_rows
                        })),
                        to_move: "Z".into(),
                        history: Vec::new(),
                        ..Default::default()
                    },
                ))),
            }),
            1 => Action::ConnectFour(PlayConnectFourRequest {
                action: Some(play_connect_four_request::Action::Setup(Box::new(
                    ConnectFourSetup {
                        rows: i32::MAX,
                        cols: i32::MIN,
                        run_length: -1,
                        history: vec![i32::MIN, i32::MAX],
                        ..Default::default()
                    },
                ))),
            }),
            2 => Action::ConnectFour(PlayConnectFourRequest {
                action: Some(play_connect_four_request::Action::Setup(Box::new(
                    ConnectFourSetup {
                        rows: 0,
                        cols: 0,
                        run_length: 0,
                        // Column 0 holds 6 pieces: the seventh is refused.
                        history: vec![0; 7],
                        ..Default::default()
                    },
                ))),
            }),
            3 => Action::TicTacToe(PlayTicTacToeRequest {
                row: 0,
                col: 0,
                setup: Some(Box::new(TicTacToeSetup {
                    history: vec![
                        TicTacToeMove { row: 1, col: 1 },
                        TicTacToeMove {
                            row: i32::MIN,
                            col: i32::MAX,
                        },
                    ],
                    ..Default::default()
                })),
            }),
            4 => Action::Close(true),
            5 => {
                // The wrong kind for game 0, a Tic-Tac-Toe game.
                return common::bulk::drop(0, i32::MAX);
            }
            6 => return GameAction { game, action: None },
            _ => Action::Othello(PlayOthelloRequest {
                action: Some(play_othello_request::Action::Setup(Box::new(
                    OthelloSetup {
                        board: None,
                        to_move: String::new(),
                        history: vec![arbiter::proto::Cell {
                            row: i32::MIN,
                            col: i32::MIN,
                        }],
                        ..Default::default()
                    },
                ))),
            }),
        };
        game_action(game, action)
    };
    let actions: Vec<GameAction> = (0..10_000).map(failing).collect();
    let request = PlayManyRequest { actions };
    assert!(request.encoded_len() < 1 << 20, "{}", request.encoded_len());
    let states = exchange(&mut stream, request.actions.clone()).await;
    assert_eq!(states.len(), 10_000);
    for (action, state) in request.actions.iter().zip(&states) {
        assert_eq!(state.game, action.game);
        assert!(
            state.state.is_none(),
            "{action:?} started or reached a game: {state:?}"
        );
        assert_bounded(&state.invalid, &format!("{action:?}"));
    }
    // The 12 wide rows and the side are cut to 10 and a count; only game 0 is live, and it went on
    // where it was.
    assert_eq!(states[0].invalid.len(), 11, "{:?}", states[0]);
    server.wait_for_live_games(1).await;
    let states = exchange(&mut stream, vec![tic_tac_toe(0, 0, 0)]).await;
    match &states[0].state {
        Some(State::TicTacToe(r)) => assert_eq!((r.moves_played, r.rejected.as_str()), (2, "")),
        other => panic!("{other:?}"),
    }
}

/// 10,000 checks in one batch that are all malformed, within the request limit: an OK
/// call, every check answered in place with a bounded list. Fails against a batch that
/// fails the call for them or lists every violation.
#[tokio::test]
async fn ten_thousand_malformed_checks_are_each_answered_with_a_bounded_list() {
    let server = TestServer::start().await;
    // A row shorter than the first; for the first few, 12 rows too wide and the colour:
    // 13 violations.
    let bad_rows: Vec<String> = vec!["..".into(), ".".into()];
    let wide_rows: Vec<String> = vec![".".repeat(101); 12];
    let checks: Vec<Check> = (0..10_000)
        .map(|i| Check {
            check: match i % 4 {
                0 => Some(Kind::ListOthelloMoves(ListOthelloMovesRequest {
                    board: Some(Board::from_rows(if i < 40 {
                        &wide_rows
                    } else {
                        &bad_rows
                    })),
                    color: "\u{202e}".repeat(8),
                })),
                1 => Some(Kind::CheckConnectFour(CheckConnectFourRequest {
                    board: Some(Board::from_rows(["12", "1"])),
                    row: i32::MIN,
                    col: i32::MAX,
                    player: i32::MIN,
                    run_length: i32::MIN,
                })),
                2 => Some(Kind::JudgeTicTacToe(JudgeTicTacToeRequest {
                    moves: vec![TicTacToeMove {
                        row: i32::MAX,
                        col: i32::MIN,
                    }],
                })),
                _ => None,
            },
        })
        .collect();
    let request = CheckBatchRequest { checks };
    assert!(request.encoded_len() < 1 << 20, "{}", request.encoded_len());
    let reply = check_batch(&mut client(server.channel().await), request.checks).await;
    assert_eq!(reply.results.len(), 10_000);
    for (i, result) in reply.results.iter().enumerate() {
        assert!(result.result.is_none(), "check {i}: {result:?}");
        assert_bounded(&result.invalid, &format!("check {i}"));
    }
    assert_eq!(reply.results[0].invalid.len(), 11, "{:?}", reply.results[0]);
}

/// The encoding of a CheckBatch of `checks` copies of `check`, built from the encoding
/// of one (a repeated field's encoding is the concatenation of its items').
fn batch_of(check: &Check, checks: usize) -> Vec<u8> {
    CheckBatchRequest {
        checks: vec![check.clone()],
    }
    .encode_to_vec()
    .repeat(checks)
}

/// The `grpc-status` of a response, from its headers (a trailers-only reply) or its
/// trailers.
async fn grpc_status(response: h2::client::ResponseFuture) -> String {
    let response = tokio::time::timeout(Duration::from_secs(10), response)
        .await
        .expect("no response in 10 s")
        .unwrap();
    if let Some(status) = response.headers().get("grpc-status") {
        return status.to_str().unwrap().to_string();
    }
    let mut body = response.into_body();
    while let Some(data) = body.data().await {
        let _ = body.flow_control().release_capacity(data.unwrap().len());
    }
    let trailers = body.trailers().await.unwrap().expect("no trailers");
    trailers["grpc-status"].to_str().unwrap().to_string()
}

fn grpc_post(server: &TestServer, method: &str) -> http::Request<()> {
    http::Request::post(format!(
        "http://{}/arbiter.v1.ArbiterService/{method}",
        server.addr
    ))
    .header("content-type", "application/grpc")
    .header("te", "trailers")
    .body(())
    .unwrap()
}

/// A CheckBatch of 10,000 100x100 boards (about 102 MB, a hundred times the 1 MiB
/// request limit) is refused with RESOURCE_EXHAUSTED from its 5-byte length prefix:
/// the client sends the prefix and the first 64 KiB of the message and leaves the
/// stream open, so a server that waited for the message, or decoded any of it, would
/// never answer. Then a well-formed batch on the same connection is answered. And the
/// largest batch of 100x100 boards under the limit (100 checks) is answered.
#[tokio::test]
async fn a_check_batch_of_ten_thousand_big_boards_is_refused_from_its_length_prefix() {
    let server = TestServer::start().await;
    let big = Check {
        check: Some(Kind::CheckConnectFour(CheckConnectFourRequest {
            board: Some(Board::from_rows(vec!["1".repeat(100); 100])),
            row: 0,
            col: 0,
            player: 1,
            run_length: 0,
        })),
    };
    let message = batch_of(&big, 10_000);
    assert!(message.len() > 100_000_000, "{}", message.len());

    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let (mut sender, connection) = h2::client::handshake(tcp).await.unwrap();
    let connection = tokio::spawn(async move {
        let _ = connection.await;
    });
    sender = sender.ready().await.unwrap();
    let (response, mut send) = sender
        .send_request(grpc_post(&server, "CheckBatch"), false)
        .unwrap();
    let mut head = vec![0];
    head.extend_from_slice(&(message.len() as u32).to_be_bytes());
    head.extend_from_slice(&message[..64 * 1024]);
    send.send_data(Bytes::from(head), false).unwrap();
    assert_eq!(grpc_status(response).await, "8", "RESOURCE_EXHAUSTED");

    // The connection is still usable: a small batch on it is answered.
    let small = batch_of(&big, 1);
    let mut framed = vec![0];
    framed.extend_from_slice(&(small.len() as u32).to_be_bytes());
    framed.extend_from_slice(&small);
    sender = sender.ready().await.unwrap();
    let (response, mut send) = sender
        .send_request(grpc_post(&server, "CheckBatch"), false)
        .unwrap();
    send.send_data(Bytes::from(framed), true).unwrap();
    assert_eq!(grpc_status(response).await, "0");
    drop(sender);
    connection.abort();

    // 100 checks of 100x100 boards fit under the default limit, and are answered.
    let fits = CheckBatchRequest {
        checks: vec![big; 100],
    };
    assert!(fits.encoded_len() < 1 << 20);
    let reply = check_batch(&mut client(server.channel().await), fits.checks).await;
    assert_eq!(reply.results.len(), 100);
}

/// The resident memory of process `pid`, in KiB.
#[cfg(target_os = "linux")]
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The server process's memory while one PlayMany stream holds the 1,000 100x100
/// Connect Four games a 10,000-game message can start: measured on the server binary
/// (a process of its own, /proc/PID/status). The bound, 160 MiB for the 1,000 games and
/// the message's 10 MB reply (about 70 MiB measured; RELIABILITY.md has the bytes per
/// game), fails a server that started all 10,000 games (some 200 MiB of games and a
/// 100 MB reply).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_message_of_ten_thousand_big_games_holds_bounded_memory() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    /// The server process, killed when dropped (also when the test fails).
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    let mut child = Killed(
        Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(["--listen", "127.0.0.1:0"])
            .env("RUST_LOG", "warn,arbiter=info")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stdout = BufReader::new(child.0.stdout.take().unwrap());
    let mut address = None;
    let mut line = String::new();
    while stdout.read_line(&mut line).unwrap() > 0 {
        if let Some((_, rest)) = line.split_once("arbiter listening on ") {
            address = Some(rest.trim().to_string());
            break;
        }
        line.clear();
    }
    // Keep reading the log, so that the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in stdout.lines() {});
    let address = address.expect("the server logged no address");
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{address}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let before = rss_kib(child.0.id());
    let (_, mut stream) = one_message(channel.clone(), Vec::new()).await;
    let (started, _) = fill(&mut stream).await;
    assert_eq!(started, 1_000);
    let held = rss_kib(child.0.id());
    let grown = held.saturating_sub(before);
    eprintln!("RSS {before} KiB before, {held} KiB with 1,000 100x100 Connect Four games");
    assert!(
        grown < 160 * 1024,
        "the server grew by {grown} KiB for 1,000 games and one message"
    );
    drop(stream);
    drop(child);
}
