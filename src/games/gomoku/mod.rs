//! Gomoku, all of it in this folder: its rules (`rules`, pure Rust with no gRPC in
//! sight: a stone's winning line, freestyle or exact, and the live game), re-exported
//! here, and its wire glue (`wire`: CheckGomokuMove and PlayGomoku, unary, in a
//! CheckBatch and live, parsed, decided by the rules and answered), the boards and games
//! the tests and benchmarks share (`fixtures`), and the naive reference its rules are
//! held to by its unit tests and the fuzz targets (`reference`: winning lines found on
//! whole board lines, and by stepping from the stone).

mod rules;
pub(crate) mod wire;

pub use self::rules::*;
#[doc(hidden)]
pub mod fixtures;
#[doc(hidden)]
pub mod reference;
