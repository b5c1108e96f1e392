//! The connection metrics, scraped over HTTP: connections open, refused for
//! `--max-connections`, closed for `--handshake-timeout`, and ended with GOAWAY for their
//! frames. Its own test binary: the
//! metrics recorder is global to the process.

mod common;

use std::time::{Duration, Instant};

use common::metrics::{sample, scrape, start_with_metrics};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Scrapes until `name` reads `expected`, for at most five seconds.
async fn wait_for(address: &str, name: &str, expected: f64) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let metrics = scrape(address).await;
        let found = sample(&metrics, name, &[]);
        if found == Some(expected) {
            return metrics;
        }
        assert!(
            Instant::now() < deadline,
            "{name} is {found:?}, not {expected}: {metrics}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Reads `tcp` until the server closes it.
async fn until_closed(mut tcp: TcpStream) {
    let mut buffer = [0; 1024];
    while let Ok(1..) = tcp.read(&mut buffer).await {}
}

/// A connection that calls counts as open; one that stays silent past the timeout is
/// counted in `arbiter_handshake_timeouts_total`; one past the limit in
/// `arbiter_connections_refused_total`; all three are described and at zero from the
/// first scrape; and one ended for a PING flood under `too_many_pings` in
/// `arbiter_connections_ended_total`. Fails against a server that counts none of these,
/// or that never counts a closed connection out of `arbiter_connections_open`.
#[tokio::test]
async fn connections_opened_refused_timed_out_and_ended_are_counted() {
    let (server, address) =
        start_with_metrics(&["--max-connections", "2", "--handshake-timeout", "1s"]).await;
    let metrics = scrape(&address).await;
    let first = metrics.clone();
    for (name, help) in [
        ("arbiter_connections_open", "Connections open now."),
        (
            "arbiter_connections_refused_total",
            "Connections closed as they were accepted",
        ),
        (
            "arbiter_handshake_timeouts_total",
            "Connections closed for making no call",
        ),
    ] {
        assert_eq!(sample(&metrics, name, &[]), Some(0.0), "{name}: {metrics}");
        assert!(
            metrics.contains(&format!("# HELP {name} {help}")),
            "{name}: {metrics}"
        );
    }

    // A client that has called: its connection outlives the timeout.
    let mut client = server.client().await;
    client
        .judge_tic_tac_toe(arbiter::proto::JudgeTicTacToeRequest::default())
        .await
        .unwrap();
    wait_for(&address, "arbiter_connections_open", 1.0).await;
    let silent = TcpStream::connect(server.addr).await.unwrap();
    wait_for(&address, "arbiter_connections_open", 2.0).await;
    let refused = TcpStream::connect(server.addr).await.unwrap();
    until_closed(refused).await;
    wait_for(&address, "arbiter_connections_refused_total", 1.0).await;
    until_closed(silent).await;
    wait_for(&address, "arbiter_handshake_timeouts_total", 1.0).await;
    wait_for(&address, "arbiter_connections_open", 1.0).await;
    drop(client);
    wait_for(&address, "arbiter_connections_open", 0.0).await;

    // A connection ended with GOAWAY ENHANCE_YOUR_CALM is counted under its reason, every
    // reason at zero from the first scrape.
    let name = "arbiter_connections_ended_total";
    for reason in [
        "too_many_pings",
        "too_many_settings",
        "too_many_early_resets",
    ] {
        let label = format!("reason=\"{reason}\"");
        assert_eq!(
            sample(&first, name, &[&label]),
            Some(0.0),
            "{reason}: {first}"
        );
    }
    assert!(first.contains(&format!("# HELP {name} Connections ended with GOAWAY")));

    let mut flood = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0".to_vec();
    for _ in 0..4 {
        flood.extend_from_slice(&[0, 0, 8, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    tcp.write_all(&flood).await.unwrap();
    until_closed(tcp).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let metrics = scrape(&address).await;
        if sample(&metrics, name, &["reason=\"too_many_pings\""]) == Some(1.0) {
            break;
        }
        assert!(Instant::now() < deadline, "{metrics}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
