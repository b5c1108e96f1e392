//! An answer before it is a reply: what a one-shot check, a bulk item and a live game's
//! message share.

use crate::proto::replies::Writer;

/// The answer to one request or one live-game message, before it is a reply. It is
/// built into its reply (a unary RPC's response, a live game's reply to its first
/// message), or written straight into a reply's bytes (a CheckBatch result, a live
/// game's later replies, alone or in PlayMany) as the same message.
pub trait Answer {
    /// The reply it makes.
    type Response;
    /// The reply, built.
    fn into_response(self) -> Self::Response;
    /// The reply's fields, written as prost encodes the built reply.
    fn write(&self, w: &mut Writer);
}
