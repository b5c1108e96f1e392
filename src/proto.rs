//! The `arbiter.v1` wire types and service stubs, generated from `proto/`, but for
//! [`Board`], which is written by hand (`proto/board.rs`) so that a board's rows arrive
//! in one buffer, ready to be checked in one pass, and for the server's two bulk
//! replies ([`replies`]), written item by item into one buffer.

mod board;
pub mod replies;
pub mod requests;

pub use self::board::Board;
pub use self::generated::*;
pub use self::server::arbiter_service_server;

/// The code tonic-prost-build writes, linted as little as generated code can be.
#[allow(missing_docs, unreachable_pub, clippy::all, clippy::pedantic)]
mod generated {
    tonic::include_proto!("arbiter.v1");
}

/// The server's stubs: the generated messages, but for [`replies`]'s two replies.
#[allow(missing_docs, unreachable_pub, clippy::all, clippy::pedantic)]
mod server {
    include!(concat!(env!("OUT_DIR"), "/server/arbiter.v1.rs"));
}

/// The encoded file descriptor set of `arbiter.v1`, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("arbiter_descriptor");
