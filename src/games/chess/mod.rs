//! Chess, all of it in this folder: its rules (`rules`, pure Rust with no gRPC in
//! sight: FEN both ways, UCI and SAN both ways, every legal move in standard chess and
//! Chess960, how a position or a game ends, repetitions and claims), re-exported here,
//! and its wire glue (`wire`: CheckChessMove, ListChessMoves, JudgeChessGame and
//! PlayChess, unary, in a CheckBatch and live, parsed, decided by the rules and
//! answered), the positions its tests and benchmarks share (`fixtures`), and the naive
//! reference its engine is held to (in its tests).

#[doc(hidden)]
pub mod fixtures;
#[cfg(test)]
mod reference;
mod rules;
pub(crate) mod wire;

pub use self::rules::*;
