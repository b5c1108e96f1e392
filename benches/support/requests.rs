//! Boards and requests shared by the rule benchmarks (`benches/rules.rs`), the handler
//! benchmarks (`benches/service.rs`) and the two load generators (`tools/load.rs`, a
//! tonic client, and `tools/h2load.rs`, which frames the same requests for h2load), so
//! that all of them measure the same work. The games the tests play as well come from
//! each game's `fixtures` in its folder, their one home.
#![allow(dead_code)] // each includer takes what it measures

use std::num::NonZeroUsize;

use arbiter::games::{chess, connect_four, othello};
use arbiter::proto::{
    check, game_action, play_connect_four_request, play_gomoku_request, play_othello_request,
    Board, Cell, Check, CheckBatchRequest, CheckConnectFourRequest, CheckGomokuMoveRequest,
    CheckOthelloMoveRequest, ConnectFourSetup, GameAction, JudgeTicTacToeRequest,
    ListOthelloMovesRequest, PlayConnectFourRequest, PlayGomokuRequest, PlayManyRequest,
    PlayOthelloRequest, PlayTicTacToeRequest, TicTacToeMove, TimeControl,
};
use arbiter::proto::{
    play_chess_request, CheckChessMoveRequest, ListChessMovesRequest, PlayChessRequest,
};

/// The games and boards the tests play as well, each defined once in its game's folder.
pub mod games {
    pub use arbiter::games::connect_four::fixtures::*;
    pub use arbiter::games::tic_tac_toe::fixtures::*;
}

/// A midgame 8x8 Othello position with several legal moves for black.
pub const OTHELLO_MIDGAME: [&str; 8] = [
    "..W.....", "..WBW...", ".WWWWB..", "..BWWW..", "..WBBBW.", "...W.B..", "........", "........",
];

/// A freestyle Gomoku game on the default 15x15 board, (row, col) of each stone in turn,
/// Black first: Black's 7th stone, at the centre, makes three open threes at once
/// (column 7 and both diagonals); White blocks one, Black makes an open four of column 7,
/// White blocks one end, and Black's 9th stone completes the five (4, 7) to (8, 7).
/// 17 stones, 9 Black's and 8 White's.
pub const GOMOKU_GAME: [(i32, i32); 17] = [
    (6, 7),
    (5, 8),
    (8, 7),
    (7, 8),
    (6, 6),
    (6, 5),
    (8, 8),
    (8, 9),
    (8, 6),
    (8, 5),
    (6, 8),
    (6, 9),
    (7, 7),
    (9, 9),
    (5, 7),
    (9, 7),
    (4, 7),
];

/// `GOMOKU_GAME` before its last stone: Black's (4, 7) completes the five of column 7.
pub const GOMOKU_BEFORE_FIVE: [&str; 15] = [
    "...............",
    "...............",
    "...............",
    "...............",
    "...............",
    ".......BW......",
    ".....WBBBW.....",
    ".......BW......",
    ".....WBBBW.....",
    ".......W.W.....",
    "...............",
    "...............",
    "...............",
    "...............",
    "...............",
];

/// A board message of `rows`.
pub fn board(rows: &[&str]) -> Option<Board> {
    Some(Board::from_rows(rows))
}

/// A dense `side`x`side` Connect Four board of both players' pieces with player 1 at the
/// centre, and the request asking whether that piece wins.
pub fn dense_connect_four(side: usize) -> CheckConnectFourRequest {
    let rows = (0..side).map(|r| {
        (0..side)
            .map(|c| match (r * 7 + c * 13 + r * c) % 5 {
                _ if r == side / 2 && c == side / 2 => '1',
                0 | 1 => '2',
                2 => '0',
                _ => '1',
            })
            .collect::<String>()
    });
    CheckConnectFourRequest {
        board: Some(Board::from_rows(rows)),
        row: (side / 2) as i32,
        col: (side / 2) as i32,
        player: 1,
        run_length: 0,
    }
}

/// A full `side`x`side` Connect Four board on which player 1 owns the whole of the
/// centre's row and column and both main diagonals, and every other cell is a repeating
/// mix of both players, so that a walk from the centre runs the full side of the board.
/// The worst case of the rule alone (`benches/rules.rs`), unlike `dense_connect_four`.
pub fn connect_four_long_lines(side: usize) -> Vec<String> {
    let centre = side / 2;
    (0..side)
        .map(|r| {
            (0..side)
                .map(|c| {
                    let on_line = r == centre
                        || c == centre
                        || r as isize - c as isize == 0
                        || r + c == side - 1;
                    if on_line {
                        '1'
                    } else if (r * 7 + c * 3) % 5 < 2 {
                        '2'
                    } else {
                        '1'
                    }
                })
                .collect()
        })
        .collect()
}

