//! Requests shared by the handler benchmarks (`benches/service.rs`) and the load
//! generator (`examples/load.rs`), so that both measure the same work.

use arbiter::proto::{Board, CheckConnectFourRequest};

/// A midgame 8x8 Othello position with several legal moves for black.
pub const OTHELLO_MIDGAME: [&str; 8] = [
    "..W.....", "..WBW...", ".WWWWB..", "..BWWW..", "..WBBBW.", "...W.B..", "........", "........",
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
