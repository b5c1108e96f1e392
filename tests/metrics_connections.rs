//! The connection metrics, scraped over HTTP: connections open, refused for
//! `--max-connections`, and closed for `--handshake-timeout`. Its own test binary: the
//! metrics recorder is global to the process.

mod common;

use std::time::{Duration, Instant};

use common::metrics::{sample, scrape, start_with_metrics};
use tokio::io::AsyncReadExt;
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
/// first scrape. Fails against a server that counts none of these, or that never counts
/// a closed connection out of `arbiter_connections_open`.
#[tokio::test]
async fn connections_opened_refused_and_timed_out_are_counted() {
    let (server, address) =
        start_with_metrics(&["--max-connections", "2", "--handshake-timeout", "1s"]).await;
    let metrics = scrape(&address).await;
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
}
