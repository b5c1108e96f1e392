//! The unary RPCs, reflection and health, through a real client over loopback.

mod common;

use arbiter::games::connect_four::fixtures::{
    CONNECT_FOUR_EXAMPLE_1, CONNECT_FOUR_EXAMPLE_2, CONNECT_FOUR_EXAMPLE_3,
};
use arbiter::games::othello::fixtures::{LC1958_EXAMPLE_1, LC1958_EXAMPLE_2};
use arbiter::games::othello::STANDARD_START;
use arbiter::games::tic_tac_toe::fixtures::{TIC_TAC_TOE_DRAW, TIC_TAC_TOE_DRAW_BOARD};
use arbiter::proto::{
    Board, Cell, CheckConnectFourRequest, CheckOthelloMoveRequest, JudgeTicTacToeRequest,
    ListOthelloMovesRequest, Verdict,
};
use common::messages::{board, cell, cells, moves};
use common::TestServer;
use tonic::Code;
use tonic_types::StatusExt;

fn c4(rows: &[&str], row: i32, col: i32, player: i32) -> CheckConnectFourRequest {
    CheckConnectFourRequest {
        board: board(rows),
        row,
        col,
        player,
        run_length: 0,
    }
}

fn othello_check(rows: &[&str], row: i32, col: i32, color: &str) -> CheckOthelloMoveRequest {
    CheckOthelloMoveRequest {
        board: board(rows),
        row,
        col,
        color: color.into(),
    }
}

fn othello_list(rows: &[&str], color: &str) -> ListOthelloMovesRequest {
    ListOthelloMovesRequest {
        board: board(rows),
        color: color.into(),
    }
}

fn judge(list: &[(i32, i32)]) -> JudgeTicTacToeRequest {
    JudgeTicTacToeRequest { moves: moves(list) }
}

/// Awaits `call`, which must answer OK, and returns the reply.
async fn ok<T, F>(call: F) -> T
where
    F: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
{
    call.await.expect("the call should answer OK").into_inner()
}

#[tokio::test]
async fn connect_four_seed_examples_over_the_wire() {
    let server = TestServer::start().await;
    let mut client = server.client().await;

    let reply = ok(client.check_connect_four(c4(&CONNECT_FOUR_EXAMPLE_1, 5, 4, 1))).await;
    assert!(reply.wins);
    assert_eq!(reply.run, cells(&[(5, 1), (5, 2), (5, 3), (5, 4)]));

    let reply = ok(client.check_connect_four(c4(&CONNECT_FOUR_EXAMPLE_2, 2, 3, 2))).await;
    assert!(reply.wins);
    assert_eq!(reply.run, cells(&[(2, 3), (3, 2), (4, 1), (5, 0)]));

    let reply = ok(client.check_connect_four(c4(&CONNECT_FOUR_EXAMPLE_3, 3, 6, 1))).await;
    assert!(!reply.wins);
    assert!(reply.run.is_empty());

    for (rows, row, col, player) in [(&["1"][..], 0, 0, 1), (&["222", "222", "222"][..], 1, 1, 2)] {
        let reply = ok(client.check_connect_four(c4(rows, row, col, player))).await;
        assert!(!reply.wins, "{rows:?}");
    }
}

#[tokio::test]
async fn connect_four_run_length() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let rows = ["111", "000"];
    let mut request = c4(&rows, 0, 1, 1);
    request.run_length = 3;
    let reply = ok(client.check_connect_four(request.clone())).await;
    assert!(reply.wins);
    assert_eq!(reply.run, cells(&[(0, 0), (0, 1), (0, 2)]));

    // Longer than the board: valid, and simply cannot win.
    request.run_length = i32::MAX;
    let reply = ok(client.check_connect_four(request)).await;
    assert!(!reply.wins);
}

