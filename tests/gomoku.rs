//! Gomoku over the wire, as a person checks it from the rules: CheckGomokuMove's wins,
//! overlines and refusals; live games to a win, a draw and a loss on time; a rejected
//! move that leaves the game as it was; the same game in PlayMany and resumed from its
//! history; malformed setups named field by field.

mod common;

use std::time::Duration;

use arbiter::proto::play_gomoku_request::Action;
use arbiter::proto::{
    game_action, game_state, Board, Cell, CheckGomokuMoveRequest, CheckGomokuMoveResponse, Ending,
    GameAction, GomokuSetup, PlayGomokuRequest, PlayGomokuResponse, PlayManyRequest, TimeControl,
    Verdict,
};
use common::messages::open_stream;
use common::status::assert_stream_ends;
use common::TestServer;
use tonic::Code;
use tonic_types::StatusExt;

fn cells(list: &[(i32, i32)]) -> Vec<Cell> {
    list.iter().map(|&(row, col)| Cell { row, col }).collect()
}

/// A 15x15 board with `row` of row 7 written from column 0, the rest empty.
fn board_with_row_seven(row: &str) -> Option<Board> {
    let empty = ".".repeat(15);
    let mut rows = vec![empty.clone(); 15];
    rows[7] = format!("{row}{}", &empty[row.len()..]);
    Some(Board::from_rows(rows))
}

fn check(board: Option<Board>, (row, col): (i32, i32), color: &str) -> CheckGomokuMoveRequest {
    CheckGomokuMoveRequest {
        board,
        row,
        col,
        color: color.to_owned(),
        run_length: 0,
        exact: false,
    }
}

