//! Tower layers of Arbiter's own around the transport (the call metrics layer lives in
//! [`crate::telemetry`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes};
use http_body::{Body, Frame, SizeHint};
use tonic::codegen::http;
use tonic::{Code, Status};
use tower::{BoxError, Layer, Service};

use crate::access::{CallerName, HEALTH};
use crate::connections::{Caller, Peer};
use crate::glue::error::{CallLimit, Holder, ServiceError};
use crate::service::play::take_place as take;
use crate::telemetry::grpc_code;
use crate::unread::Overrun;

/// Rewrites a trailers-only error reply of the transport into Arbiter's status for it
/// (see [`ServiceError::from_transport`]); every other reply passes unchanged.
pub(crate) fn rewrite_transport_error<B>(mut response: http::Response<B>) -> http::Response<B> {
    // A reply with no status in its headers (every answer with a message) or an OK one
    // has nothing to rewrite: only errors pay for parsing the whole status.
    if grpc_code(response.headers()).is_none_or(|code| code == Code::Ok) {
        return response;
    }
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

/// Lets tonic compress a reply only when its request came compressed, and then with the
/// request's own encoding (what grpc-go's server does).
///
/// Tonic, given `send_compressed`, compresses every reply whose request lists an enabled
/// encoding in `grpc-accept-encoding`, and picks the first one listed, whatever the
/// request itself used; grpcio and grpc-go list theirs on every call, compressed or not.
/// Most replies are tens of bytes, which compression makes longer and slower. So a
/// request without `grpc-encoding` (or with `identity`) loses its
/// `grpc-accept-encoding`, and tonic replies plain; a compressed one keeps only its own
/// encoding there, if it listed it, and tonic replies in that encoding.
pub(crate) fn reply_encoding_follows_request<B>(mut request: http::Request<B>) -> http::Request<B> {
    const ENCODING: http::HeaderName = http::HeaderName::from_static("grpc-encoding");
    const ACCEPT: http::HeaderName = http::HeaderName::from_static("grpc-accept-encoding");
    let headers = request.headers_mut();
    let sent = headers
        .get(ENCODING)
        .filter(|encoding| encoding.as_bytes() != b"identity")
        .filter(|encoding| {
            headers.get_all(ACCEPT).iter().any(|accepted| {
                accepted
                    .as_bytes()
                    .split(|&byte| byte == b',')
                    .any(|listed| listed.trim_ascii() == encoding.as_bytes())
            })
        })
        .cloned();
    match sent {
        Some(encoding) => {
            headers.insert(ACCEPT, encoding);
        }
        None => {
            headers.remove(ACCEPT);
        }
    }
    request
}

/// Refuses calls beyond `limit` in flight across the server at once with
/// RESOURCE_EXHAUSTED, rather than queueing them (`--max-in-flight`; what it counts is
/// explained once, in RELIABILITY.md, "Calls in flight"), and beyond each connection's
/// and each caller's share of them (`--max-in-flight-per-connection`, `-per-caller`), so
/// that one client cannot hold every place. A unary call takes its place with its first
/// message (a call whose client sends only its headers holds none, and waits for
/// `--request-timeout` at most); a stream (a live game) with its headers, and its
/// reply's come at once. Health checks are neither counted nor refused: a limit meant for
/// work must not fail the probes that keep the server in rotation (or alive, to
/// Kubernetes).
///
/// It also holds each connection and caller to its budget of reply bytes not yet taken
/// ([`crate::unread`]): no new call while at it, and each reply's bytes counted as they
/// are made ([`Metered`]), a reply past it dropped and its call answered
/// RESOURCE_EXHAUSTED.
#[derive(Debug, Clone)]
pub(crate) struct InFlightLimitLayer {
    limits: InFlightLimits,
    in_flight: Arc<AtomicUsize>,
}

/// The limit on calls in flight and its shares.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InFlightLimits {
    /// Across the server.
    pub(crate) server: usize,
    /// On one connection.
    pub(crate) connection: usize,
    /// For one caller, over all its connections.
    pub(crate) caller: usize,
    /// Calls a second one caller may make; zero: no quota.
    pub(crate) calls_per_second: u32,
}

