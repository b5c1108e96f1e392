//! Connect Four, all of it in this folder: its rules (`rules`, pure Rust with no gRPC
//! in sight: the winning run through the piece just placed, and the live game with
//! gravity), re-exported here, and its wire glue (`wire`: CheckConnectFour and
//! PlayConnectFour, unary, in a CheckBatch and live, parsed, decided by the rules and
//! answered), and the boards the tests and benchmarks share (`fixtures`).

mod rules;
pub(crate) mod wire;
#[doc(hidden)]
pub mod fixtures;

pub use self::rules::*;
