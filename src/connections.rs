//! The connections the server accepts, and who is calling on them.
//!
//! - At most `max_connections` are open at once, and `per_caller` from one address: one
//!   more is accepted and closed at once (its client sees UNAVAILABLE and retries,
//!   elsewhere if it can), not left waiting in the kernel's backlog.
//! - When accepting fails for want of resources (the process's descriptor limit, memory),
//!   the accept loop pauses for [`ACCEPT_PAUSE`] rather than spinning on the error.
//! - A connection must make its first call within `handshake_timeout` of being accepted:
//!   its TLS handshake, the HTTP/2 preface and its first request's headers all fall in
//!   that time, so a connection that sends nothing, or stops inside a handshake or a
//!   HEADERS frame, is closed when it runs out.
//! - Each call carries its connection's [`Peer`] (tonic's connect info), through which
//!   [`crate::layers::InFlightLimit`] counts the calls in flight of that connection and of
//!   its caller (the peer's IP address), for their shares of the limit, and the bytes of
//!   their replies not yet taken ([`crate::unread`]).
//! - TLS is served here, not by tonic, so that each connection's HTTP/2 frames pass a
//!   [`FrameWatch`] in plaintext: it counts the reply bytes sent and ends a connection
//!   that floods PINGs or SETTINGS or resets most of its streams unanswered with GOAWAY
//!   ENHANCE_YOUR_CALM.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use rustls_pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;
use tokio_stream::Stream;
use tonic::transport::server::{Connected, TcpIncoming};

use crate::frame_watch::{FrameLimits, FrameWatch, Misconduct};
use crate::service::play::GameHolder;
use crate::telemetry::connections as metrics;
use crate::unread::{ConnectionUnread, Overrun, ServerUnread, UnreadLimits};

/// How long the accept loop pauses after an error that retrying at once would repeat
/// (out of file descriptors, out of memory).
pub(crate) const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// At most this many connections are accepted (or refused) in one turn of the accept
/// loop before it yields, so that a flood of connects cannot starve the runtime.
const ACCEPTS_PER_TURN: usize = 64;

/// What a connection refused for the limit is sent before it is closed: the server's
/// HTTP/2 preface (an empty SETTINGS frame), then GOAWAY with the last stream 0 (none
/// was served), REFUSED_STREAM and a reason.
const REFUSAL: &[u8] = b"\0\0\0\x04\0\0\0\0\0\
    \0\0\x1c\x07\0\0\0\0\0\0\0\0\0\0\0\0\x07too many connections";

/// What the server's connections may do.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    /// Connections open at once, at least 1.
    pub(crate) max_connections: usize,
    /// Connections open at once from one address, at least 1.
    pub(crate) per_caller: usize,
    /// From accept to the first call's headers; zero: no limit.
    pub(crate) handshake_timeout: Duration,
    /// What each connection's frames may do.
    pub(crate) frames: FrameLimits,
    /// The budgets of reply bytes not yet taken.
    pub(crate) unread: UnreadLimits,
}

/// The accepted connections of a set of listeners, as tonic's `serve_with_incoming`
/// takes them. Dropping it closes the listeners.
#[derive(Debug)]
pub(crate) struct Incoming {
    /// Tonic's, which set each accepted socket's options (TCP_NODELAY, keepalive).
    listeners: Vec<TcpIncoming>,
    /// The listener polled first next time, so that a busy one starves none.
    next: usize,
    limits: ConnectionLimits,
    /// Serves TLS on every connection when set.
    tls: Option<Tls>,
    open: Arc<AtomicUsize>,
    callers: Arc<Callers>,
    unread: Arc<ServerUnread>,
    pause: Option<Pin<Box<Sleep>>>,
    /// Whether the accept loop has paused since it last accepted: it says so once.
    paused: bool,
}

