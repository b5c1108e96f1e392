//! Live Tic-Tac-Toe games over the PlayTicTacToe stream, through a real client.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::messages::{cells, open_stream, tic_tac_toe_move};
use crate::common::status::assert_stream_ends;
use crate::common::TestServer;
use arbiter::games::tic_tac_toe;
use arbiter::games::tic_tac_toe::fixtures::TIC_TAC_TOE_DRAW;
use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::{Board, Cell, PlayTicTacToeRequest, PlayTicTacToeResponse, Verdict};
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic::{Code, Streaming};

/// One live game as a client plays it: moves go out one at a time, each reply is read.
struct LiveGame {
    moves: mpsc::Sender<PlayTicTacToeRequest>,
    replies: Streaming<PlayTicTacToeResponse>,
    /// The client of a game on a connection of its own, kept as long as the game.
    _client: Option<ArbiterServiceClient<Channel>>,
}

impl LiveGame {
    async fn open(client: &mut ArbiterServiceClient<Channel>) -> Self {
        let (moves, replies) = open_stream(|stream| client.play_tic_tac_toe(stream)).await;
        Self {
            moves,
            replies,
            _client: None,
        }
    }

    /// Starts a server with `flags` (as [`TestServer::start_with_flags`] takes them) and
    /// opens a game on a new connection to it, which stays open with the game.
    async fn on_a_server_with(flags: &str) -> (TestServer, Self) {
        let server = TestServer::start_with_flags(flags).await;
        let mut client = server.client().await;
        let game = Self::open(&mut client).await;
        let game = Self {
            _client: Some(client),
            ..game
        };
        (server, game)
    }

    /// Sends a move and returns its reply.
    async fn play(&mut self, row: i32, col: i32) -> PlayTicTacToeResponse {
        self.moves.send(tic_tac_toe_move(row, col)).await.unwrap();
        self.replies
            .message()
            .await
            .unwrap()
            .expect("a reply for every move")
    }

    /// Half-closes and checks that the stream then ends with OK and no further reply.
    async fn finish(self) {
        let Self {
            moves, mut replies, ..
        } = self;
        drop(moves);
        assert_eq!(replies.message().await.unwrap(), None);
    }
}

fn rows(board: &[[u8; 3]; 3]) -> Option<Board> {
    Some(Board::from_rows(board))
}

/// Plays `moves` (all valid) on one stream and checks every reply: the board after each
/// move, the count, pending until the last move, and `verdict` with `line` after it.
async fn play_whole_game(moves: &[(i32, i32)], verdict: Verdict, line: Vec<Cell>) {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let mut game = LiveGame::open(&mut client).await;
    let mut board = [[b'.'; 3]; 3];
    for (i, &(row, col)) in moves.iter().enumerate() {
        board[row as usize][col as usize] = if i % 2 == 0 { b'X' } else { b'O' };
        let reply = game.play(row, col).await;
        let last = i + 1 == moves.len();
        assert_eq!(reply.rejected, "", "move {i}");
        assert_eq!(reply.board, rows(&board), "move {i}");
        assert_eq!(reply.moves_played, i as i32 + 1);
        if last {
            assert_eq!(reply.verdict(), verdict);
            assert_eq!(reply.line, line);
        } else {
            assert_eq!(reply.verdict(), Verdict::Pending, "move {i}");
            assert!(reply.line.is_empty());
        }
    }
    game.finish().await;
    server.wait_for_live_games(0).await;
}

/// Whole games, each on a server of its own: every way to win, B winning, a draw, and a
/// game still pending when the client half-closes. A failure names its game.
#[tokio::test]
async fn whole_games_are_judged_move_by_move() {
    type Case = (
        &'static str,
        &'static [(i32, i32)],
        Verdict,
        &'static [(i32, i32)],
    );
    #[rustfmt::skip]
    let games: [Case; 7] = [
        ("A wins on a row", &[(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)], Verdict::AWins, &[(0, 0), (0, 1), (0, 2)]),
        ("A wins on a column", &[(0, 1), (0, 0), (1, 1), (0, 2), (2, 1)], Verdict::AWins, &[(0, 1), (1, 1), (2, 1)]),
        ("A wins on the main diagonal", &[(0, 0), (2, 0), (1, 1), (2, 1), (2, 2)], Verdict::AWins, &[(0, 0), (1, 1), (2, 2)]),
        ("A wins on the anti-diagonal", &[(0, 2), (0, 0), (1, 1), (0, 1), (2, 0)], Verdict::AWins, &[(0, 2), (1, 1), (2, 0)]),
        ("B wins", &[(0, 0), (1, 0), (0, 1), (1, 1), (2, 2), (1, 2)], Verdict::BWins, &[(1, 0), (1, 1), (1, 2)]),
        ("a draw", &TIC_TAC_TOE_DRAW, Verdict::Draw, &[]),
        ("pending at half-close", &[(1, 1), (0, 0), (2, 2)], Verdict::Pending, &[]),
    ];
    for (name, moves, verdict, line) in games {
        // On a task of its own, so that any assertion failing in it is named by its game.
        let game = tokio::spawn(play_whole_game(moves, verdict, cells(line)));
        if let Err(error) = game.await {
            panic!("{name}: {error}");
        }
    }
}

