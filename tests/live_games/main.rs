//! Live games over their own streams (PlayOthello, PlayConnectFour, PlayTicTacToe),
//! through a real client: every rule by name, setup errors, limits, and many games at
//! once. Othello and Connect Four here; Tic-Tac-Toe in `tic_tac_toe.rs`.

#[path = "../common/mod.rs"]
mod common;
mod tic_tac_toe;

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::{
    play_connect_four_request, play_othello_request, Board, Ending, OthelloSetup,
    PlayConnectFourRequest, PlayConnectFourResponse, PlayOthelloRequest, PlayOthelloResponse,
    Verdict,
};
use common::messages::{board as rows, cell, cells, open_stream};
use common::setups::connect_four_setup;
use common::status::assert_stream_ends;
use common::TestServer;
use std::future::Future;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;
use tonic::{Code, Status, Streaming};
use tonic_types::StatusExt;

/// One live game as a client plays it: a message goes out, its reply is read.
struct Live<Req, Resp> {
    sender: mpsc::Sender<Req>,
    replies: Streaming<Resp>,
    /// The client of a game on a server of its own, kept as long as the game.
    _client: Option<ArbiterServiceClient<Channel>>,
}

impl<Req, Resp> Live<Req, Resp> {
    /// Opens a game with `call`, a Play RPC of a client (see [`open_stream`]).
    async fn open<F, Fut>(call: F) -> Self
    where
        F: FnOnce(ReceiverStream<Req>) -> Fut,
        Fut: Future<Output = Result<tonic::Response<Streaming<Resp>>, Status>>,
    {
        let (sender, replies) = open_stream(call).await;
        Self {
            sender,
            replies,
            _client: None,
        }
    }

    /// Starts a server of the game's own and opens the game on a new client of it with
    /// `open` ([`othello`] or [`connect_four`]); the client stays with the game.
    async fn on_a_new_server(
        open: impl AsyncFnOnce(&mut ArbiterServiceClient<Channel>) -> Self,
    ) -> (TestServer, Self) {
        let server = TestServer::start().await;
        let mut client = server.client().await;
        let game = open(&mut client).await;
        let game = Self {
            _client: Some(client),
            ..game
        };
        (server, game)
    }

    async fn send(&mut self, request: Req) -> Result<Resp, Status> {
        if self.sender.send(request).await.is_err() {
            panic!("the stream closed");
        }
        self.replies
            .message()
            .await
            .map(|reply| reply.expect("a reply for every message"))
    }
}

async fn othello(
    client: &mut ArbiterServiceClient<Channel>,
) -> Live<PlayOthelloRequest, PlayOthelloResponse> {
    Live::open(|stream| client.play_othello(stream)).await
}

async fn connect_four(
    client: &mut ArbiterServiceClient<Channel>,
) -> Live<PlayConnectFourRequest, PlayConnectFourResponse> {
    Live::open(|stream| client.play_connect_four(stream)).await
}

fn setup(board: &[&str], to_move: &str) -> PlayOthelloRequest {
    PlayOthelloRequest {
        action: Some(play_othello_request::Action::Setup(Box::new(
            OthelloSetup {
                board: rows(board),
                to_move: to_move.into(),
                history: Vec::new(),
                ..Default::default()
            },
        ))),
    }
}

fn place(row: i32, col: i32) -> PlayOthelloRequest {
    PlayOthelloRequest {
        action: Some(play_othello_request::Action::Move(cell(row, col))),
    }
}

fn shape(rows: i32, cols: i32, run_length: i32) -> PlayConnectFourRequest {
    connect_four_setup((rows, cols, run_length), &[])
}

fn drop_in(col: i32) -> PlayConnectFourRequest {
    PlayConnectFourRequest {
        action: Some(play_connect_four_request::Action::Drop(col)),
    }
}

/// The fields a BadRequest names, in order.
fn violated_fields(status: &Status) -> Vec<String> {
    status
        .get_details_bad_request()
        .expect("a BadRequest")
        .field_violations
        .into_iter()
        .map(|v| v.field)
        .collect()
}

/// A live game's reply: what it says of a refused message.
trait Reply: std::fmt::Debug {
    /// Why the message was refused; empty when it was applied.
    fn rejected(&self) -> &str;
}

impl Reply for PlayOthelloResponse {
    fn rejected(&self) -> &str {
        &self.rejected
    }
}