impl Incoming {
    /// The connections `listeners` accept, within `limits`, over TLS when `tls` is set.
    pub(crate) fn new(
        listeners: Vec<TcpIncoming>,
        limits: ConnectionLimits,
        tls: Option<TlsAcceptor>,
    ) -> Self {
        let tls = tls.map(Tls);
        Self {
            listeners,
            next: 0,
            limits: ConnectionLimits {
                max_connections: limits.max_connections.max(1),
                per_caller: limits.per_caller.max(1),
                ..limits
            },
            tls,
            open: Arc::default(),
            callers: Arc::default(),
            unread: Arc::new(ServerUnread::new(limits.unread)),
            pause: None,
            paused: false,
        }
    }

    /// `stream` as a connection of the server, or `None` when the server already has
    /// its limit of connections open (and `stream` is closed as it is dropped).
    fn admit(&self, stream: TcpStream) -> Option<Accepted> {
        let refuse = |stream: TcpStream, why: &str| {
            metrics::refused();
            tracing::debug!("connection refused: {why}");
            // Said in HTTP/2 where it can be (in plaintext, and if the socket takes it at
            // once): no stream will be served here, so clients may retry elsewhere.
            let _ = stream.try_write(REFUSAL);
            None
        };
        let address = stream
            .peer_addr()
            .map(|address| CallerKey::Address(address.ip().to_canonical()))
            .ok();
        let caller = self.callers.caller(address);
        if caller.connections.fetch_add(1, Ordering::AcqRel) >= self.limits.per_caller {
            caller.connections.fetch_sub(1, Ordering::AcqRel);
            return refuse(stream, "its caller has its share of connections open");
        }
        let caller_place = CallerConnection(Arc::clone(&caller));
        if self.open.fetch_add(1, Ordering::AcqRel) >= self.limits.max_connections {
            self.open.fetch_sub(1, Ordering::AcqRel);
            drop(caller_place);
            return refuse(stream, "the server has its limit of connections open");
        }
        let open = OpenConnection(Arc::clone(&self.open));
        metrics::opened();
        let connection = Arc::new(Connection {
            called: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            games: Arc::default(),
            caller,
            _caller_place: caller_place,
            named: Mutex::new(None),
            certified: OnceLock::new(),
            certificates: OnceLock::new(),
            unread: ConnectionUnread::new(Arc::clone(&self.unread)),
            callers: Arc::clone(&self.callers),
            _open: open,
        });
        let deadline = (!self.limits.handshake_timeout.is_zero())
            .then(|| Box::pin(tokio::time::sleep(self.limits.handshake_timeout)));
        let transport = match &self.tls {
            Some(Tls(tls)) => Transport::Handshake(Box::new(tls.accept(stream))),
            None => Transport::Plain(stream),
        };
        Some(Accepted {
            transport,
            peer: Peer(connection),
            deadline,
            watch: FrameWatch::new(self.limits.frames),
            ending: None,
        })
    }
}

impl Stream for Incoming {
    type Item = io::Result<Accepted>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(pause) = &mut this.pause {
            if pause.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.pause = None;
        }
        let count = this.listeners.len();
        if count == 0 {
            return Poll::Ready(None);
        }
        let mut turns = 0;
        let mut index = 0;
        while index < count {
            let listener = (this.next + index) % count;
            match Pin::new(&mut this.listeners[listener]).poll_next(cx) {
                Poll::Pending | Poll::Ready(None) => index += 1,
                Poll::Ready(Some(Ok(stream))) => {
                    this.next = (listener + 1) % count;
                    if this.paused {
                        this.paused = false;
                        tracing::info!("accepting connections again");
                    }
                    if let Some(accepted) = this.admit(stream) {
                        return Poll::Ready(Some(Ok(accepted)));
                    }
                    turns += 1;
                    if turns == ACCEPTS_PER_TURN {
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                }
                // The connection ended before it was taken: take the next.
                Poll::Ready(Some(Err(error))) if is_connection_error(&error) => {}
                Poll::Ready(Some(Err(error))) => {
                    if !this.paused {
                        this.paused = true;
                        tracing::warn!(
                            %error,
                            "cannot accept connections; retrying every 100ms (at the descriptor limit: raise `ulimit -n` or lower --max-connections)"
                        );
                    }
                    let mut pause = Box::pin(tokio::time::sleep(ACCEPT_PAUSE));
                    // Polled once, so that its timer wakes this stream.
                    if pause.as_mut().poll(cx).is_pending() {
                        this.pause = Some(pause);
                        return Poll::Pending;
                    }
                }
            }
        }
        Poll::Pending
    }
}

