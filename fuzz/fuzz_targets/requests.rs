//! Arbitrary bytes decoded as each request message and run through the whole handler
//! path (validation, rule, reply): a decoded message must get a reply or a status, never
//! a panic. A CheckBatch request is also decoded both as the server reads it and by
//! prost's generated code, which must agree.
#![no_main]

use arbiter::proto::arbiter_service_server::ArbiterService;
use arbiter::proto::requests::CheckBatchChecks;
use arbiter::proto::{CheckBatchRequest, PlayManyRequest};
use arbiter::rules::{connect_four, othello, tic_tac_toe};
use arbiter::Arbiter;
use arbiter::{LiveGame, StreamLimits};
use futures_util::StreamExt;
use libfuzzer_sys::fuzz_target;
use prost::Message;
use tokio_util::sync::CancellationToken;
use tonic::Request;

/// Plays one live game of kind `G` whose messages are `body`, length-delimited, through
/// the service's stream with a small message limit: every message gets a reply or the
/// stream ends with a status, never a panic. A setup may put the game on a clock (any
/// time control and clock the bytes make): then one more reply may announce its loss
/// on time, before the reply to a message that came too late.
async fn play<G>(body: &[u8])
where
    G: LiveGame,
    G::Request: Message + Default,
{
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
        .expect("room for one game")
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

/// Decodes `body` as a unary RPC's request and, when it decodes, makes the call: any
/// reply or status will do, never a panic.
async fn unary<R, F>(body: &[u8], call: impl FnOnce(Request<R>) -> F)
where
    R: Message + Default,
    F: std::future::Future,
{
    if let Ok(request) = R::decode(body) {
        let _ = call(Request::new(request)).await;
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
    runtime.block_on(async {
        match kind % 9 {
            0 => unary(body, |request| service.check_othello_move(request)).await,
            1 => unary(body, |request| service.list_othello_moves(request)).await,
            2 => unary(body, |request| service.check_connect_four(request)).await,
            3 => unary(body, |request| service.judge_tic_tac_toe(request)).await,
            4 => {
                // Decoded as the server's stubs decode it (most checks read in place),
                // which must mean what prost's generated decoding means: the same
                // checks, or the same error.
                let read = CheckBatchChecks::decode(body);
                match (&read, CheckBatchRequest::decode(body)) {
                    (Ok(read), Ok(prost)) => {
                        assert_eq!(CheckBatchRequest::from(read.clone()), prost)
                    }
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
            5 => play_many(body).await,
            6 => play::<tic_tac_toe::Game>(body).await,
            7 => play::<othello::Game>(body).await,
            _ => play::<connect_four::Game>(body).await,
        }
    });
});
