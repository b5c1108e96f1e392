//! HTTP/2 frames as they pass a connection, told apart by their 9-byte heads
//! (RFC 9113, section 4.1) without being decoded: what [`crate::connections`] needs to
//! count the reply bytes a client has taken, and to hold a client to the limits h2 does
//! not keep (PINGs, SETTINGS, streams the client resets).

/// The client's connection preface, which comes before its first frame.
const CLIENT_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The length of a frame's head.
const HEAD: usize = 9;

/// Frame types (RFC 9113, section 6).
pub(crate) mod kind {
    /// DATA.
    pub(crate) const DATA: u8 = 0x0;
    /// HEADERS.
    pub(crate) const HEADERS: u8 = 0x1;
    /// RST_STREAM.
    pub(crate) const RST_STREAM: u8 = 0x3;
    /// SETTINGS.
    pub(crate) const SETTINGS: u8 = 0x4;
    /// PING.
    pub(crate) const PING: u8 = 0x6;
    /// GOAWAY.
    pub(crate) const GOAWAY: u8 = 0x7;
}

/// The flag of a SETTINGS or PING frame that answers one (RFC 9113, 6.5 and 6.7).
pub(crate) const ACK: u8 = 0x1;

/// The flag of a DATA or HEADERS frame that ends its stream's side.
pub(crate) const END_STREAM: u8 = 0x1;

/// GOAWAY's error code for a peer that is doing too much (RFC 9113, section 7).
pub(crate) const ENHANCE_YOUR_CALM: u32 = 0xb;

/// A set of frame types: those whose heads a scan passes on ([`FrameScanner::scan_kinds`]).
/// Types past 15, which only extensions use, are in none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kinds(u16);

impl Kinds {
    /// Every type (every one below 16).
    #[cfg(test)]
    pub(crate) const ALL: Self = Self(u16::MAX);

    /// The types in `kinds`.
    pub(crate) const fn of(kinds: &[u8]) -> Self {
        let mut mask = 0;
        let mut i = 0;
        while i < kinds.len() {
            mask |= 1 << kinds[i];
            i += 1;
        }
        Self(mask)
    }

    /// Whether frames of type `kind` are in the set.
    #[inline(always)]
    fn has(self, kind: u8) -> bool {
        kind < 16 && self.0 & (1 << kind) != 0
    }
}

/// The head of a frame: what it is, on which stream, and how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameHead {
    /// Its type ([`kind`]).
    pub(crate) kind: u8,
    /// Its flags.
    pub(crate) flags: u8,
    /// Its stream; 0 for the connection's own frames.
    pub(crate) stream: u32,
    /// The length of its payload.
    pub(crate) length: usize,
}

/// One direction of a connection, read as frames as its bytes pass.
#[derive(Debug, Clone)]
pub(crate) struct FrameScanner {
    /// Bytes of the client's preface still to pass (none on the server's side).
    preface: usize,
    /// Set when what came was not the preface: not HTTP/2, so nothing is read as frames
    /// (the transport refuses it).
    not_http2: bool,
    /// The head being read, and how much of it has passed.
    head: [u8; HEAD],
    filled: usize,
    /// Bytes of the current frame's payload still to pass, and whether it is DATA.
    payload_left: usize,
    in_data: bool,
}

impl FrameScanner {
    /// The client's side: its preface, then frames.
    pub(crate) fn client() -> Self {
        Self::with_preface(CLIENT_PREFACE.len())
    }

    /// The server's side: frames from the first byte.
    pub(crate) fn server() -> Self {
        Self::with_preface(0)
    }

    fn with_preface(preface: usize) -> Self {
        Self {
            preface,
            not_http2: false,
            head: [0; HEAD],
            filled: 0,
            payload_left: 0,
            in_data: false,
        }
    }

    /// Passes `bytes`, the next of this direction, calling `seen` with each frame's head
    /// as soon as the whole head has passed. Returns how many of them were DATA
    /// payload.
    #[cfg(test)]
    pub(crate) fn scan(&mut self, bytes: &[u8], seen: impl FnMut(FrameHead)) -> usize {
        self.scan_kinds(bytes, Kinds::ALL, seen)
    }