/// Whether an accept error concerns only the connection being accepted (which the next
/// accept does not repeat), as tonic's own accept loop judges it.
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
            | io::ErrorKind::TimedOut
    )
}

/// An accepted connection, as tonic serves it: its transport, its [`Peer`], the
/// deadline for its first call, and the watch on its frames.
#[derive(Debug)]
pub(crate) struct Accepted {
    transport: Transport,
    peer: Peer,
    /// Until the first call: when the connection is closed if none has come.
    deadline: Option<Pin<Box<Sleep>>>,
    watch: FrameWatch,
    /// Once the client has misbehaved: the GOAWAY that tells it, and how much of it
    /// has been sent. The connection then ends.
    ending: Option<(Vec<u8>, usize)>,
}

/// The TLS set-up connections are served with.
struct Tls(TlsAcceptor);

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls")
    }
}

/// A connection's bytes: plaintext, or TLS (during its handshake, then after).
enum Transport {
    Plain(TcpStream),
    Handshake(Box<tokio_rustls::Accept<TcpStream>>),
    Tls(Box<TlsStream<TcpStream>>),
    /// A handshake failed.
    Failed,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Plain(_) => "Plain",
            Self::Handshake(_) => "Handshake",
            Self::Tls(_) => "Tls",
            Self::Failed => "Failed",
        })
    }
}

/// `$op` on the connection's byte stream (`$io`, pinned), once its TLS handshake, if any,
/// is over: a match rather than a `dyn` stream, so that the plaintext stream's calls
/// inline as they did before TLS was served here.
macro_rules! on_stream {
    ($this:expr, $cx:expr, $io:ident => $op:expr) => {
        loop {
            match &mut $this.transport {
                Transport::Plain(stream) => {
                    let $io = Pin::new(stream);
                    break $op;
                }
                Transport::Tls(stream) => {
                    let $io = Pin::new(&mut **stream);
                    break $op;
                }
                Transport::Handshake(_) => {
                    std::task::ready!($this.transport.poll_handshake($cx, &$this.peer))?;
                }
                Transport::Failed => break Poll::Ready(Err(not_ready())),
            }
        }
    };
}

impl Transport {
    /// Drives a TLS handshake to its end, keeping the client's certificates in `peer`.
    fn poll_handshake(&mut self, cx: &mut Context<'_>, peer: &Peer) -> Poll<io::Result<()>> {
        let Self::Handshake(accept) = self else {
            return Poll::Ready(Ok(()));
        };
        match Pin::new(&mut **accept).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(stream)) => {
                if let Some(certificates) = stream.get_ref().1.peer_certificates() {
                    let _ = peer.0.certificates.set(certificates.to_vec());
                }
                *self = Self::Tls(Box::new(stream));
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => {
                *self = Self::Failed;
                tracing::debug!(%error, "TLS handshake failed");
                Poll::Ready(Err(error))
            }
        }
    }
}

/// What reading or writing a transport not ready says.
fn not_ready() -> io::Error {
    io::ErrorKind::NotConnected.into()
}

impl Accepted {
    /// Whether the connection is past its deadline without having made a call; once it
    /// has made one, the deadline is gone.
    fn out_of_time(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(deadline) = &mut self.deadline else {
            return false;
        };
        if self.peer.0.called.load(Ordering::Relaxed) {
            self.deadline = None;
            return false;
        }
        deadline.as_mut().poll(cx).is_ready()
    }

