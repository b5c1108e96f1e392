//! Error replies stay small whatever the request held: the worst requests over the wire,
//! and the trailers the client receives measured as they are sent (`grpc-message`
//! percent-encoded, `grpc-status-details-bin` in base64). The unary checks' cases are
//! boards of their own; the live games' cases run for every registered live game
//! ([`arbiter::visit_live_games`]), made by its `Fixture`.
//!
//! gRPC clients on the C core (Python, C++, Ruby, C#, PHP) refuse more than 8 KiB of
//! metadata by default, grpc-java too: past it they see RESOURCE_EXHAUSTED instead of the
//! error, and lose its details. The client here accepts up to 64 MiB of headers, so that
//! a server writing too much is measured rather than refused by the transport.

mod common;

use std::fmt::Debug;
use std::future::Future;

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::{
    Board, CheckConnectFourRequest, CheckOthelloMoveRequest, JudgeTicTacToeRequest, TicTacToeMove,
};
use arbiter::LiveGame;
use common::games::{for_each_game, open, path, GameTest};
use common::TestServer;
use prost::Message;
use tonic::codegen::http::HeaderMap;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};
use tonic_types::StatusExt;

/// What every error reply must fit in.
const LIMIT: usize = 8 * 1024;

/// A new server, and a client of it that accepts up to 64 MiB of headers and messages of
/// any size.
async fn start() -> (TestServer, ArbiterServiceClient<Channel>) {
    let server = TestServer::start().await;
    let channel = Endpoint::from_shared(format!("http://{}", server.addr))
        .unwrap()
        .http2_max_header_list_size(64 << 20)
        .connect()
        .await
        .unwrap();
    let client = ArbiterServiceClient::new(channel)
        .max_decoding_message_size(usize::MAX)
        .max_encoding_message_size(usize::MAX);
    (server, client)
}

/// The bytes of `grpc-message` and `grpc-status-details-bin` as they travel (names and
/// values), and those of every trailer the status came with.
fn trailer_bytes(status: &Status) -> (usize, usize) {
    let mut headers = HeaderMap::new();
    status.add_header(&mut headers).unwrap();
    let size = |(name, value): (&tonic::codegen::http::HeaderName, &_)| {
        name.as_str().len() + tonic::codegen::http::HeaderValue::len(value)
    };
    let error = headers
        .iter()
        .filter(|(name, _)| *name == "grpc-message" || *name == "grpc-status-details-bin")
        .map(size)
        .sum();
    (error, headers.iter().map(size).sum())
}

/// Checks `status` is INVALID_ARGUMENT in under 8 KiB of trailers, and returns its
/// violations as (field, description).
fn small_bad_request(what: &str, status: &Status) -> Vec<(String, String)> {
    let (error, all) = trailer_bytes(status);
    println!(
        "{what}: {error} bytes of grpc-message and grpc-status-details-bin, {all} of trailers"
    );
    assert_eq!(
        status.code(),
        Code::InvalidArgument,
        "{what}: {}",
        &status.message()[..status.message().len().min(300)]
    );
    assert!(all < LIMIT, "{what}: {all} bytes of trailers");
    assert!(
        status.message().len() <= 256,
        "{what}: a message of {} bytes",
        status.message().len()
    );
    status
        .get_details_bad_request()
        .expect("a google.rpc.BadRequest detail")
        .field_violations
        .into_iter()
        .map(|v| (v.field, v.description))
        .collect()
}

/// The status of a call that must fail, `what` it sent, checked as [`small_bad_request`]
/// checks it, and its violations.
async fn refused<T: Debug>(
    what: &str,
    call: impl Future<Output = Result<tonic::Response<T>, Status>>,
) -> (Status, Vec<(String, String)>) {
    let status = match call.await {
        Ok(reply) => panic!("{what}: answered with {reply:?}"),
        Err(status) => status,
    };
    let found = small_bad_request(what, &status);
    (status, found)
}

/// A CheckConnectFour request for (0, 0) on `rows`, good but for the board.
fn connect_four<S: AsRef<[u8]>>(rows: impl IntoIterator<Item = S>) -> CheckConnectFourRequest {
    CheckConnectFourRequest {
        board: Some(Board::from_rows(rows)),
        row: 0,
        col: 0,
        player: 1,
        run_length: 0,
    }
}

fn fields(found: &[(String, String)]) -> Vec<&str> {
    found.iter().map(|(field, _)| field.as_str()).collect()
}

fn othello(rows: Vec<String>, color: String) -> CheckOthelloMoveRequest {
    CheckOthelloMoveRequest {
        board: Some(Board::from_rows(rows)),
        row: 0,
        col: 0,
        color,
    }
}