impl InFlightLimitLayer {
    /// Within `limits` (each at least 1).
    pub(crate) fn new(limits: InFlightLimits) -> Self {
        Self {
            limits: InFlightLimits {
                server: limits.server.max(1),
                connection: limits.connection.max(1),
                caller: limits.caller.max(1),
                calls_per_second: limits.calls_per_second,
            },
            in_flight: Arc::default(),
        }
    }
}

impl<S> Layer<S> for InFlightLimitLayer {
    type Service = InFlightLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        InFlightLimit {
            inner,
            limits: self.limits,
            in_flight: Arc::clone(&self.in_flight),
        }
    }
}

/// The service of [`InFlightLimitLayer`].
#[derive(Debug, Clone)]
pub(crate) struct InFlightLimit<S> {
    inner: S,
    limits: InFlightLimits,
    in_flight: Arc<AtomicUsize>,
}

/// The path prefix of the live-game calls (Play*, PlayMany), whose games count in their
/// connection's and caller's shares (`GameHolder`, put in their extensions here).
const LIVE_GAMES: &str = "/arbiter.v1.ArbiterService/Play";

/// The path prefix of Arbiter's own calls: those that are not live games are unary, and
/// take their place with their first message.
const ARBITER: &str = "/arbiter.v1.ArbiterService/";

impl<S, B, RB> Service<http::Request<B>> for InFlightLimit<S>
where
    S: Service<http::Request<Replayed<B>>, Response = http::Response<RB>> + Clone,
    S::Error: Into<BoxError>,
    B: Body<Data = Bytes> + Unpin,
    RB: Body<Data = Bytes> + Unpin,
{
    type Response = http::Response<Metered<RB>>;
    type Error = BoxError;
    type Future = InFlightFuture<S::Future, S, B>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let peer = Peer::of(&request).cloned();
        if let Some(peer) = &peer {
            peer.called();
        }
        let path = request.uri().path();
        if path.starts_with(HEALTH) {
            return InFlightFuture::Exempt {
                inner: self.inner.call(request.map(Replayed::new)),
                meter: peer.map(|peer| Meter {
                    caller: peer.caller(None),
                    peer,
                    always: true,
                }),
            };
        }
        let live = path.starts_with(LIVE_GAMES);
        let unary = !live && path.starts_with(ARBITER);
        let mut meter = None;
        let claimant = match peer {
            Some(peer) => {
                let name = request.extensions().get::<CallerName>();
                let caller = peer.caller(name.map(|name| &name.0));
                if let Some(overrun) = peer.unread_overrun(&caller) {
                    return InFlightFuture::Refused {
                        refusal: unread_refusal(overrun, caller.label()),
                    };
                }
                let rate = self.limits.calls_per_second;
                if rate > 0 && !caller.within_quota(rate) {
                    return InFlightFuture::Refused {
                        refusal: CallLimit::Quota {
                            caller: caller.label(),
                            rate,
                        },
                    };
                }
                if live {
                    request.extensions_mut().insert(peer.game_holder(&caller));
                }
                meter = Some(Meter {
                    peer: peer.clone(),
                    caller: Arc::clone(&caller),
                    always: false,
                });
                Some((peer, caller))
            }
            None => None,
        };
        let claim = Claim {
            limits: self.limits,
            server: Arc::clone(&self.in_flight),
            claimant,
        };
        if unary {
            // Nearly always the message came with the headers: it is there to take
            // (polled without a waker: one that is not is polled again by the future).
            let mut nobody = Context::from_waker(std::task::Waker::noop());
            if let Poll::Ready(first) = Pin::new(request.body_mut()).poll_frame(&mut nobody) {
                return InFlightFuture::admit(&mut self.inner, request, Some(first), claim, meter);
            }
            // Else the call is made once its first message has come: the service that
            // will make it is taken now, ready, and a clone left in its place.
            let ready = self.inner.clone();
            return InFlightFuture::Waiting {
                waiting: Some(Waiting {
                    service: std::mem::replace(&mut self.inner, ready),
                    request,
                    claim,
                    meter,
                }),
            };
        }
        InFlightFuture::admit(&mut self.inner, request, None, claim, meter)
    }
}