    /// An error once the connection is past its deadline for a first call (checked on
    /// every read and write: a TLS handshake may hold either).
    fn within_deadline(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        if !self.out_of_time(cx) {
            return Ok(());
        }
        self.deadline = None;
        metrics::handshake_timed_out();
        tracing::debug!("connection closed: no call within the handshake timeout");
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "no call within --handshake-timeout of connecting",
        ))
    }

    /// Ends a connection whose client misbehaved: sends its GOAWAY if what has been
    /// sent so far ends at a frame's end (else the connection just closes), then reads
    /// as its end.
    fn poll_end(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some((goaway, sent)) = &mut self.ending {
            if *sent == 0 && !self.watch.at_boundary() {
                self.ending = Some((Vec::new(), 0));
                return Poll::Ready(Ok(()));
            }
            let mut io: Pin<&mut (dyn AsyncWrite + Unpin + Send)> = match &mut self.transport {
                Transport::Plain(stream) => Pin::new(stream),
                Transport::Tls(stream) => Pin::new(&mut **stream),
                Transport::Handshake(_) | Transport::Failed => return Poll::Ready(Ok(())),
            };
            while *sent < goaway.len() {
                match io.as_mut().poll_write(cx, &goaway[*sent..]) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Ok(written)) if written > 0 => *sent += written,
                    Poll::Ready(_) => break,
                }
            }
            if io.as_mut().poll_flush(cx).is_pending() {
                return Poll::Pending;
            }
            *sent = goaway.len();
        }
        Poll::Ready(Ok(()))
    }

    /// Counts bytes just written: the DATA among them is reply bytes taken.
    fn wrote(&mut self, bytes: &[u8]) {
        let data = self.watch.written(bytes);
        self.taken(data);
    }

    /// Counts off `data` bytes of replies written, and settles if nothing is left to send.
    fn taken(&mut self, data: usize) {
        if data > 0 {
            self.peer.0.unread.taken(data);
        }
        self.settle();
    }

    /// Counts off whatever is left unread once no stream has a reply to end: bytes
    /// that went with streams the client reset.
    fn settle(&mut self) {
        if self.watch.idle() {
            self.peer.0.unread.clear();
        }
    }

    /// How much of a write of `wanted` bytes may go out while the connection ends: the
    /// rest of the frame being sent, before the GOAWAY goes in; none once it has.
    fn ending_allows(&self, wanted: usize) -> Option<usize> {
        self.ending.as_ref()?;
        Some(if self.watch.at_boundary() {
            0
        } else {
            wanted.min(self.watch.left_in_frame())
        })
    }
}

impl Connected for Accepted {
    type ConnectInfo = Peer;

    fn connect_info(&self) -> Peer {
        self.peer.clone()
    }
}

impl AsyncRead for Accepted {
    #[inline]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(stream) = this.settled_plain() {
            let before = buf.filled().len();
            std::task::ready!(Pin::new(stream).poll_read(cx, buf))?;
            return this.watch_read(cx, buf, before);
        }
        this.poll_read_otherwise(cx, buf)
    }
}

impl Accepted {
    /// The TCP stream, when reads and writes may go straight to it, as nearly all do: in
    /// plaintext, past the first call, not ending.
    #[inline]
    fn settled_plain(&mut self) -> Option<&mut TcpStream> {
        match (&mut self.transport, &self.deadline, &self.ending) {
            (Transport::Plain(stream), None, None) => Some(stream),
            _ => None,
        }
    }

    /// [`AsyncRead::poll_read`] in TLS, before the first call, or while ending.
    #[inline(never)]
    fn poll_read_otherwise(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.within_deadline(cx)?;
        if self.ending.is_some() {
            return self.poll_end(cx);
        }
        let before = buf.filled().len();
        std::task::ready!(on_stream!(self, cx, io => io.poll_read(cx, buf)))?;
        self.watch_read(cx, buf, before)
    }

