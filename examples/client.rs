//! A Rust client of every Arbiter RPC, in the manner of tonic's routeguide client: the
//! code a Rust backend starts from.
//!
//! Start a server (`cargo run --release --bin arbiter`), then
//!
//! ```sh
//! cargo run --example client                              # 127.0.0.1:50051
//! cargo run --example client -- arbiter.internal:50051      # HOST:PORT, as every client takes it
//! cargo run --example client -- http://arbiter.internal:50051
//! ```
//!
//! It makes one call of each one-shot RPC, reads the `google.rpc.BadRequest` of a
//! malformed one, plays a live game of each kind (with a move the server rejects, and
//! the stream going on after it), sends a `CheckBatch` and a `PlayMany`, and resumes a
//! game on a new stream from its history, as a game server does after a deploy or a lost
//! connection. It exits non-zero if any answer is not the one the rules give. Requests
//! are gzipped, every call has a deadline ([`DEADLINE`] for a unary call,
//! [`STREAM_DEADLINE`] for a whole stream, set by [`deadline`]), every unary call is
//! retried on UNAVAILABLE as gRPC's retry policy would ([`unary`]: tonic reads no
//! service config, so the policy is written out in code), and a live game resumes on a
//! new stream when its stream is lost ([`stream_lost`]).
//!
//! Boards travel as [`Board`]: build one with [`Board::from_rows`] from strings (or
//! bytes), read it back with `board.rows.to_strings()` or, without a copy, as bytes with
//! `board.rows.iter()`.

use std::error::Error;
use std::future::Future;
use std::time::Duration;

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::check::Check as CheckKind;
use arbiter::proto::check_result::Result as CheckAnswer;
use arbiter::proto::game_action::Action;
use arbiter::proto::game_state::State;
use arbiter::proto::{
    play_chess_request, play_connect_four_request, play_gomoku_request, play_othello_request,
    Board, Cell, Check, CheckBatchRequest, CheckChessMoveRequest, CheckConnectFourRequest,
    CheckGomokuMoveRequest, CheckOthelloMoveRequest, ChessSetup, ChessTermination,
    ConnectFourSetup, Ending, GameAction, GomokuSetup, JudgeChessGameRequest,
    JudgeTicTacToeRequest, ListChessMovesRequest, ListOthelloMovesRequest, PlayChessRequest,
    PlayConnectFourRequest, PlayConnectFourResponse, PlayGomokuRequest, PlayManyRequest,
    PlayOthelloRequest, PlayTicTacToeRequest, TicTacToeMove, TicTacToeSetup, TimeControl, Verdict,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::codec::CompressionEncoding;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Code, Request, Response, Status};
use tonic_types::StatusExt;

type Client = ArbiterServiceClient<Channel>;
type Failure = Box<dyn Error>;

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let address = endpoint_uri(
        &std::env::args()
            .nth(1)
            .unwrap_or_else(|| "127.0.0.1:50051".into()),
    );
    // One channel for the whole program: it is cheap to clone, and every clone shares
    // its HTTP/2 connection. Requests go out gzipped, and replies may come back so.
    let channel = connect(&address, None).await?;
    let mut client = ArbiterServiceClient::new(channel)
        .send_compressed(CompressionEncoding::Gzip)
        .accept_compressed(CompressionEncoding::Gzip);
    println!("connected to {address}");

    check_othello_move(&mut client).await?;
    list_othello_moves(&mut client).await?;
    check_connect_four(&mut client).await?;
    judge_tic_tac_toe(&mut client).await?;
    check_gomoku_move(&mut client).await?;
    a_malformed_request(&mut client).await?;
    play_tic_tac_toe(&mut client).await?;
    play_othello(&mut client).await?;
    play_connect_four(&mut client).await?;
    play_gomoku(&mut client).await?;
    check_chess_move(&mut client).await?;
    list_chess_moves(&mut client).await?;
    judge_chess_game(&mut client).await?;
    play_chess(&mut client).await?;
    check_batch(&mut client).await?;
    play_many(&mut client).await?;
    resume_from_history(&mut client).await?;
    on_the_clock(&mut client).await?;
    println!("\nevery answer was the one the rules give");
    Ok(())
}

/// The URI tonic connects to: `HOST:PORT` (as the other clients take it) becomes
/// `http://HOST:PORT`; an address with a scheme (`http://`, `https://`) is kept.
fn endpoint_uri(address: &str) -> String {
    if address.contains("://") {
        address.to_string()
    } else {
        format!("http://{address}")
    }
}

