//! The `arbiter` binary as an operator runs it: the start-up line, JSON logs with one
//! line per call, and a graceful stop on SIGTERM with exit status 0.

mod common;

use std::io::{BufRead, BufReader};
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
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["--listen", "localhost:0", "--shutdown-drain", "0s"])
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let (_, address) = first
        .split_once("arbiter listening on ")
        .unwrap_or_else(|| panic!("no start-up line: {first}"));
    let address: std::net::SocketAddr = address.trim().parse().unwrap();
    assert!(address.ip().is_loopback(), "{address}");
    // Drain the rest of the log, so that the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));

    let mut client = ArbiterServiceClient::connect(format!("http://localhost:{}", address.port()))
        .await
        .unwrap();
    client
        .judge_tic_tac_toe(JudgeTicTacToeRequest { moves: vec![] })
        .await
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();

    let refused = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["--listen", "localhost"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("expected HOST:PORT"), "{stderr}");
}
