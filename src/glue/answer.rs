//! An answer before it is a reply: what a one-shot check, a bulk item and a live game's
//! message share.

use crate::proto::replies::{Writer, WrittenAs, WrittenReply};

/// The answer to one request or one live-game message, before it is a reply. It is
/// written straight into a reply's bytes, whatever carries it (a unary RPC's reply, a
/// CheckBatch result, a live game's reply, alone or in PlayMany): one encoder for each
/// reply, which the tests hold to prost's decoding and encoding of its message.
pub trait Answer {
    /// The message it is, as prost generates it (for the tests, and for clients).
    type Response: WrittenAs;

    /// The reply's fields, written as prost would encode the message they make.
    fn write(&self, w: &mut Writer);

    /// The answer as a reply of its own.
    fn written(&self) -> <Self::Response as WrittenAs>::Reply {
        <Self::Response as WrittenAs>::Reply::written(|w| self.write(w))
    }
}