/// What a call needs to take its place: the limits, the server's count, and the
/// connection and caller it would be counted for.
#[derive(Debug)]
pub(crate) struct Claim {
    limits: InFlightLimits,
    server: Arc<AtomicUsize>,
    /// The connection and caller whose shares the place is taken in, when known.
    claimant: Option<(Peer, Arc<Caller>)>,
}

impl Claim {
    /// A place in the caller's share, the connection's and the server's, or the limit
    /// that refuses one.
    fn admit(self) -> Result<Place, CallLimit> {
        let Self {
            limits,
            server,
            claimant,
        } = self;
        // Each counted in turn, so that dropping a `PeerPlace` never gives back what
        // was not taken.
        let held = match claimant {
            Some((peer, caller)) => {
                if !take(caller.in_flight(), limits.caller) {
                    return Err(CallLimit::InFlight {
                        holder: Some(Holder::Caller(caller.label())),
                        limit: limits.caller,
                    });
                }
                if !take(peer.in_flight(), limits.connection) {
                    caller.in_flight().fetch_sub(1, Ordering::AcqRel);
                    return Err(CallLimit::InFlight {
                        holder: Some(Holder::Connection),
                        limit: limits.connection,
                    });
                }
                Some(PeerPlace { peer, caller })
            }
            None => None,
        };
        if !take(&server, limits.server) {
            drop(held);
            return Err(CallLimit::InFlight {
                holder: None,
                limit: limits.server,
            });
        }
        Ok(Place {
            server,
            _held: held,
        })
    }
}

/// A unary call waiting for its first message before it takes a place and is made.
#[derive(Debug)]
pub(crate) struct Waiting<S, B> {
    service: S,
    request: http::Request<B>,
    claim: Claim,
    meter: Option<Meter>,
}