impl Reply for PlayConnectFourResponse {
    fn rejected(&self) -> &str {
        &self.rejected
    }
}

/// Sends `later_setup` to `game`, under way, then a message with no action (the default
/// message): each must be refused for what it is, the stream going on. Returns the
/// reply to the empty message.
async fn assert_later_setup_and_empty_message_refused<Req: Default, Resp: Reply>(
    game: &mut Live<Req, Resp>,
    later_setup: Req,
) -> Resp {
    let again = game.send(later_setup).await.unwrap();
    assert!(again.rejected().contains("first message"), "{again:?}");
    let empty = game.send(Req::default()).await.unwrap();
    assert!(empty.rejected().contains("no action"), "{empty:?}");
    empty
}

/// Sends `setup` as the first message of `game`, which must end the stream with
/// INVALID_ARGUMENT naming `fields`, in order.
async fn assert_setup_refused<Req, Resp: std::fmt::Debug>(
    mut game: Live<Req, Resp>,
    setup: Req,
    fields: &[&str],
) {
    let status = game.send(setup).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert_eq!(violated_fields(&status), fields, "{status:?}");
}

#[tokio::test]
async fn othello_starts_from_the_standard_position_without_a_setup() {
    let (_server, mut game) = Live::on_a_new_server(othello).await;
    let reply = game.send(place(2, 3)).await.unwrap();
    assert_eq!(
        reply,
        PlayOthelloResponse {
            verdict: Verdict::Pending.into(),
            board: rows(&[
                "........", "........", "...B....", "...BB...", "...BW...", "........", "........",
                "........",
            ]),
            flips: cells(&[(3, 3)]),
            to_move: "W".into(),
            passed: false,
            legal_moves: cells(&[(2, 2), (2, 4), (4, 2)]),
            black_discs: 4,
            white_discs: 1,
            moves_played: 1,
            rejected: String::new(),
            ..Default::default()
        }
    );
}

#[tokio::test]
async fn othello_forced_pass_then_game_over() {
    let (_server, mut game) = Live::on_a_new_server(othello).await;
    let start = game.send(setup(&[".WB.WB"], "B")).await.unwrap();
    assert_eq!(start.legal_moves, cells(&[(0, 0), (0, 3)]));
    assert_eq!((start.to_move.as_str(), start.passed), ("B", false));
    assert_eq!(
        (start.black_discs, start.white_discs, start.moves_played),
        (2, 2, 0)
    );

    // After Black's move White has no legal move: White passes, Black moves again.
    let pass = game.send(place(0, 0)).await.unwrap();
    assert_eq!(pass.flips, cells(&[(0, 1)]));
    assert!(pass.passed);
    assert_eq!(pass.to_move, "B");
    assert_eq!(pass.legal_moves, cells(&[(0, 3)]));
    assert_eq!(pass.verdict, Verdict::Pending as i32);

    // Black fills the board: neither side can move, Black has more discs.
    let end = game.send(place(0, 3)).await.unwrap();
    assert_eq!(end.board, rows(&["BBBBBB"]));
    assert_eq!(end.flips, cells(&[(0, 4)]));
    assert_eq!(end.verdict, Verdict::AWins as i32);
    assert_eq!((end.to_move.as_str(), end.passed), ("", false));
    assert!(end.legal_moves.is_empty());
    assert_eq!(
        (end.black_discs, end.white_discs, end.moves_played),
        (6, 0, 2)
    );

    let after = game.send(place(0, 0)).await.unwrap();
    assert!(after.rejected.contains("over"), "{after:?}");
    assert_eq!(after.board, end.board);
}

#[tokio::test]
async fn othello_setups_where_neither_side_can_move_are_decided_at_once() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    for (board, to_move, verdict) in [
        (&["B.W"][..], "B", Verdict::Draw),
        (&["BB.W"][..], "W", Verdict::AWins),
        (&["W", "W", ".", "B"][..], "B", Verdict::BWins),
    ] {
        let mut game = othello(&mut client).await;
        let reply = game.send(setup(board, to_move)).await.unwrap();
        assert_eq!(reply.verdict, verdict as i32, "{board:?}");
        assert_eq!(reply.to_move, "");
        assert!(reply.legal_moves.is_empty());
    }
}

