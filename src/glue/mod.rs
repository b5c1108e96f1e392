//! What every game's wire glue (its `wire` module) shares, below the games: no module
//! here names a game.
//!
//! `fields` (the checks every request shares, each problem a violation naming its field),
//! `error` (every error of the service, and the one place it becomes a gRPC status),
//! `answer` (a result before it is a reply, written into its bytes), `convert` (rule
//! answers as wire values), `timing` (a live game's clock on the wire), `batch` (one
//! kind of CheckBatch check), `play` (what a game implements to be played live),
//! `placement` (the live answer of the games that place a piece on a cell) and `budget`
//! (what one bulk reply may hold).

pub(crate) mod answer;
pub(crate) mod batch;
pub(crate) mod budget;
pub(crate) mod convert;
pub(crate) mod error;
pub(crate) mod fields;
pub(crate) mod placement;
pub(crate) mod play;
pub(crate) mod timing;
