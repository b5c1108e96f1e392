//! The `arbiter` binary as an operator runs it: the start-up line, JSON logs with one
//! line per call, and a graceful stop on SIGTERM with exit status 0.

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::process::{Command, Stdio};
use std::time::Duration;

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::JudgeTicTacToeRequest;
use common::process::{terminate, wait_exit};

#[tokio::test]
async fn serves_logs_json_and_stops_cleanly_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--log-format",
            "json",
            "--shutdown-grace",
            "1s",
        ])
        .env("RUST_LOG", "info,arbiter=debug")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(
        first.starts_with('{') && first.ends_with('}'),
        "not JSON: {first}"
    );
    let (_, address) = first
        .split_once("arbiter listening on ")
        .unwrap_or_else(|| panic!("no start-up line: {first}"));
    let address = address.split('"').next().unwrap().to_string();

    let mut client = ArbiterServiceClient::connect(format!("http://{address}"))
        .await
        .unwrap();
    let reply = client
        .judge_tic_tac_toe(JudgeTicTacToeRequest { moves: vec![] })
        .await
        .unwrap();
    assert_eq!(reply.into_inner().moves_played, 0);

    terminate(&child);
    let status = wait_exit(&mut child, Duration::from_secs(20)).await;
    assert!(status.success(), "exit status {status:?}");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(rest.iter().any(|l| l.contains("shutting down")), "{rest:?}");
    // One debug line per call, with its RPC, status code and duration.
    let call = rest
        .iter()
        .find(|l| l.contains("\"rpc\":\"arbiter.v1.ArbiterService/JudgeTicTacToe\""))
        .unwrap_or_else(|| panic!("no call line: {rest:?}"));
    assert!(
        call.contains("\"code\":\"Ok\"") && call.contains("\"duration_us\":"),
        "{call}"
    );
}

/// `--listen localhost:PORT`, as every example writes it: the host name is resolved and
/// each of its addresses bound, with one start-up line each, and the server answers on
/// `localhost`. A bad address is refused before anything starts.
#[tokio::test]
async fn listens_on_a_host_name() {
    // The addresses `localhost` resolves to that this host can listen on (a resolved
    // address the host lacks, such as `::1` without IPv6, is skipped with a warning).
    let expected: BTreeSet<IpAddr> = ("localhost", 0)
        .to_socket_addrs()
        .unwrap()
        .filter(|address| std::net::TcpListener::bind(address).is_ok())
        .map(|address| address.ip())
        .collect();
    assert!(
        !expected.is_empty(),
        "localhost resolves to nothing to listen on"
    );

    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["--listen", "localhost:0", "--shutdown-drain", "0s"])
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Every line of the log, read on a thread of its own so that the server never blocks
    // on a full pipe and the test never waits on a line that does not come.
    let (log, lines) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = log.send(line);
        }
    });
    let listening = |line: &str| -> Option<SocketAddr> {
        let (_, address) = line.split_once("arbiter listening on ")?;
        Some(address.trim().parse().unwrap())
    };
    let mut bound = Vec::new();
    let mut seen = Vec::new();
    while bound.len() < expected.len() {
        let line = lines
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("{} start-up lines in {seen:?}", bound.len()));
        bound.extend(listening(&line));
        seen.push(line);
    }
    let ips: BTreeSet<IpAddr> = bound.iter().map(SocketAddr::ip).collect();
    assert_eq!(ips, expected, "{seen:?}");
    let port = bound[0].port();
    assert!(
        port != 0 && bound.iter().all(|address| address.port() == port),
        "every address on one port: {bound:?}"
    );

    for address in &bound {
        let mut client = ArbiterServiceClient::connect(format!("http://{address}"))
            .await
            .unwrap();
        client
            .judge_tic_tac_toe(JudgeTicTacToeRequest { moves: vec![] })
            .await
            .unwrap();
    }
    let mut client = ArbiterServiceClient::connect(format!("http://localhost:{port}"))
        .await
        .unwrap();
    client
        .judge_tic_tac_toe(JudgeTicTacToeRequest { moves: vec![] })
        .await
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    // No address got a second start-up line.
    let more: Vec<String> = lines
        .iter()
        .filter(|line| listening(line).is_some())
        .collect();
    assert!(more.is_empty(), "more start-up lines: {more:?}");

    let refused = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["--listen", "localhost"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("expected HOST:PORT"), "{stderr}");
}