/// Checks that `reply` refused the move for `reason` and repeats the unchanged state.
fn assert_refused(reply: &PlayTicTacToeResponse, before: &PlayTicTacToeResponse, reason: &str) {
    assert!(
        reply.rejected.contains(reason),
        "{:?} should say {reason:?}",
        reply.rejected
    );
    assert_eq!(reply.verdict, before.verdict);
    assert_eq!(reply.line, before.line);
    assert_eq!(reply.board, before.board);
    assert_eq!(reply.moves_played, before.moves_played);
}

#[tokio::test]
async fn bad_moves_are_refused_and_the_game_goes_on() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let mut game = LiveGame::open(&mut client).await;

    let first = game.play(1, 1).await;
    assert_eq!(first.rejected, "");

    let taken = game.play(1, 1).await;
    assert_refused(&taken, &first, "square (1, 1) is taken");
    for (row, col) in [(3, 0), (0, 3), (-1, 0), (0, -1), (i32::MIN, i32::MAX)] {
        let reply = game.play(row, col).await;
        assert_refused(&reply, &first, "outside the board");
        assert!(reply.rejected.contains(&format!("({row}, {col})")));
    }

    // Refusals do not change whose turn it is: B plays next.
    let second = game.play(0, 0).await;
    assert_eq!(second.rejected, "");
    assert_eq!(second.moves_played, 2);
    assert_eq!(
        second.board.unwrap().rows.to_strings(),
        ["O..", ".X.", "..."]
    );
    game.finish().await;
}

#[tokio::test]
async fn moves_after_the_end_are_refused() {
    let server = TestServer::start().await;
    let mut client = server.client().await;

    let mut game = LiveGame::open(&mut client).await;
    let mut last = None;
    for (row, col) in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)] {
        last = Some(game.play(row, col).await);
    }
    let won = last.unwrap();
    assert_eq!(won.verdict(), Verdict::AWins);
    for (row, col) in [(2, 2), (0, 0), (5, 5)] {
        let reply = game.play(row, col).await;
        assert_refused(&reply, &won, "the game is over: A won");
    }
    game.finish().await;

    let mut game = LiveGame::open(&mut client).await;
    let mut last = None;
    for (row, col) in TIC_TAC_TOE_DRAW {
        last = Some(game.play(row, col).await);
    }
    let drawn = last.unwrap();
    assert_eq!(drawn.verdict(), Verdict::Draw);
    let reply = game.play(1, 1).await;
    assert_refused(&reply, &drawn, "the game is over: it is a draw");
    game.finish().await;
}

/// Game number `seed`'s moves: a shuffle of the nine squares with a few bad moves mixed
/// in, different for each seed.
fn scripted_moves(seed: u64) -> Vec<(i32, i32)> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    let mut squares: Vec<(i32, i32)> = (0..9).map(|i| (i / 3, i % 3)).collect();
    for i in (1..squares.len()).rev() {
        squares.swap(i, next() % (i + 1));
    }
    let mut moves = Vec::new();
    for square in squares {
        match next() % 5 {
            0 => moves.push((3, next() as i32 % 3)),
            1 => moves.push(*moves.last().unwrap_or(&square)),
            _ => {}
        }
        moves.push(square);
    }
    moves
}

