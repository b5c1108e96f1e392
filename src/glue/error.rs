//! Every error the service returns, and the one place they become gRPC statuses.
//!
//! Every error reply fits in a few KiB of trailers whatever the request held: gRPC clients
//! built on the C core (Python, C++, Ruby, C#, PHP) refuse more than 8 KiB of metadata
//! (soft limit; 16 KiB hard), grpc-java more than 8 KiB, and they would then see
//! `RESOURCE_EXHAUSTED` instead of the error. So a reply lists at most
//! [`MAX_LISTED_VIOLATIONS`] violations and then one saying how many were left out, cuts
//! every field path and description, and its message (`grpc-message`) is a short summary;
//! text echoed from the request is cut with [`echo`] where it is written.
//!
//! The worst case, all of it 4-byte characters: a message of at most
//! [`MAX_MESSAGE_BYTES`] bytes, percent-encoded to at most 3 times that (768), and in
//! `grpc-status-details-bin` a `google.rpc.Status` holding that message again and
//! 11 violations of at most 64 + 200 bytes, about 3.3 KB, base64-encoded to about 4.4 KB:
//! under 5.5 KB in all (see the test `the_worst_reply_fits_in_8_kib`).

use std::fmt;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, FieldViolation, StatusExt};

use crate::kit::grid::Text;
use crate::proto::replies::Writer;
use crate::proto::wire::{fields as wire, Len};

/// The most violations one error reply lists; one more then says how many were left out.
pub(crate) const MAX_LISTED_VIOLATIONS: usize = 10;
/// The most bytes of a field path in an error reply.
pub(crate) const MAX_FIELD_BYTES: usize = 64;
/// The most bytes of a violation's description in an error reply.
pub(crate) const MAX_DESCRIPTION_BYTES: usize = 200;
/// The most bytes of an error reply's message (`grpc-message`, before percent-encoding).
pub(crate) const MAX_MESSAGE_BYTES: usize = 256;
/// The most characters of request text that [`echo`] shows.
pub(crate) const MAX_ECHOED_CHARS: usize = 32;
/// The most bytes of request text that [`echo`] shows, once escaped.
pub(crate) const MAX_ECHOED_BYTES: usize = 128;

/// `text` from a request, for a description: quoted and escaped as Rust's `{:?}` does, and
/// cut past [`MAX_ECHOED_CHARS`] characters or [`MAX_ECHOED_BYTES`] bytes once escaped,
/// with its full length: `"\u{1}\u{1}..." (900000 bytes)`.
pub(crate) fn echo(text: &str) -> String {
    let mut shown = String::new();
    let mut escaped_bytes = 0;
    for (count, ch) in text.chars().enumerate() {
        let bytes: usize = ch.escape_debug().map(char::len_utf8).sum();
        if count == MAX_ECHOED_CHARS || escaped_bytes + bytes > MAX_ECHOED_BYTES {
            let quoted = format!("{shown:?}");
            let open = quoted.strip_suffix('"').unwrap_or(&quoted);
            return format!("{open}...\" ({} bytes)", text.len());
        }
        escaped_bytes += bytes;
        shown.push(ch);
    }
    format!("{text:?}")
}

/// `text` cut to at most `max` bytes (at a character boundary), ending in `...` if cut.
fn cut(mut text: String, max: usize) -> String {
    let [head, more] = cut_str(&text, max);
    if !more.is_empty() {
        let end = head.len();
        text.truncate(end);
        text.push_str("...");
    }
    text
}

/// One problem with one field of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The field, written as a path: `board.rows[3]`, `moves[4]`, `color`.
    pub field: String,
    /// What is wrong with it, for a person to read.
    pub description: String,
}

impl Violation {
    /// A problem `description` with `field`.
    pub fn new(field: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            description: description.into(),
        }
    }
}

/// The most fields' paths the violation that counts those left out names.
const MAX_LEFT_OUT_PATHS: usize = 4;

