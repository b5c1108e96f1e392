//! The budget of reply bytes not yet read, over the wire: replies a client reads are
//! counted off as they are sent, so that a connection may take any number of them; a
//! connection whose client does not read is held to its share and answered
//! RESOURCE_EXHAUSTED past it, other callers untouched; and what a reset stream or a
//! closed connection held is counted off.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::{Check, CheckBatchRequest};
use bytes::Bytes;
use common::callers::{call_headers, channel_from, h2_not_reading, ELSEWHERE, HERE};
use common::messages::grpc_frame;
use common::{options, TestServer};
use tonic::{Code, Status};

/// Shares small enough that two unread replies of [`big_batch`] pass them.
const SHARES: &[&str] = &[
    "--max-unread-bytes-per-connection",
    "1500000",
    "--max-unread-bytes-per-caller",
    "1500000",
    "--max-unread-bytes",
    "100000000",
];

/// 10,000 checks with no kind set: about 1 MB of reply (a field violation each).
fn big_batch() -> CheckBatchRequest {
    CheckBatchRequest {
        checks: vec![Check { check: None }; 10_000],
    }
}

/// A call of [`big_batch`] on a raw connection.
async fn send_batch(
    sender: &mut h2::client::SendRequest<Bytes>,
    server: SocketAddr,
) -> (h2::client::ResponseFuture, h2::SendStream<Bytes>) {
    let mut ready = sender.clone().ready().await.unwrap();
    let (reply, mut request) = ready
        .send_request(call_headers(server, "CheckBatch", None), false)
        .unwrap();
    request.send_data(grpc_frame(&big_batch()), true).unwrap();
    *sender = ready;
    (reply, request)
}

/// The status a raw call ends with if it ends within half a second (a reply whose DATA
/// waits on a closed window never does): from its headers, or its trailers.
async fn ended_with(reply: h2::client::ResponseFuture) -> Option<Status> {
    let wait = Duration::from_millis(500);
    let reply = tokio::time::timeout(wait, reply).await.ok()?.unwrap();
    if let Some(status) = Status::from_header_map(reply.headers()) {
        return Some(status);
    }
    let mut body = reply.into_body();
    let trailers = tokio::time::timeout(wait, body.trailers()).await.ok()?;
    Status::from_header_map(&trailers.unwrap()?)
}

/// Forty replies of about 1 MB read one after another on one connection: 40 MB through a
/// share of 1.5 MB. A server that did not count sent bytes off would refuse the third.
#[tokio::test]
async fn replies_read_are_counted_off_as_they_are_sent() {
    let server = TestServer::start_with(options(SHARES)).await;
    let mut client = ArbiterServiceClient::new(server.channel().await);
    for call in 0..40 {
        let reply = client.check_batch(big_batch()).await;
        let results = reply.unwrap_or_else(|status| panic!("call {call}: {status:?}"));
        assert_eq!(results.into_inner().results.len(), 10_000);
    }
}

/// A client that reads nothing: its first reply waits unread within its share; the one
/// after is answered RESOURCE_EXHAUSTED naming the share, and so is new work on that
/// connection, while another caller is served. Resetting the unread call's stream
/// counts its bytes off, and so does closing the connection.
#[tokio::test]
async fn a_connection_at_its_share_of_unread_replies_is_refused() {
    let server = TestServer::start_with(options(SHARES)).await;
    let (mut sender, connection) = h2_not_reading(server.addr, HERE).await;
    let (first, first_request) = send_batch(&mut sender, server.addr).await;
    let first_headers = tokio::time::timeout(Duration::from_secs(5), first)
        .await
        .unwrap()
        .unwrap();
    assert!(Status::from_header_map(first_headers.headers()).is_none());
    for _ in 0..2 {
        let (reply, _request) = send_batch(&mut sender, server.addr).await;
        let status = ended_with(reply).await.expect("refused at once");
        assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
        assert!(
            status
                .message()
                .contains("--max-unread-bytes-per-connection"),
            "{status:?}"
        );
    }
    let mut elsewhere =
        ArbiterServiceClient::new(channel_from(server.addr, ELSEWHERE).await.unwrap());
    elsewhere.check_batch(big_batch()).await.unwrap();

    // The unread reply's stream reset: its bytes go with it, and a new call is admitted
    // (its reply waits unread in turn, its stream kept open).
    drop((first_headers, first_request));
    let mut kept = None;
    for _ in 0..20 {
        let (reply, request) = send_batch(&mut sender, server.addr).await;
        if ended_with(reply).await.is_none() {
            kept = Some(request);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        kept.is_some(),
        "the reset stream's bytes were never counted off"
    );

    // The connection closed with that reply unread: the caller, at its share while it
    // was open, is served on its next connection.
    connection.abort();
    let (mut again, _connection) = h2_not_reading(server.addr, HERE).await;
    let mut served = false;
    for _ in 0..20 {
        let (reply, _request) = send_batch(&mut again, server.addr).await;
        if ended_with(reply).await.is_none() {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        served,
        "the closed connection's bytes were never counted off"
    );
    drop(kept);
}
