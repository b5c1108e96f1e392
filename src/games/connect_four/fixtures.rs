//! Connect Four's games and boards that the unit tests, the wire tests, the benchmarks, the
//! load generators and the fuzz targets all play, defined once: plain data, for tests
//! and measurements only (hidden from the docs, not part of the API).

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
