//! Othello's games and boards that the unit tests, the wire tests, the benchmarks, the
//! load generators and the fuzz targets all play, defined once: plain data, for tests
//! and measurements only (hidden from the docs, not part of the API).
//!
//! The standard start is [`STANDARD_START`](super::STANDARD_START).

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