/// A channel to `address` (a URI): plaintext for `http://`; for `https://`, TLS, the
/// server's certificate verified against the system's roots (rustls-native-certs,
/// which also reads the file that `SSL_CERT_FILE` names) and `extra_root`, if given.
async fn connect(address: &str, extra_root: Option<Certificate>) -> Result<Channel, Failure> {
    let mut endpoint =
        Endpoint::from_shared(address.to_string())?.connect_timeout(Duration::from_secs(5));
    if address.starts_with("https://") {
        let mut tls = ClientTlsConfig::new().with_native_roots();
        if let Some(root) = extra_root {
            tls = tls.ca_certificate(root);
        }
        endpoint = endpoint.tls_config(tls)?;
    }
    Ok(endpoint.connect().await?)
}

/// How long a unary call may take, each attempt.
const DEADLINE: Duration = Duration::from_secs(10);

/// How long a whole live-game stream may take, from its opening to its last reply.
const STREAM_DEADLINE: Duration = Duration::from_secs(30);

/// A streaming call's request with [`STREAM_DEADLINE`] (sent as `grpc-timeout`, so the
/// server ends the call too): without one, a stream whose server never answers waits
/// forever.
fn deadline<T>(requests: T) -> Request<T> {
    let mut request = Request::new(requests);
    request.set_timeout(STREAM_DEADLINE);
    request
}

/// A unary call with a deadline, retried as gRPC's retry policy retries one (tonic reads
/// no service config): up to four attempts while the answer is UNAVAILABLE, 100 ms
/// apart and doubling. Every unary RPC of Arbiter is pure, so a retry is always safe;
/// any other status is the answer. `call` makes the call on a clone of the client
/// (cheap: clones share the channel).
async fn unary<M, R, F, Fut>(client: &Client, message: M, mut call: F) -> Result<R, Status>
where
    M: Clone,
    F: FnMut(Client, Request<M>) -> Fut,
    Fut: Future<Output = Result<Response<R>, Status>>,
{
    let mut backoff = Duration::from_millis(100);
    for attempt in 1.. {
        let mut request = Request::new(message.clone());
        request.set_timeout(DEADLINE);
        match call(client.clone(), request).await {
            Err(status) if status.code() == Code::Unavailable && attempt < 4 => {
                tokio::time::sleep(backoff).await;
                backoff *= 2;
            }
            answer => return answer.map(Response::into_inner),
        }
    }
    Err(Status::unavailable("no attempt was made"))
}

/// Fails the example with `what` unless `holds`.
fn expect(holds: bool, what: &str) -> Result<(), Failure> {
    if holds {
        Ok(())
    } else {
        Err(format!("unexpected answer: {what}").into())
    }
}

fn cells(cells: &[Cell]) -> String {
    let cells: Vec<String> = cells
        .iter()
        .map(|c| format!("({}, {})", c.row, c.col))
        .collect();
    format!("[{}]", cells.join(", "))
}

fn standard_othello_board() -> Board {
    Board::from_rows([
        "........", "........", "........", "...WB...", "...BW...", "........", "........",
        "........",
    ])
}

/// CheckOthelloMove of a disc of `color` at (2, 3) on the opening board: for Black, the
/// move that turns over (3, 3).
fn at_2_3(color: &str) -> CheckOthelloMoveRequest {
    CheckOthelloMoveRequest {
        board: Some(standard_othello_board()),
        row: 2,
        col: 3,
        color: color.into(),
    }
}

async fn check_othello_move(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** CheckOthelloMove");
    let reply = unary(client, at_2_3("B"), |mut c, request| async move {
        c.check_othello_move(request).await
    })
    .await?;
    println!(
        "Black at (2, 3): legal {}, flips {}",
        reply.legal,
        cells(&reply.flips)
    );
    expect(
        reply.legal && reply.flips == [Cell { row: 3, col: 3 }],
        "Black at (2, 3) turns over (3, 3)",
    )
}

async fn list_othello_moves(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** ListOthelloMoves");
    let request = ListOthelloMovesRequest {
        board: Some(standard_othello_board()),
        color: "B".into(),
    };
    let reply = unary(client, request, |mut c, request| async move {
        c.list_othello_moves(request).await
    })
    .await?;
    for option in &reply.moves {
        let cell = option.cell.unwrap_or_default();
        println!(
            "Black may play ({}, {}), turning over {}",
            cell.row,
            cell.col,
            cells(&option.flips)
        );
    }
    expect(reply.moves.len() == 4, "Black has 4 opening moves")
}