#[tokio::test]
async fn a_fifth_stone_wins_with_its_line_end_to_end() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let board = board_with_row_seven("...BBBB");
    let reply = client
        .check_gomoku_move(check(board.clone(), (7, 7), "B"))
        .await
        .unwrap()
        .into_inner();
    let line = cells(&[(7, 3), (7, 4), (7, 5), (7, 6), (7, 7)]);
    assert_eq!(
        reply,
        CheckGomokuMoveResponse {
            legal: true,
            wins: true,
            run: line
        }
    );
    // White there wins nothing; the stones are Black's.
    let white = client
        .check_gomoku_move(check(board.clone(), (7, 7), "W"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((white.legal, white.wins, white.run.len()), (true, false, 0));
    // An occupied cell is not legal, and wins nothing.
    let taken = client
        .check_gomoku_move(check(board, (7, 4), "B"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(taken, CheckGomokuMoveResponse::default());
}

#[tokio::test]
async fn an_overline_wins_only_in_freestyle() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    // Filling the gap makes six in a row.
    let board = board_with_row_seven("BBB.BB");
    let freestyle = client
        .check_gomoku_move(check(board.clone(), (7, 3), "B"))
        .await
        .unwrap()
        .into_inner();
    assert!(freestyle.wins);
    assert_eq!(
        freestyle.run,
        cells(&[(7, 0), (7, 1), (7, 2), (7, 3), (7, 4), (7, 5)])
    );
    let exact = client
        .check_gomoku_move(CheckGomokuMoveRequest {
            exact: true,
            ..check(board.clone(), (7, 3), "B")
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((exact.legal, exact.wins, exact.run.len()), (true, false, 0));
    // Exactly six wins when six is the run length.
    let six = client
        .check_gomoku_move(CheckGomokuMoveRequest {
            exact: true,
            run_length: 6,
            ..check(board, (7, 3), "B")
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(six.run.len(), 6);
}

#[tokio::test]
async fn every_bad_field_of_a_check_is_named() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let status = client
        .check_gomoku_move(CheckGomokuMoveRequest {
            board: Some(Board::from_rows(["...", "..X", "..."])),
            row: 0,
            col: 5,
            color: "black".to_owned(),
            run_length: 101,
            exact: false,
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let fields: Vec<String> = status
        .get_details_bad_request()
        .expect("a BadRequest")
        .field_violations
        .into_iter()
        .map(|violation| violation.field)
        .collect();
    assert_eq!(fields, ["board.rows[1]", "col", "color", "run_length"]);
}

fn setup(rows: i32, cols: i32, run_length: i32, history: &[(i32, i32)]) -> PlayGomokuRequest {
    PlayGomokuRequest {
        action: Some(Action::Setup(Box::new(GomokuSetup {
            rows,
            cols,
            run_length,
            history: cells(history),
            ..Default::default()
        }))),
    }
}

fn stone(row: i32, col: i32) -> PlayGomokuRequest {
    PlayGomokuRequest {
        action: Some(Action::Move(Cell { row, col })),
    }
}

/// Plays `messages` on one PlayGomoku stream: a reply each.
async fn play(server: &TestServer, messages: &[PlayGomokuRequest]) -> Vec<PlayGomokuResponse> {
    let mut client = server.client().await;
    let (sender, mut replies) = open_stream(|stream| client.play_gomoku(stream)).await;
    let mut out = Vec::new();
    for message in messages {
        sender.send(message.clone()).await.unwrap();
        out.push(replies.message().await.unwrap().unwrap());
    }
    out
}

/// A 5x5 game of four in a row: Black's top row, White's second; (0, 0) again and a
/// stone off the board are rejected on the way.
fn four_in_a_row() -> Vec<PlayGomokuRequest> {
    vec![
        setup(5, 5, 4, &[(0, 0), (1, 0)]),
        stone(0, 1),
        stone(0, 0),
        stone(1, 1),
        stone(9, 9),
        stone(0, 2),
        stone(1, 2),
        stone(0, 3),
        stone(4, 4),
    ]
}

#[tokio::test]
async fn a_live_game_to_a_win_with_rejected_moves_on_the_way() {
    let server = TestServer::start().await;
    let replies = play(&server, &four_in_a_row()).await;
    let first = &replies[0];
    assert_eq!(
        first.board.as_ref().unwrap().rows.to_strings(),
        ["B....", "W....", ".....", ".....", "....."]
    );
    assert_eq!((first.to_move.as_str(), first.moves_played), ("B", 2));
    assert_eq!(first.placed, Some(Cell { row: 1, col: 0 }));
    // (0, 0) is taken: rejected, the game as it was, White still to move.
    let taken = &replies[2];
    assert!(taken.rejected.contains("taken"), "{:?}", taken.rejected);
    assert_eq!(
        (taken.to_move.as_str(), taken.moves_played, taken.placed),
        ("W", 3, None)
    );
    let off = &replies[4];
    assert!(!off.rejected.is_empty());
    assert_eq!(
        (off.to_move.as_str(), off.moves_played, off.placed),
        ("B", 4, None)
    );
    let win = &replies[7];
    assert_eq!(win.verdict, Verdict::AWins as i32);
    assert_eq!(win.run, cells(&[(0, 0), (0, 1), (0, 2), (0, 3)]));
    assert_eq!(win.ending, Ending::Board as i32);
    assert_eq!((win.to_move.as_str(), win.moves_played), ("", 7));
    // After the end, a move is rejected and the win stands, its line reported no more.
    let after = &replies[8];
    assert!(!after.rejected.is_empty());
    assert_eq!((after.verdict, after.run.len()), (Verdict::AWins as i32, 0));
}

#[tokio::test]
async fn a_game_without_a_setup_is_standard_and_a_full_board_is_a_draw() {
    let server = TestServer::start().await;
    let standard = play(&server, &[stone(7, 7)]).await;
    let rows = standard[0].board.as_ref().unwrap().rows.to_strings();
    assert_eq!((rows.len(), rows[0].len()), (15, 15));
    assert_eq!(rows[7], ".......B.......");
    let draw = play(&server, &[setup(1, 2, 0, &[]), stone(0, 0), stone(0, 1)]).await;
    assert_eq!(draw[2].verdict, Verdict::Draw as i32);
    assert_eq!(draw[2].ending, Ending::Board as i32);
}

#[tokio::test]
async fn the_same_game_in_play_many_and_resumed_from_its_history() {
    let server = TestServer::start().await;
    let messages = four_in_a_row();
    let alone = play(&server, &messages).await;
    // In PlayMany, as game 9: the same replies.
    let mut client = server.client().await;
    let (sender, mut replies) = open_stream(|stream| client.play_many(stream)).await;
    for (message, expected) in messages.iter().zip(&alone) {
        let action = GameAction {
            game: 9,
            action: Some(game_action::Action::Gomoku(message.clone())),
        };
        sender
            .send(PlayManyRequest {
                actions: vec![action],
            })
            .await
            .unwrap();
        let state = replies.message().await.unwrap().unwrap().states.remove(0);
        assert_eq!(
            state.state,
            Some(game_state::State::Gomoku(expected.clone()))
        );
    }
    // Resumed from the stones applied (the setup's and the moves'), before the win: the
    // same game, and the same win.
    let resumed = play(
        &server,
        &[
            setup(5, 5, 4, &[(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]),
            stone(0, 3),
        ],
    )
    .await;
    assert_eq!(resumed[0].board, alone[6].board);
    assert_eq!(resumed[1], alone[7]);
}

#[tokio::test]
async fn black_runs_out_of_time_and_white_wins_unprompted() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let (sender, mut replies) = open_stream(|stream| client.play_gomoku(stream)).await;
    let clocked = PlayGomokuRequest {
        action: Some(Action::Setup(Box::new(GomokuSetup {
            time_control: Some(TimeControl {
                initial: Some(prost_types::Duration {
                    seconds: 0,
                    nanos: 300_000_000,
                }),
                ..Default::default()
            }),
            ..Default::default()
        }))),
    };
    sender.send(clocked).await.unwrap();
    let start = replies.message().await.unwrap().unwrap();
    assert!(start.clock.is_some());
    let flag = tokio::time::timeout(Duration::from_secs(10), replies.message())
        .await
        .expect("the flag within 10 s")
        .unwrap()
        .unwrap();
    assert!(flag.unprompted);
    assert_eq!(flag.verdict, Verdict::BWins as i32);
    assert_eq!(flag.ending, Ending::Time as i32);
}

#[tokio::test]
async fn a_malformed_setup_names_each_field_and_ends_the_stream() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let (sender, mut replies) = open_stream(|stream| client.play_gomoku(stream)).await;
    sender.send(setup(101, 0, -1, &[])).await.unwrap();
    let status = assert_stream_ends(&mut replies, Code::InvalidArgument, "").await;
    let fields: Vec<String> = status
        .get_details_bad_request()
        .expect("a BadRequest")
        .field_violations
        .into_iter()
        .map(|violation| violation.field)
        .collect();
    assert_eq!(fields, ["setup.rows", "setup.run_length"]);
    let (sender, mut replies) = open_stream(|stream| client.play_gomoku(stream)).await;
    sender
        .send(setup(3, 3, 0, &[(0, 0), (0, 0)]))
        .await
        .unwrap();
    let status = assert_stream_ends(&mut replies, Code::InvalidArgument, "").await;
    let violations = status.get_details_bad_request().unwrap().field_violations;
    assert_eq!(violations[0].field, "setup.history[1]");
}