#[tokio::test]
async fn othello_setup_where_the_side_to_move_must_pass() {
    let (_server, mut game) = Live::on_a_new_server(othello).await;
    // White has no move; Black at (0,2) brackets the W at (0,1) with the B at (0,0).
    let reply = game.send(setup(&["BW."], "W")).await.unwrap();
    assert!(reply.passed);
    assert_eq!(reply.to_move, "B");
    assert_eq!(reply.legal_moves, cells(&[(0, 2)]));
}

#[tokio::test]
async fn othello_rejects_bad_moves_and_the_game_goes_on() {
    let (_server, mut game) = Live::on_a_new_server(othello).await;
    let first = game.send(place(2, 3)).await.unwrap();
    for (row, col, reason) in [
        (-1, 0, "outside"),
        (0, 8, "outside"),
        (i32::MAX, i32::MIN, "outside"),
        (3, 3, "taken"),
        (0, 0, "turns over no disc"),
    ] {
        let reply = game.send(place(row, col)).await.unwrap();
        assert!(reply.rejected.contains(reason), "({row}, {col}): {reply:?}");
        assert!(reply.flips.is_empty());
        assert_eq!(reply.board, first.board);
        assert_eq!(reply.to_move, "W");
        assert_eq!(reply.moves_played, 1);
        assert_eq!(reply.legal_moves, first.legal_moves);
    }
    let empty = assert_later_setup_and_empty_message_refused(&mut game, setup(&["B"], "B")).await;
    assert_eq!(empty.board, first.board);
    let next = game.send(place(2, 2)).await.unwrap();
    assert_eq!(next.rejected, "");
    assert_eq!(next.moves_played, 2);
}

#[tokio::test]
async fn othello_setup_errors_end_the_stream_with_each_field_named() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let cases: [(PlayOthelloRequest, Vec<&str>); 4] = [
        (
            setup(&["..", "."], "X"),
            vec!["setup.board.rows[1]", "setup.to_move"],
        ),
        (setup(&["..", ".x"], "B"), vec!["setup.board.rows[1]"]),
        (
            PlayOthelloRequest {
                action: Some(play_othello_request::Action::Setup(
                    Box::<OthelloSetup>::default(),
                )),
            },
            vec!["setup.board", "setup.to_move"],
        ),
        (
            PlayOthelloRequest {
                action: Some(play_othello_request::Action::Setup(Box::new(
                    OthelloSetup {
                        board: Some(Board::from_rows(vec![".".repeat(10); 101])),
                        to_move: "W".into(),
                        history: Vec::new(),
                        ..Default::default()
                    },
                ))),
            },
            vec!["setup.board"],
        ),
    ];
    for (request, fields) in cases {
        assert_setup_refused(othello(&mut client).await, request, &fields).await;
    }
    server.wait_for_live_games(0).await;
    // The connection is still good.
    let mut game = othello(&mut client).await;
    assert_eq!(game.send(place(2, 3)).await.unwrap().moves_played, 1);
}

#[tokio::test]
async fn connect_four_pieces_fall_and_a_diagonal_wins() {
    let (_server, mut game) = Live::on_a_new_server(connect_four).await;
    let drops = [0, 1, 1, 2, 2, 3, 2, 3, 3, 6];
    for (i, &col) in drops.iter().enumerate() {
        let reply = game.send(drop_in(col)).await.unwrap();
        assert_eq!(reply.rejected, "");
        assert_eq!(reply.verdict, Verdict::Pending as i32);
        assert_eq!(reply.moves_played, i as i32 + 1);
        assert_eq!(reply.to_move, if i % 2 == 0 { 2 } else { 1 });
        assert!(reply.run.is_empty());
    }
    let win = game.send(drop_in(3)).await.unwrap();
    assert_eq!(
        win,
        PlayConnectFourResponse {
            verdict: Verdict::AWins.into(),
            board: rows(&["0000000", "0000000", "0001000", "0011000", "0112000", "1222002",]),
            placed: Some(cell(2, 3)),
            run: cells(&[(2, 3), (3, 2), (4, 1), (5, 0)]),
            to_move: 0,
            moves_played: 11,
            rejected: String::new(),
            ending: Ending::Board.into(),
            ..Default::default()
        }
    );
    let after = game.send(drop_in(4)).await.unwrap();
    assert!(after.rejected.contains("over"), "{after:?}");
    assert_eq!((after.placed, after.run.len()), (None, 0));
    assert_eq!(after.verdict, Verdict::AWins as i32);
    assert_eq!(after.ending(), Ending::Board);
}

