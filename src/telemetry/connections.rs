//! The connection metrics (`arbiter_connections_open`, `arbiter_connections_refused_total`
//! and `arbiter_handshake_timeouts_total`), counted through handles taken once, when the
//! metrics recorder is installed; without a metrics listener they cost nothing.

use std::sync::OnceLock;

use metrics::{Counter, Gauge};

use super::names::{CONNECTIONS_OPEN, CONNECTIONS_REFUSED_TOTAL, HANDSHAKE_TIMEOUTS_TOTAL};

/// The handles.
struct ConnectionHandles {
    open: Gauge,
    refused: Counter,
    timed_out: Counter,
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
        };
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
