//! The limits on a client's HTTP/2 frames that h2 does not keep, held on each
//! connection by watching its frames both ways ([`crate::frames`]):
//!
//! - **PINGs**: as grpc-go's keepalive enforcement does, a PING that comes sooner than
//!   `min_ping_interval` after the last one, with no reply data or headers sent between
//!   them, is a strike; the third strike ends the connection with GOAWAY
//!   ENHANCE_YOUR_CALM "too_many_pings" (which grpc-go's clients answer by pinging half
//!   as often).
//! - **SETTINGS**: more than [`SETTINGS_PER_SECOND`] in one second end it likewise.
//! - **Streams the client resets** before the server has answered them (sent their reply's
//!   headers): once it has opened [`RESET_STREAMS_MIN`] streams, more than half of them
//!   reset so end it (as Envoy's premature-reset guard does; rapid reset spread over
//!   writes). A stream reset once answered does not count: a game server may well end
//!   its live games by cancelling them.
//!
//! The write side also gives the DATA bytes the client has been sent, which
//! [`crate::connections`] counts as reply bytes taken, and tells when no stream has a
//! reply still to end ([`FrameWatch::idle`]): nothing can be unread then (what a stream
//! the client reset had waiting went with it).

use std::collections::HashMap;

use foldhash::fast::RandomState;
use std::time::{Duration, Instant};

use crate::frames::{self, kind, FrameScanner, Kinds, ACK, END_STREAM, ENHANCE_YOUR_CALM};
use crate::telemetry::connections::ENDED_REASONS;

/// SETTINGS frames a client may send in one second.
pub(crate) const SETTINGS_PER_SECOND: u32 = 10;

/// The streams a client must have opened before its share of resets is judged.
pub(crate) const RESET_STREAMS_MIN: u64 = 100;

/// PINGs too soon that a connection is forgiven (grpc-go's `maxPingStrikes`).
const PING_STRIKES: u32 = 2;

/// The client's frames the watch reads: the rest (DATA, WINDOW_UPDATE, ...) are stepped
/// over unread.
const WATCHED_FROM_CLIENT: Kinds =
    Kinds::of(&[kind::HEADERS, kind::RST_STREAM, kind::SETTINGS, kind::PING]);

/// The server's frames the watch reads (DATA is counted whether read or not).
const WATCHED_TO_CLIENT: Kinds = Kinds::of(&[kind::DATA, kind::HEADERS, kind::RST_STREAM]);

/// What a connection's frames may do.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FrameLimits {
    /// The least time between two PINGs with nothing sent between them; zero: any.
    pub(crate) min_ping_interval: Duration,
}

/// Why a connection is ended: its GOAWAY frame's debug data, as the client reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Misconduct {
    /// PINGs more often than `--min-ping-interval`.
    Pings,
    /// SETTINGS more often than [`SETTINGS_PER_SECOND`].
    Settings,
    /// Most of its streams reset by the client.
    Resets,
}

impl Misconduct {
    /// The GOAWAY frame that tells the client, with the last stream it opened.
    pub(crate) fn goaway(self, last_stream: u32) -> Vec<u8> {
        frames::goaway(last_stream, ENHANCE_YOUR_CALM, self.reason())
    }

    /// The GOAWAY's debug data, and the label of the metric (the first is grpc-go's own
    /// words, on which its clients back off).
    pub(crate) fn reason(self) -> &'static str {
        ENDED_REASONS[match self {
            Self::Pings => 0,
            Self::Settings => 1,
            Self::Resets => 2,
        }]
    }
}

/// One connection's frames, both ways, against [`FrameLimits`].
#[derive(Debug)]
pub(crate) struct FrameWatch {
    from_client: FrameScanner,
    to_client: FrameScanner,
    client: ClientFrames,
}

/// What the client's frames have done so far.
#[derive(Debug)]
struct ClientFrames {
    limits: FrameLimits,
    /// PINGs too soon so far, when the last came, and whether reply data or headers
    /// have been sent since.
    ping_strikes: u32,
    last_ping: Option<Instant>,
    sent_since_ping: bool,
    /// SETTINGS in the current second, and when it began.
    settings: u32,
    settings_since: Option<Instant>,
    /// The client's streams whose reply has not ended (and whether they have been
    /// answered: their reply's headers sent), the last it opened, how many it has opened
    /// and how many of them it reset before they were answered.
    open: HashMap<u32, bool, RandomState>,
    last_stream: u32,
    opened: u64,
    reset: u64,
    /// The first misconduct seen.
    misconduct: Option<Misconduct>,
    /// Whether the last stream with a reply to end has ended, since asked.
    idle: bool,
}

