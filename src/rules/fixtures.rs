//! Games and boards that the unit tests, the wire tests, the benchmarks, the load
//! generators and the fuzz targets all play, defined once: plain data, for tests and
//! measurements only (hidden from the docs, not part of the API).
//!
//! Othello's standard start is [`STANDARD_START`](super::othello::STANDARD_START).

/// A Tic-Tac-Toe game that fills the board with no line: a draw on the ninth move,
/// leaving [`TIC_TAC_TOE_DRAW_BOARD`].
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

/// The board [`TIC_TAC_TOE_DRAW`] leaves, A as `X` and B as `O`.
pub const TIC_TAC_TOE_DRAW_BOARD: [&str; 3] = ["XXO", "OOX", "XOX"];

/// The Othello seed problem (LeetCode 1958), example 1: black at (4, 3) is legal, with
/// good lines up column 3 and along row 4.
pub const LC1958_EXAMPLE_1: [&str; 8] = [
    "...B....", "...W....", "...W....", "...W....", "WBB.WWWB", "...B....", "...B....", "...W....",
];

/// The Othello seed problem (LeetCode 1958), example 2: white at (4, 4) closes no line,
/// so it is not legal.
pub const LC1958_EXAMPLE_2: [&str; 8] = [
    "........", ".B..W...", "..W.....", "...WB...", "........", "....BW..", "......W.", ".......B",
];

/// The Connect Four seed's example 1, 6x7: player 1's piece at (5, 4) wins on row 5,
/// columns 1 to 4.
pub const CONNECT_FOUR_EXAMPLE_1: [&str; 6] = [
    "0000000", "0000000", "0000000", "0000000", "0222000", "0111100",
];

/// The Connect Four seed's example 2, 6x7: player 2's piece at (2, 3) wins on the
/// anti-diagonal down to (5, 0).
pub const CONNECT_FOUR_EXAMPLE_2: [&str; 6] = [
    "0000000", "0000000", "0002000", "0021000", "0211000", "2111220",
];

/// The Connect Four seed's example 3, 6x7: player 1's piece at (3, 6) wins nothing,
/// though player 1 has a run of four elsewhere (row 5).
pub const CONNECT_FOUR_EXAMPLE_3: [&str; 6] = [
    "0000000", "0000000", "0000000", "0000001", "2220002", "1111002",
];
