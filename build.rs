//! Generates the gRPC stubs and the reflection descriptor set from `proto/`.
//!
//! The proto files are compiled in Rust by `protox`, so no system `protoc`
//! is needed: a fresh clone builds with the Rust toolchain alone.

use std::{env, error::Error, fs, path::PathBuf};

use protox::prost::Message;

const PROTO_ROOT: &str = "proto";
const PROTOS: &[&str] = &["proto/arbiter/v1/arbiter.proto"];

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed={PROTO_ROOT}");

    let descriptors = protox::compile(PROTOS, [PROTO_ROOT])?;
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    fs::write(
        out_dir.join("arbiter_descriptor.bin"),
        descriptors.encode_to_vec(),
    )?;

    tonic_prost_build::configure()
        // Written by hand (src/proto/board.rs): one buffer for all of a board's rows.
        .extern_path(".arbiter.v1.Board", "crate::proto::Board")
        .build_client(true)
        .build_server(false)
        .compile_fds(descriptors.clone())?;

    // The server's stubs, apart: every message is the client's type above, but for the
    // replies of the live games and of the bulk RPCs, which the server writes straight
    // from its answers into their bytes (src/proto/replies.rs) rather than building
    // and encoding a tree of messages, and the bulk requests, whose items it reads in
    // place (CheckBatch's checks) or decodes from contiguous slices (PlayMany's actions;
    // src/proto/requests.rs). The bytes on the wire are the same.
    let server = out_dir.join("server");
    fs::create_dir_all(&server)?;
    tonic_prost_build::configure()
        .extern_path(".arbiter.v1", "crate::proto")
        .extern_path(
            ".arbiter.v1.CheckBatchRequest",
            "crate::proto::requests::CheckBatchChecks",
        )
        .extern_path(
            ".arbiter.v1.PlayManyRequest",
            "crate::proto::requests::PlayManyActions",
        )
        .extern_path(
            ".arbiter.v1.CheckBatchResponse",
            "crate::proto::replies::CheckBatchReply",
        )
        .extern_path(
            ".arbiter.v1.PlayManyResponse",
            "crate::proto::replies::PlayManyReply",
        )
        .extern_path(
            ".arbiter.v1.PlayOthelloResponse",
            "crate::proto::replies::PlayOthelloReply",
        )
        .extern_path(
            ".arbiter.v1.PlayConnectFourResponse",
            "crate::proto::replies::PlayConnectFourReply",
        )
        .extern_path(
            ".arbiter.v1.PlayTicTacToeResponse",
            "crate::proto::replies::PlayTicTacToeReply",
        )
        .build_client(false)
        .build_server(true)
        .out_dir(&server)
        .compile_fds(descriptors.clone())?;

    // The stock stubs, every message as prost generates it: for the load benchmark's
    // empty-handler baseline (examples/baseline_server.rs), which stands for what a
    // typical tonic service costs.
    let stock = out_dir.join("stock");
    fs::create_dir_all(&stock)?;
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .out_dir(&stock)
        .compile_fds(descriptors)?;
    Ok(())
}
