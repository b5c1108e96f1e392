//! Tic-Tac-Toe, all of it in this folder: its rules (`rules`, pure Rust with no gRPC in
//! sight: a game judged one move at a time), re-exported here, and its wire glue
//! (`wire`: JudgeTicTacToe and PlayTicTacToe, unary, in a CheckBatch and live, parsed,
//! decided by the rules and answered), the boards the tests and benchmarks share
//! (`fixtures`), and the naive reference its rules are held to by the tests and fuzz
//! targets (`reference`: a referee rescanning every line after every move).

mod rules;
pub(crate) mod wire;
#[doc(hidden)]
pub mod fixtures;
#[doc(hidden)]
pub mod reference;

pub use self::rules::*;
