//! The call metrics of calls that never finish, and the metrics listener's life: it
//! stops with the server. One server per test binary: the metrics recorder is global
//! to the process.

mod common;

use std::time::Duration;

use arbiter::proto::{Board, CheckConnectFourRequest, PlayTicTacToeRequest};
use bytes::Bytes;
use common::metrics::{sample, scrape, start_with_metrics};
use common::TestServer;
use prost::Message;
use tokio::net::TcpStream;
use tonic::codegen::http;

const CHECK_CONNECT_FOUR: &str = "arbiter.v1.ArbiterService/CheckConnectFour";
const PLAY_TIC_TAC_TOE: &str = "arbiter.v1.ArbiterService/PlayTicTacToe";

/// A call to `path` on a raw HTTP/2 connection, its first `sent` bytes of the framed
/// `message` sent and the stream left open. Returns the request's stream, the
/// connection's task and the response, for the caller to end as a client would.
async fn raw_call(
    server: &TestServer,
    path: &str,
    message: &impl Message,
    sent: impl FnOnce(usize) -> usize,
) -> (
    h2::SendStream<Bytes>,
    tokio::task::JoinHandle<()>,
    h2::client::ResponseFuture,
) {
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let (sender, connection) = h2::client::handshake(tcp).await.unwrap();
    let connection = tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut sender = sender.ready().await.unwrap();
    let request = http::Request::post(format!("http://{}/{path}", server.addr))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let (response, mut send) = sender.send_request(request, false).unwrap();
    let message = message.encode_to_vec();
    let mut framed = vec![0];
    framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
    framed.extend_from_slice(&message[..sent(message.len())]);
    send.send_data(framed.into(), false).unwrap();
    (send, connection, response)
}

/// The headers of a CheckConnectFour call and half of its one message: the server is
/// left reading the request.
async fn half_sent_call(
    server: &TestServer,
) -> (
    h2::SendStream<Bytes>,
    tokio::task::JoinHandle<()>,
    h2::client::ResponseFuture,
) {
    let message = CheckConnectFourRequest {
        board: Some(Board::from_rows(["0000", "1111"])),
        row: 1,
        col: 0,
        player: 1,
        run_length: 4,
    };
    raw_call(server, CHECK_CONNECT_FOUR, &message, |len| len / 2).await
}

/// Waits until the metrics at `address` count `expected` calls of `rpc` with `code`,
/// checks that none of them was counted `Unknown` or `Internal` (server faults), and
/// returns the metrics.
async fn wait_for_calls(address: &str, rpc: &str, code: &str, expected: f64) -> String {
    let metrics = wait_for_count(address, rpc, code, expected).await;
    for fault in ["Unknown", "Internal"] {
        let labels = [format!("rpc=\"{rpc}\""), format!("code=\"{fault}\"")];
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        assert_eq!(
            sample(&metrics, "arbiter_calls_total", &labels),
            None,
            "{metrics}"
        );
    }
    metrics
}

/// Waits until the metrics at `address` count `expected` calls of `rpc` with `code`,
/// and returns them.
async fn wait_for_count(address: &str, rpc: &str, code: &str, expected: f64) -> String {
    let labels = [format!("rpc=\"{rpc}\""), format!("code=\"{code}\"")];
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let metrics = scrape(address).await;
        let found = sample(&metrics, "arbiter_calls_total", &labels);
        if found == Some(expected) {
            return metrics;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{code} calls stayed at {found:?}, not {expected}: {metrics}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn unfinished_calls_are_cancelled_and_the_metrics_listener_stops_with_the_server() {
    let (server, metrics_address) = start_with_metrics(&["--shutdown-drain", "0s"]).await;

    // A client whose connection goes away while the server reads the request: the call
    // is unfinished, not a fault of the server's (tonic's own answer is UNKNOWN).
    let (send, connection, response) = half_sent_call(&server).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    connection.abort();
    let _ = connection.await;
    drop((send, response));
    let metrics = wait_for_calls(&metrics_address, CHECK_CONNECT_FOUR, "Cancelled", 1.0).await;
    assert_eq!(
        sample(&metrics, "arbiter_calls_in_flight", &[]),
        Some(0.0),
        "{metrics}"
    );

    // A client that resets its stream (with an error, not CANCEL) likewise.
    let (mut send, connection, _response) = half_sent_call(&server).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    send.send_reset(h2::Reason::INTERNAL_ERROR);
    wait_for_calls(&metrics_address, CHECK_CONNECT_FOUR, "Cancelled", 2.0).await;
    connection.abort();

    // A client that cancels its call (RST_STREAM with CANCEL, what grpc-go, grpc-java and
    // C-core send when a call is cancelled or its deadline passes) likewise: tonic takes
    // that for the request's clean end, and would count INTERNAL ("Missing request
    // message").
    let (mut send, connection, _response) = half_sent_call(&server).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    send.send_reset(h2::Reason::CANCEL);
    wait_for_calls(&metrics_address, CHECK_CONNECT_FOUR, "Cancelled", 3.0).await;
    connection.abort();

    // A live game cancelled by its client after a move was answered: a stream that never
    // got its final status is counted Cancelled too.
    let game_move = PlayTicTacToeRequest {
        row: 1,
        col: 1,
        setup: None,
    };
    let (mut send, connection, response) =
        raw_call(&server, PLAY_TIC_TAC_TOE, &game_move, |len| len).await;
    let mut body = response.await.unwrap().into_body();
    let reply = body.data().await.unwrap().unwrap();
    assert!(reply.len() > 5, "a reply to the move");
    send.send_reset(h2::Reason::CANCEL);
    wait_for_calls(&metrics_address, PLAY_TIC_TAC_TOE, "Cancelled", 1.0).await;
    connection.abort();

    // The listener stops with the server: once `run_on` has returned, nothing answers.
    server.shutdown().await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(&metrics_address).await.is_ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the metrics listener outlived the server"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
