//! HTTP/2 keepalive PINGs, seen by a raw HTTP/2 client that sends nothing after its
//! preface: the server pings an idle peer at `--http2-keepalive-interval`, and never
//! when it is `0s`.

mod common;

use std::time::Duration;

use common::{options, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{timeout, Instant};

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const ACK: u8 = 0x1;

/// Connects, sends the preface and empty settings, acknowledges the server's settings,
/// then reads frames for `window`: whether a PING (not an acknowledgement) came.
async fn pinged_within(server: &TestServer, window: Duration) -> bool {
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(PREFACE).await.unwrap();
    // An empty SETTINGS frame: length 0, type 4, no flags, stream 0.
    stream
        .write_all(&[0, 0, 0, SETTINGS, 0, 0, 0, 0, 0])
        .await
        .unwrap();
    let until = Instant::now() + window;
    loop {
        let mut header = [0u8; 9];
        let left = until.saturating_duration_since(Instant::now());
        match timeout(left, stream.read_exact(&mut header)).await {
            Err(_) => return false,
            Ok(read) => {
                read.expect("the server keeps the connection open");
            }
        }
        let len = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
        let mut payload = vec![0u8; len];
        stream.read_exact(&mut payload).await.unwrap();
        match (header[3], header[4] & ACK) {
            (SETTINGS, 0) => stream
                .write_all(&[0, 0, 0, SETTINGS, ACK, 0, 0, 0, 0])
                .await
                .unwrap(),
            (PING, 0) => return true,
            _ => {}
        }
    }
}

#[tokio::test]
async fn an_idle_peer_is_pinged_at_the_interval() {
    let server = TestServer::start_with(options(&[
        "--http2-keepalive-interval",
        "100ms",
        "--http2-keepalive-timeout",
        "5s",
    ]))
    .await;
    assert!(pinged_within(&server, Duration::from_secs(5)).await);
}

#[tokio::test]
async fn an_interval_of_zero_sends_no_pings() {
    let server = TestServer::start_with(options(&["--http2-keepalive-interval", "0s"])).await;
    assert!(!pinged_within(&server, Duration::from_millis(1500)).await);
}