/// A place among the calls in flight, given back when dropped.
#[derive(Debug)]
pub(crate) struct Place {
    server: Arc<AtomicUsize>,
    _held: Option<PeerPlace>,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.server.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A place in a connection's and its caller's shares, given back when dropped.
#[derive(Debug)]
pub(crate) struct PeerPlace {
    peer: Peer,
    caller: Arc<Caller>,
}

impl Drop for PeerPlace {
    fn drop(&mut self) {
        self.peer.in_flight().fetch_sub(1, Ordering::AcqRel);
        self.caller.in_flight().fetch_sub(1, Ordering::AcqRel);
    }
}

/// The status of a call a limit refused.
fn refused(limit: CallLimit) -> Status {
    Status::from(ServiceError::OverLimit(limit))
}

/// The refusal of a budget of unread reply bytes, for a caller named `caller`.
fn unread_refusal(overrun: Overrun, caller: Option<Arc<str>>) -> CallLimit {
    let (holder, limit) = match overrun {
        Overrun::Server(limit) => (None, limit),
        Overrun::Connection(limit) => (Some(Holder::Connection), limit),
        Overrun::Caller(limit) => (Some(Holder::Caller(caller)), limit),
    };
    CallLimit::Unread { holder, limit }
}

pin_project_lite::pin_project! {
    /// The reply of a call [`InFlightLimit`] admitted, holding its place, or its refusal.
    #[project = InFlightProjection]
    pub(crate) enum InFlightFuture<F, S, B> {
        /// A unary call until its first message comes (or its request ends without one).
        Waiting {
            waiting: Option<Waiting<S, B>>,
        },
        /// Admitted: the inner call, the place it holds until its reply is ready, and how
        /// its reply's bytes are counted.
        Admitted {
            #[pin]
            inner: F,
            place: Place,
            meter: Option<Meter>,
        },
        /// Refused: a limit was reached.
        Refused {
            refusal: CallLimit,
        },
        /// A health check: neither counted nor refused (its reply's bytes are counted).
        Exempt {
            #[pin]
            inner: F,
            meter: Option<Meter>,
        },
    }
}

impl<S, B, RB> InFlightFuture<S::Future, S, B>
where
    S: Service<http::Request<Replayed<B>>, Response = http::Response<RB>>,
    B: Body<Data = Bytes> + Unpin,
{
    /// The call of `request` made by `service` once `claim` has its place (its body's
    /// `first` frame given again first, if it was polled), or its refusal.
    #[inline]
    fn admit(
        service: &mut S,
        request: http::Request<B>,
        first: Option<Option<Result<Frame<Bytes>, B::Error>>>,
        claim: Claim,
        meter: Option<Meter>,
    ) -> Self {
        match claim.admit() {
            Ok(place) => Self::Admitted {
                inner: service.call(request.map(|inner| Replayed { first, inner })),
                place,
                meter,
            },
            Err(refusal) => Self::Refused { refusal },
        }
    }

    /// Polls a waiting call's request for its first frame: once it has come (or the
    /// request has ended), the call admitted and made, or refused.
    fn poll_first(waiting: &mut Option<Waiting<S, B>>, cx: &mut Context<'_>) -> Poll<Self> {
        // `None` never: the state is replaced as soon as its call is taken.
        let Some(call) = waiting else {
            return Poll::Pending;
        };
        let first = std::task::ready!(Pin::new(call.request.body_mut()).poll_frame(cx));
        let Some(Waiting {
            mut service,
            request,
            claim,
            meter,
        }) = waiting.take()
        else {
            return Poll::Pending;
        };
        Poll::Ready(Self::admit(
            &mut service,
            request,
            Some(first),
            claim,
            meter,
        ))
    }
}

impl<S, B, RB, E> Future for InFlightFuture<S::Future, S, B>
where
    S: Service<http::Request<Replayed<B>>, Response = http::Response<RB>, Error = E>,
    E: Into<BoxError>,
    B: Body<Data = Bytes> + Unpin,
    RB: Body<Data = Bytes> + Unpin,
{
    type Output = Result<http::Response<Metered<RB>>, BoxError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let (inner, meter) = match self.as_mut().project() {
                InFlightProjection::Admitted { inner, meter, .. }
                | InFlightProjection::Exempt { inner, meter } => (inner, meter),
                InFlightProjection::Refused { refusal } => {
                    return Poll::Ready(Err(Box::new(refused(refusal.clone()))))
                }
                InFlightProjection::Waiting { waiting } => {
                    let made = std::task::ready!(Self::poll_first(waiting, cx));
                    self.set(made);
                    continue;
                }
            };
            let response = std::task::ready!(inner.poll(cx)).map_err(Into::into)?;
            return Poll::Ready(Ok(response.map(|body| Metered::new(body, meter.take()))));
        }
    }
}

pin_project_lite::pin_project! {
    /// A request's body with its first frame (or error, or end), polled before the call
    /// was made to see that a message had come, given again first.
    pub(crate) struct Replayed<B: Body> {
        first: Option<Option<Result<Frame<B::Data>, B::Error>>>,
        #[pin]
        inner: B,
    }
}

impl<B: Body> Replayed<B> {
    /// `inner`, none of it polled yet.
    fn new(inner: B) -> Self {
        Self { first: None, inner }
    }
}

impl<B: Body> Body for Replayed<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = self.project();
        if this.first.is_none() {
            return this.inner.poll_frame(cx);
        }
        Poll::Ready(this.first.take().flatten())
    }

    fn is_end_stream(&self) -> bool {
        match &self.first {
            Some(first) => first.is_none(),
            None => self.inner.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        let first = match &self.first {
            Some(Some(Ok(frame))) => frame.data_ref().map_or(0, |data| data.remaining()),
            _ => 0,
        };
        let inner = self.inner.size_hint();
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower().saturating_add(first as u64));
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper.saturating_add(first as u64));
        }
        hint
    }
}

/// How a reply's bytes are counted: on its connection, for its caller; `always`: past
/// the budgets too (health replies).
#[derive(Debug)]
pub(crate) struct Meter {
    peer: Peer,
    caller: Arc<Caller>,
    always: bool,
}

