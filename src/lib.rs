//! Arbiter: a gRPC service that rules on moves in board games.
//!
//! The crate is the server binary's library, public for embedding and for the project's
//! own tests, benchmarks and fuzz targets:
//!
//! - [`server`]: [`server::Server`] and its [`server::Settings`], to run Arbiter inside
//!   another program; [`config`]: the command line that fills the settings.
//! - [`Arbiter`]: the `arbiter.v1.ArbiterService` implementation itself, to call in
//!   process; [`Arbiter::open_game`] and [`Arbiter::open_many`] drive live games from
//!   any stream of messages.
//! - [`proto`]: the wire types and the gRPC client and server stubs. Every message is
//!   prost-generated but [`proto::Board`], [`proto::ChessSetup`] and
//!   [`proto::JudgeChessGameRequest`], which are hand-written so that their lists of text
//!   (a board's rows, a game's moves) arrive in one buffer: build a board with
//!   [`proto::Board::from_rows`], moves by collecting strings (`["e4", "e5"].into_iter()
//!   .collect()`), and read them as bytes (`board.rows.iter()`) or strings
//!   (`board.rows.to_strings()`). The server's stubs take the bulk requests as
//!   [`proto::requests`]' types and answer the live games and the bulk RPCs with
//!   [`proto::replies`]' (the same bytes, written straight from the answers). A request
//!   type converts to and from its generated message (`From`); a reply reads as its
//!   generated message with `to_response`.
//! - [`games`]: the games, one module each: its rules, pure Rust with no gRPC in sight,
//!   and (inside the crate) its wire glue; [`kit`]: what the games' rules share (the
//!   grid, rows, colours, the clock).
//! - [`OtlpTracing`]: a server span per call, exported over OTLP, continuing the
//!   caller's W3C trace; off until started (the binary's `--otlp-endpoint`). With the
//!   default `otlp` feature.
#![forbid(unsafe_code)]
// No panic on a request path: unwrap, expect, panic and unreachable are refused outside
// the tests (which may panic, that being how a test fails).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]
#![warn(missing_docs, unreachable_pub)]

mod access;
pub mod config;
mod connections;
mod frame_watch;
mod frames;
pub mod games;
mod glue;
pub mod kit;
mod layers;
pub mod proto;
pub mod server;
mod service;
mod telemetry;
mod unread;

pub use games::GameKind;
pub use games::{LiveGame, LiveGameVisitor};
pub use glue::budget::MAX_REPLY_BYTES;
pub use service::batch::MAX_CHECKS;
pub use service::play::many::MAX_ACTIONS;
pub use service::play::{LiveGames, ReplyStream, StreamLimits};
#[doc(hidden)]
pub use service::registration::check_corpus;
pub use service::registration::visit_live_games;
pub use service::Arbiter;
#[cfg(feature = "otlp")]
pub use telemetry::otel::{OtlpTracing, TracingError};
