//! Every call seen in one tower layer, health and reflection included: counted for
//! Prometheus (served on an optional listener) and logged at debug level with its RPC,
//! status code and duration.
//!
//! Metrics (their names in `names`): `arbiter_calls_total{rpc, code}`,
//! `arbiter_call_duration_seconds{rpc}` (histogram), `arbiter_calls_in_flight`, and from
//! the live-game stream `arbiter_live_games` and `arbiter_rejected_moves_total`. The
//! `rpc` label is one of the RPCs the server serves, read from their descriptor sets
//! (`rpcs`), or `other`.
//!
//! `layer` counts the calls; `listener` serves the metrics over HTTP until the server
//! stops; `otel` gives each call a span exported over OTLP, when tracing is on.

mod layer;
mod listener;
pub(crate) mod names;
pub(crate) mod otel;
mod rpcs;

pub(crate) use layer::CallMetricsLayer;
pub(crate) use listener::serve_metrics;
