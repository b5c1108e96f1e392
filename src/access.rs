//! Who may call: bearer tokens from a file (read again when it changes, so tokens are
//! added and revoked without a restart) and, under mutual TLS, client certificates
//! allowed by name. A call let in carries its caller's name ([`CallerName`]: the token's,
//! else the certificate's), under which the shares of the in-flight and live-game limits
//! and the call quota count it. Health checks need neither: the probes that send them
//! carry none.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use rustls_pki_types::ServerName;
use tonic::codegen::http;
use tonic::Status;
use tower::{BoxError, Layer, Service};

use crate::connections::Peer;
use crate::glue::error::ServiceError;

/// How often the token file is looked at for a change, at most.
const TOKENS_RECHECK: Duration = Duration::from_secs(1);

/// The path prefix of the health service's calls, which need no credentials and take no
/// place in flight.
pub(crate) const HEALTH: &str = "/grpc.health.v1.Health/";

/// A call's caller, by name: put in its extensions once it is let in.
#[derive(Debug, Clone)]
pub(crate) struct CallerName(pub(crate) Arc<str>);

/// Why the access rules cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// The token file cannot be read.
    #[error("cannot read the token file {path}: {source}")]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line of the token file is not `NAME TOKEN`, or repeats a token.
    #[error("{path}, line {line}: {problem}")]
    TokenLine {
        /// The file.
        path: PathBuf,
        /// The line's number, from 1.
        line: usize,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A client name is not a DNS name.
    #[error("--tls-client-name {0:?} is not a DNS name")]
    ClientName(String),
}

/// The rules: the token file, and the names a client certificate must be valid for.
#[derive(Debug)]
pub(crate) struct Access {
    tokens: Option<Tokens>,
    names: Vec<ServerName<'static>>,
}

