//! Othello, all of it in this folder: its rules (`rules`, pure Rust with no gRPC in
//! sight: which moves are legal and which discs each turns over), re-exported here, and
//! its wire glue (`wire`: CheckOthelloMove, ListOthelloMoves and PlayOthello, unary, in
//! a CheckBatch and live, parsed, decided by the rules and answered), and the boards
//! the tests and benchmarks share (`fixtures`).

mod rules;
pub(crate) mod wire;
#[doc(hidden)]
pub mod fixtures;

pub use self::rules::*;