/// A reply body whose DATA is counted as unread reply bytes ([`crate::unread`]) as it is
/// made; DATA past a budget is dropped and the reply ends with RESOURCE_EXHAUSTED in its
/// trailers instead. hyper takes a reply's first frame as soon as the reply is ready,
/// before its client's window has room, and holds it until there is: a unary reply is
/// counted from the moment it is made. What the transport took and never sent (its
/// stream ended first) is counted off when it is dropped.
///
/// Its state is boxed, so that the reply it wraps, moved through every layer, grows by
/// a pointer only.
#[derive(Debug)]
pub(crate) struct Metered<B> {
    inner: B,
    metering: Option<Box<Metering>>,
}

/// What [`Metered`] knows of its reply.
#[derive(Debug)]
struct Metering {
    meter: Meter,
    /// The DATA last given to the transport, until it asks again (it has handed the
    /// DATA to h2 to send by then).
    unsent: usize,
    done: bool,
}

impl<B> Metered<B> {
    fn new(inner: B, meter: Option<Meter>) -> Self {
        Self {
            inner,
            metering: meter.map(|meter| {
                Box::new(Metering {
                    meter,
                    unsent: 0,
                    done: false,
                })
            }),
        }
    }
}

impl Metering {
    /// `frame`, counted if DATA; or, when it is past a budget, the trailers that end the
    /// reply in its place.
    fn count(&self, frame: Frame<Bytes>) -> Result<Frame<Bytes>, http::HeaderMap> {
        let Some(data) = frame.data_ref() else {
            return Ok(frame);
        };
        let meter = &self.meter;
        match meter
            .peer
            .charge_reply(&meter.caller, data.len(), meter.always)
        {
            Ok(()) => Ok(frame),
            Err(overrun) => {
                let status = refused(unread_refusal(overrun, meter.caller.label()));
                let mut trailers = status.into_http::<()>().into_parts().0.headers;
                trailers.remove(http::header::CONTENT_TYPE);
                Err(trailers)
            }
        }
    }
}