#[tokio::test]
async fn othello_check_and_listing() {
    let server = TestServer::start().await;
    let mut client = server.client().await;

    let reply = ok(client.check_othello_move(othello_check(&LC1958_EXAMPLE_1, 4, 3, "B"))).await;
    assert!(reply.legal);
    assert_eq!(
        reply.flips,
        vec![
            cell(1, 3),
            cell(2, 3),
            cell(3, 3),
            cell(4, 4),
            cell(4, 5),
            cell(4, 6)
        ]
    );

    let reply = ok(client.check_othello_move(othello_check(&LC1958_EXAMPLE_2, 4, 4, "W"))).await;
    assert!(!reply.legal);
    assert!(reply.flips.is_empty());

    // An occupied target is not legal, and not an error.
    let reply = ok(client.check_othello_move(othello_check(&LC1958_EXAMPLE_1, 0, 3, "W"))).await;
    assert!(!reply.legal);

    let reply = ok(client.list_othello_moves(othello_list(&STANDARD_START, "W"))).await;
    let cells: Vec<Cell> = reply.moves.iter().map(|m| m.cell.unwrap()).collect();
    assert_eq!(cells, vec![cell(2, 4), cell(3, 5), cell(4, 2), cell(5, 3)]);
    assert_eq!(reply.moves[0].flips, vec![cell(3, 4)]);

    // A full board leaves no move: the player must pass.
    let reply = ok(client.list_othello_moves(othello_list(&["BW", "WB"], "B"))).await;
    assert!(reply.moves.is_empty());
}

#[tokio::test]
async fn tic_tac_toe_verdicts() {
    let server = TestServer::start().await;
    let mut client = server.client().await;

    // The seed's example: A wins on the main diagonal.
    let reply =
        ok(client.judge_tic_tac_toe(judge(&[(0, 0), (2, 0), (1, 1), (2, 1), (2, 2)]))).await;
    assert_eq!(reply.verdict(), Verdict::AWins);
    assert_eq!(reply.line, vec![cell(0, 0), cell(1, 1), cell(2, 2)]);
    assert_eq!(reply.board, board(&["X..", ".X.", "OOX"]));
    assert_eq!(reply.moves_played, 5);

    let b_wins = [(0, 0), (1, 1), (0, 1), (0, 2), (1, 0), (2, 0)];
    let reply = ok(client.judge_tic_tac_toe(judge(&b_wins))).await;
    assert_eq!(reply.verdict(), Verdict::BWins);
    assert_eq!(reply.line, vec![cell(0, 2), cell(1, 1), cell(2, 0)]);

    let reply = ok(client.judge_tic_tac_toe(judge(&TIC_TAC_TOE_DRAW))).await;
    assert_eq!(reply.verdict(), Verdict::Draw);
    assert!(reply.line.is_empty());
    assert_eq!(reply.board, board(&TIC_TAC_TOE_DRAW_BOARD));
    assert_eq!(reply.moves_played, 9);

    // No moves: pending, with an empty board.
    let reply = ok(client.judge_tic_tac_toe(judge(&[]))).await;
    assert_eq!(reply.verdict(), Verdict::Pending);
    assert_eq!(reply.board, board(&["...", "...", "..."]));
    assert_eq!(reply.moves_played, 0);
}

/// Calls `call` and returns the INVALID_ARGUMENT status's field violations as
/// (field, description) pairs, checking that the message names the first one and counts
/// the others.
async fn violations<T, F>(call: F) -> Vec<(String, String)>
where
    F: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    T: std::fmt::Debug,
{
    let status = call.await.expect_err("the request should be refused");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let bad_request = status
        .get_details_bad_request()
        .expect("a google.rpc.BadRequest detail");
    let found: Vec<(String, String)> = bad_request
        .field_violations
        .into_iter()
        .map(|v| (v.field, v.description))
        .collect();
    for (_, description) in &found {
        assert!(!description.is_empty());
    }
    let (field, description) = &found[0];
    let more = match found.len() {
        1 => String::new(),
        n => format!("; and {} more (see the BadRequest details)", n - 1),
    };
    assert!(
        status
            .message()
            .ends_with(&format!("{field}: {description}{more}")),
        "message {:?} does not name {field} first, then count {} more",
        status.message(),
        found.len() - 1
    );
    found
}

fn fields(found: &[(String, String)]) -> Vec<&str> {
    found.iter().map(|(field, _)| field.as_str()).collect()
}