/// `connect_four_long_lines` as a Gomoku board: player 1's pieces Black's stones, player
/// 2's White's, and the centre empty, so that a black stone there walks the full side of
/// the board along all four lines. The worst case of the Gomoku rule alone.
pub fn gomoku_long_lines(side: usize) -> Vec<String> {
    let centre = side / 2;
    connect_four_long_lines(side)
        .into_iter()
        .enumerate()
        .map(|(r, row)| {
            row.chars()
                .enumerate()
                .map(|(c, piece)| match piece {
                    _ if r == centre && c == centre => '.',
                    '1' => 'B',
                    _ => 'W',
                })
                .collect()
        })
        .collect()
}

/// The nine-move drawn Tic-Tac-Toe game as a JudgeTicTacToe request.
pub fn judge_draw() -> JudgeTicTacToeRequest {
    JudgeTicTacToeRequest {
        moves: games::TIC_TAC_TOE_DRAW
            .iter()
            .map(|&(row, col)| TicTacToeMove { row, col })
            .collect(),
    }
}

/// Is black at (1, 1) legal in `OTHELLO_MIDGAME`?
pub fn check_midgame() -> CheckOthelloMoveRequest {
    CheckOthelloMoveRequest {
        board: board(&OTHELLO_MIDGAME),
        row: 1,
        col: 1,
        color: "B".into(),
    }
}

/// Black's legal moves in `OTHELLO_MIDGAME`.
pub fn list_midgame() -> ListOthelloMovesRequest {
    ListOthelloMovesRequest {
        board: board(&OTHELLO_MIDGAME),
        color: "B".into(),
    }
}

/// Does player 2's piece at (2, 3) win in the 6x7 seed example? (It does.)
pub fn check_connect_four_seed() -> CheckConnectFourRequest {
    CheckConnectFourRequest {
        board: board(&games::CONNECT_FOUR_EXAMPLE_2),
        row: 2,
        col: 3,
        player: 2,
        run_length: 0,
    }
}

/// Does Black's stone at (4, 7) win in `GOMOKU_BEFORE_FIVE`, freestyle, five to win? (It
/// is legal, and completes the five (4, 7) to (8, 7).)
pub fn check_gomoku_five() -> CheckGomokuMoveRequest {
    CheckGomokuMoveRequest {
        board: board(&GOMOKU_BEFORE_FIVE),
        row: 4,
        col: 7,
        color: "B".into(),
        run_length: 0,
        exact: false,
    }
}

/// A middlegame (the Italian game after 4... Nf6): White's 12 pieces and Black's all
/// developing, 33 legal moves for White.
pub const CHESS_MIDGAME: &str =
    "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5";

/// CheckChessMove of a SAN move (castling) in the middlegame.
pub fn check_chess_castle() -> CheckChessMoveRequest {
    CheckChessMoveRequest {
        fen: CHESS_MIDGAME.into(),
        r#move: "O-O".into(),
        chess960: false,
    }
}

/// ListChessMoves of the middlegame: every legal move with its SAN.
pub fn list_chess_midgame() -> ListChessMovesRequest {
    ListChessMovesRequest {
        fen: CHESS_MIDGAME.into(),
        chess960: false,
    }
}

/// A whole chess game from the start, each side playing the first of its legal moves
/// in UCI order that does not end the game at once, for 80 plies or until no such move is left.
pub fn chess_script() -> Vec<PlayChessRequest> {
    let mut game = chess::Game::standard();
    let mut moves = Vec::new();
    while moves.len() < 80 {
        let position = game.position().clone();
        let mut legal: Vec<String> = position
            .legal_moves()
            .into_iter()
            .map(|mv| position.uci(mv))
            .collect();
        legal.sort();
        let next = legal.into_iter().find(|uci| {
            let mut trial = game.clone();
            trial.play(uci).is_ok() && !trial.outcome().is_over()
        });
        let Some(uci) = next else { break };
        game.play(&uci).expect("a legal move");
        moves.push(PlayChessRequest {
            action: Some(play_chess_request::Action::Move(uci)),
        });
    }
    moves
}