/// Every problem found with one request, as an error reply reports them: the first
/// [`MAX_LISTED_VIOLATIONS`] whole, the others only counted, with the first few of
/// their fields' paths (indexes dropped: `board.rows` for `board.rows[42]`). So a
/// request with a million problems costs no more to hold than one with eleven, and
/// those past the tenth are never written out ([`Violations::push_with`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Violations {
    /// The first problems found, as they will be listed.
    listed: Vec<Violation>,
    /// How many more were found.
    left_out: usize,
    /// The paths of the fields left out, each once, the first few of them.
    left_out_paths: Vec<String>,
}

impl Violations {
    /// No violation yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `violation`.
    pub fn push(&mut self, violation: Violation) {
        if self.listed.len() < MAX_LISTED_VIOLATIONS {
            self.listed.push(violation);
        } else {
            let path = violation.field.split('[').next().unwrap_or_default();
            self.leave_out(path);
        }
    }

    /// Adds the violation `make` makes, on a field whose path without indexes is
    /// `path` (`moves` for `moves[4]`): made only if it is to be listed, else counted.
    pub fn push_with(&mut self, path: &str, make: impl FnOnce() -> Violation) {
        if self.listed.len() < MAX_LISTED_VIOLATIONS {
            self.listed.push(make());
        } else {
            self.leave_out(path);
        }
    }

    fn leave_out(&mut self, path: &str) {
        self.left_out += 1;
        if self.left_out_paths.len() < MAX_LEFT_OUT_PATHS
            && !self.left_out_paths.iter().any(|p| p == path)
        {
            self.left_out_paths
                .push(cut(path.to_owned(), MAX_FIELD_BYTES));
        }
    }

    /// How many problems were found, listed or not.
    pub fn len(&self) -> usize {
        self.listed.len() + self.left_out
    }

    /// Whether none was found.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The problems that are listed, in the order found: the first
    /// [`MAX_LISTED_VIOLATIONS`].
    pub fn listed(&self) -> &[Violation] {
        &self.listed
    }
}

impl From<Violation> for Violations {
    fn from(violation: Violation) -> Self {
        Self {
            listed: vec![violation],
            ..Self::default()
        }
    }
}

impl FromIterator<Violation> for Violations {
    fn from_iter<I: IntoIterator<Item = Violation>>(iter: I) -> Self {
        let mut violations = Self::new();
        for violation in iter {
            violations.push(violation);
        }
        violations
    }
}

impl Extend<Violation> for Violations {
    fn extend<I: IntoIterator<Item = Violation>>(&mut self, iter: I) {
        for violation in iter {
            self.push(violation);
        }
    }
}

/// The text of a rules error, in a buffer sized once for a sentence, written without
/// `core::fmt` (see [`Text`]): what [`describe`] makes of it, at a fraction of the cost.
pub(crate) fn text_of(what: &impl Text) -> String {
    sentence(|text| what.write_text(text))
}

/// The path of element `index` of the list `field` (`moves[4]`), `field` given in
/// `parts` (`["board", ".rows"]`): put together without `core::fmt`, since a bulk call
/// of malformed items names thousands.
pub(crate) fn indexed(parts: &[&str], index: usize) -> String {
    let mut number = itoa::Buffer::new();
    let number = number.format(index);
    let len = parts.iter().map(|part| part.len()).sum::<usize>() + number.len() + 2;
    let mut path = String::with_capacity(len);
    for part in parts {
        path.push_str(part);
    }
    path.push('[');
    path.push_str(number);
    path.push(']');
    path
}

/// The bytes a violation's description is given at once: most are a sentence.
const DESCRIPTION_BYTES: usize = 128;

/// `what` as text, in a buffer sized once for a sentence. `to_string` starts empty and
/// grows it four or five times on the way, which a bulk call of many malformed items
/// pays on every violation (`tests/abuse/request_cost.py`).
pub(crate) fn describe(what: impl fmt::Display) -> String {
    use fmt::Write as _;
    sentence(|text| write!(text, "{what}"))
}