#[tokio::test]
async fn bad_boards_name_the_field() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let othello = |board: Option<Board>| CheckOthelloMoveRequest {
        board,
        row: 0,
        col: 0,
        color: "B".into(),
    };

    let found = violations(client.check_othello_move(othello(None))).await;
    assert_eq!(found, vec![("board".into(), "is required".into())]);

    let found = violations(client.check_othello_move(othello(Some(Board::default())))).await;
    assert_eq!(fields(&found), ["board"]);
    assert!(found[0].1.contains("at least one row"));

    let tall = vec![".".to_string(); 101];
    let found = violations(client.check_othello_move(othello(Some(Board::from_rows(tall))))).await;
    assert_eq!(fields(&found), ["board"]);
    assert!(found[0].1.contains("101 rows"), "{found:?}");

    let wide = vec![".".repeat(100), ".".repeat(101)];
    let found = violations(client.check_othello_move(othello(Some(Board::from_rows(wide))))).await;
    assert_eq!(fields(&found), ["board.rows[1]"]);
    assert!(found[0].1.contains("101 cells"), "{found:?}");

    // Rows that are not UTF-8 are refused like any other bad cell, naming the row and
    // column of the first bad byte (prost would refuse the whole message as undecodable).
    let not_utf8 = Board::from_rows([&b"B.W"[..], &[b'.', 0xff, b'W'][..]]);
    let found = violations(client.check_othello_move(othello(Some(not_utf8)))).await;
    assert_eq!(fields(&found), ["board.rows[1]"]);
    assert!(found[0].1.contains("row 1, column 1"), "{found:?}");
    let not_utf8 = Board::from_rows([&[0xc3][..]]);
    let found = violations(client.check_connect_four(CheckConnectFourRequest {
        board: Some(not_utf8),
        row: 0,
        col: 0,
        player: 1,
        run_length: 0,
    }))
    .await;
    assert_eq!(fields(&found), ["board.rows[0]"]);
    assert!(found[0].1.contains("row 0, column 0"), "{found:?}");

    // 100x100 is the largest board, and fine.
    let largest = vec![".".repeat(100); 100];
    let reply = client
        .check_othello_move(othello(Some(Board::from_rows(largest))))
        .await
        .unwrap();
    assert!(!reply.into_inner().legal);

    let found =
        violations(client.check_othello_move(othello(board(&["...", "...", "...", "..", "..."]))))
            .await;
    assert_eq!(fields(&found), ["board.rows[3]"]);
    assert!(
        found[0].1.contains("has 2 cells but row 0 has 3"),
        "{found:?}"
    );

    let found = violations(client.check_othello_move(othello(board(&["...", ".x."])))).await;
    assert_eq!(fields(&found), ["board.rows[1]"]);
    assert!(found[0].1.contains("column 1") && found[0].1.contains("'x'"));

    // Each bad row is named, not only the first.
    let found = violations(client.check_othello_move(othello(board(&["", ""])))).await;
    assert_eq!(fields(&found), ["board.rows[0]", "board.rows[1]"]);

    // Connect Four's alphabet is not Othello's.
    let found = violations(client.check_connect_four(c4(&["B1"], 0, 1, 1))).await;
    assert_eq!(fields(&found), ["board.rows[0]"]);

    let found = violations(client.list_othello_moves(ListOthelloMovesRequest {
        board: board(&["..", "W"]),
        color: "black".into(),
    }))
    .await;
    assert_eq!(fields(&found), ["board.rows[1]", "color"]);
}

