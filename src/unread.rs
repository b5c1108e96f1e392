//! Bytes of replies made and not yet taken by their clients: counted per connection,
//! per caller and across the server, and held to a budget at each, so that clients
//! that do not read (a zero window, a socket never drained) cannot make the server hold
//! their replies without bound.
//!
//! A reply's bytes are counted from when its body gives them (at once for a unary
//! reply, even before its client's window lets it be sent) until they are written to
//! the connection as DATA (seen by [`crate::frame_watch::FrameWatch`]) or dropped with
//! their stream. A connection, caller or server at its budget gets no new work
//! ([`ConnectionUnread::overrun`], checked as a call is admitted), and a reply that
//! would take one past it is dropped and its call answered RESOURCE_EXHAUSTED
//! ([`ConnectionUnread::charge`]); a connection, caller or server holding nothing is
//! always let one reply through, however large, so that every reply the limits on
//! messages allow can be sent.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The budgets, in bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UnreadLimits {
    /// Across the server.
    pub(crate) server: usize,
    /// On one connection.
    pub(crate) connection: usize,
    /// For one caller, over all its connections.
    pub(crate) caller: usize,
}

/// Which budget a reply, or new work, would overrun, and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overrun {
    /// The server's.
    Server(usize),
    /// The connection's share.
    Connection(usize),
    /// The caller's share.
    Caller(usize),
}

/// The server's count of unread reply bytes, and the budgets; shared by its
/// connections.
#[derive(Debug)]
pub(crate) struct ServerUnread {
    limits: UnreadLimits,
    bytes: AtomicUsize,
}

impl ServerUnread {
    /// None yet, within `limits`.
    pub(crate) fn new(limits: UnreadLimits) -> Self {
        Self {
            limits,
            bytes: AtomicUsize::new(0),
        }
    }

    /// The bytes unread across the server.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// One connection's count of unread reply bytes, and the caller they are counted to:
/// the caller of its first reply (a caller's count is the sum of its connections'; a
/// connection whose calls carry several tokens counts them all to the first). Atomic
/// counts, no lock: a budget may be passed by the replies made at the same instant.
#[derive(Debug)]
pub(crate) struct ConnectionUnread {
    server: Arc<ServerUnread>,
    bytes: AtomicUsize,
    caller: OnceLock<Arc<AtomicUsize>>,
}

impl ConnectionUnread {
    /// A new connection's, counted in `server`'s.
    pub(crate) fn new(server: Arc<ServerUnread>) -> Self {
        Self {
            server,
            bytes: AtomicUsize::new(0),
            caller: OnceLock::new(),
        }
    }

    /// Which budget keeps new work from this connection for `caller` (its count of
    /// unread bytes) out: the connection's or the caller's when at its share, the
    /// server's when at its budget and this connection holds some of it.
    pub(crate) fn overrun(&self, caller: &AtomicUsize) -> Option<Overrun> {
        let limits = self.server.limits;
        let held = self.bytes.load(Ordering::Relaxed);
        if held >= limits.connection {
            Some(Overrun::Connection(limits.connection))
        } else if caller.load(Ordering::Relaxed) >= limits.caller {
            Some(Overrun::Caller(limits.caller))
        } else if held > 0 && self.server.bytes() >= limits.server {
            Some(Overrun::Server(limits.server))
        } else {
            None
        }
    }

    /// Counts `bytes` of a reply to `caller` (its count) made on this connection, or
    /// counts nothing and says which budget they would overrun; `always` counts them
    /// regardless (health replies).
    pub(crate) fn charge(
        &self,
        caller: &Arc<AtomicUsize>,
        bytes: usize,
        always: bool,
    ) -> Result<(), Overrun> {
        let limits = self.server.limits;
        let owner = self.caller.get_or_init(|| Arc::clone(caller));
        let over = |count: usize, limit: usize| count > 0 && count.saturating_add(bytes) > limit;
        if !always {
            if over(self.bytes.load(Ordering::Relaxed), limits.connection) {
                return Err(Overrun::Connection(limits.connection));
            }
            if over(owner.load(Ordering::Relaxed), limits.caller) {
                return Err(Overrun::Caller(limits.caller));
            }
            if over(self.server.bytes(), limits.server) {
                return Err(Overrun::Server(limits.server));
            }
        }
        self.bytes.fetch_add(bytes, Ordering::AcqRel);
        owner.fetch_add(bytes, Ordering::AcqRel);
        self.server.bytes.fetch_add(bytes, Ordering::AcqRel);
        Ok(())
    }