/// What `write` writes, in a buffer sized once for a sentence.
fn sentence(write: impl FnOnce(&mut String) -> fmt::Result) -> String {
    let mut text = String::with_capacity(DESCRIPTION_BYTES);
    // Writing into a `String` cannot fail; a text that fails leaves what it wrote.
    let _ = write(&mut text);
    text
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.description)
    }
}

/// Why the service did not answer a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    /// The request is malformed; one violation per problem found.
    #[error("{}", summary(message, violations))]
    InvalidRequest {
        /// The request message's name.
        message: &'static str,
        /// Every problem found, never empty.
        violations: Violations,
    },
    /// A live game stream carried more messages that were not applied moves than the
    /// server allows.
    #[error(
        "a {rpc} stream carries at most {limit} messages that are not applied moves \
         (rejected moves and the setup); start a new stream for a new game"
    )]
    TooManyMessages {
        /// The RPC of the stream.
        rpc: &'static str,
        /// The limit that was passed.
        limit: usize,
    },
    /// A live game lasted as long as the server lets any game last.
    #[error("the game has lasted the server's limit of {}; start a new stream for a new game", humantime::format_duration(*.limit))]
    GameTooLong {
        /// The limit.
        limit: std::time::Duration,
    },
    /// A live game stream went too long without a move.
    #[error("no message arrived for {}; the game is closed", humantime::format_duration(*.idle))]
    StreamIdle {
        /// How long the stream may stay silent.
        idle: std::time::Duration,
    },
    /// The server already holds as many live games as it allows.
    #[error("the server already holds its limit of {limit} live games; retry later")]
    TooManyGames {
        /// The limit.
        limit: usize,
    },
    /// A connection or a caller already holds its share of the live games.
    #[error("{holder} already holds its share of {limit} live games ({}); end one to start another", holder.flag())]
    TooManyGamesHeld {
        /// Whose share.
        holder: Holder,
        /// The share.
        limit: usize,
    },
    /// A request message is larger than the server accepts (`--max-request-bytes`),
    /// as sent or once decompressed.
    #[error("{}", too_large(*.bytes, *.limit))]
    RequestTooLarge {
        /// The message's size as its length prefix gave it; `None` when it was
        /// compressed and inflated past the limit.
        bytes: Option<u64>,
        /// The largest message the server accepts, in bytes.
        limit: u64,
    },
    /// A request message is not a protobuf encoding of the RPC's request type (bytes
    /// cut short, a wrong wire type, a string that is not UTF-8): the client's
    /// serialization is at fault, never the server.
    #[error("the request is not a valid protobuf message of this RPC: {detail}")]
    Undecodable {
        /// prost's account of the first problem, naming the message and field path.
        detail: String,
    },
    /// The server is shutting down and ended a call that was still open.
    #[error("server shutting down: resume the game with a setup and its history")]
    ShuttingDown,
    /// A limit on calls refused the call before it ran: the server's or a share.
    #[error("{0}")]
    OverLimit(CallLimit),
    /// The call carries no bearer token the server admits (`--tokens`); why.
    #[error("{0}")]
    Unauthenticated(&'static str),
    /// The client certificate is valid for no name the server admits.
    #[error(
        "the client certificate is not valid for any name this server admits (--tls-client-name)"
    )]
    NameNotAdmitted,
}

/// Which limit on calls refused a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallLimit {
    /// Calls in flight: the server's limit (`holder` `None`) or a share of it.
    InFlight {
        /// Whose share; `None`: the server's.
        holder: Option<Holder>,
        /// The limit or share.
        limit: usize,
    },
    /// A caller's quota of calls a second.
    Quota {
        /// The caller's address or name, when known.
        caller: Option<std::sync::Arc<str>>,
        /// The quota.
        rate: u32,
    },
    /// Reply bytes not yet read: the server's budget (`holder` `None`), which the
    /// call's connection holds some of, or a share of it.
    Unread {
        /// Whose share; `None`: the server's.
        holder: Option<Holder>,
        /// The budget or share, in bytes.
        limit: usize,
    },
}