/// Plays game `seed` on `client`, checking each reply against the rule engine's game.
async fn play_scripted_game(mut client: ArbiterServiceClient<Channel>, seed: u64) {
    let mut game = LiveGame::open(&mut client).await;
    let mut expected = tic_tac_toe::Game::new();
    for (row, col) in scripted_moves(seed) {
        let applied = expected.play(i64::from(row), i64::from(col));
        let reply = game.play(row, col).await;
        assert_eq!(reply.rejected.is_empty(), applied.is_ok(), "game {seed}");
        assert_eq!(
            reply.board.clone().unwrap().rows.to_strings(),
            expected.rows(),
            "game {seed}"
        );
        assert_eq!(reply.moves_played as usize, expected.moves_played());
        let verdict = match expected.outcome() {
            tic_tac_toe::Outcome::Pending => Verdict::Pending,
            tic_tac_toe::Outcome::Draw => Verdict::Draw,
            tic_tac_toe::Outcome::Won { player, .. }
            | tic_tac_toe::Outcome::Forfeited { player } => match player {
                tic_tac_toe::Player::A => Verdict::AWins,
                tic_tac_toe::Player::B => Verdict::BWins,
            },
        };
        assert_eq!(reply.verdict(), verdict, "game {seed}");
        tokio::task::yield_now().await;
    }
    game.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_games_at_once_on_one_connection() {
    let server = TestServer::start().await;
    let client = server.client().await;
    let games: Vec<_> = (0..200)
        .map(|seed| tokio::spawn(play_scripted_game(client.clone(), seed)))
        .collect();
    for game in games {
        game.await.unwrap();
    }
    server.wait_for_live_games(0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_games_at_once_on_several_connections() {
    let server = TestServer::start().await;
    let clients = server.clients(8).await;
    let games: Vec<_> = (0..200)
        .map(|seed| tokio::spawn(play_scripted_game(clients[seed % 8].clone(), seed as u64)))
        .collect();
    for game in games {
        game.await.unwrap();
    }
    server.wait_for_live_games(0).await;
}

#[tokio::test]
async fn a_client_that_leaves_frees_its_game() {
    let server = TestServer::start().await;
    let mut client = server.client().await;

    // Cancelled streams on a connection that stays open.
    let mut games = Vec::new();
    for _ in 0..5 {
        let mut game = LiveGame::open(&mut client).await;
        game.play(1, 1).await;
        games.push(game);
    }
    server.wait_for_live_games(5).await;
    drop(games);
    server.wait_for_live_games(0).await;

    // A whole connection that drops mid-game.
    let mut other = server.client().await;
    let mut game = LiveGame::open(&mut other).await;
    game.play(0, 0).await;
    server.wait_for_live_games(1).await;
    drop(game);
    drop(other);
    server.wait_for_live_games(0).await;

    // The server still plays new games.
    let mut game = LiveGame::open(&mut client).await;
    assert_eq!(game.play(2, 2).await.moves_played, 1);
    game.finish().await;
}

#[tokio::test]
async fn too_many_moves_end_the_stream() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let limit = 1000;
    let moves = tokio_stream::iter(0..limit + 50).map(|_| tic_tac_toe_move(9, 9));
    let mut replies = client.play_tic_tac_toe(moves).await.unwrap().into_inner();
    for _ in 0..limit {
        let reply = replies.message().await.unwrap().unwrap();
        assert!(reply.rejected.contains("outside the board"));
    }
    let limited = "at most 1000 messages that are not applied moves";
    assert_stream_ends(&mut replies, Code::ResourceExhausted, limited).await;
    server.wait_for_live_games(0).await;
}

#[tokio::test]
async fn an_idle_stream_is_closed() {
    let (server, mut game) = LiveGame::on_a_server_with("--stream-idle-timeout 200ms").await;
    game.play(1, 1).await;
    assert_stream_ends(
        &mut game.replies,
        Code::DeadlineExceeded,
        "no message arrived",
    )
    .await;
    server.wait_for_live_games(0).await;
}

/// Plays the centre, lets `game` sit silent for `pause`, and plays (0, 0): the game must
/// still be on, with both moves played.
async fn play_after_a_pause(game: &mut LiveGame, pause: Duration) {
    game.play(1, 1).await;
    tokio::time::sleep(pause).await;
    assert_eq!(game.play(0, 0).await.moves_played, 2);
}

/// `--stream-idle-timeout 0s` is no idle limit: a game silent for a while plays on (a
/// server taking 0s literally ends it within a few milliseconds), while the lifetime
/// limit still ends it.
#[tokio::test]
async fn an_idle_timeout_of_0s_is_off() {
    let (server, mut game) =
        LiveGame::on_a_server_with("--stream-idle-timeout 0s --max-game-duration 1s").await;
    play_after_a_pause(&mut game, Duration::from_millis(300)).await;
    assert_stream_ends(&mut game.replies, Code::DeadlineExceeded, "lasted").await;
    server.wait_for_live_games(0).await;
}

/// `--max-game-duration 0s` is no lifetime limit: a game plays on past its first
/// moments, while the idle limit still ends it.
#[tokio::test]
async fn a_game_duration_of_0s_is_off() {
    let (server, mut game) =
        LiveGame::on_a_server_with("--max-game-duration 0s --stream-idle-timeout 400ms").await;
    for (count, (row, col)) in [(1, 1), (0, 0), (2, 2)].into_iter().enumerate() {
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        assert_eq!(game.play(row, col).await.moves_played, count as i32 + 1);
    }
    let idle = "no message arrived for 400ms";
    assert_stream_ends(&mut game.replies, Code::DeadlineExceeded, idle).await;
    server.wait_for_live_games(0).await;
}

/// Both limits off: a game outlives any tick of the watch and finishes normally.
#[tokio::test]
async fn with_both_limits_off_a_game_lives_until_it_ends() {
    let (server, mut game) =
        LiveGame::on_a_server_with("--max-game-duration 0s --stream-idle-timeout 0s").await;
    play_after_a_pause(&mut game, Duration::from_millis(1200)).await;
    assert_eq!(server.live_games.count(), 1);
    game.finish().await;
    server.wait_for_live_games(0).await;
}

#[tokio::test]
async fn shutdown_ends_open_games_with_unavailable_after_the_grace_period() {
    let mut server = TestServer::start_with_flags("--shutdown-grace 1s").await;
    let mut client = server.client().await;
    let mut game = LiveGame::open(&mut client).await;
    game.play(1, 1).await;
    server.begin_shutdown();
    // Within the grace period the game goes on.
    assert_eq!(game.play(0, 0).await.moves_played, 2);
    assert_stream_ends(&mut game.replies, Code::Unavailable, "shutting down").await;
    drop(game);
    drop(client);
    server.shutdown().await.unwrap();
}

/// A client that stops reading replies while it keeps sending moves. The client runs on
/// a runtime of its own, so that ending that runtime drops its connection as a crashed
/// process would.
#[test]
fn a_slow_reader_holds_back_the_server() {
    let server_runtime = tokio::runtime::Runtime::new().unwrap();
    let client_runtime = tokio::runtime::Runtime::new().unwrap();
    let server = server_runtime.block_on(TestServer::start_with_flags(
        "--max-moves-per-stream 100000000",
    ));
    let pulled = Arc::new(AtomicUsize::new(0));
    let counter = pulled.clone();
    let mut replies = client_runtime.block_on(async {
        let mut client = server.client().await;
        let moves = tokio_stream::iter(0..usize::MAX).map(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
            tic_tac_toe_move(7, 7)
        });
        client.play_tic_tac_toe(moves).await.unwrap().into_inner()
    });

    // Without reading a reply, the moves the transport takes from us must stop growing:
    // flow control holds the client back once the server stops reading.
    // Held back means no move taken for three looks in a row, 200 ms apart.
    let mut stalled_at = None;
    let mut still = 0;
    let mut before = pulled.load(Ordering::Relaxed);
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(200));
        let after = pulled.load(Ordering::Relaxed);
        still = if after == before && after > 0 {
            still + 1
        } else {
            0
        };
        if still == 3 {
            stalled_at = Some(after);
            break;
        }
        before = after;
    }
    let stalled_at = stalled_at.expect("the client was never held back");
    assert!(stalled_at < 1_000_000, "{stalled_at} moves were taken");
    assert_eq!(server.live_games.count(), 1);
    eprintln!("the client was held back after {stalled_at} moves");

    // Reading replies lets the game move on, and only reading does: the client, still
    // held back, is let send again once some replies are read.
    client_runtime.block_on(async {
        let mut read = 0;
        while pulled.load(Ordering::Relaxed) == stalled_at {
            let reply = replies.message().await.unwrap().unwrap();
            assert!(reply.rejected.contains("(7, 7)"), "reply {read}");
            read += 1;
            assert!(read <= 2 * stalled_at, "reading never let the client go on");
        }
        assert!(
            read > 0,
            "the client went on from {stalled_at} moves to {} before a reply was read",
            pulled.load(Ordering::Relaxed)
        );
    });

    // The client's process goes away mid-game: its connection drops and the game is freed.
    drop(client_runtime);
    server_runtime.block_on(server.wait_for_live_games(0));
}