/// One call of a load workload: an RPC of `arbiter.v1.ArbiterService` by its name, and
/// its request messages as their bytes, so that no game is named by the tools that
/// post, call or answer it (`tools/h2load.rs`, `load.rs`, `replies.rs`, the
/// baseline): a game added to the contract asks nothing of them.
#[derive(Clone, Debug)]
pub struct LoadCall {
    /// The RPC's name.
    method: String,
    /// Its request messages, each encoded (without the gRPC frame prefix): one for a
    /// unary call, all of a stream's.
    messages: Vec<Vec<u8>>,
    /// The decisions it carries.
    items: usize,
    /// Whether it carries many decisions per message (CheckBatch, PlayMany).
    batch: bool,
    /// Whether its RPC takes a stream of messages (a live game, PlayMany).
    stream: bool,
}

impl LoadCall {
    /// A live game of `method` (`PlayOthello`...): every message of `moves` in one
    /// stream, a decision each.
    pub fn game<M: prost::Message>(method: &str, moves: &[M]) -> Self {
        Self {
            method: method.to_owned(),
            messages: moves.iter().map(prost::Message::encode_to_vec).collect(),
            items: moves.len(),
            batch: false,
            stream: true,
        }
    }

    /// A CheckBatch of `batch`'s checks.
    pub fn check_batch(batch: &CheckBatchRequest) -> Self {
        Self {
            method: "CheckBatch".to_owned(),
            messages: vec![prost::Message::encode_to_vec(batch)],
            items: batch.checks.len(),
            batch: true,
            stream: false,
        }
    }

    /// A PlayMany stream of `messages` (then half-close), an item per action.
    pub fn play_many(messages: &[PlayManyRequest]) -> Self {
        Self {
            method: "PlayMany".to_owned(),
            messages: messages.iter().map(prost::Message::encode_to_vec).collect(),
            items: messages.iter().map(|m| m.actions.len()).sum(),
            batch: true,
            stream: true,
        }
    }

    /// The RPC's name in `arbiter.v1.ArbiterService`.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The RPC's path (`/arbiter.v1.ArbiterService/CheckOthelloMove`).
    pub fn path(&self) -> String {
        format!("/arbiter.v1.ArbiterService/{}", self.method)
    }

    /// Whether the RPC takes a stream of messages.
    pub fn is_stream(&self) -> bool {
        self.stream
    }

    /// The decisions one call carries: 1 for a unary call, a move per message for a
    /// game, the checks of a batch, the actions of all a PlayMany stream's messages.
    pub fn items(&self) -> usize {
        self.items
    }

    /// Whether one call carries many decisions per message (CheckBatch, PlayMany).
    pub fn is_batch(&self) -> bool {
        self.batch
    }

    /// The request messages, each encoded with prost (without the gRPC frame prefix):
    /// one for a unary call, one per move for a game.
    pub fn messages(&self) -> Vec<Vec<u8>> {
        self.messages.clone()
    }
}

impl From<check::Check> for LoadCall {
    /// The unary call that answers `check` on its own: the RPC whose request is the
    /// check's, found in the contract.
    fn from(check: check::Check) -> Self {
        use prost::encoding::{decode_key, decode_varint};
        use prost::Message;
        let encoded = Check { check: Some(check) }.encode_to_vec();
        let mut rest = &encoded[..];
        let (number, _) = decode_key(&mut rest).expect("a check's key");
        let len = decode_varint(&mut rest).expect("a check's length") as usize;
        let set = prost_types::FileDescriptorSet::decode(arbiter::proto::FILE_DESCRIPTOR_SET)
            .expect("the contract's descriptor set decodes");
        let request = set
            .file
            .iter()
            .flat_map(|file| &file.message_type)
            .find(|message| message.name() == "Check")
            .and_then(|message| message.field.iter().find(|f| f.number() == number as i32))
            .map(|field| field.type_name())
            .expect("a check of the contract");
        let method = set
            .file
            .iter()
            .flat_map(|file| &file.service)
            .flat_map(|service| &service.method)
            .find(|method| method.input_type() == request)
            .expect("an RPC takes each check's request");
        Self {
            method: method.name().to_owned(),
            messages: vec![rest[..len].to_vec()],
            items: 1,
            batch: false,
            stream: method.client_streaming(),
        }
    }
}