impl<B> Body for Metered<B>
where
    B: Body<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        let Some(metering) = &mut this.metering else {
            return Pin::new(&mut this.inner).poll_frame(cx);
        };
        metering.unsent = 0;
        if metering.done {
            return Poll::Ready(None);
        }
        let frame = match std::task::ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => metering.count(frame),
            other => {
                metering.done = other.is_none();
                return Poll::Ready(other);
            }
        };
        match frame {
            Ok(frame) => {
                metering.unsent = frame.data_ref().map_or(0, Bytes::len);
                Poll::Ready(Some(Ok(frame)))
            }
            Err(trailers) => {
                metering.done = true;
                Poll::Ready(Some(Ok(Frame::trailers(trailers))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.metering {
            Some(metering) => metering.done || self.inner.is_end_stream(),
            None => self.inner.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl<B> Drop for Metered<B> {
    fn drop(&mut self) {
        if let Some(metering) = self
            .metering
            .as_ref()
            .filter(|metering| metering.unsent > 0)
        {
            metering.meter.peer.replies_dropped(metering.unsent);
        }
    }
}

/// Ends a call that has not produced its reply headers within `limit` of its start with
/// CANCELLED "Timeout expired" (tonic's own status for its timeout), so that a client
/// that sends a unary call's headers, or its first message, but never the rest cannot
/// hold the call (or its place among those in flight) for long.
/// The timer is armed only when the call first has to wait: a call whose request was
/// already in when its handler ran (nearly every unary call) never touches the timer
/// wheel. A client's shorter `grpc-timeout` is tonic's to enforce. A zero limit is none.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DeadlineLayer {
    limit: Duration,
}

impl DeadlineLayer {
    /// Calls end after `limit`; never, if it is zero.
    pub(crate) fn new(limit: Duration) -> Self {
        Self { limit }
    }
}

impl<S> Layer<S> for DeadlineLayer {
    type Service = Deadline<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Deadline {
            inner,
            limit: self.limit,
        }
    }
}

/// The service of [`DeadlineLayer`].
#[derive(Debug, Clone)]
pub(crate) struct Deadline<S> {
    inner: S,
    limit: Duration,
}

impl<S, R> Service<R> for Deadline<S>
where
    S: Service<R>,
    S::Error: Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = DeadlineFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: R) -> Self::Future {
        DeadlineFuture {
            inner: self.inner.call(request),
            ends: (!self.limit.is_zero()).then(|| tokio::time::Instant::now() + self.limit),
            timer: None,
        }
    }
}

pin_project_lite::pin_project! {
    /// A call's reply, or CANCELLED once its deadline has passed.
    pub(crate) struct DeadlineFuture<F> {
        #[pin]
        inner: F,
        // `None`: no deadline.
        ends: Option<tokio::time::Instant>,
        // Armed at the first wait only.
        timer: Option<Pin<Box<tokio::time::Sleep>>>,
    }
}

impl<F, T, E> Future for DeadlineFuture<F>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
{
    type Output = Result<T, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(result) = this.inner.poll(cx) {
            return Poll::Ready(result.map_err(Into::into));
        }
        let Some(ends) = *this.ends else {
            return Poll::Pending;
        };
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(ends)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Box::new(Status::cancelled("Timeout expired")))),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use tonic::codec::Codec;
    use tonic::Code;

    use super::*;
    use crate::proto;

    /// The limit refuses the call past it at once with RESOURCE_EXHAUSTED, and a place
    /// freed (its reply ready, or the call dropped) admits the next one. A unary call
    /// takes its place with its first message, not its headers.
    #[tokio::test]
    async fn calls_past_the_limit_are_refused_until_a_place_is_freed() {
        use http_body_util::{Full, StreamBody};
        use tower::ServiceExt;

        type Request = http::Request<Replayed<http_body_util::Either<Full<Bytes>, Silent>>>;
        type Silent = StreamBody<futures_util::stream::Pending<Result<Frame<Bytes>, BoxError>>>;
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let released = Arc::new(std::sync::Mutex::new(Some(released)));
        let inner = tower::service_fn(move |_: Request| {
            let wait = released.lock().unwrap().take();
            async move {
                if let Some(wait) = wait {
                    let _ = wait.await;
                }
                let mut answered = http::Response::new(http_body_util::Empty::<Bytes>::new());
                answered
                    .headers_mut()
                    .insert("answered", http::HeaderValue::from_static("yes"));
                Ok::<_, BoxError>(answered)
            }
        });
        let message = || http_body_util::Either::Left(Full::new(Bytes::from_static(b"\0\0\0\0\0")));
        let call = |path: &str| http::Request::post(path).body(message()).unwrap();
        let work = || call("/arbiter.v1.ArbiterService/CheckConnectFour");
        let mut limited = InFlightLimitLayer::new(InFlightLimits {
            server: 1,
            connection: 1,
            caller: 1,
            calls_per_second: 0,
        })
        .layer(inner);
        // Calls whose message never comes take no place.
        let silent = |path: &str| {
            let body = StreamBody::new(futures_util::stream::pending());
            http::Request::post(path)
                .body(http_body_util::Either::Right(body))
                .unwrap()
        };
        let mut waiting = Vec::new();
        for _ in 0..3 {
            let mut call = Box::pin(
                limited
                    .ready()
                    .await
                    .unwrap()
                    .call(silent("/arbiter.v1.ArbiterService/CheckConnectFour")),
            );
            assert!(futures_util::poll!(&mut call).is_pending());
            waiting.push(call);
        }
        let mut first = Box::pin(limited.ready().await.unwrap().call(work()));
        assert!(futures_util::poll!(&mut first).is_pending());
        let refused = limited
            .ready()
            .await
            .unwrap()
            .call(work())
            .await
            .unwrap_err();
        let status = refused.downcast_ref::<Status>().expect("a Status");
        assert_eq!(status.code(), Code::ResourceExhausted);
        assert!(
            status.message().contains("limit of 1 calls in flight"),
            "{status:?}"
        );
        // A health check is let by, though the only place is held.
        let health = call("/grpc.health.v1.Health/Check");
        assert!(limited.ready().await.unwrap().call(health).await.is_ok());

        release.send(()).unwrap();
        assert!(first.await.unwrap().headers().contains_key("answered"));
        let again = limited.ready().await.unwrap().call(work()).await;
        assert!(again.unwrap().headers().contains_key("answered"));
        // A call dropped before its reply gives its place back too.
        drop(limited.ready().await.unwrap().call(work()));
        assert!(limited.ready().await.unwrap().call(work()).await.is_ok());
        drop(waiting);
    }

    /// Which of ArbiterService's calls wait for their first message is told by their path
    /// alone: every stream's name starts with "Play" (they take their place with their
    /// headers, and their reply's headers come at once), and no unary call's does. Fails
    /// when the contract gains a stream named otherwise, whose clients would wait for
    /// headers that wait for their first message.
    #[test]
    fn the_streams_are_told_apart_by_their_path() {
        use prost::Message;

        let set = prost_types::FileDescriptorSet::decode(proto::FILE_DESCRIPTOR_SET).unwrap();
        let mut calls = 0;
        for file in &set.file {
            for service in &file.service {
                for method in &service.method {
                    let path = format!("/{}.{}/{}", file.package(), service.name(), method.name());
                    let stream = method.client_streaming() || method.server_streaming();
                    if service.name() == "ArbiterService" {
                        calls += 1;
                        assert!(path.starts_with(ARBITER), "{path}");
                    }
                    assert_eq!(path.starts_with(LIVE_GAMES), stream, "{path}");
                }
            }
        }
        assert!(calls > 10, "{calls} calls of ArbiterService");
    }

    /// A call that answers at once arms no timer and is not cut; one that waits past
    /// the deadline ends with CANCELLED "Timeout expired".
    #[tokio::test(start_paused = true)]
    async fn a_call_past_its_deadline_is_cancelled() {
        use tower::ServiceExt;

        let inner = tower::service_fn(|wait: Duration| async move {
            tokio::time::sleep(wait).await;
            Ok::<_, BoxError>("answered")
        });
        let mut limited = DeadlineLayer::new(Duration::from_secs(10)).layer(inner);
        let quick = limited.ready().await.unwrap().call(Duration::ZERO);
        assert_eq!(quick.await.unwrap(), "answered");
        let in_time = limited.ready().await.unwrap().call(Duration::from_secs(9));
        assert_eq!(in_time.await.unwrap(), "answered");
        let late = limited.ready().await.unwrap().call(Duration::from_secs(11));
        let started = tokio::time::Instant::now();
        let error = late.await.unwrap_err();
        assert_eq!(started.elapsed(), Duration::from_secs(10));
        let status = error.downcast_ref::<Status>().expect("a Status");
        assert_eq!(status.code(), Code::Cancelled);
        assert_eq!(status.message(), "Timeout expired");

        // A zero limit is none: an hour's wait is answered.
        let mut unlimited = DeadlineLayer::new(Duration::ZERO).layer(inner);
        let slow = unlimited
            .ready()
            .await
            .unwrap()
            .call(Duration::from_secs(3600));
        assert_eq!(slow.await.unwrap(), "answered");
    }

    /// Tonic's own decoder, fed a frame longer than the limit: the status it raises must
    /// still be the one [`ServiceError::from_transport`] recognises. If tonic's wording
    /// changes, this fails, and the rewrite to RESOURCE_EXHAUSTED would silently stop.
    #[tokio::test]
    async fn tonics_refusal_of_an_oversized_message_is_recognised() {
        let mut codec = tonic_prost::ProstCodec::<proto::Board, proto::Board>::default();
        // A frame header announcing 100 bytes, against a limit of 10.
        let frame = Bytes::from_static(&[0, 0, 0, 0, 100]);
        let body = tonic::body::Body::new(http_body_util::Full::new(frame));
        let mut messages = tonic::Streaming::new_request(codec.decoder(), body, None, Some(10));
        let status = messages.message().await.unwrap_err();
        let error = ServiceError::from_transport(&status);
        assert!(
            matches!(error, Some(ServiceError::RequestTooLarge { .. })),
            "tonic now refuses an oversized message with {status:?}: update \
             ServiceError::from_transport"
        );

        let mut headers = http::HeaderMap::new();
        status.add_header(&mut headers).unwrap();
        let mut response = http::Response::new(());
        *response.headers_mut() = headers;
        let rewritten = rewrite_transport_error(response);
        let status = Status::from_header_map(rewritten.headers()).unwrap();
        assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
        assert_eq!(
            status.message(),
            "the request is 100 bytes; the server accepts at most 10 (--max-request-bytes)"
        );
    }

    /// The same for a compressed message that inflates past the limit.
    #[tokio::test]
    async fn tonics_refusal_of_a_message_that_inflates_too_far_is_recognised() {
        use std::io::Write;

        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gzip.write_all(&[b'x'; 1000]).unwrap();
        let compressed = gzip.finish().unwrap();
        let mut frame = vec![1];
        frame.extend_from_slice(&u32::try_from(compressed.len()).unwrap().to_be_bytes());
        frame.extend_from_slice(&compressed);
        let mut codec = tonic_prost::ProstCodec::<proto::Board, proto::Board>::default();
        let body = tonic::body::Body::new(http_body_util::Full::new(Bytes::from(frame)));
        let mut messages = tonic::Streaming::new_request(
            codec.decoder(),
            body,
            Some(tonic::codec::CompressionEncoding::Gzip),
            // Over the 35 bytes sent, under the 1000 they inflate to.
            Some(100),
        );
        let status = messages.message().await.unwrap_err();
        let error = ServiceError::from_transport(&status);
        assert_eq!(
            error,
            Some(ServiceError::RequestTooLarge {
                bytes: None,
                limit: 100
            }),
            "tonic now refuses a message that inflates too far with {status:?}: update \
             ServiceError::from_transport"
        );
        assert_eq!(
            Status::from(error.unwrap()).message(),
            "the request inflates to more than 100 bytes; the server accepts at most 100 \
             (--max-request-bytes)"
        );
    }

    /// The same for bytes that are not a protobuf message: tonic's INTERNAL becomes
    /// INVALID_ARGUMENT with prost's account of the problem.
    #[tokio::test]
    async fn tonics_refusal_of_an_undecodable_message_is_recognised() {
        let mut codec = tonic_prost::ProstCodec::<proto::Board, proto::Board>::default();
        // Field 1 (rows) as a length of 5 with 1 byte after it.
        let frame = Bytes::from_static(&[0, 0, 0, 0, 3, 0x0a, 5, b'.']);
        let body = tonic::body::Body::new(http_body_util::Full::new(frame));
        let mut messages = tonic::Streaming::new_request(codec.decoder(), body, None, None);
        let status = messages.message().await.unwrap_err();
        let error = ServiceError::from_transport(&status);
        assert!(
            matches!(error, Some(ServiceError::Undecodable { .. })),
            "tonic now refuses an undecodable message with {status:?}: update \
             ServiceError::from_transport"
        );
        let status = Status::from(error.unwrap());
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(
            status
                .message()
                .starts_with("the request is not a valid protobuf message of this RPC: "),
            "{status:?}"
        );
    }

    /// A reply may be compressed only in the encoding its request came in, and only if
    /// the client accepts that encoding.
    #[test]
    fn the_accepted_encodings_are_cut_to_the_requests_own() {
        let accepted = |encoding: Option<&str>, accept: Option<&str>| {
            let mut request = http::Request::new(());
            if let Some(encoding) = encoding {
                request
                    .headers_mut()
                    .insert("grpc-encoding", encoding.parse().unwrap());
            }
            if let Some(accept) = accept {
                request
                    .headers_mut()
                    .insert("grpc-accept-encoding", accept.parse().unwrap());
            }
            let request = reply_encoding_follows_request(request);
            request
                .headers()
                .get("grpc-accept-encoding")
                .map(|value| value.to_str().unwrap().to_owned())
        };
        // grpcio's list, on every call.
        let grpcio = Some("identity, deflate, gzip");
        assert_eq!(accepted(None, grpcio), None);
        assert_eq!(accepted(Some("identity"), grpcio), None);
        assert_eq!(accepted(Some("gzip"), grpcio).as_deref(), Some("gzip"));
        assert_eq!(
            accepted(Some("deflate"), grpcio).as_deref(),
            Some("deflate")
        );
        assert_eq!(accepted(Some("zstd"), grpcio), None);
        assert_eq!(accepted(Some("zstd"), None), None);
        assert_eq!(accepted(Some("gzip"), Some("gzipx,zstd")), None);
    }
}
