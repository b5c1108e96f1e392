//! Connect Four, all of it in this folder: its rules (`rules`, pure Rust with no gRPC
//! in sight: the winning run through the piece just placed, and the live game with
//! gravity), re-exported here, and its wire glue (`wire`: CheckConnectFour and
//! PlayConnectFour, unary, in a CheckBatch and live, parsed, decided by the rules and
//! answered), the boards the tests and benchmarks share (`fixtures`), and the naive
//! reference its rules are held to by the tests and fuzz targets (`reference`: runs
//! found on whole board lines, a live referee).

mod rules;
pub(crate) mod wire;
#[doc(hidden)]
pub mod fixtures;
#[doc(hidden)]
pub mod reference;

pub use self::rules::*;