    /// Passes what a read added to `buf` after `before` to the frame watch: a client's
    /// misconduct ends the connection, and the read is dropped.
    #[inline]
    fn watch_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
        before: usize,
    ) -> Poll<io::Result<()>> {
        let read = &buf.filled()[before..];
        if read.is_empty() {
            return Poll::Ready(Ok(()));
        }
        if let Some(misconduct) = self.watch.read(read) {
            buf.set_filled(before);
            return self.end_for(misconduct, cx);
        }
        self.settle();
        Poll::Ready(Ok(()))
    }

    /// Ends the connection for `misconduct`: GOAWAY ENHANCE_YOUR_CALM.
    #[cold]
    fn end_for(&mut self, misconduct: Misconduct, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        metrics::ended(misconduct.reason());
        tracing::debug!(
            reason = misconduct.reason(),
            "connection ended: GOAWAY ENHANCE_YOUR_CALM"
        );
        self.ending = Some((misconduct.goaway(self.watch.last_stream()), 0));
        self.poll_end(cx)
    }

    /// Counts what a vectored write of `bufs` wrote, `written` bytes of them.
    #[inline]
    fn wrote_vectored(&mut self, bufs: &[io::IoSlice<'_>], written: usize) {
        let mut left = written;
        let mut data = 0;
        for buf in bufs {
            if left == 0 {
                break;
            }
            let part = left.min(buf.len());
            data += self.watch.written(&buf[..part]);
            left -= part;
        }
        self.taken(data);
    }

    /// [`AsyncWrite::poll_write_vectored`] in TLS, before the first call, or while
    /// ending.
    #[inline(never)]
    fn poll_write_vectored_otherwise(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.within_deadline(cx)?;
        if self.ending.is_some() {
            let first = bufs.iter().find(|buf| !buf.is_empty());
            return Pin::new(self).poll_write(cx, first.map_or(&[][..], |buf| &buf[..]));
        }
        let written =
            std::task::ready!(on_stream!(self, cx, io => io.poll_write_vectored(cx, bufs)))?;
        self.wrote_vectored(bufs, written);
        Poll::Ready(Ok(written))
    }

    /// [`AsyncWrite::poll_flush`] in TLS or before the first call.
    #[inline(never)]
    fn poll_flush_otherwise(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.within_deadline(cx)?;
        on_stream!(self, cx, io => io.poll_flush(cx))
    }
}

impl AsyncWrite for Accepted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.within_deadline(cx)?;
        let mut buf = buf;
        if let Some(allowed) = this.ending_allows(buf.len()) {
            if allowed == 0 {
                std::task::ready!(this.poll_end(cx))?;
                return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
            }
            buf = &buf[..allowed];
        }
        let written = std::task::ready!(on_stream!(this, cx, io => io.poll_write(cx, buf)))?;
        this.wrote(&buf[..written]);
        Poll::Ready(Ok(written))
    }

    #[inline]
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Some(stream) = this.settled_plain() {
            let written = std::task::ready!(Pin::new(stream).poll_write_vectored(cx, bufs))?;
            this.wrote_vectored(bufs, written);
            return Poll::Ready(Ok(written));
        }
        this.poll_write_vectored_otherwise(cx, bufs)
    }

    /// Both a TCP stream and a TLS one write vectored (asked on every write, so not
    /// asked of them).
    #[inline]
    fn is_write_vectored(&self) -> bool {
        true
    }

    #[inline]
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // A TCP stream's flush does nothing: it is not called (flushed twice a reply).
        if this.settled_plain().is_some() {
            return Poll::Ready(Ok(()));
        }
        this.poll_flush_otherwise(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().transport {
            Transport::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
            Transport::Tls(stream) => Pin::new(&mut **stream).poll_shutdown(cx),
            Transport::Handshake(_) | Transport::Failed => Poll::Ready(Ok(())),
        }
    }
}

/// Notes that `request`'s connection has made a call (for a service with no
/// [`crate::layers::InFlightLimit`], which does it for the others).
pub(crate) fn mark_called<B>(
    request: tonic::codegen::http::Request<B>,
) -> tonic::codegen::http::Request<B> {
    if let Some(peer) = Peer::of(&request) {
        peer.called();
    }
    request
}

/// The connection a call came on (tonic's connect info, in each request's extensions):
/// its calls in flight and live games, and its callers'.
#[derive(Debug, Clone)]
pub(crate) struct Peer(Arc<Connection>);

impl Peer {
    /// The peer of a request.
    pub(crate) fn of<B>(request: &tonic::codegen::http::Request<B>) -> Option<&Peer> {
        request.extensions().get::<Peer>()
    }