/// The first ten rows' violations, then one saying the other 90 were left out.
fn assert_rows_listed(what: &str, found: &[(String, String)], cells: usize) {
    let mut expected: Vec<String> = (0..10).map(|i| format!("board.rows[{i}]")).collect();
    expected.push("board.rows".into());
    assert_eq!(fields(found), expected, "{what}");
    for (_, description) in &found[..10] {
        assert_eq!(
            description,
            &format!("has {cells} cells; at most 100 are allowed"),
            "{what}"
        );
    }
    assert_eq!(
        found[10].1, "... and 90 more violations not listed",
        "{what}"
    );
}

#[tokio::test]
async fn a_color_of_a_mebibyte_is_echoed_short() {
    let (_server, mut client) = start().await;
    // Just under the default 1 MiB request limit, so the request is decoded.
    let length = (1 << 20) - 1024;
    let (status, found) = refused(
        "1 MiB color",
        client.check_othello_move(othello(vec!["...".into()], "\u{1}".repeat(length))),
    )
    .await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "color");
    assert_eq!(
        found[0].1,
        format!(
            "must be \"B\" or \"W\", got \"{}...\" ({length} bytes)",
            "\\u{1}".repeat(25)
        )
    );
    assert_eq!(
        status.message(),
        format!("invalid CheckOthelloMoveRequest: color: {}", found[0].1)
    );
}

#[tokio::test]
async fn a_hundred_rows_too_wide_list_ten() {
    let (_server, mut client) = start().await;
    for (what, cell, cells) in [
        ("100 rows of 150 cells", ".", 150),
        ("100 rows of 101 cells", ".", 101),
        ("100 rows of 150 'é'", "é", 150),
    ] {
        let rows = vec![cell.repeat(cells); 100];
        let (status, found) =
            refused(what, client.check_othello_move(othello(rows, "B".into()))).await;
        assert_rows_listed(what, &found, cells);
        assert_eq!(
            status.message(),
            format!(
                "invalid CheckOthelloMoveRequest: board.rows[0]: has {cells} cells; at most \
                 100 are allowed; and 99 more (see the BadRequest details)"
            ),
            "{what}"
        );
    }
}

#[tokio::test]
async fn every_problem_at_once_is_counted() {
    let (_server, mut client) = start().await;
    // 100 bad rows, a bad row and column, and a bad color of half a mebibyte.
    let (_, found) = refused(
        "every problem at once",
        client.check_othello_move(CheckOthelloMoveRequest {
            board: Some(Board::from_rows(vec![".".repeat(150); 100])),
            row: -1,
            col: -1,
            color: "\u{202e}".repeat(170_000),
        }),
    )
    .await;
    assert_eq!(found.len(), 11);
    assert_eq!(found[10].0, "board.rows");
    assert_eq!(
        found[10].1,
        "... and 93 more violations not listed, on board.rows, row, col, color"
    );
}

/// Every bad row is named, not only the first: ten listed, the rest counted. Fails
/// against a server that stops at the first bad row.
#[tokio::test]
async fn a_hundred_rows_of_wide_characters_list_ten() {
    let (_server, mut client) = start().await;
    // 100 characters but 200 bytes a row: the size is fine, the first character is not.
    let rows = vec!["é".repeat(100); 100];
    let (_, found) = refused(
        "100 rows of 100 'é'",
        client.check_othello_move(othello(rows, "B".into())),
    )
    .await;
    assert_eq!(found.len(), 11, "{found:?}");
    for (index, (field, description)) in found[..10].iter().enumerate() {
        assert_eq!(field, &format!("board.rows[{index}]"));
        assert_eq!(
            description,
            &format!("row {index}, column 0: 'é' is not one of \".BW\"")
        );
    }
    assert_eq!(
        found[10],
        (
            "board.rows".into(),
            "... and 90 more violations not listed".into()
        )
    );
}

/// Fifteen bad rows of all three kinds, the first row good: ten violations in row
/// order, then the count of the other five. Fails against a server that names only
/// the first bad row, or lists more than ten.
#[tokio::test]
async fn fifteen_bad_rows_give_ten_violations_and_the_count_of_the_rest() {
    let (_server, mut client) = start().await;
    let mut rows = vec!["0000000".to_string()];
    for index in 1..=15 {
        rows.push(match index % 3 {
            0 => "000x000".into(),
            1 => "000".into(),
            _ => String::new(),
        });
    }
    let (_, found) = refused("15 bad rows", client.check_connect_four(connect_four(rows))).await;
    let mut expected: Vec<String> = (1..=10).map(|i| format!("board.rows[{i}]")).collect();
    expected.push("board.rows".into());
    assert_eq!(fields(&found), expected);
    assert_eq!(found[0].1, "row 1 has 3 cells but row 0 has 7");
    assert_eq!(found[1].1, "row 2 is empty");
    assert_eq!(found[2].1, "row 3, column 3: 'x' is not one of \"012\"");
    assert_eq!(found[10].1, "... and 5 more violations not listed");
}