#[tokio::test]
async fn bad_coordinates_and_players_name_the_field() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let rows = ["0000", "0120"];
    let with = |row, col, player, run_length| CheckConnectFourRequest {
        board: board(&rows),
        row,
        col,
        player,
        run_length,
    };

    for (row, col, expected) in [
        (-1, 1, vec!["row"]),
        (2, 1, vec!["row"]),
        (1, 4, vec!["col"]),
        (1, -1, vec!["col"]),
        (i32::MIN, i32::MAX, vec!["row", "col"]),
        (i32::MAX, i32::MIN, vec!["row", "col"]),
    ] {
        let found = violations(client.check_connect_four(with(row, col, 1, 0))).await;
        assert_eq!(fields(&found), expected, "({row}, {col})");
    }
    for player in [0, 3, -1, i32::MIN] {
        let found = violations(client.check_connect_four(with(1, 1, player, 0))).await;
        assert_eq!(fields(&found), ["player"]);
    }
    // The cell must hold the player's piece: empty, or the other player's.
    let found = violations(client.check_connect_four(with(0, 0, 1, 0))).await;
    assert_eq!(fields(&found), ["player"]);
    assert!(found[0].1.contains("'0'"), "{found:?}");
    let found = violations(client.check_connect_four(with(1, 2, 1, 0))).await;
    assert_eq!(fields(&found), ["player"]);

    let found = violations(client.check_connect_four(with(1, 1, 1, -1))).await;
    assert_eq!(fields(&found), ["run_length"]);

    // Every problem at once, each reported.
    let found = violations(client.check_connect_four(CheckConnectFourRequest {
        board: None,
        row: -3,
        col: -4,
        player: 7,
        run_length: i32::MIN,
    }))
    .await;
    assert_eq!(
        fields(&found),
        ["board", "row", "col", "player", "run_length"]
    );

    for color in ["", "b", "BW", "W ", "Black"] {
        let found = violations(client.check_othello_move(CheckOthelloMoveRequest {
            board: board(&["..."]),
            row: 0,
            col: 0,
            color: color.into(),
        }))
        .await;
        assert_eq!(fields(&found), ["color"], "{color:?}");
    }

    // Malformed in any way is refused, even where the rule alone would say "not legal".
    let found = violations(client.check_othello_move(CheckOthelloMoveRequest {
        board: board(&["BW.", "..."]),
        row: 0,
        col: 3,
        color: "B".into(),
    }))
    .await;
    assert_eq!(fields(&found), ["col"]);

    // The connection survived every refusal.
    let reply = client.check_connect_four(with(1, 1, 1, 1)).await.unwrap();
    assert!(reply.into_inner().wins);
}

#[tokio::test]
async fn bad_tic_tac_toe_moves_name_the_index() {
    let server = TestServer::start().await;
    let mut client = server.client().await;

    let mut drawn_then_one_more = TIC_TAC_TOE_DRAW.to_vec();
    drawn_then_one_more.push((0, 0));
    /// Moves, the field of the refused one, and words its description holds.
    type Case<'a> = (&'a [(i32, i32)], &'a str, &'a str);
    let cases: [Case; 6] = [
        (&[(3, 0)], "moves[0]", "outside the board"),
        (&[(0, 0), (1, -1)], "moves[1]", "outside the board"),
        (
            &[(0, 0), (1, 1), (0, 0)],
            "moves[2]",
            "square (0, 0) is taken",
        ),
        (
            &[(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (2, 2)],
            "moves[5]",
            "the game is over: A won",
        ),
        (
            &drawn_then_one_more,
            "moves[9]",
            "the game is over: it is a draw",
        ),
        (&[(i32::MIN, i32::MAX)], "moves[0]", "outside the board"),
    ];
    for (list, field, description) in cases {
        let found = violations(client.judge_tic_tac_toe(judge(list))).await;
        assert_eq!(fields(&found), [field]);
        assert!(found[0].1.contains(description), "{found:?}");
    }
}

#[tokio::test]
async fn reflection_lists_every_service_in_both_versions() {
    use tonic_reflection::pb::{v1, v1alpha};

    let server = TestServer::start().await;
    let expected = [
        "arbiter.v1.ArbiterService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    ];

    let mut client =
        v1::server_reflection_client::ServerReflectionClient::new(server.channel().await);
    let request = v1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(v1::server_reflection_request::MessageRequest::ListServices(
            String::new(),
        )),
    };
    let mut replies = ok(client.server_reflection_info(tokio_stream::once(request))).await;
    let reply = replies.message().await.unwrap().unwrap();
    let Some(v1::server_reflection_response::MessageResponse::ListServicesResponse(list)) =
        reply.message_response
    else {
        panic!("not a service list: {reply:?}");
    };
    let mut names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    names.sort();
    assert_eq!(names, expected);

    let mut client =
        v1alpha::server_reflection_client::ServerReflectionClient::new(server.channel().await);
    let request = v1alpha::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            v1alpha::server_reflection_request::MessageRequest::FileContainingSymbol(
                "google.rpc.BadRequest".into(),
            ),
        ),
    };
    let mut replies = ok(client.server_reflection_info(tokio_stream::once(request))).await;
    let reply = replies.message().await.unwrap().unwrap();
    assert!(
        matches!(
            reply.message_response,
            Some(v1alpha::server_reflection_response::MessageResponse::FileDescriptorResponse(_))
        ),
        "error details are not described: {reply:?}"
    );
}