#[tokio::test]
async fn connect_four_full_columns_off_board_columns_and_bad_messages_are_rejected() {
    let (_server, mut game) = Live::on_a_new_server(connect_four).await;
    let start = game.send(shape(3, 2, 4)).await.unwrap();
    assert_eq!(start.board, rows(&["00", "00", "00"]));
    assert_eq!((start.to_move, start.moves_played), (1, 0));
    for row in [2, 1, 0] {
        let reply = game.send(drop_in(0)).await.unwrap();
        assert_eq!(reply.placed, Some(cell(row, 0)));
    }
    let full = game.send(drop_in(0)).await.unwrap();
    assert!(full.rejected.contains("column 0 is full"), "{full:?}");
    assert_eq!((full.to_move, full.moves_played, full.placed), (2, 3, None));
    for col in [-1, 2, i32::MIN, i32::MAX] {
        let reply = game.send(drop_in(col)).await.unwrap();
        assert!(reply.rejected.contains("outside"), "{col}: {reply:?}");
        assert_eq!(reply.moves_played, 3);
    }
    assert_later_setup_and_empty_message_refused(&mut game, shape(6, 7, 4)).await;
    let next = game.send(drop_in(1)).await.unwrap();
    assert_eq!((next.placed, next.to_move), (Some(cell(2, 1)), 1));
}

/// The rejection counts columns in words that read right for one column and for more.
#[tokio::test]
async fn an_off_board_column_is_explained_in_the_boards_own_width() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    for (cols, said) in [(1, "1 column (only 0)"), (2, "2 columns (0 to 1)")] {
        let mut game = connect_four(&mut client).await;
        game.send(shape(3, cols, 2)).await.unwrap();
        let reply = game.send(drop_in(5)).await.unwrap();
        assert_eq!(
            reply.rejected,
            format!("column 5 is outside the board, which has {said}")
        );
    }
}

#[tokio::test]
async fn connect_four_full_board_without_a_win_is_a_draw() {
    let (_server, mut game) = Live::on_a_new_server(connect_four).await;
    game.send(shape(2, 2, 3)).await.unwrap();
    let mut last = None;
    for col in [0, 1, 0, 1] {
        last = Some(game.send(drop_in(col)).await.unwrap());
    }
    let last = last.unwrap();
    assert_eq!(last.verdict, Verdict::Draw as i32);
    assert_eq!(last.board, rows(&["12", "12"]));
    assert_eq!((last.to_move, last.moves_played), (0, 4));
    assert!(last.run.is_empty());
}

#[tokio::test]
async fn connect_four_run_length_one_wins_with_the_first_piece() {
    let (_server, mut game) = Live::on_a_new_server(connect_four).await;
    game.send(shape(0, 0, 1)).await.unwrap();
    let reply = game.send(drop_in(3)).await.unwrap();
    assert_eq!(reply.verdict, Verdict::AWins as i32);
    assert_eq!(reply.run, cells(&[(5, 3)]));
    assert_eq!(reply.to_move, 0);
}

#[tokio::test]
async fn connect_four_setup_errors_end_the_stream_with_each_field_named() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    for (request, fields) in [
        (
            shape(-1, 101, 101),
            vec!["setup.rows", "setup.cols", "setup.run_length"],
        ),
        (shape(i32::MIN, 7, 4), vec!["setup.rows"]),
        (shape(6, 7, -4), vec!["setup.run_length"]),
    ] {
        assert_setup_refused(connect_four(&mut client).await, request, &fields).await;
    }
    server.wait_for_live_games(0).await;
}

/// The drops of a whole 100x100 game that fills the board without any line of 100: the
/// pieces form pairs that alternate along each row and between rows.
fn full_board_without_a_win() -> Vec<i32> {
    let mut drops = Vec::new();
    for row in (0..100).rev() {
        let owner = |col: i32| (col / 2 + row) % 2;
        let ones: Vec<i32> = (0..100).filter(|&c| owner(c) == 0).collect();
        let twos: Vec<i32> = (0..100).filter(|&c| owner(c) == 1).collect();
        for (a, b) in ones.into_iter().zip(twos) {
            drops.extend([a, b]);
        }
    }
    drops
}