/// The newcomer's two cases: each ragged row named, and the coordinates checked against
/// the size a board with a bad cell still shows. Fails against a server that names the
/// first bad row only, or checks coordinates only on a valid board.
#[tokio::test]
async fn every_row_and_both_coordinates_are_checked_on_a_refused_board() {
    let (_server, mut client) = start().await;
    let (_, found) = refused(
        "ragged rows",
        client.check_connect_four(connect_four(["000", "00", "0000"])),
    )
    .await;
    assert_eq!(
        fields(&found),
        ["board.rows[1]", "board.rows[2]"],
        "{found:?}"
    );

    let (_, found) = refused(
        "a bad cell and a cell off the board",
        client.check_othello_move(CheckOthelloMoveRequest {
            board: Some(Board::from_rows(["..X."])),
            row: 9,
            col: 9,
            color: "B".into(),
        }),
    )
    .await;
    assert_eq!(
        found,
        [
            (
                "board.rows[0]".to_string(),
                "row 0, column 2: 'X' is not one of \".BW\"".to_string()
            ),
            (
                "row".into(),
                "9 is outside the board, which has 1 row (only 0)".into()
            ),
            (
                "col".into(),
                "9 is outside the board, which has 4 columns (0 to 3)".into()
            ),
        ]
    );

    // Ragged rows leave the width unknown: the row is still checked, the column only
    // for being negative.
    let (_, found) = refused(
        "ragged rows and a row off the board",
        client.check_othello_move(CheckOthelloMoveRequest {
            board: Some(Board::from_rows(["...", ".."])),
            row: 2,
            col: 7,
            color: "B".into(),
        }),
    )
    .await;
    assert_eq!(fields(&found), ["board.rows[1]", "row"], "{found:?}");
    assert_eq!(
        found[1].1,
        "2 is outside the board, which has 2 rows (0 to 1)"
    );
}

/// Every move off the board is a problem that can be known: all 5,000 are counted, ten
/// listed and the rest in one more, within the bound. Fails against a server that names
/// only the first, or lists them all.
#[tokio::test]
async fn five_thousand_moves_off_the_board_are_each_counted() {
    let (_server, mut client) = start().await;
    let moves = (0..5000)
        .map(|i| TicTacToeMove {
            row: i32::MIN + i,
            col: i32::MAX - i,
        })
        .collect();
    let call = client.judge_tic_tac_toe(JudgeTicTacToeRequest { moves });
    let (_, found) = refused("5,000 moves off the board", call).await;
    assert_eq!(found.len(), 11);
    for (index, (field, description)) in found[..10].iter().enumerate() {
        assert_eq!(field, &format!("moves[{index}]"));
        assert_eq!(
            description,
            &format!(
                "({}, {}) is outside the board, which has 3 rows and 3 columns",
                i32::MIN + index as i32,
                i32::MAX - index as i32
            )
        );
    }
    assert_eq!(
        found[10],
        (
            "moves".into(),
            "... and 4990 more violations not listed".into()
        )
    );
}

