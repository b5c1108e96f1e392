//! A server with its metrics listener, and reading its Prometheus metrics over plain
//! HTTP.

use arbiter::server::Server;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::{options, TestServer};

/// Starts a server of the command line `arbiter ARGS` with its metrics listener, both
/// on 127.0.0.1, port chosen by the OS: the server, and the metrics' address. Both
/// listeners are bound here and handed to the server: no port is freed and bound again,
/// so no other process can take it in between.
pub async fn start_with_metrics(args: &[&str]) -> (TestServer, String) {
    let metrics_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let metrics_address = metrics_listener.local_addr().unwrap().to_string();
    let server = Server::new(options(args)).with_metrics_listener(metrics_listener);
    (TestServer::start_server(server).await, metrics_address)
}

/// GETs /metrics from `address`, checks for a 200, and returns the whole response.
pub async fn scrape(address: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream
        .write_all(
            format!("GET /metrics HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response
}

/// The value of the sample whose line starts with `name` and holds every one of `labels`.
pub fn sample(metrics: &str, name: &str, labels: &[&str]) -> Option<f64> {
    samples(metrics, name, labels).next()
}

/// The values of every sample whose line starts with `name` and holds every one of
/// `labels`.
pub fn samples<'a>(
    metrics: &'a str,
    name: &'a str,
    labels: &'a [&'a str],
) -> impl Iterator<Item = f64> + 'a {
    metrics
        .lines()
        .filter(move |line| line.starts_with(name) && !line.starts_with('#'))
        .filter(move |line| {
            let rest = &line[name.len()..];
            rest.starts_with('{') || rest.starts_with(' ')
        })
        .filter(move |line| labels.iter().all(|label| line.contains(label)))
        .filter_map(|line| line.rsplit(' ').next()?.parse().ok())
}
