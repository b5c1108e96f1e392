//! Games and boards that several tests and benchmarks play: plain data, no dependency,
//! so that `benches/support/requests.rs` (and through it `examples/load.rs`) and the
//! unit tests in `src/rules/` can take them with `#[path]` as the wire tests take them
//! through `tests/common`.
#![allow(dead_code)]

/// A Tic-Tac-Toe game that fills the board with no line: a draw on the ninth move,
/// leaving `TIC_TAC_TOE_DRAW_BOARD`.
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

/// The board `TIC_TAC_TOE_DRAW` leaves, A as `X` and B as `O`.
pub const TIC_TAC_TOE_DRAW_BOARD: [&str; 3] = ["XXO", "OOX", "XOX"];

/// The Othello seed problem (LeetCode 1958), example 1: black at (4, 3) is legal, with
/// good lines up column 3 and along row 4.
pub const LC1958_EXAMPLE_1: [&str; 8] = [
    "...B....", "...W....", "...W....", "...W....", "WBB.WWWB", "...B....", "...B....", "...W....",
];

/// The Connect Four seed's example 2, 6x7: player 2's piece at (2, 3) wins on the
/// anti-diagonal down to (5, 0).
pub const CONNECT_FOUR_EXAMPLE_2: [&str; 6] = [
    "0000000", "0000000", "0002000", "0021000", "0211000", "2111220",
];