impl fmt::Display for CallLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InFlight {
                holder: None,
                limit,
            } => write!(
                f,
                "the server is at its limit of {limit} calls in flight; retry with backoff"
            ),
            Self::InFlight {
                holder: Some(holder),
                limit,
            } => write!(
                f,
                "{holder} is at its share of {limit} calls in flight ({}); retry with backoff",
                holder.flag_of("--max-in-flight")
            ),
            Self::Quota { caller, rate } => write!(
                f,
                "{} is over its quota of {rate} calls a second \
                 (--max-calls-per-second-per-caller); retry with backoff",
                Holder::Caller(caller.clone())
            ),
            Self::Unread {
                holder: None,
                limit,
            } => write!(
                f,
                "the server holds its budget of {limit} bytes of replies not yet read \
                 (--max-unread-bytes), some of them this connection's; read them, then retry"
            ),
            Self::Unread {
                holder: Some(holder),
                limit,
            } => write!(
                f,
                "{holder} holds its share of {limit} bytes of replies not yet read ({}); \
                 read them, then retry",
                holder.flag_of("--max-unread-bytes")
            ),
        }
    }
}

/// Whose share of a limit a refusal names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// The call's connection.
    Connection,
    /// The call's caller, and its address or name when known.
    Caller(Option<std::sync::Arc<str>>),
}

impl Holder {
    /// The flag that sets the share of the live games.
    fn flag(&self) -> String {
        self.flag_of("--max-live-games")
    }

    /// The flag that sets this share of the limit `limit` (a flag) sets.
    fn flag_of(&self, limit: &str) -> String {
        match self {
            Self::Connection => format!("{limit}-per-connection"),
            Self::Caller(_) => format!("{limit}-per-caller"),
        }
    }
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Connection => f.write_str("this connection"),
            Self::Caller(Some(address)) => write!(f, "this caller ({address})"),
            Self::Caller(None) => f.write_str("this caller"),
        }
    }
}

/// The message of [`ServiceError::RequestTooLarge`].
fn too_large(bytes: Option<u64>, limit: u64) -> String {
    match bytes {
        Some(bytes) => format!(
            "the request is {bytes} bytes; the server accepts at most {limit} \
             (--max-request-bytes)"
        ),
        None => format!(
            "the request inflates to more than {limit} bytes; the server accepts at most \
             {limit} (--max-request-bytes)"
        ),
    }
}

/// A bad request's message, at most [`MAX_MESSAGE_BYTES`]: its first violation (cut), and
/// how many more the details hold.
fn summary(message: &str, violations: &Violations) -> String {
    let more = match violations.len() {
        0 | 1 => String::new(),
        n => format!("; and {} more (see the BadRequest details)", n - 1),
    };
    let first = violations
        .listed()
        .first()
        .map(Violation::to_string)
        .unwrap_or_default();
    let head = cut(
        format!("invalid {message}: {first}"),
        MAX_MESSAGE_BYTES - more.len(),
    );
    head + &more
}

/// The violations a reply lists: at most [`MAX_LISTED_VIOLATIONS`], each cut, then one
/// that says how many were left out and on which fields.
fn listed<V>(violations: Violations, make: impl Fn(String, String) -> V) -> Vec<V> {
    let Violations {
        listed,
        left_out,
        left_out_paths: paths,
    } = violations;
    let mut out: Vec<V> = listed
        .into_iter()
        .map(|v| {
            make(
                cut(v.field, MAX_FIELD_BYTES),
                cut(v.description, MAX_DESCRIPTION_BYTES),
            )
        })
        .collect();
    if left_out > 0 {
        let (field, description) = self::left_out(left_out, &paths);
        out.push(make(field, description));
    }
    out
}

