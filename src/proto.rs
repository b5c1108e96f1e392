//! The `arbiter.v1` wire types and service stubs, generated from `proto/`, but for
//! [`Board`], which is written by hand (`proto/board.rs`) so that a board's rows arrive
//! in one buffer, ready to be checked in one pass, and [`ChessSetup`] and
//! [`JudgeChessGameRequest`] (`proto/chess.rs`), whose moves arrive in one buffer too;
//! and but for the server's replies to
//! the live games and the bulk RPCs ([`replies`]), written straight from the answers
//! into one buffer, and its bulk requests ([`requests`]), read item by item.

/// Implements `prost::Message` for a hand-written message (`Board`, the written
/// replies, the read requests) from the bodies of its four methods, each naming the
/// message and its arguments: the trait's signatures, written once.
macro_rules! message_impl {
    (
        $type:ty;
        encode_raw($encode_self:ident, $out:ident) $encode:block
        merge_field($merge_self:ident, $tag:ident, $wire_type:ident, $buf:ident, $ctx:ident)
            $merge:block
        encoded_len($len_self:ident) $len:block
        clear($clear_self:ident) $clear:block
    ) => {
        impl prost::Message for $type {
            fn encode_raw(&self, $out: &mut impl prost::bytes::BufMut) {
                let $encode_self = self;
                $encode
            }

            fn merge_field(
                &mut self,
                $tag: u32,
                $wire_type: prost::encoding::WireType,
                $buf: &mut impl prost::bytes::Buf,
                $ctx: prost::encoding::DecodeContext,
            ) -> Result<(), prost::DecodeError> {
                let $merge_self = self;
                $merge
            }

            fn encoded_len(&self) -> usize {
                let $len_self = self;
                $len
            }

            fn clear(&mut self) {
                let $clear_self = self;
                $clear
            }
        }
    };
}

mod board;
mod chess;
pub mod replies;
pub mod requests;
pub(crate) mod wire;

pub use self::board::Board;
pub use self::chess::{ChessSetup, JudgeChessGameRequest};
pub use self::generated::*;
pub use self::server::arbiter_service_server;

/// The code tonic-prost-build writes, linted as little as generated code can be.
#[allow(missing_docs, unreachable_pub, clippy::all, clippy::pedantic)]
mod generated {
    tonic::include_proto!("arbiter.v1");
}

/// The server's stubs: the generated messages, but for the bulk requests, read as
/// [`requests`]' types, and the replies of the live games and bulk RPCs, written as
/// [`replies`]' types.
#[allow(missing_docs, unreachable_pub, clippy::all, clippy::pedantic)]
mod server {
    include!(concat!(env!("OUT_DIR"), "/server/arbiter.v1.rs"));
}

/// The encoded file descriptor set of `arbiter.v1`, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("arbiter_descriptor");
