//! Arbiter: a gRPC service that rules on moves in grid games.
#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

pub mod config;
mod layers;
pub mod proto;
pub mod rules;
pub mod server;
pub mod service;
pub mod telemetry;