impl FrameWatch {
    /// A new connection's.
    pub(crate) fn new(limits: FrameLimits) -> Self {
        Self {
            from_client: FrameScanner::client(),
            to_client: FrameScanner::server(),
            client: ClientFrames {
                limits,
                ping_strikes: 0,
                last_ping: None,
                sent_since_ping: false,
                settings: 0,
                settings_since: None,
                open: HashMap::default(),
                last_stream: 0,
                opened: 0,
                reset: 0,
                misconduct: None,
                idle: false,
            },
        }
    }

    /// Passes bytes the client sent: the misconduct they (or those before) show, if any.
    #[inline]
    pub(crate) fn read(&mut self, bytes: &[u8]) -> Option<Misconduct> {
        let client = &mut self.client;
        self.from_client
            .scan_kinds(bytes, WATCHED_FROM_CLIENT, |head| {
                let misconduct = match head.kind {
                    kind::HEADERS => {
                        client.opened(head.stream);
                        None
                    }
                    kind::RST_STREAM => client.reset(head.stream),
                    kind::SETTINGS if head.flags & ACK == 0 => client.settings(),
                    kind::PING if head.flags & ACK == 0 => client.ping(),
                    _ => None,
                };
                if misconduct.is_some() && client.misconduct.is_none() {
                    client.misconduct = misconduct;
                }
            });
        self.client.misconduct
    }

    /// Passes bytes sent to the client: how many of them were DATA payload.
    #[inline]
    pub(crate) fn written(&mut self, bytes: &[u8]) -> usize {
        let client = &mut self.client;
        self.to_client
            .scan_kinds(bytes, WATCHED_TO_CLIENT, |head| match head.kind {
                // A reply's DATA follows its HEADERS, which answered the stream already.
                kind::DATA => {
                    client.sent_since_ping = true;
                    if head.flags & END_STREAM != 0 {
                        client.ended(head.stream);
                    }
                }
                kind::HEADERS => {
                    client.sent_since_ping = true;
                    if head.flags & END_STREAM != 0 {
                        client.ended(head.stream);
                    } else if let Some(answered) = client.open.get_mut(&head.stream) {
                        *answered = true;
                    }
                }
                kind::RST_STREAM => {
                    client.ended(head.stream);
                }
                _ => {}
            })
    }

    /// Whether every stream's reply has ended since this was last asked (once each time
    /// the last open one ends).
    pub(crate) fn idle(&mut self) -> bool {
        std::mem::take(&mut self.client.idle)
    }

    /// Whether what has been sent so far ends at a frame's end, where a GOAWAY may go.
    pub(crate) fn at_boundary(&self) -> bool {
        self.to_client.at_boundary()
    }

    /// The bytes still to send before the frame being sent ends.
    pub(crate) fn left_in_frame(&self) -> usize {
        self.to_client.left_in_frame()
    }

    /// The last stream the client opened, for a GOAWAY.
    pub(crate) fn last_stream(&self) -> u32 {
        self.client.last_stream
    }
}

impl ClientFrames {
    fn opened(&mut self, stream: u32) {
        if stream > self.last_stream {
            self.last_stream = stream;
            self.opened += 1;
            self.open.insert(stream, false);
        }
    }

    /// A stream's reply has ended, or the stream was reset: whether it was open, and if
    /// so whether it had been answered.
    fn ended(&mut self, stream: u32) -> Option<bool> {
        let was_open = self.open.remove(&stream);
        if was_open.is_some() && self.open.is_empty() {
            self.idle = true;
        }
        was_open
    }

    fn reset(&mut self, stream: u32) -> Option<Misconduct> {
        if self.ended(stream) == Some(false) {
            self.reset += 1;
        }
        (self.opened >= RESET_STREAMS_MIN && self.reset * 2 > self.opened)
            .then_some(Misconduct::Resets)
    }

    fn settings(&mut self) -> Option<Misconduct> {
        let now = Instant::now();
        if self
            .settings_since
            .is_none_or(|since| now.duration_since(since) >= Duration::from_secs(1))
        {
            self.settings = 0;
            self.settings_since = Some(now);
        }
        self.settings += 1;
        (self.settings > SETTINGS_PER_SECOND).then_some(Misconduct::Settings)
    }