/// The unary workloads of the load runs, each as the check a CheckBatch carries: its
/// name, the name of its CheckBatch workload, the checks per batch, the request.
/// CheckOthelloMove on the 8x8 midgame, ListOthelloMoves on the same board,
/// CheckConnectFour on 6x7 and on a dense 100x100 board (10 KB; 50 a batch, within the
/// default 1 MiB request), JudgeTicTacToe of a nine-move game, and CheckGomokuMove of a
/// stone that completes a five on 15x15.
fn unary_checks() -> [(&'static str, &'static str, usize, check::Check); 8] {
    use check::Check as K;
    [
        (
            "CheckOthelloMove 8x8",
            "CheckBatch 1000 CheckOthelloMove 8x8",
            BATCH,
            K::CheckOthelloMove(check_midgame()),
        ),
        (
            "ListOthelloMoves 8x8",
            "CheckBatch 1000 ListOthelloMoves 8x8",
            BATCH,
            K::ListOthelloMoves(list_midgame()),
        ),
        (
            "CheckConnectFour 6x7",
            "CheckBatch 1000 CheckConnectFour 6x7",
            BATCH,
            K::CheckConnectFour(check_connect_four_seed()),
        ),
        (
            "CheckConnectFour 100x100",
            "CheckBatch 50 CheckConnectFour 100x100",
            50,
            K::CheckConnectFour(dense_connect_four(100)),
        ),
        (
            "JudgeTicTacToe 9 moves",
            "CheckBatch 1000 JudgeTicTacToe 9 moves",
            BATCH,
            K::JudgeTicTacToe(judge_draw()),
        ),
        (
            "CheckGomokuMove 15x15",
            "CheckBatch 1000 CheckGomokuMove 15x15",
            BATCH,
            K::CheckGomokuMove(check_gomoku_five()),
        ),
        (
            "CheckChessMove middlegame SAN",
            "CheckBatch 1000 CheckChessMove middlegame SAN",
            BATCH,
            K::CheckChessMove(check_chess_castle()),
        ),
        (
            "ListChessMoves middlegame",
            "CheckBatch 1000 ListChessMoves middlegame",
            BATCH,
            K::ListChessMoves(list_chess_midgame()),
        ),
    ]
}

/// The unary workloads of the load runs, by name (see `unary_checks`).
pub fn unary_workloads() -> Vec<(&'static str, LoadCall)> {
    unary_checks()
        .into_iter()
        .map(|(name, _, _, check)| (name, check.into()))
        .collect()
}

/// The live games of the h2load runs, each a whole game sent as one stream: the same
/// games the tonic load generator plays (`tools/load.rs`), where each move waits for
/// the reply to the one before.
pub fn game_workloads() -> Vec<(&'static str, LoadCall)> {
    vec![
        (
            "PlayTicTacToe game of 9 moves",
            LoadCall::game("PlayTicTacToe", &tic_tac_toe_script()),
        ),
        (
            "PlayOthello whole game",
            LoadCall::game("PlayOthello", &othello_script()),
        ),
        (
            "PlayConnectFour game on 6x7",
            LoadCall::game("PlayConnectFour", &connect_four_script()),
        ),
        (
            "PlayGomoku game on 15x15",
            LoadCall::game("PlayGomoku", &gomoku_script()),
        ),
        (
            "PlayChess game of 80 plies",
            LoadCall::game("PlayChess", &chess_script()),
        ),
    ]
}

/// The nine-move Tic-Tac-Toe draw, as PlayTicTacToe messages.
pub fn tic_tac_toe_script() -> Vec<PlayTicTacToeRequest> {
    games::TIC_TAC_TOE_DRAW
        .iter()
        .map(|&(row, col)| PlayTicTacToeRequest {
            row,
            col,
            setup: None,
        })
        .collect()
}

/// A whole Othello game from the standard start, each side playing its first legal
/// move (row-major) until the game ends.
pub fn othello_script() -> Vec<PlayOthelloRequest> {
    let mut game = othello::Game::standard();
    let mut moves = Vec::new();
    while let Some(&cell) = game.legal_cells().first() {
        let (row, col) = (cell.row as i64, cell.col as i64);
        game.play(row, col).expect("a legal move");
        moves.push(PlayOthelloRequest {
            action: Some(play_othello_request::Action::Move(Cell {
                row: row as i32,
                col: col as i32,
            })),
        });
    }
    moves
}

/// A whole Connect Four game on the default 6x7 board: drops into every third column,
/// skipping full ones, until it is won or drawn.
pub fn connect_four_script() -> Vec<PlayConnectFourRequest> {
    let side = |n| NonZeroUsize::new(n).expect("a board side");
    let mut game = connect_four::Game::new(side(6), side(7), connect_four::DEFAULT_RUN_LENGTH);
    let mut drops = Vec::new();
    let mut col = 0;
    while matches!(game.outcome(), connect_four::Outcome::Pending) {
        if game.drop_piece(col % 7).is_ok() {
            drops.push(PlayConnectFourRequest {
                action: Some(play_connect_four_request::Action::Drop((col % 7) as i32)),
            });
        }
        col += 3;
    }
    drops
}

