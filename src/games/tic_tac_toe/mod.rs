//! Tic-Tac-Toe, all of it in this folder: its rules (`rules`, pure Rust with no gRPC in
//! sight: a game judged one move at a time), re-exported here, and its wire glue
//! (`wire`: JudgeTicTacToe and PlayTicTacToe, unary, in a CheckBatch and live, parsed,
//! decided by the rules and answered), and the boards the tests and benchmarks share
//! (`fixtures`).

mod rules;
pub(crate) mod wire;
#[doc(hidden)]
pub mod fixtures;

pub use self::rules::*;
