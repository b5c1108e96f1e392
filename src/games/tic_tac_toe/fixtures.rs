//! Tic-Tac-Toe's games and boards that the unit tests, the wire tests, the benchmarks, the
//! load generators and the fuzz targets all play, defined once: plain data, for tests
//! and measurements only (hidden from the docs, not part of the API).

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