async fn check_connect_four(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** CheckConnectFour");
    let request = CheckConnectFourRequest {
        board: Some(Board::from_rows([
            "0000000", "0000000", "0000000", "0000000", "0000000", "2221000",
        ])),
        row: 5,
        col: 2,
        player: 2,
        run_length: 3,
    };
    let reply = unary(client, request, |mut c, request| async move {
        c.check_connect_four(request).await
    })
    .await?;
    println!(
        "player 2 at (5, 2), runs of 3: wins {}, run {}",
        reply.wins,
        cells(&reply.run)
    );
    expect(
        reply.wins && reply.run.len() == 3,
        "2 2 2 on the bottom row is a run of 3",
    )
}

async fn judge_tic_tac_toe(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** JudgeTicTacToe");
    let moves = [(0, 0), (1, 1), (0, 1), (2, 2), (0, 2)]
        .map(|(row, col)| TicTacToeMove { row, col })
        .to_vec();
    let reply = unary(
        client,
        JudgeTicTacToeRequest { moves },
        |mut c, request| async move { c.judge_tic_tac_toe(request).await },
    )
    .await?;
    let rows = reply.board.as_ref().map(|board| board.rows.to_strings());
    println!(
        "{:?} after {} moves, line {}, board {:?}",
        reply.verdict(),
        reply.moves_played,
        cells(&reply.line),
        rows.unwrap_or_default()
    );
    expect(reply.verdict() == Verdict::AWins, "A wins along row 0")
}

/// Gomoku: may a black stone go at (1, 3), and does it make five in a row there?
/// `run_length` 0 means 5; `exact` false is freestyle, where an overline wins too.
async fn check_gomoku_move(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** CheckGomokuMove");
    let request = CheckGomokuMoveRequest {
        board: Some(Board::from_rows(["..W.W..", ".BB.BB.", "...W.W."])),
        row: 1,
        col: 3,
        color: "B".into(),
        run_length: 0,
        exact: false,
    };
    let reply = unary(client, request, |mut c, request| async move {
        c.check_gomoku_move(request).await
    })
    .await?;
    println!(
        "Black at (1, 3): legal {}, wins {}, run {}",
        reply.legal,
        reply.wins,
        cells(&reply.run)
    );
    expect(
        reply.legal && reply.wins && reply.run.len() == 5,
        "B B B B B on row 1 wins",
    )
}

/// CheckChessMove: a move in SAN, and what it leads to (here, checkmate).
async fn check_chess_move(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** CheckChessMove");
    let request = CheckChessMoveRequest {
        fen: "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2".into(),
        r#move: "Qh4".into(),
        chess960: false,
    };
    let reply = unary(client, request, |mut c, request| async move {
        c.check_chess_move(request).await
    })
    .await?;
    let played = reply.r#move.clone().unwrap_or_default();
    println!(
        "Qh4: legal {}, {} ({}), {:?}",
        reply.legal,
        played.san,
        played.uci,
        reply.termination()
    );
    expect(
        reply.legal
            && played.san == "Qh4#"
            && played.uci == "d8h4"
            && reply.termination() == ChessTermination::Checkmate,
        "Qh4 is fool's mate",
    )
}

/// ListChessMoves: every legal move of the start, in UCI and SAN.
async fn list_chess_moves(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** ListChessMoves");
    let request = ListChessMovesRequest {
        fen: String::new(),
        chess960: false,
    };
    let reply = unary(client, request, |mut c, request| async move {
        c.list_chess_moves(request).await
    })
    .await?;
    let sans: Vec<&str> = reply.moves.iter().map(|m| m.san.as_str()).collect();
    println!("{} moves: {}", sans.len(), sans.join(" "));
    expect(
        reply.moves.len() == 20 && sans.contains(&"Nf3") && sans.contains(&"e4"),
        "20 moves from the start, Nf3 and e4 among them",
    )
}

