//! Arbitrary bytes run through the whole handler path (decoding, validation, rule,
//! reply) of every RPC: a unary request must get a reply or a status other than
//! INTERNAL, a live game's or PlayMany's messages a reply each or a status, never a
//! panic. A CheckBatch request is also decoded both as the server reads it and by
//! prost's generated code, which must agree. The unary RPCs are the contract's (read
//! from its descriptor set) and the live games the registration's
//! ([`arbiter::visit_live_games`]), so a game added is fuzzed with no line here.
//!
//! The first byte picks what the rest is: `0` a unary RPC's request (the second byte
//! picks the RPC, in the contract's order), `1` PlayMany's messages, `2` a live game's
//! messages (the second byte picks the game, in the registration's order).
#![no_main]

use std::sync::LazyLock;

use arbiter::proto::arbiter_service_server::{ArbiterService, ArbiterServiceServer};
use arbiter::proto::requests::CheckBatchChecks;
use arbiter::proto::{CheckBatchRequest, PlayManyRequest, FILE_DESCRIPTOR_SET};
use arbiter::{visit_live_games, Arbiter, LiveGame, LiveGameVisitor, StreamLimits};
use futures_util::StreamExt;
use http_body_util::BodyExt;
use libfuzzer_sys::fuzz_target;
use prost::Message;
use tokio_util::sync::CancellationToken;
use tonic::codegen::Service;
use tonic::Request;

/// The path of every unary RPC of the contract, in its order.
static UNARY: LazyLock<Vec<String>> = LazyLock::new(|| {
    let set = prost_types::FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).expect("the contract");
    let mut paths = Vec::new();
    for file in set.file.iter().filter(|file| file.package() == "arbiter.v1") {
        for service in &file.service {
            for method in &service.method {
                if !method.client_streaming() && !method.server_streaming() {
                    paths.push(format!("/arbiter.v1.{}/{}", service.name(), method.name()));
                }
            }
        }
    }
    paths
});

/// The number of live games registered.
static GAMES: LazyLock<usize> = LazyLock::new(|| {
    struct Count(usize);
    impl LiveGameVisitor for Count {
        fn visit<G: LiveGame>(&mut self) {
            self.0 += 1;
        }
    }
    let mut count = Count(0);
    visit_live_games(&mut count);
    count.0
});

/// Calls the unary RPC at `path` with the request `body` through the service's own
/// server stub (tonic's decoding included): any reply, or any status but INTERNAL,
/// unless it is tonic's for a message that does not decode (which the server's
/// transport-error layer, not in this stub, turns into INVALID_ARGUMENT).
async fn unary(service: &Arbiter, path: &str, body: &[u8]) {
    let mut framed = vec![0];
    framed.extend_from_slice(&(body.len() as u32).to_be_bytes());
    framed.extend_from_slice(body);
    let request = http::Request::builder()
        .method("POST")
        .uri(path)
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(tonic::body::Body::new(http_body_util::Full::new(
            prost::bytes::Bytes::from(framed),
        )))
        .expect("a request");
    let mut server = ArbiterServiceServer::new(service.clone());
    let response = server.call(request).await.expect("a response");
    let (parts, body) = response.into_parts();
    let collected = body.collect().await.expect("a whole body");
    let trailers = collected.trailers().cloned().unwrap_or_default();
    let field = |name: &str| {
        trailers
            .get(name)
            .or_else(|| parts.headers.get(name))
            .map(|value| value.to_str().unwrap_or("?").replace("%20", " "))
    };
    if field("grpc-status").as_deref() == Some("13") {
        let message = field("grpc-message").unwrap_or_default();
        assert!(
            message.starts_with("failed to decode Protobuf message"),
            "INTERNAL from {path}: {message}"
        );
    }
}

