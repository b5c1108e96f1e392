//! Live games, one per Play* stream, or many per PlayMany stream, for every game Arbiter
//! referees.
//!
//! The stream machinery is the same for every game ([`LiveGame`] is what differs): the
//! reply stream pulls the next message only when the transport asks for the next reply,
//! so a client that stops reading stops the server reading its messages (backpressure)
//! and nothing is buffered beyond HTTP/2's flow-control windows. No task is spawned per
//! game: when the client cancels or its connection drops, the transport drops the reply
//! stream, and with it the game.
//!
//! A client that stops reading also stops the transport polling its reply stream, so
//! no timer inside the stream could fire. One reaper task per server (`reaper.rs`) therefore
//! watches every game's idle time and lifetime and ends the games past either: it
//! frees their state and their place in the live-game count at once, and their stream
//! answers with the reason as soon as the transport polls it again.
//!
//! One idea a file: `limits.rs` (the limits), `crate::glue::play` (what a game implements,
//! below the games),
//! `referee.rs` (one game as its messages reach it), `live_games.rs` (the count),
//! `session.rs` (a stream and its timer), `reaper.rs` (the watch), `one.rs` (a
//! single-game stream) and `many.rs` (a PlayMany stream, whose games of any kind the
//! registration's `AnyGame` holds).

mod limits;
mod live_games;
pub(crate) mod many;
mod one;
mod reaper;
mod referee;
mod session;

pub use self::limits::StreamLimits;
pub use self::live_games::LiveGames;
pub(crate) use self::live_games::{take_place, GameHolder, OpenGame};
pub(crate) use self::one::open;
pub(crate) use self::referee::Referee;
pub use self::session::ReplyStream;
pub(crate) use self::session::{session, Games};
#[cfg(test)]
pub(crate) use crate::glue::play::Handled;
pub(crate) use crate::glue::play::WrittenReplyOf;