/// The violation that says how many were `left_out` and, from `paths`, on which fields:
/// the first field left out names it, a few more its description.
fn left_out(left_out: usize, paths: &[String]) -> (String, String) {
    let field = paths.first().cloned().unwrap_or_default();
    let description = match paths.len() {
        0 | 1 => format!("... and {left_out} more violations not listed"),
        _ => format!(
            "... and {left_out} more violations not listed, on {}",
            paths.join(", ")
        ),
    };
    (field, cut(description, MAX_DESCRIPTION_BYTES))
}

/// Writes one `FieldViolation` on `path`, `description`, cut as [`listed`] cuts them, as
/// the repeated field `field`.
pub(crate) fn write_violation(field: Len, path: &str, description: &str, w: &mut Writer) {
    w.message(field, |w| {
        w.string_of(wire::field_violation::FIELD, cut_str(path, MAX_FIELD_BYTES));
        w.string_of(
            wire::field_violation::DESCRIPTION,
            cut_str(description, MAX_DESCRIPTION_BYTES),
        );
    });
}

/// `text` as [`cut`] cuts it, without a copy: its head, and `...` if cut.
fn cut_str(text: &str, max: usize) -> [&str; 2] {
    if text.len() <= max {
        return [text, ""];
    }
    let mut end = max.saturating_sub(3);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    [text.get(..end).unwrap_or_default(), "..."]
}

impl From<ServiceError> for Status {
    fn from(error: ServiceError) -> Self {
        let message = cut(error.to_string(), MAX_MESSAGE_BYTES);
        match error {
            ServiceError::InvalidRequest { violations, .. } => {
                let violations = listed(violations, FieldViolation::new);
                Status::with_error_details(
                    Code::InvalidArgument,
                    message,
                    ErrorDetails::with_bad_request(violations),
                )
            }
            ServiceError::TooManyMessages { .. }
            | ServiceError::TooManyGames { .. }
            | ServiceError::TooManyGamesHeld { .. }
            | ServiceError::RequestTooLarge { .. }
            | ServiceError::OverLimit(_) => Status::resource_exhausted(message),
            ServiceError::Unauthenticated(_) => Status::unauthenticated(message),
            ServiceError::NameNotAdmitted => Status::permission_denied(message),
            ServiceError::StreamIdle { .. } | ServiceError::GameTooLong { .. } => {
                Status::deadline_exceeded(message)
            }
            ServiceError::Undecodable { .. } => Status::invalid_argument(message),
            ServiceError::ShuttingDown => Status::unavailable(message),
        }
    }
}

impl ServiceError {
    /// Writes what a CheckBatch check or a PlayMany action reports in place of this
    /// error, as the repeated `FieldViolation` field `field` of its result: a malformed
    /// request's violations, bounded as an error reply's are; any other error as one
    /// violation on `item`, the item itself. Written straight from the violations:
    /// a bulk call may answer ten thousand malformed items.
    pub(crate) fn write_field_violations(self, item: &str, field: Len, w: &mut Writer) {
        let violations = match self {
            ServiceError::InvalidRequest { violations, .. } => violations,
            other => {
                write_violation(field, item, &describe(&other), w);
                return;
            }
        };
        for violation in &violations.listed {
            write_violation(field, &violation.field, &violation.description, w);
        }
        if violations.left_out > 0 {
            let (path, description) = left_out(violations.left_out, &violations.left_out_paths);
            write_violation(field, &path, &description, w);
        }
    }