    /// The client's certificate chain, under mutual TLS.
    pub(crate) fn certificates(&self) -> Option<&[CertificateDer<'static>]> {
        self.0.certificates.get().map(Vec::as_slice)
    }

    /// Which budget of unread reply bytes keeps new work from this connection for
    /// `caller` out, if any.
    pub(crate) fn unread_overrun(&self, caller: &Caller) -> Option<Overrun> {
        self.0.unread.overrun(&caller.unread)
    }

    /// Counts `bytes` of a reply to `caller` on this connection as unread until they
    /// are sent, or says which budget they would overrun (`always`: counted anyway).
    pub(crate) fn charge_reply(
        &self,
        caller: &Caller,
        bytes: usize,
        always: bool,
    ) -> Result<(), Overrun> {
        self.0.unread.charge(&caller.unread, bytes, always)
    }

    /// Counts off `bytes` of replies that will never be sent (their stream ended).
    pub(crate) fn replies_dropped(&self, bytes: usize) {
        self.0.unread.taken(bytes);
    }

    /// Notes that the connection has made a call: its handshake deadline is over.
    pub(crate) fn called(&self) {
        if !self.0.called.load(Ordering::Relaxed) {
            self.0.called.store(true, Ordering::Relaxed);
        }
    }

    /// The connection's count of calls in flight.
    pub(crate) fn in_flight(&self) -> &AtomicUsize {
        &self.0.in_flight
    }

    /// The caller of a call on this connection: the one `name` names (a token's or a
    /// certificate's), or else the peer's address.
    pub(crate) fn caller(&self, name: Option<&Arc<str>>) -> Arc<Caller> {
        let Some(name) = name else {
            return Arc::clone(&self.0.caller);
        };
        let Ok(mut named) = self.0.named.lock() else {
            return self
                .0
                .callers
                .caller(Some(CallerKey::Name(Arc::clone(name))));
        };
        if let Some(caller) = named.as_ref().filter(|caller| caller.is_named(name)) {
            return Arc::clone(caller);
        }
        let caller = self
            .0
            .callers
            .caller(Some(CallerKey::Name(Arc::clone(name))));
        *named = Some(Arc::clone(&caller));
        caller
    }

    /// The counts a call's live games are held in: this connection's and `caller`'s.
    pub(crate) fn game_holder(&self, caller: &Caller) -> GameHolder {
        GameHolder {
            connection: Arc::clone(&self.0.games),
            caller: Arc::clone(&caller.games),
            caller_name: caller.label(),
        }
    }

    /// The name the connection's client certificate is valid for, of `allowed` (the
    /// first that fits); worked out once per connection. `None` without one.
    pub(crate) fn certified_name(
        &self,
        certificates: Option<&[CertificateDer<'static>]>,
        allowed: &[ServerName<'static>],
    ) -> Option<Arc<str>> {
        self.0
            .certified
            .get_or_init(|| {
                let certificate = certificates?.first()?;
                let certificate = webpki::EndEntityCert::try_from(certificate).ok()?;
                allowed.iter().find_map(|name| {
                    certificate
                        .verify_is_valid_for_subject_name(name)
                        .ok()
                        .map(|()| Arc::from(name.to_str().as_ref()))
                })
            })
            .clone()
    }
}

/// What a connection's calls share.
#[derive(Debug)]
struct Connection {
    /// Whether a call has come on it.
    called: AtomicBool,
    /// Its calls in flight.
    in_flight: AtomicUsize,
    /// Its live games.
    games: Arc<AtomicUsize>,
    /// The caller its address makes it.
    caller: Arc<Caller>,
    /// The named caller its last named call had (kept to spare looking it up again).
    named: Mutex<Option<Arc<Caller>>>,
    /// The allowed name its client certificate is valid for, once worked out.
    certified: OnceLock<Option<Arc<str>>>,
    /// Its client's certificate chain, under mutual TLS, once its handshake is over.
    certificates: OnceLock<Vec<CertificateDer<'static>>>,
    /// Its reply bytes not yet taken.
    unread: ConnectionUnread,
    callers: Arc<Callers>,
    _caller_place: CallerConnection,
    _open: OpenConnection,
}

/// A place among its caller's connections, given back when the connection closes.
#[derive(Debug)]
struct CallerConnection(Arc<Caller>);

impl Drop for CallerConnection {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A place among the open connections, given back when the connection closes.
#[derive(Debug)]
struct OpenConnection(Arc<AtomicUsize>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
        metrics::closed();
    }
}

/// Who a caller is: an IP address, or a name (a token's, or a client certificate's).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum CallerKey {
    Address(IpAddr),
    Name(Arc<str>),
}

/// A caller: every call from one address, or under one name, while one of its
/// connections is open or one of its calls holds it.
#[derive(Debug)]
pub(crate) struct Caller {
    key: Option<CallerKey>,
    /// How refusals name it: its address or name.
    label: Option<Arc<str>>,
    /// Its calls in flight, over all its connections.
    in_flight: AtomicUsize,
    /// Its live games, over all its connections.
    games: Arc<AtomicUsize>,
    /// Its connections open (as an address's: a named caller counts none).
    connections: AtomicUsize,
    /// Its reply bytes not yet taken, over all its connections.
    unread: Arc<AtomicUsize>,
    /// Its calls in the current second, and when that second began.
    quota: Mutex<(u32, Option<Instant>)>,
    callers: Arc<Callers>,
}

impl Caller {
    /// Its count of calls in flight.
    pub(crate) fn in_flight(&self) -> &AtomicUsize {
        &self.in_flight
    }

