//! Three Arbiter processes behind a client-side balancer: every replica serves a share,
//! one is stopped with SIGTERM mid-run, calls keep succeeding on the others, and the
//! games that were live on the stopped replica end with UNAVAILABLE, not a hang. And a
//! rolling restart of all three under steady load, in which no call may fail.
//!
//! Each replica listens on port 0 (gRPC and metrics) and the test reads the addresses
//! it bound from its log, so no port is freed and bound again.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::JudgeTicTacToeRequest;
use common::messages::live_tic_tac_toe;
use common::metrics::{samples, scrape};
use common::process::{terminate, wait_exit};
use tonic::transport::channel::Change;
use tonic::transport::{Channel, Endpoint};
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{health_client::HealthClient, HealthCheckRequest};

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

    /// What a readiness probe would see: the service's health over a new connection, as
    /// the kubelet asks it, or `None` when the probe fails (no connection, no answer).
    async fn probe(&self) -> Option<ServingStatus> {
        let probe = async {
            let channel = self.endpoint().connect().await.ok()?;
            let reply = HealthClient::new(channel)
                .check(HealthCheckRequest {
                    service: "arbiter.v1.ArbiterService".into(),
                })
                .await
                .ok()?;
            Some(reply.into_inner().status())
        };
        tokio::time::timeout(Duration::from_secs(1), probe)
            .await
            .ok()
            .flatten()
    }

    /// Waits until a probe says SERVING.
    async fn wait_serving(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.probe().await != Some(ServingStatus::Serving) {
            assert!(Instant::now() < deadline, "{} never served", self.grpc);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// How many JudgeTicTacToe calls this replica answered OK, from its metrics.
    async fn judged(&self) -> f64 {
        let metrics = scrape(&self.metrics).await;
        samples(
            &metrics,
            "arbiter_calls_total",
            &["JudgeTicTacToe", "code=\"Ok\""],
        )
        .sum()
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
        games.push(live_tic_tac_toe(&mut direct).await);
    }

    // SIGTERM it while the load runs.
    let load: Vec<_> = (0..4)
        .map(|_| tokio::spawn(steady_calls(client.clone(), 150)))
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    terminate(&stopping.child);
    // The test removes it from the balancer by hand right after the SIGTERM, without
    // asking its health: it stands in for discovery, which would drop the replica once a
    // readiness probe saw NOT_SERVING (the rolling restart below does wait for that
    // probe). Calls routed to it in between must still be served.
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
    // The replica drains (--shutdown-drain) before it stops accepting, so no call sent
    // to it before the balancer dropped it is refused.
    eprintln!("{retries} calls were retried after UNAVAILABLE");
    assert_eq!(retries, 0, "{retries} calls had to be retried");

    // The stopped replica exited cleanly; the others still answer.
    let exit = wait_exit(&mut replicas[1].child, Duration::from_secs(15)).await;
    assert!(exit.success(), "the stopped replica exited with {exit:?}");
    assert_eq!(steady_calls(client, 20).await, 0);
    replicas.clear();
}

/// What a load task saw: calls answered OK, and the failures (no retry is made).
#[derive(Default)]
struct Tally {
    ok: u64,
    failed: Vec<tonic::Status>,
}

/// Calls JudgeTicTacToe back to back until `stop`, never retrying.
async fn load_until(
    mut client: ArbiterServiceClient<Channel>,
    stop: tokio_util::sync::CancellationToken,
) -> Tally {
    let mut tally = Tally::default();
    while !stop.is_cancelled() {
        match client
            .judge_tic_tac_toe(JudgeTicTacToeRequest { moves: vec![] })
            .await
        {
            Ok(reply) => {
                assert_eq!(reply.into_inner().moves_played, 0);
                tally.ok += 1;
            }
            Err(status) => tally.failed.push(status),
        }
    }
    tally
}

/// A rolling restart as a Deployment does it, one replica at a time under steady load:
/// a replacement starts and joins once its health says SERVING; the old replica gets
/// SIGTERM and leaves the balancer only once its health says NOT_SERVING (as the
/// readiness probe would report it), and drains meanwhile. Not one call may fail, and
/// no call is retried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_under_load_loses_no_call() {
    const ARGS: [&str; 4] = ["--shutdown-drain", "2s", "--shutdown-grace", "1s"];
    let mut replicas = Vec::new();
    for key in 0..3usize {
        let replica = Replica::start(&ARGS).await;
        replica.wait_serving().await;
        replicas.push((key, replica));
    }
    let (balanced, discovery) = Channel::balance_channel::<usize>(8);
    for (key, replica) in &replicas {
        discovery
            .send(Change::Insert(*key, replica.endpoint()))
            .await
            .unwrap();
    }
    let client = ArbiterServiceClient::new(balanced);
    let stop = tokio_util::sync::CancellationToken::new();
    let load: Vec<_> = (0..8)
        .map(|_| tokio::spawn(load_until(client.clone(), stop.clone())))
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;

    let started = Instant::now();
    let mut probes = Vec::new();
    for next_key in 3..6usize {
        // The replacement comes up and joins once ready.
        let replacement = Replica::start(&ARGS).await;
        replacement.wait_serving().await;
        discovery
            .send(Change::Insert(next_key, replacement.endpoint()))
            .await
            .unwrap();
        // The oldest replica is told to stop; it leaves the balancer once a probe no
        // longer says SERVING, a probe every 100 ms.
        let (old_key, mut old) = replicas.remove(0);
        terminate(&old.child);
        let seen = loop {
            match old.probe().await {
                Some(ServingStatus::Serving) => {
                    tokio::time::sleep(Duration::from_millis(100)).await
                }
                other => break other,
            }
        };
        discovery.send(Change::Remove(old_key)).await.unwrap();
        probes.push(seen);
        let exit = wait_exit(&mut old.child, Duration::from_secs(30)).await;
        assert!(exit.success(), "{} exited with {exit:?}", old.grpc);
        replicas.push((next_key, replacement));
    }
    let restart = started.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.cancel();

    let mut total = Tally::default();
    for task in load {
        let tally = task.await.unwrap();
        total.ok += tally.ok;
        total.failed.extend(tally.failed);
    }
    eprintln!(
        "rolling restart of 3 replicas in {restart:?}: {} calls OK, {} failed",
        total.ok,
        total.failed.len()
    );
    assert!(
        total.failed.is_empty(),
        "{} of {} calls failed, first: {:?}",
        total.failed.len(),
        total.ok + total.failed.len() as u64,
        total.failed.first()
    );
    assert!(total.ok > 1000, "only {} calls: no real load", total.ok);
    // Each stopping replica said NOT_SERVING while it still answered: it was taken out
    // of rotation by its health, not by failing.
    assert_eq!(probes, [Some(ServingStatus::NotServing); 3]);
    // The replacements took over the load.
    for (_, replica) in &replicas {
        let share = replica.judged().await;
        assert!(share > 0.0, "{} served no call", replica.grpc);
    }
}
