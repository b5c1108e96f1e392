//! The `arbiter` binary as an operator runs it: the start-up line, JSON logs with one
//! line per call, a graceful stop on SIGTERM with exit status 0, and a stop at once on a
//! second signal.

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::process::{Command, Stdio};
use std::time::Duration;

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::JudgeTicTacToeRequest;
use common::process::{signal, terminate, wait_exit, Spawned};

/// Connects to the server at `uri` and judges an empty Tic-Tac-Toe game: no move played.
async fn judge_an_empty_game_at(uri: &str) {
    let mut client = ArbiterServiceClient::connect(uri.to_owned())
        .await
        .unwrap_or_else(|error| panic!("connecting to {uri}: {error}"));
    let reply = client
        .judge_tic_tac_toe(JudgeTicTacToeRequest { moves: vec![] })
        .await
        .unwrap_or_else(|status| panic!("{uri}: {status:?}"));
    assert_eq!(reply.into_inner().moves_played, 0, "{uri}");
}

#[tokio::test]
async fn serves_logs_json_and_stops_cleanly_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--log-format",
            "json",
            "--shutdown-drain",
            "0s",
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

    judge_an_empty_game_at(&format!("http://{address}")).await;

    terminate(&child);
    let status = wait_exit(&mut child, Duration::from_secs(20)).await;
    assert!(status.success(), "exit status {status:?}");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let stopping = rest
        .iter()
        .find(|l| l.contains("shutting down"))
        .unwrap_or_else(|| panic!("no shutdown line: {rest:?}"));
    // Durations as they are written on the command line.
    assert!(
        stopping.contains(r#""drain":"0s""#) && stopping.contains(r#""grace":"1s""#),
        "{stopping}"
    );
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
        judge_an_empty_game_at(&format!("http://{address}")).await;
    }
    judge_an_empty_game_at(&format!("http://localhost:{port}")).await;
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

/// With a game open and the default drain (5 s) and grace (10 s), a second signal stops
/// the server at once: a server that ignored it would take at least the 5 s drain.
/// SIGTERM then Ctrl-C (SIGINT), and Ctrl-C twice.
#[tokio::test]
async fn a_second_signal_stops_at_once() {
    for (first, second) in [("TERM", "INT"), ("INT", "INT")] {
        let mut server = Spawned::start(&[]);
        let mut client = ArbiterServiceClient::connect(format!("http://{}", server.addr))
            .await
            .unwrap();
        let (moves, mut replies) = common::messages::live_tic_tac_toe(&mut client).await;

        signal(&server.child, first);
        // Signals sent before the first is seen may count as one.
        server.wait_for_line(
            "a second Ctrl-C or SIGTERM stops at once",
            Duration::from_secs(10),
        );
        signal(&server.child, second);
        let status = wait_exit(&mut server.child, Duration::from_secs(3)).await;
        assert_eq!(status.code(), Some(1), "{first} then {second}");
        let rest = server.log();
        assert!(
            rest.iter()
                .any(|line| line.contains("second stop signal: stopped at once")),
            "{rest:?}"
        );
        // The open game was cut off with the connection.
        assert!(replies.message().await.is_err());
        drop(moves);
    }
}

/// A metrics address already taken: the server says so once, naming the address once,
/// and exits without first claiming to listen.
#[test]
fn a_taken_metrics_port_fails_before_the_server_says_it_listens() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let output = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["--listen", "127.0.0.1:0", "--metrics-listen", &address])
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let log = String::from_utf8_lossy(&output.stdout);
    assert!(!log.contains("arbiter listening on"), "{log}");
    let error = log
        .lines()
        .find(|line| line.contains("cannot listen for metrics"))
        .unwrap_or_else(|| panic!("no error line: {log}"));
    assert_eq!(error.matches(&address).count(), 1, "{error}");
    assert!(error.contains("in use"), "{error}");
    drop(taken);
}