/// Framed gRPC `messages` (each its raw bytes) posted to `path` on a raw HTTP/2
/// connection, the request then closed: the reply's status code and message (from the
/// trailers, or the headers of a trailers-only reply) and how many reply messages
/// came before it.
async fn raw_call(server: &TestServer, path: &str, messages: &[&[u8]]) -> (String, String, usize) {
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let (sender, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut sender = sender.ready().await.unwrap();
    let request = tonic::codegen::http::Request::post(format!("http://{}{path}", server.addr))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let (response, mut send) = sender.send_request(request, false).unwrap();
    let mut body = Vec::new();
    for message in messages {
        body.push(0);
        body.extend_from_slice(&(message.len() as u32).to_be_bytes());
        body.extend_from_slice(message);
    }
    send.send_data(body.into(), true).unwrap();
    let response = response.await.unwrap();
    let mut headers = response.headers().clone();
    let mut body = response.into_body();
    let mut replies = Vec::new();
    while let Some(data) = body.data().await {
        replies.extend_from_slice(&data.unwrap());
    }
    // The reply messages, by their 5-byte gRPC prefixes (a DATA frame may hold several).
    let mut received = 0;
    let mut rest = &replies[..];
    while rest.len() >= 5 {
        let length = u32::from_be_bytes(rest[1..5].try_into().unwrap()) as usize;
        rest = &rest[(5 + length).min(rest.len())..];
        received += 1;
    }
    if let Some(trailers) = body.trailers().await.unwrap() {
        headers = trailers;
    }
    let text = |name: &str| {
        headers
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    (text("grpc-status"), text("grpc-message"), received)
}

/// Bytes that are not the RPC's request message are the client's fault: INVALID_ARGUMENT
/// saying what prost found (tonic's own answer is INTERNAL, "failed to decode Protobuf
/// message"), for a unary call. Fails against a server that passes tonic's INTERNAL on.
#[tokio::test]
async fn undecodable_bytes_are_invalid_argument() {
    let server = TestServer::start().await;
    // Field 1 (board) announced as 5 bytes long, with 1 after it.
    let cut_short: &[u8] = &[0x0a, 5, 0x0a];
    let (code, message, replies) = raw_call(
        &server,
        "/arbiter.v1.ArbiterService/CheckOthelloMove",
        &[cut_short],
    )
    .await;
    assert_eq!((code.as_str(), replies), ("3", 0), "{message}");
    assert!(
        message.starts_with("the%20request%20is%20not%20a%20valid%20protobuf%20message"),
        "{message}"
    );
}

/// A live game's setup, answered, then bytes that are no message of any kind (a field's
/// tag that is an invalid varint).
struct UndecodableMessage(TestServer);

impl GameTest for UndecodableMessage {
    async fn run<G: LiveGame>(&self) {
        let setup = G::setup(None, None, &[]).encode_to_vec();
        let bad: &[u8] = &[0xff; 11];
        let (code, message, replies) = raw_call(&self.0, &path::<G>(), &[&setup, bad]).await;
        assert_eq!((code.as_str(), replies), ("3", 1), "{}: {message}", G::RPC);
        assert!(
            message.starts_with("the%20request%20is%20not%20a%20valid%20protobuf%20message"),
            "{}: {message}",
            G::RPC
        );
    }
}

/// Undecodable bytes on a live stream of every registered game, after a setup that was
/// answered: the stream ends INVALID_ARGUMENT saying what prost found. Fails against a
/// server that passes tonic's INTERNAL on, or ends the stream before answering the
/// setup.
#[tokio::test]
async fn undecodable_bytes_on_a_live_stream_are_invalid_argument() {
    for_each_game(&UndecodableMessage(TestServer::start().await)).await;
}

/// Setups of every live game whose history is `count` messages its game rejects, for
/// each count, on a client that accepts any size of headers.
struct BadHistories {
    server: TestServer,
    counts: &'static [usize],
}

impl GameTest for BadHistories {
    async fn run<G: LiveGame>(&self) {
        let channel = Endpoint::from_shared(format!("http://{}", self.server.addr))
            .unwrap()
            .http2_max_header_list_size(64 << 20)
            .connect()
            .await
            .unwrap();
        for &count in self.counts {
            let what = format!("{}, a setup of {count} rejected moves", G::RPC);
            let setup = G::setup(None, None, &vec![G::rejected(); count]);
            let mut replies = open::<G>(&channel, tokio_stream::iter([setup]))
                .await
                .unwrap_or_else(|status| panic!("{what}: {status:?}"));
            let status = match replies.message().await {
                Ok(_) => panic!("{what}: answered"),
                Err(status) => status,
            };
            let found = small_bad_request(&what, &status);
            assert!(
                status
                    .message()
                    .starts_with(&format!("invalid {}Request: setup.history", G::RPC)),
                "{what}: {}",
                status.message()
            );
            // The first bad move named, or the history's length; at most ten listed.
            assert!(!found.is_empty() && found.len() <= 11, "{what}: {found:?}");
            assert!(
                ["setup.history[0]", "setup.history"].contains(&found[0].0.as_str()),
                "{what}: {found:?}"
            );
            if count == 1 {
                assert_eq!(fields(&found), ["setup.history[0]"], "{what}");
            }
            for (field, _) in &found {
                assert!(field.starts_with("setup.history"), "{what}: {found:?}");
            }
            if found.len() == 11 {
                assert!(found[10].1.contains("more violations not listed"), "{what}");
            }
        }
    }
}

/// A live setup whose history is bad moves, from one to 50,000 (up to some 650 KB), of
/// every registered game: INVALID_ARGUMENT naming `setup.history` or an item of it (a
/// single bad move as `setup.history[0]`), at most ten violations listed and the rest
/// counted, within 8 KiB of trailers and a message of 256 bytes. Fails against a server
/// that names or echoes every bad move (its trailers past 8 KiB), that answers such a
/// setup, or that refuses it with another code or on another field.
#[tokio::test]
async fn a_live_setup_of_many_bad_moves_is_refused_in_few_bytes() {
    let server = TestServer::start().await;
    let counts = &[1, 10, 1000, 50_000];
    for_each_game(&BadHistories { server, counts }).await;
}