#[tokio::test]
async fn health_reports_serving_then_not_serving_on_shutdown() {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{health_client::HealthClient, HealthCheckRequest};

    let mut server = TestServer::start_with(common::options(&["--shutdown-grace", "5s"])).await;
    common::status::assert_serving(server.channel().await).await;
    let mut health = HealthClient::new(server.channel().await);
    let unknown = health
        .check(HealthCheckRequest {
            service: "no.such.Service".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound);

    // A watcher sees the switch to NOT_SERVING when shutdown begins.
    let mut watch = common::status::watch_serving(server.channel().await).await;
    server.begin_shutdown();
    let next = watch.message().await.unwrap().unwrap();
    assert_eq!(next.status(), ServingStatus::NotServing);
}

/// A cell off the board is explained in the board's own size, in words that read right
/// for one row or column and for more.
#[tokio::test]
async fn an_off_board_cell_is_explained_in_the_boards_own_size() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    for (rows, row, col, field, said) in [
        (
            &["1"][..],
            1,
            0,
            "row",
            "1 is outside the board, which has 1 row (only 0)",
        ),
        (
            &["1"][..],
            0,
            3,
            "col",
            "3 is outside the board, which has 1 column (only 0)",
        ),
        (
            &["11", "11"][..],
            2,
            0,
            "row",
            "2 is outside the board, which has 2 rows (0 to 1)",
        ),
        (
            &["11", "11"][..],
            0,
            2,
            "col",
            "2 is outside the board, which has 2 columns (0 to 1)",
        ),
    ] {
        let status = client
            .check_connect_four(c4(rows, row, col, 1))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
        let violations = status.get_details_bad_request().unwrap().field_violations;
        assert_eq!(
            violations
                .iter()
                .map(|v| (v.field.as_str(), v.description.as_str()))
                .collect::<Vec<_>>(),
            [(field, said)],
            "{rows:?} ({row}, {col})"
        );
    }
}

/// `--reflection off` takes the reflection service away, both versions (UNIMPLEMENTED,
/// as for any service the server does not have), and nothing else: health and the
/// Arbiter service still answer. By default reflection lists the service. Fails against
/// a server that ignores the flag, or one that drops more than reflection with it.
#[tokio::test]
async fn reflection_can_be_switched_off() {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{health_client::HealthClient, HealthCheckRequest};
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient as AlphaClient;

    async fn listed(channel: tonic::transport::Channel) -> Result<(), tonic::Status> {
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let mut replies = ServerReflectionClient::new(channel)
            .server_reflection_info(tokio_stream::iter([request]))
            .await?
            .into_inner();
        replies
            .message()
            .await?
            .map(drop)
            .ok_or_else(|| tonic::Status::unknown("none"))
    }
    async fn listed_alpha(channel: tonic::transport::Channel) -> Result<(), tonic::Status> {
        use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest;
        use tonic_reflection::pb::v1alpha::ServerReflectionRequest;
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let mut replies = AlphaClient::new(channel)
            .server_reflection_info(tokio_stream::iter([request]))
            .await?
            .into_inner();
        replies
            .message()
            .await?
            .map(drop)
            .ok_or_else(|| tonic::Status::unknown("none"))
    }

    let on = TestServer::start().await;
    listed(on.channel().await).await.unwrap();
    listed_alpha(on.channel().await).await.unwrap();

    let off = TestServer::start_with_flags("--reflection off").await;
    let channel = off.channel().await;
    for status in [
        listed(channel.clone()).await.unwrap_err(),
        listed_alpha(channel.clone()).await.unwrap_err(),
    ] {
        assert_eq!(status.code(), Code::Unimplemented, "{status:?}");
    }
    let health = HealthClient::new(channel.clone())
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap();
    assert_eq!(health.into_inner().status(), ServingStatus::Serving);
    let mut client = off.client().await;
    let reply = client
        .list_chess_moves(arbiter::proto::ListChessMovesRequest::default())
        .await
        .unwrap();
    assert_eq!(reply.into_inner().moves.len(), 20);
}