/// JudgeChessGame: a whole game, in SAN and UCI, judged.
async fn judge_chess_game(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** JudgeChessGame");
    let request = JudgeChessGameRequest {
        fen: String::new(),
        moves: ["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "h5f7"]
            .into_iter()
            .collect(),
        chess960: false,
    };
    let reply = unary(client, request, |mut c, request| async move {
        c.judge_chess_game(request).await
    })
    .await?;
    println!(
        "{:?} by {:?}: {}",
        reply.verdict(),
        reply.termination(),
        reply.san.join(" ")
    );
    expect(
        reply.verdict() == Verdict::AWins
            && reply.termination() == ChessTermination::Checkmate
            && reply.san.last().map(String::as_str) == Some("Qxf7#"),
        "scholar's mate: White wins",
    )
}

/// PlayChess: a live game whose knights go out and back twice; a bad move is rejected
/// and the game goes on; the third time the position stands, White claims the draw.
async fn play_chess(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** PlayChess");
    let message = |action| PlayChessRequest {
        action: Some(action),
    };
    let (moves, requests) = mpsc::channel(4);
    let setup = ChessSetup {
        history: ["Nf3", "Nf6"].into_iter().collect(),
        ..Default::default()
    };
    moves
        .send(message(play_chess_request::Action::Setup(Box::new(setup))))
        .await?;
    let mut replies = client
        .play_chess(deadline(ReceiverStream::new(requests)))
        .await?
        .into_inner();
    let start = replies.message().await?.ok_or("the stream ended early")?;
    println!("after the history: {}", start.fen);
    let mut rejected = 0;
    for text in ["Ng1", "Ng8", "e9", "Nf3", "Nf6", "Ng1", "Ng8"] {
        moves
            .send(message(play_chess_request::Action::Move(text.into())))
            .await?;
        let reply = replies.message().await?.ok_or("the stream ended early")?;
        if reply.rejected.is_empty() {
            println!("{text}: claimable {}", reply.draw_claimable);
        } else {
            rejected += 1;
            println!("{text}: rejected: {}", reply.rejected);
        }
    }
    moves
        .send(message(play_chess_request::Action::ClaimDraw(true)))
        .await?;
    let last = replies.message().await?.ok_or("the stream ended early")?;
    drop(moves);
    println!(
        "claimed: {:?} by {:?}, {:?}",
        last.verdict(),
        last.termination(),
        last.ending()
    );
    expect(
        rejected == 1
            && last.verdict() == Verdict::Draw
            && last.termination() == ChessTermination::ThreefoldRepetition
            && last.ending() == Ending::Claim,
        "a draw claimed by threefold repetition",
    )
}

/// A malformed request: `INVALID_ARGUMENT`, with a `google.rpc.BadRequest` detail naming
/// every field at fault (the `tonic-types` crate reads it).
async fn a_malformed_request(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** a malformed request");
    let request = CheckConnectFourRequest {
        board: Some(Board::from_rows(["000", "00", "0000"])),
        row: 9,
        col: 0,
        player: 3,
        run_length: 0,
    };
    let Err(status) = unary(client, request, |mut c, request| async move {
        c.check_connect_four(request).await
    })
    .await
    else {
        return Err("a ragged board was not refused".into());
    };
    println!("{:?}: {}", status.code(), status.message());
    let violations = status
        .get_details_bad_request()
        .map(|details| details.field_violations)
        .unwrap_or_default();
    for violation in &violations {
        println!("  {}: {}", violation.field, violation.description);
    }
    expect(
        status.code() == Code::InvalidArgument && violations.len() == 4,
        "two ragged rows, a row off the board and a bad player",
    )
}

/// A live game is a bidirectional stream: the client sends a move, the server answers
/// it. Sending through a channel lets each move be chosen after the last reply, as a
/// game server or a bot does.
async fn play_tic_tac_toe(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** PlayTicTacToe");
    let (moves, requests) = mpsc::channel(4);
    let mut replies = client
        .play_tic_tac_toe(deadline(ReceiverStream::new(requests)))
        .await?
        .into_inner();
    // (1, 1) twice: the second is rejected, and the game goes on.
    for (row, col) in [(1, 1), (1, 1), (0, 0), (0, 1), (2, 2), (2, 1)] {
        moves
            .send(PlayTicTacToeRequest {
                row,
                col,
                setup: None,
            })
            .await?;
        let reply = replies.message().await?.ok_or("the stream ended early")?;
        if reply.rejected.is_empty() {
            println!(
                "({row}, {col}): {:?}, {} moves played",
                reply.verdict(),
                reply.moves_played
            );
        } else {
            println!("({row}, {col}): rejected: {}", reply.rejected);
        }
        if reply.verdict() != Verdict::Pending {
            expect(
                reply.verdict() == Verdict::AWins,
                "A completes the middle column",
            )?;
            break;
        }
    }
    // Dropping the sender ends the request stream; the server then ends its replies.
    drop(moves);
    expect(
        replies.message().await?.is_none(),
        "the stream ends after the client's",
    )
}

/// The requests of a whole game can also be sent as one stream, when they are known up
/// front: here a bad message (a setup after the first) is rejected in place.
async fn play_othello(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** PlayOthello");
    let place = |row, col| PlayOthelloRequest {
        action: Some(play_othello_request::Action::Move(Cell { row, col })),
    };
    let requests = vec![
        place(2, 3),
        place(0, 0),
        place(2, 2),
        PlayOthelloRequest {
            action: Some(play_othello_request::Action::Setup(Box::default())),
        },
        place(2, 1),
    ];
    let mut replies = client
        .play_othello(deadline(tokio_stream::iter(requests)))
        .await?
        .into_inner();
    let mut rejected = 0;
    while let Some(reply) = replies.message().await? {
        if reply.rejected.is_empty() {
            println!(
                "flipped {}; {} to move, {} black, {} white",
                cells(&reply.flips),
                reply.to_move,
                reply.black_discs,
                reply.white_discs
            );
        } else {
            rejected += 1;
            println!("rejected: {}", reply.rejected);
        }
    }
    expect(
        rejected == 2,
        "a disc that turns nothing over and a late setup",
    )
}

async fn play_connect_four(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** PlayConnectFour");
    let drops = [3, 3, 4, 4, 5, 5, 7, 6];
    let last = play_connect_four_resumably(client, (6, 7), &drops).await?;
    let placed = last.placed.unwrap_or_default();
    println!(
        "{:?} at ({}, {}), run {}",
        last.verdict(),
        placed.row,
        placed.col,
        cells(&last.run)
    );
    expect(
        last.verdict() == Verdict::AWins,
        "player 1 wins along the bottom row",
    )
}

/// A live Gomoku game on a 6x6 board, four in a row to win, starting after four stones
/// (the setup's history, Black first). Each move is sent once the last is answered; a
/// stone on a taken cell is rejected and the game goes on, and Black wins on row 2.
async fn play_gomoku(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** PlayGomoku");
    let message = |action| PlayGomokuRequest {
        action: Some(action),
    };
    let setup = GomokuSetup {
        rows: 6,
        cols: 6,
        run_length: 4,
        history: [(2, 2), (3, 3), (2, 3), (3, 4)]
            .map(|(row, col)| Cell { row, col })
            .to_vec(),
        ..Default::default()
    };
    let (moves, requests) = mpsc::channel(4);
    moves
        .send(message(play_gomoku_request::Action::Setup(Box::new(setup))))
        .await?;
    let mut replies = client
        .play_gomoku(deadline(ReceiverStream::new(requests)))
        .await?
        .into_inner();
    let start = replies.message().await?.ok_or("the stream ended early")?;
    println!(
        "after the history: {} stones, {} to move",
        start.moves_played, start.to_move
    );
    let mut rejected = 0;
    let mut last = start;
    // (2, 2) holds a black stone already: rejected.
    for (row, col) in [(2, 2), (2, 4), (2, 5), (2, 1)] {
        moves
            .send(message(play_gomoku_request::Action::Move(Cell {
                row,
                col,
            })))
            .await?;
        last = replies.message().await?.ok_or("the stream ended early")?;
        if last.rejected.is_empty() {
            println!("({row}, {col}): {:?}", last.verdict());
        } else {
            rejected += 1;
            println!("({row}, {col}): rejected: {}", last.rejected);
        }
    }
    drop(moves);
    println!("run {}", cells(&last.run));
    expect(
        rejected == 1
            && last.verdict() == Verdict::AWins
            && last.run == [(2, 1), (2, 2), (2, 3), (2, 4)].map(|(row, col)| Cell { row, col }),
        "a taken cell rejected, then Black makes four on row 2",
    )?;
    expect(
        replies.message().await?.is_none(),
        "the stream ends after the client's",
    )
}

/// Plays `drops` on a board of `size` (rows, columns), resuming from the history on a
/// new stream whenever the stream is lost with `UNAVAILABLE` (a server shutting down,
/// a lost connection): the loop a game server copies. What it keeps is the list of drops
/// the server applied; the reply to the resuming setup is the game as it stood, so play
/// goes on as if the stream had never ended, on any replica. Returns the last reply.
async fn play_connect_four_resumably(
    client: &mut Client,
    size: (i32, i32),
    drops: &[i32],
) -> Result<PlayConnectFourResponse, Failure> {
    let mut game = ResumableGame {
        size,
        applied: Vec::new(),
        answered: 0,
        last: None,
    };
    for _ in 0..5 {
        match game.play(client, drops).await {
            Ok(()) => return game.last.ok_or_else(|| "no drop was played".into()),
            Err(status) if stream_lost(&status) => println!(
                "stream lost ({}); resuming after {} drops",
                status.message(),
                game.applied.len()
            ),
            Err(status) => return Err(status.into()),
        }
    }
    Err("the game could not be resumed".into())
}

/// Whether a live game's stream ended in a way that a resume answers: UNAVAILABLE (a
/// server draining for a deploy, a connection lost) or INTERNAL with a reset stream (a
/// proxy such as nginx resets the client's stream when the replica behind it dies). A
/// resume replays the history on a new stream, which changes nothing the server has
/// not already applied, so it is always safe; any other status is the game's answer.
fn stream_lost(status: &Status) -> bool {
    match status.code() {
        Code::Unavailable => true,
        Code::Internal => {
            // The reset, as h2 reports it somewhere down the status's sources.
            let mut source = std::error::Error::source(status);
            while let Some(error) = source {
                if error
                    .downcast_ref::<h2::Error>()
                    .is_some_and(h2::Error::is_reset)
                {
                    return true;
                }
                source = error.source();
            }
            status.message().contains("RST_STREAM")
        }
        _ => false,
    }
}

/// What [`play_connect_four_resumably`] keeps between streams.
struct ResumableGame {
    /// The board's rows and columns.
    size: (i32, i32),
    /// The drops the server applied: the history a new stream starts from.
    applied: Vec<i32>,
    /// How many of the drops have been answered (applied or rejected).
    answered: usize,
    /// The last reply.
    last: Option<PlayConnectFourResponse>,
}

impl ResumableGame {
    /// One stream: a setup with the drops applied so far, then the drops not yet
    /// answered, one by one. A drop whose reply never came is sent again on the next.
    async fn play(&mut self, client: &mut Client, drops: &[i32]) -> Result<(), Status> {
        let ended = || Status::unavailable("the stream ended early");
        let (sender, requests) = mpsc::channel(4);
        let (rows, cols) = self.size;
        let setup = ConnectFourSetup {
            rows,
            cols,
            run_length: 0,
            history: self.applied.clone(),
            ..Default::default()
        };
        let message = |action| PlayConnectFourRequest {
            action: Some(action),
        };
        sender
            .send(message(play_connect_four_request::Action::Setup(Box::new(
                setup,
            ))))
            .await
            .map_err(|_| ended())?;
        let mut replies = client
            .play_connect_four(deadline(ReceiverStream::new(requests)))
            .await?
            .into_inner();
        replies.message().await?.ok_or_else(ended)?; // the game as it stood
        for &column in &drops[self.answered..] {
            sender
                .send(message(play_connect_four_request::Action::Drop(column)))
                .await
                .map_err(|_| ended())?;
            let reply = replies.message().await?.ok_or_else(ended)?;
            self.answered += 1;
            if reply.rejected.is_empty() {
                self.applied.push(column);
                println!("column {column}: {} drops played", reply.moves_played);
            } else {
                println!("column {column}: rejected: {}", reply.rejected);
            }
            self.last = Some(reply);
        }
        Ok(())
    }
}

/// Many checks of any kind in one call, each answered as its own RPC answers it, in
/// order; a malformed one is answered in place with its violations.
async fn check_batch(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** CheckBatch");
    let othello = |color| Check {
        check: Some(CheckKind::CheckOthelloMove(at_2_3(color))),
    };
    let judge = Check {
        check: Some(CheckKind::JudgeTicTacToe(JudgeTicTacToeRequest {
            moves: vec![TicTacToeMove { row: 1, col: 1 }],
        })),
    };
    let checks = vec![othello("B"), othello("purple"), judge];
    let reply = unary(
        client,
        CheckBatchRequest { checks },
        |mut c, request| async move { c.check_batch(request).await },
    )
    .await?;
    for (index, result) in reply.results.iter().enumerate() {
        match &result.result {
            Some(CheckAnswer::CheckOthelloMove(answer)) => {
                println!("check {index}: legal {}", answer.legal)
            }
            Some(CheckAnswer::JudgeTicTacToe(answer)) => {
                println!("check {index}: {:?}", answer.verdict())
            }
            Some(other) => println!("check {index}: {other:?}"),
            None => {
                for violation in &result.invalid {
                    println!(
                        "check {index}: invalid {}: {}",
                        violation.field, violation.description
                    );
                }
            }
        }
    }
    expect(
        reply.results.len() == 3 && reply.results[1].invalid.len() == 1,
        "three results, the second invalid on its colour",
    )
}

/// Many live games in one stream: each message carries actions for any games, numbered
/// by the client; a number that holds no game starts one of the action's kind.
async fn play_many(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** PlayMany");
    let othello = |game, row, col| GameAction {
        game,
        action: Some(Action::Othello(PlayOthelloRequest {
            action: Some(play_othello_request::Action::Move(Cell { row, col })),
        })),
    };
    let tic_tac_toe = |game, row, col| GameAction {
        game,
        action: Some(Action::TicTacToe(PlayTicTacToeRequest {
            row,
            col,
            setup: None,
        })),
    };
    let messages = vec![
        PlayManyRequest {
            actions: vec![othello(1, 2, 3), tic_tac_toe(2, 1, 1), othello(3, 5, 4)],
        },
        PlayManyRequest {
            actions: vec![
                othello(1, 2, 2),
                tic_tac_toe(2, 1, 1), // taken: rejected, the game goes on
                GameAction {
                    game: 3,
                    action: Some(Action::Close(true)),
                },
            ],
        },
    ];
    let mut replies = client
        .play_many(deadline(tokio_stream::iter(messages)))
        .await?
        .into_inner();
    let mut states = 0;
    while let Some(reply) = replies.message().await? {
        for state in reply.states {
            states += 1;
            let game = state.game;
            match state.state {
                Some(State::Othello(reply)) => println!(
                    "game {game} (Othello): {} to move, rejected {:?}",
                    reply.to_move, reply.rejected
                ),
                Some(State::TicTacToe(reply)) => println!(
                    "game {game} (Tic-Tac-Toe): {} moves played, rejected {:?}",
                    reply.moves_played, reply.rejected
                ),
                Some(State::ConnectFour(reply)) => {
                    println!("game {game} (Connect Four): {} to move", reply.to_move)
                }
                Some(State::Gomoku(reply)) => {
                    println!("game {game} (Gomoku): {} to move", reply.to_move)
                }
                #[allow(unreachable_patterns, reason = "a game added later is printed whole")]
                Some(other) => println!("game {game}: {other:?}"),
                None if state.invalid.is_empty() => println!("game {game}: closed"),
                None => println!("game {game}: invalid {:?}", state.invalid),
            }
        }
    }
    expect(states == 6, "one state per action")
}

/// A game moved to a new stream (on this server or any other) from its history alone:
/// the setup's reply is the game as the old stream left it.
async fn resume_from_history(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** resuming from a history");
    let drops = [3, 4, 3, 4];
    let requests = drops.map(|drop| PlayConnectFourRequest {
        action: Some(play_connect_four_request::Action::Drop(drop)),
    });
    let mut first = client
        .play_connect_four(deadline(tokio_stream::iter(requests)))
        .await?
        .into_inner();
    let mut before = None;
    while let Some(reply) = first.message().await? {
        before = Some(reply);
    }
    let setup = PlayConnectFourRequest {
        action: Some(play_connect_four_request::Action::Setup(Box::new(
            ConnectFourSetup {
                history: drops.to_vec(),
                ..Default::default()
            },
        ))),
    };
    let mut second = client
        .play_connect_four(deadline(tokio_stream::iter([setup])))
        .await?
        .into_inner();
    let after = second.message().await?;
    let board = |reply: &Option<PlayConnectFourResponse>| {
        reply
            .as_ref()
            .and_then(|reply| reply.board.as_ref())
            .map(|board| board.rows.to_strings())
    };
    println!("old stream left {:?}", board(&before));
    println!("new stream holds {:?}", board(&after));
    let same = |reply: &Option<PlayConnectFourResponse>| {
        reply
            .as_ref()
            .map(|reply| (reply.board.clone(), reply.to_move, reply.moves_played))
    };
    expect(
        same(&before) == same(&after) && before.is_some(),
        "the resumed game is the game",
    )
}

/// A game on the clock: half a second each. X moves at once; O does not, and the server
/// announces, on its own, that O ran out of time: a reply marked `unprompted`, with the
/// clock as it stood at the deadline. The stream may be half-closed after the move: it
/// stays open until the clock has run out.
async fn on_the_clock(client: &mut Client) -> Result<(), Failure> {
    println!("\n*** a game on the clock");
    let setup = PlayTicTacToeRequest {
        setup: Some(Box::new(TicTacToeSetup {
            time_control: Some(TimeControl {
                initial: Some(prost_types::Duration {
                    seconds: 0,
                    nanos: 500_000_000,
                }),
                ..Default::default()
            }),
            ..Default::default()
        })),
        ..Default::default()
    };
    let x = PlayTicTacToeRequest {
        row: 1,
        col: 1,
        setup: None,
    };
    let mut replies = client
        .play_tic_tac_toe(deadline(tokio_stream::iter([setup, x])))
        .await?
        .into_inner();
    let mut all = Vec::new();
    while let Some(reply) = replies.message().await? {
        all.push(reply);
    }
    let flag = all.last().ok_or("no reply")?;
    let clock = flag.clock.unwrap_or_default();
    let o_left = clock.b_left.unwrap_or_default();
    println!(
        "{:?} by {:?}, unprompted {}, O's time left {}.{:09} s",
        flag.verdict(),
        flag.ending(),
        flag.unprompted,
        o_left.seconds,
        o_left.nanos
    );
    expect(
        all.len() == 3
            && flag.unprompted
            && flag.ending() == Ending::Time
            && flag.verdict() == Verdict::AWins
            && o_left == prost_types::Duration::default(),
        "O loses on time, announced unprompted",
    )
}

#[cfg(test)]
mod tests {
    use super::{connect, endpoint_uri};
    use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
    use arbiter::proto::ListChessMovesRequest;
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    use tonic::transport::Certificate;

    /// An `https://` address connects with TLS: to a server serving TLS with a
    /// certificate for localhost that a CA of the test's signed, the client, given that
    /// CA as a root, is answered; with the system's roots alone it is refused (the CA is
    /// no root of the system's), as it is over plaintext HTTP/2.
    #[tokio::test]
    async fn an_https_address_connects_with_tls() {
        use clap::Parser;
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .signed_by(&key, &ca)
            .unwrap();
        let dir = std::env::temp_dir().join(format!("arbiter-client-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (cert_file, key_file) = (dir.join("cert.pem"), dir.join("key.pem"));
        std::fs::write(&cert_file, cert.pem()).unwrap();
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        let options = arbiter::config::Options::try_parse_from([
            "arbiter",
            "--tls-cert",
            cert_file.to_str().unwrap(),
            "--tls-key",
            key_file.to_str().unwrap(),
        ])
        .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = arbiter::server::Server::new(options.settings());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(server.run(listener, async {
            let _ = stopped.await;
        }));

        let address = endpoint_uri(&format!("https://localhost:{port}"));
        let root = Certificate::from_pem(ca.pem());
        let channel = connect(&address, Some(root)).await.unwrap();
        let reply = ArbiterServiceClient::new(channel)
            .list_chess_moves(ListChessMovesRequest::default())
            .await
            .unwrap();
        assert_eq!(reply.into_inner().moves.len(), 20);

        let untrusted = match connect(&address, None).await {
            Ok(channel) => ArbiterServiceClient::new(channel)
                .list_chess_moves(ListChessMovesRequest::default())
                .await
                .map(drop)
                .map_err(|status| status.to_string()),
            Err(error) => Err(error.to_string()),
        };
        assert!(
            untrusted.is_err(),
            "a server no root vouches for was trusted"
        );
        let plaintext = connect(&format!("http://localhost:{port}"), None).await;
        let plaintext = match plaintext {
            Ok(channel) => ArbiterServiceClient::new(channel)
                .list_chess_moves(ListChessMovesRequest::default())
                .await
                .map(drop)
                .map_err(|status| status.to_string()),
            Err(error) => Err(error.to_string()),
        };
        assert!(plaintext.is_err(), "a TLS server answered plaintext");
        stop.send(()).unwrap();
        task.await.unwrap().unwrap();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn host_port_and_uri_both_connect() {
        assert_eq!(endpoint_uri("127.0.0.1:50051"), "http://127.0.0.1:50051");
        assert_eq!(endpoint_uri("[::1]:50051"), "http://[::1]:50051");
        assert_eq!(
            endpoint_uri("arbiter.internal:50051"),
            "http://arbiter.internal:50051"
        );
        assert_eq!(
            endpoint_uri("http://127.0.0.1:50051"),
            "http://127.0.0.1:50051"
        );
        assert_eq!(
            endpoint_uri("https://arbiter.example:443"),
            "https://arbiter.example:443"
        );
    }
}