    fn ping(&mut self) -> Option<Misconduct> {
        if std::mem::take(&mut self.sent_since_ping) {
            // Forgiven, without reading the clock (clients that estimate bandwidth ping
            // after every reply): the next PING is not measured from this one.
            self.ping_strikes = 0;
            self.last_ping = None;
            return None;
        }
        let now = Instant::now();
        let last = self.last_ping.replace(now);
        if last.is_some_and(|last| now.duration_since(last) < self.limits.min_ping_interval) {
            self.ping_strikes += 1;
        }
        (self.ping_strikes > PING_STRIKES).then_some(Misconduct::Pings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::frame;

    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

    fn watch(min_ping_interval: Duration) -> FrameWatch {
        let mut watch = FrameWatch::new(FrameLimits { min_ping_interval });
        assert_eq!(watch.read(PREFACE), None);
        watch
    }

    #[test]
    fn the_third_ping_too_soon_is_misconduct_unless_something_was_sent() {
        let ping = frame(kind::PING, 0, 0, &[0; 8]);
        let mut patient = watch(Duration::from_secs(300));
        for _ in 0..3 {
            assert_eq!(patient.read(&ping), None);
        }
        assert_eq!(patient.read(&ping), Some(Misconduct::Pings));

        let mut served = watch(Duration::from_secs(300));
        for _ in 0..10 {
            assert_eq!(served.written(&frame(kind::DATA, 0, 1, &[1; 5])), 5);
            assert_eq!(served.read(&ping), None);
        }
        let mut acks = watch(Duration::from_secs(300));
        for _ in 0..10 {
            assert_eq!(acks.read(&frame(kind::PING, ACK, 0, &[0; 8])), None);
        }
        let mut any = watch(Duration::ZERO);
        for _ in 0..10 {
            assert_eq!(any.read(&ping), None);
        }
    }

    #[test]
    fn more_than_ten_settings_in_a_second_are_misconduct() {
        let mut watch = watch(Duration::ZERO);
        let settings = frame(kind::SETTINGS, 0, 0, &[]);
        for _ in 0..SETTINGS_PER_SECOND {
            assert_eq!(watch.read(&settings), None);
            assert_eq!(watch.read(&frame(kind::SETTINGS, ACK, 0, &[])), None);
        }
        assert_eq!(watch.read(&settings), Some(Misconduct::Settings));
    }

    #[test]
    fn most_streams_reset_before_their_reply_ended_are_misconduct() {
        let headers = |stream| frame(kind::HEADERS, 4, stream, &[0; 3]);
        let reset = |stream| frame(kind::RST_STREAM, 0, stream, &[0, 0, 0, 8]);
        // Resets after the reply ended, or once it began (a live game cancelled at its
        // end), are not counted.
        let mut finished = watch(Duration::ZERO);
        for stream in (1..400).step_by(2) {
            assert_eq!(finished.read(&headers(stream)), None);
            finished.written(&frame(kind::HEADERS, END_STREAM | 4, stream, &[0; 2]));
            assert_eq!(finished.read(&reset(stream)), None);
        }
        let mut answered = watch(Duration::ZERO);
        for stream in (1..400).step_by(2) {
            assert_eq!(answered.read(&headers(stream)), None);
            answered.written(&frame(kind::HEADERS, 4, stream, &[0; 2]));
            assert_eq!(answered.read(&reset(stream)), None);
        }
        // Half reset early is allowed; more is not, once 100 streams have been opened.
        let mut half = watch(Duration::ZERO);
        for stream in (1..400).step_by(2) {
            assert_eq!(half.read(&headers(stream)), None);
            if stream % 4 == 3 {
                assert_eq!(half.read(&reset(stream)), None);
            } else {
                half.written(&frame(kind::RST_STREAM, 0, stream, &[0; 4]));
            }
        }
        let mut early = watch(Duration::ZERO);
        let mut ended = None;
        for stream in (1..400).step_by(2) {
            assert_eq!(early.read(&headers(stream)), None);
            if let Some(misconduct) = early.read(&reset(stream)) {
                ended = Some((stream, misconduct));
                break;
            }
        }
        assert_eq!(ended, Some((199, Misconduct::Resets)));
        assert_eq!(early.last_stream(), 199);
    }

    #[test]
    fn idle_once_the_last_open_streams_reply_ends_or_it_is_reset() {
        let mut watch = watch(Duration::ZERO);
        let _ = watch.read(&frame(kind::HEADERS, 4, 1, &[0; 3]));
        let _ = watch.read(&frame(kind::HEADERS, 4, 3, &[0; 3]));
        watch.written(&frame(kind::HEADERS, 4, 1, &[0; 2]));
        watch.written(&frame(kind::DATA, 0, 1, &[0; 9]));
        assert!(!watch.idle());
        watch.written(&frame(kind::HEADERS, END_STREAM | 4, 1, &[0; 2]));
        assert!(!watch.idle(), "stream 3 is open");
        let _ = watch.read(&frame(kind::RST_STREAM, 0, 3, &[0, 0, 0, 8]));
        assert!(watch.idle());
        assert!(!watch.idle(), "told once");
    }
}