    /// [`Self::scan`], calling `seen` only with the heads of frames of `kinds` (the rest
    /// are stepped over without being read further). Inlined into its callers, so that
    /// `seen` is too.
    #[inline(always)]
    pub(crate) fn scan_kinds(
        &mut self,
        mut bytes: &[u8],
        kinds: Kinds,
        mut seen: impl FnMut(FrameHead),
    ) -> usize {
        let mut data = 0;
        // The rest of the frame the last bytes ended inside, if any.
        if self.payload_left > 0 {
            let skipped = self.payload_left.min(bytes.len());
            self.payload_left -= skipped;
            if self.in_data {
                data += skipped;
            }
            bytes = &bytes[skipped..];
        }
        if bytes.is_empty() {
            return data;
        }
        if self.preface > 0 || self.filled > 0 || self.not_http2 {
            return data + self.scan_slowly(bytes, kinds, &mut seen);
        }
        // At a frame's head, as nearly every read and write begins: whole heads read in
        // place, payloads stepped over.
        while let Some(head) = bytes.first_chunk::<HEAD>() {
            let length = payload_length(head);
            let kind = head[3];
            if kinds.has(kind) {
                seen(parse(head));
            }
            let payload = &bytes[HEAD..];
            let passed = length.min(payload.len());
            if kind == kind::DATA {
                data += passed;
            }
            bytes = &payload[passed..];
            if passed < length {
                self.payload_left = length - passed;
                self.in_data = kind == kind::DATA;
                return data;
            }
        }
        if bytes.is_empty() {
            return data;
        }
        data + self.scan_slowly(bytes, kinds, &mut seen)
    }

    /// [`Self::scan_kinds`] byte run by byte run: the preface, a head cut between two
    /// passes.
    #[cold]
    #[inline(never)]
    fn scan_slowly(
        &mut self,
        mut bytes: &[u8],
        kinds: Kinds,
        seen: &mut impl FnMut(FrameHead),
    ) -> usize {
        let mut data = 0;
        while !bytes.is_empty() {
            if self.not_http2 {
                return data;
            }
            if self.preface > 0 {
                let skipped = self.preface.min(bytes.len());
                let at = CLIENT_PREFACE.len() - self.preface;
                self.not_http2 = CLIENT_PREFACE.get(at..at + skipped) != bytes.get(..skipped);
                self.preface -= skipped;
                bytes = &bytes[skipped..];
            } else if self.payload_left > 0 {
                let skipped = self.payload_left.min(bytes.len());
                self.payload_left -= skipped;
                if self.in_data {
                    data += skipped;
                }
                bytes = &bytes[skipped..];
            } else {
                let taken = (HEAD - self.filled).min(bytes.len());
                self.head[self.filled..self.filled + taken].copy_from_slice(&bytes[..taken]);
                self.filled += taken;
                bytes = &bytes[taken..];
                if self.filled == HEAD {
                    self.filled = 0;
                    let head = parse(&self.head);
                    self.payload_left = head.length;
                    self.in_data = head.kind == kind::DATA;
                    if kinds.has(head.kind) {
                        seen(head);
                    }
                }
            }
        }
        data
    }

    /// Whether the bytes so far end exactly at the end of a frame (or of the preface):
    /// where a frame of the server's own may be put in.
    pub(crate) fn at_boundary(&self) -> bool {
        self.preface == 0 && self.filled == 0 && self.payload_left == 0
    }

    /// How many more bytes end the current frame, as far as is known: the rest of its
    /// head when only part of it has passed. Zero at a boundary.
    pub(crate) fn left_in_frame(&self) -> usize {
        if self.filled > 0 {
            HEAD - self.filled
        } else {
            self.preface + self.payload_left
        }
    }
}

/// The payload length a frame's head gives.
#[inline(always)]
fn payload_length(head: &[u8; HEAD]) -> usize {
    // One load of the first four bytes, the type's dropped.
    (u32::from_be_bytes([head[0], head[1], head[2], head[3]]) >> 8) as usize
}

#[inline(always)]
fn parse(head: &[u8; HEAD]) -> FrameHead {
    FrameHead {
        length: payload_length(head),
        kind: head[3],
        flags: head[4],
        stream: u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff,
    }
}

/// A GOAWAY frame: no stream after `last_stream` will be served, for `code`, with
/// `reason` as its debug data.
pub(crate) fn goaway(last_stream: u32, code: u32, reason: &str) -> Vec<u8> {
    let length = 8 + reason.len();
    let mut frame = Vec::with_capacity(HEAD + length);
    frame.extend_from_slice(&(length as u32).to_be_bytes()[1..]);
    frame.extend_from_slice(&[kind::GOAWAY, 0, 0, 0, 0, 0]);
    frame.extend_from_slice(&(last_stream & 0x7fff_ffff).to_be_bytes());
    frame.extend_from_slice(&code.to_be_bytes());
    frame.extend_from_slice(reason.as_bytes());
    frame
}

