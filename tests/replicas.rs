//! Three Arbiter processes behind a client-side balancer: every replica serves a share,
//! one is stopped with SIGTERM mid-run, calls keep succeeding on the others, and the
//! games that were live on the stopped replica end with UNAVAILABLE, not a hang.
//!
//! Each replica listens on port 0 (gRPC and metrics) and the test reads the addresses
//! it bound from its log, so no port is freed and bound again.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::{JudgeTicTacToeRequest, PlayTicTacToeRequest};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::transport::channel::Change;
use tonic::transport::{Channel, Endpoint};
use tonic::Code;

/// One `arbiter` process, killed when dropped if still running.
struct Replica {
    child: Child,
    grpc: String,
    metrics: String,
}

impl Replica {
    /// Starts a replica on ports the OS picks (port 0), with `args` added, and reads
    /// the addresses it bound from its log.
    async fn start(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(["--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", "warn,arbiter=info")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let (found, mut addresses) = tokio::sync::mpsc::unbounded_channel();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        // Reads the whole log, so that the server never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if let Some((_, rest)) = line.split_once("arbiter listening on ") {
                    let _ = found.send(("grpc", rest.trim().to_string()));
                } else if let Some((_, rest)) = line.split_once("metrics on http://") {
                    let address = rest.trim().trim_end_matches("/metrics").to_string();
                    let _ = found.send(("metrics", address));
                }
            }
        });
        let (mut grpc, mut metrics) = (None, None);
        while grpc.is_none() || metrics.is_none() {
            let (kind, address) = tokio::time::timeout(Duration::from_secs(30), addresses.recv())
                .await
                .expect("no listening lines in 30 s")
                .expect("the replica exited before logging its addresses");
            match kind {
                "grpc" => grpc = Some(address),
                _ => metrics = Some(address),
            }
        }
        Self {
            child,
            grpc: grpc.unwrap(),
            metrics: metrics.unwrap(),
        }
    }

    fn endpoint(&self) -> Endpoint {
        Endpoint::from_shared(format!("http://{}", self.grpc))
            .unwrap()
            .timeout(Duration::from_secs(10))
    }

    async fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.endpoint().connect().await.is_err() {
            assert!(Instant::now() < deadline, "{} never served", self.grpc);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// How many JudgeTicTacToe calls this replica answered OK, from its metrics.
    async fn judged(&self) -> f64 {
        let mut stream = tokio::net::TcpStream::connect(&self.metrics).await.unwrap();
        let request = format!(
            "GET /metrics HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.metrics
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).await.unwrap();
        text.lines()
            .filter(|l| l.starts_with("arbiter_calls_total{"))
            .filter(|l| l.contains("JudgeTicTacToe") && l.contains("code=\"Ok\""))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    fn terminate(&self) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Calls JudgeTicTacToe `count` times, retrying a call at most three times on
/// UNAVAILABLE (a call can race a replica's stop); returns how many retries were needed.
async fn steady_calls(mut client: ArbiterServiceClient<Channel>, count: usize) -> usize {
    let mut retries = 0;
    for _ in 0..count {
        let mut attempts = 0;
        loop {
            match client
                .judge_tic_tac_toe(JudgeTicTacToeRequest { moves: vec![] })
                .await
            {
                Ok(reply) => {
                    assert_eq!(reply.into_inner().moves_played, 0);
                    break;
                }
                Err(status) if status.code() == Code::Unavailable && attempts < 3 => {
                    attempts += 1;
                    retries += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(status) => panic!("a call failed: {status:?}"),
            }
        }
    }
    retries
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_stops_and_the_others_carry_on() {
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(Replica::start(&["--shutdown-drain", "1s", "--shutdown-grace", "1s"]).await);
    }
    for replica in &replicas {
        replica.wait_ready().await;
    }
    // The balancer's replica set changes as a discovery source (DNS, Kubernetes
    // endpoints) would report it.
    let (balanced, discovery) = Channel::balance_channel::<usize>(8);
    for (key, replica) in replicas.iter().enumerate() {
        discovery
            .send(Change::Insert(key, replica.endpoint()))
            .await
            .unwrap();
    }
    let client = ArbiterServiceClient::new(balanced);

    // Every replica serves a share of a steady load.
    let tasks: Vec<_> = (0..8)
        .map(|_| tokio::spawn(steady_calls(client.clone(), 50)))
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap(), 0);
    }
    for replica in &replicas {
        let share = replica.judged().await;
        assert!(share > 0.0, "{} served no call", replica.grpc);
    }

    // Games live on the replica about to stop.
    let stopping = &replicas[1];
    let mut direct = ArbiterServiceClient::new(stopping.endpoint().connect().await.unwrap());
    let mut games = Vec::new();
    for _ in 0..3 {
        let (moves, outgoing) = tokio::sync::mpsc::channel(1);
        let mut replies = direct
            .play_tic_tac_toe(tokio_stream::wrappers::ReceiverStream::new(outgoing))
            .await
            .unwrap()
            .into_inner();
        moves
            .send(PlayTicTacToeRequest { row: 1, col: 1 })
            .await
            .unwrap();
        assert_eq!(replies.message().await.unwrap().unwrap().moves_played, 1);
        games.push((moves, replies));
    }

    // SIGTERM it while the load runs.
    let load: Vec<_> = (0..4)
        .map(|_| tokio::spawn(steady_calls(client.clone(), 150)))
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    stopping.terminate();
    // The stopping replica fails its readiness at once (health NOT_SERVING), so
    // discovery drops it; calls already routed to it may need a retry.
    discovery.send(Change::Remove(1)).await.unwrap();

    for (_moves, mut replies) in games {
        let ended = tokio::time::timeout(Duration::from_secs(15), replies.message())
            .await
            .expect("a live game hung on the stopped replica");
        let status = ended.unwrap_err();
        assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    }
    let mut retries = 0;
    for task in load {
        retries += task.await.unwrap();
    }
    eprintln!("{retries} calls were retried after UNAVAILABLE");
    assert!(retries <= 24, "{retries} calls had to be retried");

    // The stopped replica exited cleanly; the others still answer.
    let deadline = Instant::now() + Duration::from_secs(15);
    let exit = loop {
        if let Some(status) = replicas[1].child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the stopped replica did not exit"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(exit.success(), "{exit:?}");
    assert_eq!(steady_calls(client, 20).await, 0);
    replicas.clear();
}