/// Reads the `passed` replies of a stream of `rpc` flooded with messages that are not
/// applied moves, `call` its opening, then its end: RESOURCE_EXHAUSTED naming `rpc`.
/// Returns the replies.
async fn assert_cut_off<Resp: Reply>(
    call: Result<tonic::Response<Streaming<Resp>>, Status>,
    passed: usize,
    rpc: &str,
) -> Vec<Resp> {
    let mut replies = call.unwrap().into_inner();
    let mut read = Vec::new();
    for _ in 0..passed {
        read.push(replies.message().await.unwrap().expect("a reply"));
    }
    assert_stream_ends(&mut replies, Code::ResourceExhausted, rpc).await;
    read
}

/// Checks that every one of `replies` refused its message.
fn assert_refused(replies: &[impl Reply]) {
    for (i, reply) in replies.iter().enumerate() {
        assert!(!reply.rejected().is_empty(), "reply {i}: {reply:?}");
    }
}

#[tokio::test]
async fn a_whole_game_on_the_largest_board_fits_while_a_flood_of_rejected_messages_is_cut_off() {
    let server = TestServer::start_with_flags("--max-moves-per-stream 5").await;
    let mut client = server.client().await;

    // 10,000 applied drops and the setup: applied moves do not count toward the limit.
    let mut messages = vec![shape(100, 100, 100)];
    messages.extend(full_board_without_a_win().into_iter().map(drop_in));
    let mut replies = client
        .play_connect_four(tokio_stream::iter(messages))
        .await
        .unwrap()
        .into_inner();
    let mut last = None;
    while let Some(reply) = replies.message().await.unwrap() {
        assert_eq!(reply.rejected, "", "move {}", reply.moves_played);
        last = Some(reply);
    }
    let last = last.unwrap();
    assert_eq!(
        (last.moves_played, last.verdict),
        (10_000, Verdict::Draw as i32)
    );

    // The setup and four rejected drops pass; the fifth rejected drop is one too many.
    let mut messages = vec![shape(6, 7, 4)];
    messages.extend((0..10).map(|_| drop_in(99)));
    let call = client.play_connect_four(tokio_stream::iter(messages)).await;
    let passed = assert_cut_off(call, 5, "PlayConnectFour").await;
    assert_eq!(passed[0].rejected, "", "the setup");
    assert_refused(&passed[1..]);

    // The same for Othello: rejected moves are cut off after the limit.
    let messages = (0..10).map(|_| place(0, 0));
    let call = client.play_othello(tokio_stream::iter(messages)).await;
    assert_refused(&assert_cut_off(call, 5, "PlayOthello").await);
    server.wait_for_live_games(0).await;
}

#[tokio::test]
async fn the_live_game_limit_counts_games_of_every_kind() {
    let server = TestServer::start_with_flags("--max-live-games 2").await;
    let mut client = server.client().await;
    let mut first = othello(&mut client).await;
    first.send(place(2, 3)).await.unwrap();
    let mut second = connect_four(&mut client).await;
    second.send(drop_in(0)).await.unwrap();
    server.wait_for_live_games(2).await;
    // A game counts from its first message, which is refused.
    let (sender, outgoing) = mpsc::channel::<arbiter::proto::PlayTicTacToeRequest>(1);
    sender.send(Default::default()).await.unwrap();
    let refused = client
        .play_tic_tac_toe(ReceiverStream::new(outgoing))
        .await
        .unwrap()
        .into_inner()
        .message()
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::ResourceExhausted);
    drop(first);
    drop(second);
    server.wait_for_live_games(0).await;
}

#[tokio::test]
async fn two_hundred_games_of_each_kind_at_once() {
    let server = TestServer::start().await;
    let channel = server.channel().await;
    let mut tasks = Vec::new();
    for i in 0..200 {
        let mut client = ArbiterServiceClient::new(channel.clone());
        tasks.push(tokio::spawn(async move {
            let mut game = othello(&mut client).await;
            let black = game.send(place(2, 3)).await.unwrap();
            assert_eq!(black.flips, cells(&[(3, 3)]));
            let white = game.send(place(2, 2)).await.unwrap();
            assert_eq!((white.black_discs, white.white_discs), (3, 3));
            let mut game = connect_four(&mut client).await;
            let col = i % 7;
            for (n, row) in (2..6).rev().enumerate() {
                let reply = game.send(drop_in(col)).await.unwrap();
                assert_eq!(reply.placed, Some(cell(row, col)));
                assert_eq!(reply.moves_played, n as i32 + 1);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    server.wait_for_live_games(0).await;
}