/// A frame of `kind` with `flags` on `stream` carrying `payload`, for tests.
#[cfg(test)]
pub(crate) fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut bytes = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    bytes.extend_from_slice(&[kind, flags]);
    bytes.extend_from_slice(&stream.to_be_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the heads of the kinds asked for are passed on, whatever the cuts; DATA is
    /// counted whether asked for or not.
    #[test]
    fn only_the_kinds_asked_for_are_seen() {
        let mut bytes = frame(kind::DATA, 0, 1, &[9; 300]);
        bytes.extend(frame(kind::PING, 0, 0, &[0; 8]));
        bytes.extend(frame(8, 0, 0, &[0, 0, 1, 0]));
        bytes.extend(frame(kind::HEADERS, 4, 3, &[7; 20]));
        bytes.extend(frame(kind::DATA, END_STREAM, 3, &[9; 5]));
        for cut in 0..bytes.len() {
            let mut scanner = FrameScanner::server();
            let mut seen = Vec::new();
            let asked = Kinds::of(&[kind::PING, kind::HEADERS]);
            let mut data = scanner.scan_kinds(&bytes[..cut], asked, |head| seen.push(head));
            data += scanner.scan_kinds(&bytes[cut..], asked, |head| seen.push(head));
            assert_eq!(data, 305, "cut at {cut}");
            let kinds: Vec<_> = seen.iter().map(|head| (head.kind, head.stream)).collect();
            assert_eq!(kinds, [(kind::PING, 0), (kind::HEADERS, 3)], "cut at {cut}");
        }
    }

    /// Every frame head and the DATA bytes, whatever the cuts between the writes.
    #[test]
    fn frames_are_found_across_any_cuts() {
        let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        bytes.extend(frame(kind::SETTINGS, 0, 0, &[0; 6]));
        bytes.extend(frame(kind::HEADERS, 4, 1, &[7; 20]));
        bytes.extend(frame(kind::DATA, END_STREAM, 1, &[9; 300]));
        bytes.extend(frame(kind::PING, ACK, 0, &[0; 8]));
        bytes.extend(frame(kind::RST_STREAM, 0, 3, &[0, 0, 0, 8]));
        let expected = [
            (kind::SETTINGS, 0, 0, 6),
            (kind::HEADERS, 4, 1, 20),
            (kind::DATA, END_STREAM, 1, 300),
            (kind::PING, ACK, 0, 8),
            (kind::RST_STREAM, 0, 3, 4),
        ];
        for cut in [1, 2, 5, 9, 10, 24, 33, 100, bytes.len()] {
            let mut scanner = FrameScanner::client();
            let mut heads = Vec::new();
            let mut data = 0;
            for piece in bytes.chunks(cut) {
                data += scanner.scan(piece, |head| {
                    heads.push((head.kind, head.flags, head.stream, head.length));
                });
            }
            assert_eq!(heads, expected, "cut every {cut} bytes");
            assert_eq!(data, 300, "cut every {cut} bytes");
            assert!(scanner.at_boundary());
        }
    }

    /// Bytes that do not begin with the preface (HTTP/1.1, garbage) are not read as
    /// frames: the transport refuses them, not a frame limit.
    #[test]
    fn what_is_not_http2_is_not_read_as_frames() {
        let mut bytes = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
        bytes.extend(frame(kind::PING, 0, 0, &[0; 8]));
        let mut scanner = FrameScanner::client();
        let mut heads = 0;
        scanner.scan(&bytes, |_| heads += 1);
        assert_eq!(heads, 0);
    }

    #[test]
    fn the_rest_of_a_frame_is_known_as_it_passes() {
        let mut scanner = FrameScanner::server();
        let bytes = frame(kind::DATA, 0, 1, &[1; 10]);
        assert_eq!(scanner.left_in_frame(), 0);
        scanner.scan(&bytes[..4], |_| {});
        assert_eq!(scanner.left_in_frame(), 5);
        assert!(!scanner.at_boundary());
        scanner.scan(&bytes[4..12], |_| {});
        assert_eq!(scanner.left_in_frame(), 7);
        scanner.scan(&bytes[12..], |_| {});
        assert!(scanner.at_boundary());
    }

    #[test]
    fn a_goaway_frame_is_laid_out_as_rfc_9113_says() {
        let frame = goaway(5, ENHANCE_YOUR_CALM, "too_many_pings");
        let mut heads = Vec::new();
        FrameScanner::server().scan(&frame, |head| heads.push(head));
        assert_eq!(
            heads,
            [FrameHead {
                kind: kind::GOAWAY,
                flags: 0,
                stream: 0,
                length: 22
            }]
        );
        assert_eq!(&frame[9..17], &[0, 0, 0, 5, 0, 0, 0, 0xb]);
        assert_eq!(&frame[17..], b"too_many_pings");
    }
}
