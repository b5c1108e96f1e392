//! Requests shared by the handler benchmarks (`benches/service.rs`) and the two load
//! generators (`examples/load.rs`, a tonic client, and `examples/h2load.rs`, which
//! frames these same requests for h2load), so that all of them measure the same work.

use arbiter::proto::{
    Board, CheckConnectFourRequest, CheckOthelloMoveRequest, JudgeTicTacToeRequest,
    ListOthelloMovesRequest, TicTacToeMove,
};

/// A midgame 8x8 Othello position with several legal moves for black.
pub const OTHELLO_MIDGAME: [&str; 8] = [
    "..W.....", "..WBW...", ".WWWWB..", "..BWWW..", "..WBBBW.", "...W.B..", "........", "........",
];

/// The 6x7 Connect Four position of the load runs: player 2 completes a diagonal at
/// (2, 3).
pub const CONNECT_FOUR_6X7: [&str; 6] = [
    "0000000", "0000000", "0002000", "0021000", "0211000", "2111220",
];

/// A nine-move Tic-Tac-Toe game that ends in a draw, as (row, col).
pub const TIC_TAC_TOE_DRAW: [(i32, i32); 9] = [
    (0, 0),
    (1, 1),
    (2, 0),
    (1, 0),
    (1, 2),
    (2, 1),
    (0, 1),
    (0, 2),
    (2, 2),
];

/// A board message of `rows`.
pub fn board(rows: &[&str]) -> Option<Board> {
    Some(Board {
        rows: rows.iter().map(|r| r.to_string()).collect(),
    })
}

/// A dense `side`x`side` Connect Four board of both players' pieces with player 1 at the
/// centre, and the request asking whether that piece wins.
pub fn dense_connect_four(side: usize) -> CheckConnectFourRequest {
    let rows = (0..side)
        .map(|r| {
            (0..side)
                .map(|c| match (r * 7 + c * 13 + r * c) % 5 {
                    _ if r == side / 2 && c == side / 2 => '1',
                    0 | 1 => '2',
                    2 => '0',
                    _ => '1',
                })
                .collect()
        })
        .collect();
    CheckConnectFourRequest {
        board: Some(Board { rows }),
        row: (side / 2) as i32,
        col: (side / 2) as i32,
        player: 1,
        run_length: 0,
    }
}

/// One unary call the load generators repeat.
#[derive(Clone, Debug)]
pub enum UnaryCall {
    /// `CheckOthelloMove`.
    CheckOthelloMove(CheckOthelloMoveRequest),
    /// `ListOthelloMoves`.
    ListOthelloMoves(ListOthelloMovesRequest),
    /// `CheckConnectFour`.
    CheckConnectFour(CheckConnectFourRequest),
    /// `JudgeTicTacToe`.
    JudgeTicTacToe(JudgeTicTacToeRequest),
}

impl UnaryCall {
    /// The RPC's name in `arbiter.v1.ArbiterService`.
    pub fn method(&self) -> &'static str {
        match self {
            Self::CheckOthelloMove(_) => "CheckOthelloMove",
            Self::ListOthelloMoves(_) => "ListOthelloMoves",
            Self::CheckConnectFour(_) => "CheckConnectFour",
            Self::JudgeTicTacToe(_) => "JudgeTicTacToe",
        }
    }

    /// The request message, encoded with prost (without the gRPC frame prefix).
    pub fn encode(&self) -> Vec<u8> {
        use prost::Message;
        match self {
            Self::CheckOthelloMove(r) => r.encode_to_vec(),
            Self::ListOthelloMoves(r) => r.encode_to_vec(),
            Self::CheckConnectFour(r) => r.encode_to_vec(),
            Self::JudgeTicTacToe(r) => r.encode_to_vec(),
        }
    }
}

/// The unary workloads of the load runs, by name: CheckOthelloMove on the 8x8 midgame,
/// ListOthelloMoves on the same board, CheckConnectFour on 6x7 and on a dense 100x100
/// board (10 KB), and JudgeTicTacToe of a nine-move game.
pub fn unary_workloads() -> Vec<(&'static str, UnaryCall)> {
    vec![
        (
            "CheckOthelloMove 8x8",
            UnaryCall::CheckOthelloMove(CheckOthelloMoveRequest {
                board: board(&OTHELLO_MIDGAME),
                row: 1,
                col: 1,
                color: "B".into(),
            }),
        ),
        (
            "ListOthelloMoves 8x8",
            UnaryCall::ListOthelloMoves(ListOthelloMovesRequest {
                board: board(&OTHELLO_MIDGAME),
                color: "B".into(),
            }),
        ),
        (
            "CheckConnectFour 6x7",
            UnaryCall::CheckConnectFour(CheckConnectFourRequest {
                board: board(&CONNECT_FOUR_6X7),
                row: 2,
                col: 3,
                player: 2,
                run_length: 0,
            }),
        ),
        (
            "CheckConnectFour 100x100",
            UnaryCall::CheckConnectFour(dense_connect_four(100)),
        ),
        (
            "JudgeTicTacToe 9 moves",
            UnaryCall::JudgeTicTacToe(JudgeTicTacToeRequest {
                moves: TIC_TAC_TOE_DRAW
                    .iter()
                    .map(|&(row, col)| TicTacToeMove { row, col })
                    .collect(),
            }),
        ),
    ]
}