impl Access {
    /// The rules the settings ask for, or `None` when they ask for none.
    pub(crate) fn new(
        tokens: Option<&Path>,
        names: &[String],
    ) -> Result<Option<Arc<Self>>, AccessError> {
        let names = names
            .iter()
            .map(|name| {
                ServerName::try_from(name.clone())
                    .ok()
                    .filter(|name| matches!(name, ServerName::DnsName(_)))
                    .ok_or_else(|| AccessError::ClientName(name.clone()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let tokens = tokens.map(Tokens::load).transpose()?;
        if tokens.is_none() && names.is_empty() {
            return Ok(None);
        }
        Ok(Some(Arc::new(Self { tokens, names })))
    }

    /// The caller's name if the call may go on, or the status refusing it.
    fn admit<B>(&self, request: &http::Request<B>) -> Result<Option<Arc<str>>, Status> {
        let mut name = None;
        if !self.names.is_empty() {
            let certified = Peer::of(request)
                .and_then(|peer| peer.certified_name(peer.certificates(), &self.names));
            match certified {
                Some(certified) => name = Some(certified),
                None => return Err(ServiceError::NameNotAdmitted.into()),
            }
        }
        if let Some(tokens) = &self.tokens {
            let token = request
                .headers()
                .get(http::header::AUTHORIZATION)
                .and_then(|value| bearer(value.as_bytes()));
            let Some(token) = token else {
                return Err(ServiceError::Unauthenticated(
                    "no bearer token: send the metadata `authorization: Bearer TOKEN`",
                )
                .into());
            };
            match tokens.name_of(token) {
                Some(owner) => name = Some(owner),
                None => {
                    return Err(ServiceError::Unauthenticated(
                        "the bearer token in `authorization` is not one this server admits",
                    )
                    .into())
                }
            }
        }
        Ok(name)
    }
}

/// The token of an `authorization` value `Bearer TOKEN` (the scheme in any case).
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, token) = value.split_at_checked(7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then(|| token.trim_ascii())
        .filter(|token| !token.is_empty())
}

/// The token file: `NAME TOKEN` a line (blank lines and `#` comments skipped), read
/// again when its modification time or length changes.
#[derive(Debug)]
struct Tokens {
    path: PathBuf,
    /// Token to name, and the file's stamp when it was read.
    known: RwLock<Known>,
    /// When the file was last looked at.
    checked: Mutex<Instant>,
}

/// What tells a changed file: its modification time and length.
type Stamp = (Option<SystemTime>, u64);

/// The tokens of a file as read, each to its name, and the file's stamp then.
type Known = (HashMap<Box<[u8]>, Arc<str>>, Stamp);

impl Tokens {
    fn load(path: &Path) -> Result<Self, AccessError> {
        let (known, stamp) = read_tokens(path)?;
        tracing::info!(tokens = known.len(), path = %path.display(), "bearer tokens read");
        Ok(Self {
            path: path.to_owned(),
            known: RwLock::new((known, stamp)),
            checked: Mutex::new(Instant::now()),
        })
    }

    /// The name `token` belongs to, reading the file again first if it may have
    /// changed.
    fn name_of(&self, token: &[u8]) -> Option<Arc<str>> {
        self.recheck();
        let known = self.known.read().ok()?;
        known.0.get(token).cloned()
    }

    /// Reads the file again if [`TOKENS_RECHECK`] has passed and it has changed; a
    /// file that no longer reads or parses leaves the tokens as they were.
    fn recheck(&self) {
        let Ok(mut checked) = self.checked.try_lock() else {
            return;
        };
        if checked.elapsed() < TOKENS_RECHECK {
            return;
        }
        *checked = Instant::now();
        let stamp = std::fs::metadata(&self.path).map(|meta| stamp(&meta));
        let unchanged = match (&stamp, self.known.read()) {
            (Ok(stamp), Ok(known)) => known.1 == *stamp,
            _ => false,
        };
        if unchanged {
            return;
        }
        match read_tokens(&self.path) {
            Ok(read) => {
                tracing::info!(tokens = read.0.len(), path = %self.path.display(), "bearer tokens read again");
                if let Ok(mut known) = self.known.write() {
                    *known = read;
                }
            }
            Err(error) => {
                tracing::warn!(%error, "the token file changed but cannot be used; the tokens stay as they were");
            }
        }
    }
}

fn stamp(meta: &std::fs::Metadata) -> Stamp {
    (meta.modified().ok(), meta.len())
}

/// Reads and parses a token file.
fn read_tokens(path: &Path) -> Result<Known, AccessError> {
    let failed = |source| AccessError::TokenFile {
        path: path.to_owned(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(failed)?;
    let text = std::fs::read_to_string(path).map_err(failed)?;
    let mut known = HashMap::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |problem| AccessError::TokenLine {
            path: path.to_owned(),
            line: index + 1,
            problem,
        };
        let mut fields = line.split_whitespace();
        let (Some(name), Some(token), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(bad("expected NAME TOKEN"));
        };
        let token: Box<[u8]> = token.as_bytes().into();
        if known.insert(token, Arc::from(name)).is_some() {
            return Err(bad("a token given before"));
        }
    }
    Ok((known, stamp(&meta)))
}

/// Lets in only the calls [`Access`] admits, each with its [`CallerName`].
#[derive(Debug, Clone)]
pub(crate) struct AccessLayer(pub(crate) Arc<Access>);

impl<S> Layer<S> for AccessLayer {
    type Service = AccessCheck<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AccessCheck {
            inner,
            access: Arc::clone(&self.0),
        }
    }
}

/// The service of [`AccessLayer`].
#[derive(Debug, Clone)]
pub(crate) struct AccessCheck<S> {
    inner: S,
    access: Arc<Access>,
}

impl<S, B> Service<http::Request<B>> for AccessCheck<S>
where
    S: Service<http::Request<B>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        if !request.uri().path().starts_with(HEALTH) {
            match self.access.admit(&request) {
                Ok(Some(name)) => {
                    request.extensions_mut().insert(CallerName(name));
                }
                Ok(None) => {}
                Err(status) => {
                    return Box::pin(async move { Err(Box::new(status) as BoxError) });
                }
            }
        }
        let call = self.inner.call(request);
        Box::pin(async move { call.await.map_err(Into::into) })
    }
}
