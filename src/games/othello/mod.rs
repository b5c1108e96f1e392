//! Othello, all of it in this folder: its rules (`rules`, pure Rust with no gRPC in
//! sight: which moves are legal and which discs each turns over), re-exported here, and
//! its wire glue (`wire`: CheckOthelloMove, ListOthelloMoves and PlayOthello, unary, in
//! a CheckBatch and live, parsed, decided by the rules and answered), the boards the
//! tests and benchmarks share (`fixtures`), and the naive reference its rules are held
//! to by the tests and fuzz targets (`reference`: flips found cell by cell, a live
//! referee).

mod rules;
pub(crate) mod wire;
#[doc(hidden)]
pub mod fixtures;
#[doc(hidden)]
pub mod reference;

pub use self::rules::*;