/// `GOMOKU_GAME` on the default 15x15 board, as PlayGomoku messages: 17 moves, Black's
/// last completing a five.
pub fn gomoku_script() -> Vec<PlayGomokuRequest> {
    GOMOKU_GAME
        .iter()
        .map(|&(row, col)| PlayGomokuRequest {
            action: Some(play_gomoku_request::Action::Move(Cell { row, col })),
        })
        .collect()
}

/// Games stepped together in each PlayMany workload, and checks in each CheckBatch call
/// (but for the 10 KB boards).
pub const BATCH: usize = 1000;

/// `count` copies of `check` as one CheckBatch request.
pub fn batch_of(count: usize, check: check::Check) -> CheckBatchRequest {
    CheckBatchRequest {
        checks: vec![Check { check: Some(check) }; count],
    }
}

/// `games` games numbered 0 to `games - 1`, each playing `script` from its first
/// message, stepped together: message i carries every game's i-th action, in game order.
pub fn stepped_together<R: Clone>(
    games: usize,
    script: &[R],
    action: fn(R) -> game_action::Action,
) -> Vec<PlayManyRequest> {
    script
        .iter()
        .map(|step| PlayManyRequest {
            actions: (0..games as u64)
                .map(|game| GameAction {
                    game,
                    action: Some(action(step.clone())),
                })
                .collect(),
        })
        .collect()
}

/// The CheckBatch and PlayMany workloads of the h2load runs: a batch of each unary
/// workload's request (`unary_checks`: 1,000 checks per call, 50 of the 10 KB 100x100
/// board), and 1,000 games stepped together through the whole game of each kind (one
/// action per game per message, played to the end, then half-close).
pub fn batch_workloads() -> Vec<(&'static str, LoadCall)> {
    let batches = unary_checks()
        .into_iter()
        .map(|(_, name, count, check)| (name, LoadCall::check_batch(&batch_of(count, check))));
    let games = [
        (
            "PlayMany 1000 TicTacToe games of 9 moves",
            LoadCall::play_many(&stepped_together(
                BATCH,
                &tic_tac_toe_script(),
                game_action::Action::TicTacToe,
            )),
        ),
        (
            "PlayMany 1000 Othello whole games",
            LoadCall::play_many(&stepped_together(
                BATCH,
                &othello_script(),
                game_action::Action::Othello,
            )),
        ),
        (
            "PlayMany 1000 ConnectFour games on 6x7",
            LoadCall::play_many(&stepped_together(
                BATCH,
                &connect_four_script(),
                game_action::Action::ConnectFour,
            )),
        ),
        (
            "PlayMany 1000 Gomoku games on 15x15",
            LoadCall::play_many(&stepped_together(
                BATCH,
                &gomoku_script(),
                game_action::Action::Gomoku,
            )),
        ),
        (
            "PlayMany 1000 chess games of 80 plies",
            LoadCall::play_many(&stepped_together(
                BATCH,
                &chess_script(),
                game_action::Action::Chess,
            )),
        ),
    ];
    batches.chain(games).collect()
}

/// The workloads on the clock, for instruction counts only (`benches/callgrind.sh`): their
/// replies carry each side's time left, which differs from run to run, so they are
/// checked by size within a margin rather than byte for byte, and the load runs, which
/// check every reply's bytes, leave them out. "PlayMany 1000 clocked ConnectFour games
/// on 6x7" is "PlayMany 1000 ConnectFour games on 6x7" with a first message that sets
/// every game up on an hour's clock: its figure per item, beside that workload's, is
/// what a clock costs a move.
pub fn clocked_workloads() -> Vec<(&'static str, LoadCall)> {
    let setup = PlayConnectFourRequest {
        action: Some(play_connect_four_request::Action::Setup(Box::new(
            ConnectFourSetup {
                rows: 6,
                cols: 7,
                run_length: 4,
                time_control: Some(TimeControl {
                    initial: Some(prost_types::Duration {
                        seconds: 3600,
                        nanos: 0,
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            },
        ))),
    };
    let script: Vec<_> = std::iter::once(setup)
        .chain(connect_four_script())
        .collect();
    vec![(
        "PlayMany 1000 clocked ConnectFour games on 6x7",
        LoadCall::play_many(&stepped_together(
            BATCH,
            &script,
            game_action::Action::ConnectFour,
        )),
    )]
}