    /// How refusals name it: its address or name.
    pub(crate) fn label(&self) -> Option<Arc<str>> {
        self.label.clone()
    }

    /// Counts a call against a quota of `rate` calls a second: whether it is within.
    pub(crate) fn within_quota(&self, rate: u32) -> bool {
        let Ok(mut quota) = self.quota.lock() else {
            return true;
        };
        let now = Instant::now();
        let (calls, since) = &mut *quota;
        if since.is_none_or(|since| now.duration_since(since) >= Duration::from_secs(1)) {
            *calls = 0;
            *since = Some(now);
        }
        if *calls >= rate {
            return false;
        }
        *calls += 1;
        true
    }

    fn is_named(&self, name: &str) -> bool {
        matches!(&self.key, Some(CallerKey::Name(own)) if **own == *name)
    }
}

impl Drop for Caller {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.callers.forget(key);
        }
    }
}

/// The callers with a connection open or a call held, by address or name.
#[derive(Debug, Default)]
struct Callers(Mutex<HashMap<CallerKey, Weak<Caller>>>);

impl Callers {
    /// The caller `key` names (a new one if none is held; one of its own when the key
    /// is unknown).
    fn caller(self: &Arc<Self>, key: Option<CallerKey>) -> Arc<Caller> {
        let new = |key: Option<CallerKey>| {
            let label = key.as_ref().map(|key| match key {
                CallerKey::Address(address) => Arc::from(address.to_string()),
                CallerKey::Name(name) => Arc::clone(name),
            });
            Arc::new(Caller {
                key,
                label,
                in_flight: AtomicUsize::new(0),
                games: Arc::default(),
                connections: AtomicUsize::new(0),
                unread: Arc::default(),
                quota: Mutex::new((0, None)),
                callers: Arc::clone(self),
            })
        };
        let Some(key) = key else {
            return new(None);
        };
        let Ok(mut callers) = self.0.lock() else {
            return new(None);
        };
        if let Some(caller) = callers.get(&key).and_then(Weak::upgrade) {
            return caller;
        }
        let caller = new(Some(key.clone()));
        callers.insert(key, Arc::downgrade(&caller));
        caller
    }

    /// Forgets the caller `key` names once nothing holds it (unless a new one has taken
    /// its place meanwhile).
    fn forget(&self, key: CallerKey) {
        if let Ok(mut callers) = self.0.lock() {
            if callers
                .get(&key)
                .is_some_and(|caller| caller.strong_count() == 0)
            {
                callers.remove(&key);
            }
        }
    }
}
