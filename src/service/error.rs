//! Every error the service returns, and the one place they become gRPC statuses.

use std::fmt;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, FieldViolation, StatusExt};

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

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.description)
    }
}

/// Why the service did not answer a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    /// The request is malformed; one violation per problem found.
    #[error("invalid {message}: {}", join(.violations))]
    InvalidRequest {
        /// The request message's name.
        message: &'static str,
        /// Every problem found, never empty.
        violations: Vec<Violation>,
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
    /// A request message is larger than the server accepts.
    #[error("the request is too large: {detail}")]
    RequestTooLarge {
        /// What the transport said of its size and the limit.
        detail: String,
    },
    /// The server is shutting down and ended a call that was still open.
    #[error("the server is shutting down; reconnect to continue")]
    ShuttingDown,
}

fn join(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(Violation::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl From<ServiceError> for Status {
    fn from(error: ServiceError) -> Self {
        let message = error.to_string();
        match error {
            ServiceError::InvalidRequest { violations, .. } => {
                let violations: Vec<FieldViolation> = violations
                    .into_iter()
                    .map(|v| FieldViolation::new(v.field, v.description))
                    .collect();
                Status::with_error_details(
                    Code::InvalidArgument,
                    message,
                    ErrorDetails::with_bad_request(violations),
                )
            }
            ServiceError::TooManyMessages { .. }
            | ServiceError::TooManyGames { .. }
            | ServiceError::RequestTooLarge { .. } => Status::resource_exhausted(message),
            ServiceError::StreamIdle { .. } | ServiceError::GameTooLong { .. } => {
                Status::deadline_exceeded(message)
            }
            ServiceError::ShuttingDown => Status::unavailable(message),
        }
    }
}

impl ServiceError {
    /// The error for a status the transport raised, where Arbiter reports it otherwise:
    /// tonic refuses an over-long message with OUT_OF_RANGE, while gRPC's own servers
    /// (and our documentation) say RESOURCE_EXHAUSTED.
    pub fn from_transport(status: &Status) -> Option<Self> {
        (status.code() == Code::OutOfRange && status.message().contains("message length too large"))
            .then(|| Self::RequestTooLarge {
                detail: status.message().to_owned(),
            })
    }
}

/// Rewrites a trailers-only error reply of the transport into Arbiter's status for it
/// (see [`ServiceError::from_transport`]); every other reply passes unchanged.
pub fn rewrite_transport_error<B>(
    mut response: tonic::codegen::http::Response<B>,
) -> tonic::codegen::http::Response<B> {
    let rewritten = Status::from_header_map(response.headers())
        .as_ref()
        .and_then(ServiceError::from_transport)
        .map(Status::from);
    if let Some(status) = rewritten {
        let headers = response.headers_mut();
        headers.remove("grpc-message");
        headers.remove("grpc-status-details-bin");
        if let Err(error) = status.add_header(headers) {
            tracing::warn!(%error, "cannot rewrite a transport error");
        }
    }
    response
}