/// Plays one live game of kind `G` whose messages are `body`, length-delimited, through
/// the service's stream with a small message limit: every message gets a reply or the
/// stream ends with a status, never a panic. A setup may put the game on a clock (any
/// time control and clock the bytes make): then one more reply may announce its loss
/// on time, before the reply to a message that came too late.
async fn play<G: LiveGame>(body: &[u8]) {
    let mut messages = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        match G::Request::decode_length_delimited(&mut rest) {
            Ok(request) => messages.push(Ok(request)),
            Err(_) => break,
        }
    }
    let sent = messages.len();
    let limits = StreamLimits {
        max_unapplied: 12,
        ..StreamLimits::default()
    };
    let service = Arbiter::new(limits, CancellationToken::new());
    let replies: Vec<_> = service
        .open_game::<G, _>(futures_util::stream::iter(messages))
        .collect()
        .await;
    assert!(replies.len() <= sent + 1);
    // Every written reply decodes: a reply that does not is an INTERNAL item.
    assert!(replies
        .iter()
        .all(|reply| reply.as_ref().err().is_none_or(|status| status.code() != tonic::Code::Internal)));
}

/// Plays a PlayMany stream whose messages are `body`, length-delimited, with small
/// limits: every message gets a reply (one state per action) or the stream ends with a
/// status, and every game is freed when the stream ends.
async fn play_many(body: &[u8]) {
    let mut messages = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        match PlayManyRequest::decode_length_delimited(&mut rest) {
            Ok(request) => messages.push(request),
            Err(_) => break,
        }
    }
    let limits = StreamLimits {
        max_unapplied: 12,
        max_games_per_stream: 64,
        max_live_games: 128,
        ..StreamLimits::default()
    };
    let service = Arbiter::new(limits, CancellationToken::new());
    let actions: Vec<usize> = messages.iter().map(|m| m.actions.len()).collect();
    let replies: Vec<_> = service
        .open_many(futures_util::stream::iter(messages.into_iter().map(Ok)))
        .collect()
        .await;
    // One reply a message, and the announcements of games whose clocks ran out, each
    // marked unprompted, before the reply to a message that came after their deadline.
    let answered: Vec<_> = replies
        .iter()
        .flatten()
        .map(|reply| reply.to_response().expect("a PlayMany reply decodes"))
        .filter(|reply| !reply.unprompted)
        .collect();
    assert!(answered.len() <= actions.len());
    for (reply, actions) in answered.iter().zip(actions) {
        assert_eq!(reply.states.len(), actions);
    }
    assert_eq!(service.live_games().count(), 0);
}

/// Decodes `body` both as the server reads a CheckBatch request and as prost's
/// generated code does, which must agree, then answers it: one result a check.
async fn check_batch(service: &Arbiter, body: &[u8]) {
    let read = CheckBatchChecks::decode(body);
    match (&read, CheckBatchRequest::decode(body)) {
        (Ok(read), Ok(prost)) => assert_eq!(CheckBatchRequest::from(read.clone()), prost),
        (Err(ours), Err(prost)) => assert_eq!(ours.to_string(), prost.to_string()),
        (ours, prost) => panic!("ours {ours:?}, prost's {prost:?}"),
    }
    if let Ok(request) = read {
        let checks = request.len();
        if let Ok(reply) = service.check_batch(Request::new(request)).await {
            let reply = reply.into_inner().to_response();
            let reply = reply.expect("a CheckBatch reply decodes");
            assert_eq!(reply.results.len(), checks);
        }
    }
}

/// Plays the live game of the registration's `index` with the messages `body`.
struct PlayNth<'a> {
    index: usize,
    body: &'a [u8],
    runtime: &'a tokio::runtime::Runtime,
}

impl LiveGameVisitor for PlayNth<'_> {
    fn visit<G: LiveGame>(&mut self) {
        if self.index == 0 {
            self.runtime.block_on(play::<G>(self.body));
        }
        self.index = self.index.wrapping_sub(1);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, body)) = data.split_first() else {
        return;
    };
    // tokio's clock stopped: a game on a clock that runs for hours ends at once once
    // nothing else is left to do, as the clock moves on to its deadline.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    let service = Arbiter::default();
    let (pick, rest) = body.split_first().map_or((0, body), |(&pick, rest)| (pick, rest));
    match kind % 3 {
        0 => {
            let path = &UNARY[usize::from(pick) % UNARY.len()];
            runtime.block_on(async {
                if path.ends_with("/CheckBatch") {
                    check_batch(&service, rest).await;
                }
                unary(&service, path, rest).await;
            });
        }
        1 => runtime.block_on(play_many(body)),
        _ => visit_live_games(&mut PlayNth {
            index: usize::from(pick) % *GAMES,
            body: rest,
            runtime: &runtime,
        }),
    }
});
