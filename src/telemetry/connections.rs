//! The connection metrics (`arbiter_connections_open`, `arbiter_connections_refused_total`,
//! `arbiter_handshake_timeouts_total` and `arbiter_connections_ended_total`), counted through handles taken once, when the
//! metrics recorder is installed; without a metrics listener they cost nothing.

use std::sync::OnceLock;

use metrics::{Counter, Gauge};

use super::names::{
    CONNECTIONS_ENDED_TOTAL, CONNECTIONS_OPEN, CONNECTIONS_REFUSED_TOTAL, HANDSHAKE_TIMEOUTS_TOTAL,
};

/// The reasons a connection is ended with GOAWAY ENHANCE_YOUR_CALM, as the GOAWAY and the
/// metric's `reason` label say them.
pub(crate) const ENDED_REASONS: [&str; 3] = [
    "too_many_pings",
    "too_many_settings",
    "too_many_early_resets",
];

/// The handles.
struct ConnectionHandles {
    open: Gauge,
    refused: Counter,
    timed_out: Counter,
    ended: [Counter; 3],
}

static HANDLES: OnceLock<ConnectionHandles> = OnceLock::new();

/// Takes the handles from the recorder just installed (and registers each series at
/// zero, so that dashboards see them before the first connection).
pub(super) fn install() {
    HANDLES.get_or_init(|| {
        let handles = ConnectionHandles {
            open: metrics::gauge!(CONNECTIONS_OPEN),
            refused: metrics::counter!(CONNECTIONS_REFUSED_TOTAL),
            timed_out: metrics::counter!(HANDSHAKE_TIMEOUTS_TOTAL),
            ended: ENDED_REASONS
                .map(|reason| metrics::counter!(CONNECTIONS_ENDED_TOTAL, "reason" => reason)),
        };
        for ended in &handles.ended {
            ended.increment(0);
        }
        handles.open.increment(0.0);
        handles.refused.increment(0);
        handles.timed_out.increment(0);
        handles
    });
}

/// A connection was accepted.
pub(crate) fn opened() {
    if let Some(handles) = HANDLES.get() {
        handles.open.increment(1.0);
    }
}

/// An accepted connection has closed.
pub(crate) fn closed() {
    if let Some(handles) = HANDLES.get() {
        handles.open.decrement(1.0);
    }
}

/// A connection was refused: the server had its limit open.
pub(crate) fn refused() {
    if let Some(handles) = HANDLES.get() {
        handles.refused.increment(1);
    }
}

/// A connection was closed for making no call within the handshake timeout.
pub(crate) fn handshake_timed_out() {
    if let Some(handles) = HANDLES.get() {
        handles.timed_out.increment(1);
    }
}

/// A connection was ended with GOAWAY ENHANCE_YOUR_CALM for `reason`, one of
/// [`ENDED_REASONS`].
pub(crate) fn ended(reason: &str) {
    if let Some(handles) = HANDLES.get() {
        if let Some(index) = ENDED_REASONS.iter().position(|known| *known == reason) {
            handles.ended[index].increment(1);
        }
    }
}
