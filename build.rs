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
        .build_client(true)
        .build_server(true)
        .compile_fds(descriptors)?;
    Ok(())
}