    /// Counts off `bytes` the client has taken, or that were dropped with their stream.
    pub(crate) fn taken(&self, bytes: usize) {
        if self.bytes.load(Ordering::Relaxed) == 0 {
            return;
        }
        let held = self
            .bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                Some(held - held.min(bytes))
            })
            .unwrap_or(0);
        let bytes = held.min(bytes);
        if bytes == 0 {
            return;
        }
        if let Some(caller) = self.caller.get() {
            take_off(caller, bytes);
        }
        take_off(&self.server.bytes, bytes);
    }

    /// Counts off everything: no stream of the connection has a reply left to send.
    pub(crate) fn clear(&self) {
        self.taken(usize::MAX);
    }

    /// The bytes unread on this connection.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

impl Drop for ConnectionUnread {
    fn drop(&mut self) {
        self.clear();
    }
}

/// Takes `bytes` off `count`, never below zero.
fn take_off(count: &AtomicUsize, bytes: usize) {
    let _ = count.fetch_update(Ordering::AcqRel, Ordering::Acquire, |count| {
        Some(count.saturating_sub(bytes))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Arc<ServerUnread> {
        Arc::new(ServerUnread::new(UnreadLimits {
            server: 100,
            connection: 40,
            caller: 60,
        }))
    }

    #[test]
    fn each_budget_holds_and_counts_come_off_as_bytes_are_taken() {
        let server = server();
        let caller = Arc::new(AtomicUsize::new(0));
        let first = ConnectionUnread::new(Arc::clone(&server));
        // Holding nothing, one reply of any size goes through.
        assert_eq!(first.charge(&caller, 50, false), Ok(()));
        assert_eq!(first.overrun(&caller), Some(Overrun::Connection(40)));
        assert_eq!(
            first.charge(&caller, 1, false),
            Err(Overrun::Connection(40))
        );
        first.taken(20);
        assert_eq!(first.overrun(&caller), None);
        assert_eq!(first.charge(&caller, 10, false), Ok(()));
        assert_eq!(first.bytes(), 40);
        // The caller's share, over its connections.
        let second = ConnectionUnread::new(Arc::clone(&server));
        assert_eq!(second.charge(&caller, 15, false), Ok(()));
        assert_eq!(second.charge(&caller, 10, false), Err(Overrun::Caller(60)));
        assert_eq!(caller.load(Ordering::Relaxed), 55);
        assert_eq!(server.bytes(), 55);
        // The server's, from another caller.
        let other = Arc::new(AtomicUsize::new(0));
        let third = ConnectionUnread::new(Arc::clone(&server));
        assert_eq!(third.charge(&other, 30, false), Ok(()));
        let fourth = ConnectionUnread::new(Arc::clone(&server));
        assert_eq!(fourth.charge(&other, 20, false), Err(Overrun::Server(100)));
        assert_eq!(fourth.charge(&other, 20, true), Ok(()));
        assert_eq!(fourth.overrun(&other), Some(Overrun::Server(100)));
        // More taken than held takes off only what was held; closing takes the rest.
        fourth.taken(1_000);
        drop(third);
        assert_eq!(server.bytes(), 55);
        drop(first);
        drop(second);
        assert_eq!((server.bytes(), caller.load(Ordering::Relaxed)), (0, 0));
    }

    #[test]
    fn a_connections_bytes_count_to_the_caller_of_its_first_reply() {
        let server = server();
        let (address, named) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let connection = ConnectionUnread::new(Arc::clone(&server));
        assert_eq!(connection.charge(&address, 10, false), Ok(()));
        assert_eq!(connection.charge(&named, 5, false), Ok(()));
        assert_eq!(address.load(Ordering::Relaxed), 15);
        assert_eq!(named.load(Ordering::Relaxed), 0);
        connection.taken(15);
        assert_eq!((address.load(Ordering::Relaxed), server.bytes()), (0, 0));
    }
}