    /// The error for a status the transport raised, where Arbiter reports it otherwise:
    /// tonic refuses an over-long message with OUT_OF_RANGE (while gRPC's own servers,
    /// and our documentation, say RESOURCE_EXHAUSTED), and one that inflates past the
    /// limit with RESOURCE_EXHAUSTED, both in words of its own internals; and a message
    /// that does not decode with INTERNAL, which is INVALID_ARGUMENT here.
    ///
    /// tonic (0.14, `codec/decode.rs`) makes these statuses from a code and a formatted
    /// message alone, with no error source to match on, so their words are read; the
    /// tests `tests/limits.rs` and `tests/compression.rs` fail if tonic changes them.
    pub fn from_transport(status: &Status) -> Option<Self> {
        let message = status.message();
        // The numbers in tonic's message: the length, then the limit; or the limit alone.
        let mut numbers = message
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|digits| digits.parse::<u64>().ok());
        match status.code() {
            Code::OutOfRange if message.contains("message length too large") => {
                let bytes = numbers.next()?;
                Some(Self::RequestTooLarge {
                    bytes: Some(bytes),
                    limit: numbers.next()?,
                })
            }
            Code::ResourceExhausted if message.contains("exceeded while decompressing") => {
                Some(Self::RequestTooLarge {
                    bytes: None,
                    limit: numbers.next()?,
                })
            }
            // tonic answers INTERNAL, a server fault to every dashboard, for bytes the
            // client sent.
            Code::Internal => message
                .strip_prefix("failed to decode Protobuf message: ")
                .map(|detail| Self::Undecodable {
                    detail: cut(detail.to_owned(), MAX_DESCRIPTION_BYTES),
                }),
            _ => None,
        }
    }
}

