//! Arbiter: a gRPC service that rules on moves in grid games.
#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

pub mod config;
mod layers;
pub mod rules;
pub mod server;
pub mod service;
pub mod telemetry;

pub mod proto {
    //! The `arbiter.v1` wire types and service stubs, generated from `proto/`.
    #![allow(missing_docs, clippy::all, clippy::pedantic)]
    tonic::include_proto!("arbiter.v1");

    /// The encoded file descriptor set of `arbiter.v1`, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("arbiter_descriptor");
}
