//! Every call seen in one tower layer, health and reflection included: counted for
//! Prometheus (served on an optional listener) and logged at debug level with its RPC,
//! status code and duration.
//!
//! Metrics (their names in `names`): `arbiter_calls_total{rpc, code}`,
//! `arbiter_call_duration_seconds{rpc}` (histogram), `arbiter_calls_in_flight`, and from
//! the live games `arbiter_live_games`, `arbiter_rejected_moves_total` and
//! `arbiter_games_ended_total` (`games`, through handles), and from the accept loop
//! `arbiter_connections_open`, `arbiter_connections_refused_total` and
//! `arbiter_handshake_timeouts_total` (`connections`). The
//! `rpc` label is one of the RPCs the server serves, read from their descriptor sets
//! (`rpcs`), or `other`.
//!
//! `layer` counts the calls; `listener` serves the metrics over HTTP until the server
//! stops; `otel` gives each call a span exported over OTLP, when tracing is on.

pub(crate) mod connections;
pub(crate) mod games;
mod layer;
mod listener;
pub(crate) mod names;
pub(crate) mod otel;
mod rpcs;

pub(crate) use layer::CallMetricsLayer;
pub(crate) use listener::serve_metrics;

use tonic::codegen::http;
use tonic::Code;

/// The status code a reply's headers (a trailers-only reply) or trailers carry, if any:
/// read from `grpc-status` alone, without building a [`Status`], because every call
/// passes here.
pub(crate) fn grpc_code(headers: &http::HeaderMap) -> Option<Code> {
    // A header name built once: looking up a `&str` would parse it on every call.
    const GRPC_STATUS: http::HeaderName = http::HeaderName::from_static("grpc-status");
    headers
        .get(GRPC_STATUS)
        .map(|value| Code::from_bytes(value.as_bytes()))
}