/// The fields a malformed request's error names, in order, for unit tests.
#[cfg(test)]
pub(crate) fn fields(error: ServiceError) -> Vec<String> {
    match error {
        ServiceError::InvalidRequest { violations, .. } => violations
            .listed()
            .iter()
            .map(|v| v.field.clone())
            .collect(),
        other => panic!("not a violation list: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::codegen::http::HeaderMap;

    /// The bytes of the trailers `status` is sent as: every name and value.
    fn trailer_bytes(status: &Status) -> usize {
        let mut headers = HeaderMap::new();
        status.add_header(&mut headers).unwrap();
        headers
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len())
            .sum()
    }

    #[test]
    fn echo_cuts_long_text_and_says_how_long_it_was() {
        assert_eq!(echo("black"), "\"black\"");
        assert_eq!(
            echo(&"x".repeat(MAX_ECHOED_CHARS)),
            format!("\"{}\"", "x".repeat(32))
        );
        // `\u{1}` is 5 bytes escaped: 25 of them fit in 128 bytes.
        assert_eq!(
            echo(&"\u{1}".repeat(900_000)),
            format!("\"{}...\" (900000 bytes)", "\\u{1}".repeat(25))
        );
        assert_eq!(echo("\u{1}B"), "\"\\u{1}B\"");
        assert_eq!(
            echo(&"é".repeat(40)),
            format!("\"{}...\" (80 bytes)", "é".repeat(32))
        );
    }

    #[test]
    fn cut_stops_at_a_character_boundary() {
        assert_eq!(cut("abc".into(), 3), "abc");
        assert_eq!(cut("abcdef".into(), 5), "ab...");
        assert_eq!(cut("ééé".into(), 5), "é...");
        assert_eq!(cut("ééé".into(), 4), "...");
        assert_eq!(cut("ééé".into(), 6), "ééé");
        assert_eq!(cut("éééé".into(), 7), "éé...");
    }

    #[test]
    fn the_worst_reply_fits_in_8_kib() {
        // Every field and description as long as can be, in 4-byte characters, which
        // percent-encoding triples in the message. A few hundred violations are as bad as
        // any number: past the tenth only their count is shown, in a description that is
        // cut like any other.
        let wide = "\u{1F600}".repeat(1000);
        let violations: Violations = (0..300)
            .map(|i| Violation::new(format!("{wide}{i}"), wide.clone()))
            .collect();
        let status = Status::from(ServiceError::InvalidRequest {
            message: "CheckOthelloMoveRequest",
            violations,
        });
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(status.message().len() <= MAX_MESSAGE_BYTES);
        let bytes = trailer_bytes(&status);
        println!("the worst reply: {bytes} bytes of trailers");
        assert!(bytes < 6 * 1024, "{bytes} bytes of trailers");
        let listed = status.get_details_bad_request().unwrap().field_violations;
        assert_eq!(listed.len(), MAX_LISTED_VIOLATIONS + 1);
        assert!(listed
            .iter()
            .all(|v| v.field.len() <= MAX_FIELD_BYTES
                && v.description.len() <= MAX_DESCRIPTION_BYTES));
        assert!(listed[10]
            .description
            .starts_with("... and 290 more violations not listed"));
    }

    #[test]
    fn the_summary_names_the_first_violation_and_counts_the_rest() {
        let violations = [
            Violation::new("board.rows[0]", "has 150 cells; at most 100 are allowed"),
            Violation::new("board.rows[1]", "has 150 cells; at most 100 are allowed"),
            Violation::new("color", "must be \"B\" or \"W\", got \"x\""),
        ];
        let error = ServiceError::InvalidRequest {
            message: "CheckOthelloMoveRequest",
            violations: violations.iter().cloned().collect(),
        };
        assert_eq!(
            error.to_string(),
            "invalid CheckOthelloMoveRequest: board.rows[0]: has 150 cells; at most 100 are \
             allowed; and 2 more (see the BadRequest details)"
        );
        let status = Status::from(ServiceError::InvalidRequest {
            message: "CheckOthelloMoveRequest",
            violations: violations[0].clone().into(),
        });
        assert_eq!(
            status.message(),
            "invalid CheckOthelloMoveRequest: board.rows[0]: has 150 cells; at most 100 are \
             allowed"
        );
    }

    #[test]
    fn the_extra_violation_names_the_fields_left_out() {
        let mut violations: Violations = (0..12)
            .map(|i| Violation::new(format!("board.rows[{i}]"), "bad"))
            .collect();
        let listed = super::listed(violations.clone(), FieldViolation::new);
        assert_eq!(listed.len(), 11);
        assert_eq!(listed[10].field, "board.rows");
        assert_eq!(
            listed[10].description,
            "... and 2 more violations not listed"
        );
        violations.push(Violation::new("color", "bad"));
        let listed = super::listed(violations, FieldViolation::new);
        assert_eq!(listed[10].field, "board.rows");
        assert_eq!(
            listed[10].description,
            "... and 3 more violations not listed, on board.rows, color"
        );
        let listed = super::listed(Violation::new("row", "bad").into(), FieldViolation::new);
        assert_eq!(listed.len(), 1);
    }

    proptest::proptest! {
        /// A bulk item's violations written straight into its result are, byte for
        /// byte, the `CheckResult` prost encodes from the violations an error reply
        /// lists: cut, at most ten, and the one that counts the rest.
        #[test]
        fn violations_are_written_as_prost_encodes_them(
            violations in proptest::collection::vec(
                ("[a-z.]{0,3}(\\[[0-9]{1,3}\\])?|é{20,40}", "[ -~]{0,20}|é{90,120}"),
                0..14,
            ),
            other_error in proptest::prelude::any::<bool>(),
        ) {
            use crate::proto::{self, replies::CheckBatchReply};
            use prost::Message;
            let collected: Violations = violations
                .iter()
                .map(|(field, description)| Violation::new(field.as_str(), description.as_str()))
                .collect();
            let error = if other_error {
                ServiceError::TooManyGames { limit: 7 }
            } else {
                ServiceError::InvalidRequest { message: "Check", violations: collected.clone() }
            };
            let expected = match &error {
                ServiceError::InvalidRequest { .. } => listed(collected, |field, description| {
                    proto::FieldViolation { field, description }
                }),
                other => vec![proto::FieldViolation {
                    field: "check".into(),
                    description: other.to_string(),
                }],
            };
            let mut written = CheckBatchReply::default();
            written.push_invalid(|w| {
                error.write_field_violations("check", wire::check_result::INVALID, w);
            });
            let built = proto::CheckBatchResponse {
                results: vec![proto::CheckResult { invalid: expected, result: None }],
            };
            proptest::prop_assert_eq!(written.as_bytes(), &built.encode_to_vec()[..]);
        }
    }
}
