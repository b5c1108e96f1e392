//! The load benchmark: Arbiter against the empty-handler baseline, side by side.
//!
//! For each workload it starts a fresh server process per round, alternating Arbiter
//! and the baseline (A, B, A, B, ...), pinned to one core while this client runs on
//! another; warms up; measures a saturation point (hundreds of calls in flight) and a
//! latency point (one call in flight); and reads the server's own CPU time from /proc.
//! Every call must return OK, or the run fails.
//!
//! This is the tonic-client point of view, and the only generator for the live games
//! (PlayTicTacToe, PlayOthello, PlayConnectFour, PlayGomoku), which h2load cannot play.
//! The unary workloads are also driven by h2load (`tools/h2load.rs`), which saturates
//! the server with less client overhead.
//!
//! Run it with `bash benches/load.sh` (which builds both servers and pins the cores);
//! `bash benches/load.sh --help` lists the knobs.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use arbiter::games::{connect_four, othello};
use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::{
    check, play_connect_four_request, play_othello_request, Cell, PlayConnectFourRequest,
    PlayGomokuRequest, PlayOthelloRequest, PlayTicTacToeRequest,
};
use clap::Parser;
use hdrhistogram::Histogram;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint};
use tonic::Status;

#[path = "../benches/support/raw.rs"]
mod raw;
#[path = "../benches/support/requests.rs"]
mod requests;
#[path = "../benches/support/server.rs"]
mod server;
use requests::games::TIC_TAC_TOE_DRAW as DRAW;
use requests::{dense_connect_four, gomoku_script, unary_workloads, LoadCall};
use server::{median, spread, Rounds, ServerProcess};

/// Load benchmark of Arbiter against an empty-handler baseline.
#[derive(Parser, Clone)]
struct Args {
    /// The servers and the rounds.
    #[command(flatten)]
    runs: Rounds,
    /// Connections the saturation load is spread over.
    #[arg(long, default_value_t = 4)]
    connections: usize,
    /// Unary calls in flight at saturation.
    #[arg(long, default_value_t = 256)]
    in_flight: usize,
    /// The CPU list the servers are pinned to (taskset -c).
    #[arg(long, default_value = "0")]
    server_cpus: String,
    /// Run only the workloads whose name contains one of these (comma-separated, or
    /// the option repeated).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// An argument passed to the Arbiter server only (repeat it for several), for
    /// example `--arbiter-arg=--metrics-listen --arbiter-arg=127.0.0.1:0` to measure
    /// with the metrics endpoint on, as production runs.
    #[arg(long, allow_hyphen_values = true)]
    arbiter_arg: Vec<String>,
}

/// One kind of call the load repeats.
#[derive(Clone)]
enum Call {
    /// One of the unary calls of `benches/support/requests.rs`.
    Unary(LoadCall),
    /// Whole games on this many concurrent streams; one sample per move.
    Play { game: LiveGame, streams: usize },
}

/// A live game the load plays from start to end, the same moves every time.
#[derive(Clone, Copy)]
enum LiveGame {
    /// The nine-move draw.
    TicTacToe,
    /// A whole game from the standard start, each side playing its first legal move.
    Othello,
    /// A whole 6x7 game, dropping into the columns in turn until it ends.
    ConnectFour,
    /// A whole freestyle game on 15x15, 17 stones to Black's five (`requests::GOMOKU_GAME`).
    Gomoku,
}

/// The moves of a whole Othello game from the standard start, each side playing its
/// first legal move (row-major), as the rules engine finds them.
fn othello_script() -> Vec<PlayOthelloRequest> {
    let mut game = othello::Game::standard();
    let mut script = Vec::new();
    while let Some(&cell) = game.legal_cells().first() {
        game.play(cell.row as i64, cell.col as i64)
            .expect("a legal move");
        script.push(PlayOthelloRequest {
            action: Some(play_othello_request::Action::Move(Cell {
                row: cell.row as i32,
                col: cell.col as i32,
            })),
        });
    }
    script
}

/// The drops of a whole default Connect Four game, into the columns in turn (a full
/// column is skipped), until it is won or drawn.
fn connect_four_script() -> Vec<PlayConnectFourRequest> {
    let side = std::num::NonZeroUsize::new;
    let mut game = connect_four::Game::new(side(6).unwrap(), side(7).unwrap(), 4);
    let mut script = Vec::new();
    let mut col = 0;
    while game.to_move().is_some() {
        if game.drop_piece(col % 7).is_ok() {
            script.push(PlayConnectFourRequest {
                action: Some(play_connect_four_request::Action::Drop(col as i32 % 7)),
            });
        }
        col += 3;
    }
    script
}

struct Workload {
    name: String,
    call: Call,
    /// The least Arbiter/baseline throughput ratio the issue asks for.
    target: f64,
}

fn workloads() -> Vec<Workload> {
    let mut list: Vec<Workload> = unary_workloads()
        .into_iter()
        .map(|(name, call)| Workload {
            name: name.into(),
            target: if name.contains("100x100") { 0.85 } else { 0.95 },
            call: Call::Unary(call),
        })
        .collect();
    for (name, game) in [
        ("PlayTicTacToe", LiveGame::TicTacToe),
        ("PlayOthello", LiveGame::Othello),
        ("PlayConnectFour", LiveGame::ConnectFour),
        ("PlayGomoku", LiveGame::Gomoku),
    ] {
        for streams in [64, 1] {
            list.push(Workload {
                name: format!(
                    "{name} {streams} stream{}",
                    if streams == 1 { "" } else { "s" }
                ),
                call: Call::Play { game, streams },
                target: 0.95,
            });
        }
    }
    for side in [10, 25, 50] {
        list.push(Workload {
            name: format!("CheckConnectFour {side}x{side}"),
            call: Call::Unary(check::Check::CheckConnectFour(dense_connect_four(side)).into()),
            target: 0.85,
        });
    }
    list
}

async fn connect(addr: SocketAddr) -> Channel {
    // Bounded waits everywhere, so that a stuck server fails the run instead of hanging it.
    let endpoint = Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(10));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match endpoint.connect().await {
            Ok(channel) => return channel,
            Err(e) if Instant::now() > deadline => panic!("cannot connect to {addr}: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// One unary call, by its path with its message's bytes.
async fn unary(channel: Channel, call: &Call) -> Result<(), Status> {
    match call {
        Call::Unary(call) => raw::call(channel, call).await.map(drop),
        // Games are played move by move by play_game.
        Call::Play { .. } => unreachable!("a game is played by play_game, not as a unary call"),
    }
}

/// What one measurement saw.
struct Sample {
    calls: u64,
    errors: u64,
    elapsed: Duration,
    latency_us: Histogram<u64>,
}

impl Sample {
    fn per_second(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000, 3).unwrap()
}

/// Repeats `call` on `workers` concurrent tasks spread over `channels` for `duration`.
async fn drive(channels: &[Channel], call: &Call, workers: usize, duration: Duration) -> Sample {
    let start = Instant::now();
    let deadline = start + duration;
    let tasks: Vec<_> = (0..workers)
        .map(|i| {
            let channel = channels[i % channels.len()].clone();
            let mut client = ArbiterServiceClient::new(channel.clone());
            let call = call.clone();
            tokio::spawn(async move {
                let mut latency = histogram();
                let (mut calls, mut errors) = (0u64, 0u64);
                if let Call::Play { game, .. } = call {
                    let mut tally = Tally {
                        latency: &mut latency,
                        calls: &mut calls,
                        errors: &mut errors,
                    };
                    while Instant::now() < deadline {
                        play_game(&mut client, game, &mut tally).await;
                    }
                } else {
                    while Instant::now() < deadline {
                        let sent = Instant::now();
                        match unary(channel.clone(), &call).await {
                            Ok(()) => {
                                calls += 1;
                                let _ = latency.record(sent.elapsed().as_micros() as u64);
                            }
                            Err(status) => {
                                errors += 1;
                                eprintln!("call failed: {status:?}");
                            }
                        }
                    }
                }
                (calls, errors, latency)
            })
        })
        .collect();
    let mut sample = Sample {
        calls: 0,
        errors: 0,
        elapsed: Duration::ZERO,
        latency_us: histogram(),
    };
    for task in tasks {
        let (calls, errors, latency) = task.await.expect("a load task");
        sample.calls += calls;
        sample.errors += errors;
        sample.latency_us.add(latency).unwrap();
    }
    sample.elapsed = start.elapsed();
    sample
}

/// Where one load task counts its moves.
struct Tally<'a> {
    latency: &'a mut Histogram<u64>,
    calls: &'a mut u64,
    errors: &'a mut u64,
}

/// Plays one whole game of `game` on a new stream, one move in flight at a time.
async fn play_game(
    client: &mut ArbiterServiceClient<Channel>,
    game: LiveGame,
    tally: &mut Tally<'_>,
) {
    match game {
        LiveGame::TicTacToe => {
            let script = DRAW.map(|(row, col)| PlayTicTacToeRequest {
                row,
                col,
                setup: None,
            });
            let (moves, outgoing) = mpsc::channel(1);
            let opened = client.play_tic_tac_toe(ReceiverStream::new(outgoing)).await;
            play_script(opened, moves, script.to_vec(), tally).await;
        }
        LiveGame::Othello => {
            let (moves, outgoing) = mpsc::channel(1);
            let opened = client.play_othello(ReceiverStream::new(outgoing)).await;
            static SCRIPT: std::sync::OnceLock<Vec<PlayOthelloRequest>> =
                std::sync::OnceLock::new();
            let script = SCRIPT.get_or_init(othello_script).clone();
            play_script(opened, moves, script, tally).await;
        }
        LiveGame::ConnectFour => {
            let (moves, outgoing) = mpsc::channel(1);
            let opened = client
                .play_connect_four(ReceiverStream::new(outgoing))
                .await;
            static SCRIPT: std::sync::OnceLock<Vec<PlayConnectFourRequest>> =
                std::sync::OnceLock::new();
            let script = SCRIPT.get_or_init(connect_four_script).clone();
            play_script(opened, moves, script, tally).await;
        }
        LiveGame::Gomoku => {
            let (moves, outgoing) = mpsc::channel(1);
            let opened = client.play_gomoku(ReceiverStream::new(outgoing)).await;
            static SCRIPT: std::sync::OnceLock<Vec<PlayGomokuRequest>> = std::sync::OnceLock::new();
            let script = SCRIPT.get_or_init(gomoku_script).clone();
            play_script(opened, moves, script, tally).await;
        }
    }
}

/// Sends `script` on an opened stream one message at a time, timing each reply, then
/// half-closes and expects the stream to end with OK.
async fn play_script<Req, Resp>(
    opened: Result<tonic::Response<tonic::Streaming<Resp>>, Status>,
    moves: mpsc::Sender<Req>,
    script: Vec<Req>,
    tally: &mut Tally<'_>,
) {
    let mut replies = match opened {
        Ok(response) => response.into_inner(),
        Err(status) => {
            *tally.errors += 1;
            eprintln!("stream refused: {status:?}");
            return;
        }
    };
    for request in script {
        let sent = Instant::now();
        if moves.send(request).await.is_err() {
            *tally.errors += 1;
            return;
        }
        match replies.message().await {
            Ok(Some(_)) => {
                *tally.calls += 1;
                let _ = tally.latency.record(sent.elapsed().as_micros() as u64);
            }
            Ok(None) => {
                *tally.errors += 1;
                eprintln!("the stream ended early");
                return;
            }
            Err(status) => {
                *tally.errors += 1;
                eprintln!("move failed: {status:?}");
                return;
            }
        }
    }
    drop(moves);
    if !matches!(replies.message().await, Ok(None)) {
        *tally.errors += 1;
    }
}

/// One server's figures in one round.
struct Run {
    saturation: Sample,
    latency: Sample,
    cpu_us_per_call: f64,
}

async fn run_once(args: &Args, binary: &Path, extra: &[String], workload: &Workload) -> Run {
    let server = ServerProcess::start(binary, &args.server_cpus, extra);
    let mut channels = Vec::new();
    for _ in 0..args.connections {
        channels.push(connect(server.addr).await);
    }
    let workers = match workload.call {
        Call::Play { streams, .. } => streams,
        _ => args.in_flight,
    };
    drive(&channels, &workload.call, workers, args.runs.warmup).await;
    let cpu_before = server.cpu_time();
    let saturation = drive(&channels, &workload.call, workers, args.runs.duration).await;
    let cpu = server.cpu_time().saturating_sub(cpu_before);
    let latency = drive(
        &channels[..1],
        &workload.call,
        1,
        args.runs.latency_duration,
    )
    .await;
    Run {
        cpu_us_per_call: cpu.as_secs_f64() * 1e6 / saturation.calls.max(1) as f64,
        saturation,
        latency,
    }
}

fn main() {
    let args = Args::parse();
    let runtime = server::runtime();
    let mut errors = 0;
    let mut worst: Option<(f64, String)> = None;
    let mut worst_p99: Option<(f64, String)> = None;
    let mut all_met = true;
    println!(
        "# servers on CPU {}, {} round(s), warm-up {:?}, saturation {:?} at {} in flight over {} connections, latency {:?} at 1 in flight",
        args.server_cpus, args.runs.rounds, args.runs.warmup, args.runs.duration, args.in_flight, args.connections, args.runs.latency_duration
    );
    if !args.arbiter_arg.is_empty() {
        println!("# arbiter started with: {}", args.arbiter_arg.join(" "));
    }
    let arbiter_name = match &args.arbiter_arg[..] {
        [] => "arbiter",
        [flag, ..] if flag.starts_with("--metrics-listen") => "arbiter+metrics",
        _ => "arbiter+args",
    };
    println!(
        "| workload | server | calls/s | p50 µs | p99 µs | 1-in-flight p50 µs | p99 µs | server CPU µs/call |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let mut summary = Vec::new();
    for workload in workloads() {
        if !args.only.is_empty() && !args.only.iter().any(|o| workload.name.contains(o.as_str())) {
            continue;
        }
        let (mut a_runs, mut b_runs) = (Vec::new(), Vec::new());
        for _ in 0..args.runs.rounds {
            a_runs.push(runtime.block_on(run_once(
                &args,
                &args.runs.arbiter,
                &args.arbiter_arg,
                &workload,
            )));
            b_runs.push(runtime.block_on(run_once(&args, &args.runs.baseline, &[], &workload)));
        }
        for (name, runs) in [(arbiter_name, &a_runs), ("baseline", &b_runs)] {
            let mut rate: Vec<f64> = runs.iter().map(|r| r.saturation.per_second()).collect();
            let q = |f: &dyn Fn(&Run) -> f64| {
                let mut v: Vec<f64> = runs.iter().map(f).collect();
                median(&mut v)
            };
            errors += runs
                .iter()
                .map(|r| r.saturation.errors + r.latency.errors)
                .sum::<u64>();
            println!(
                "| {} | {name} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1} |",
                workload.name,
                median(&mut rate),
                q(&|r| r.saturation.latency_us.value_at_quantile(0.5) as f64),
                q(&|r| r.saturation.latency_us.value_at_quantile(0.99) as f64),
                q(&|r| r.latency.latency_us.value_at_quantile(0.5) as f64),
                q(&|r| r.latency.latency_us.value_at_quantile(0.99) as f64),
                q(&|r| r.cpu_us_per_call),
            );
        }
        let ratio = |f: &dyn Fn(&Run) -> f64| -> Vec<f64> {
            a_runs
                .iter()
                .zip(&b_runs)
                .map(|(a, b)| f(a) / f(b))
                .collect()
        };
        let throughput = ratio(&|r| r.saturation.per_second());
        let p99 = ratio(&|r| r.saturation.latency_us.value_at_quantile(0.99) as f64);
        let cpu = ratio(&|r| r.cpu_us_per_call);
        let tput_median = median(&mut throughput.clone());
        let p99_median = median(&mut p99.clone());
        let met = tput_median >= workload.target && p99_median <= 1.1;
        all_met &= met;
        summary.push(format!(
            "| {} | {} | {} | {} | ≥ {:.2}, ≤ 1.10 | {} |",
            workload.name,
            spread(&throughput),
            spread(&p99),
            spread(&cpu),
            workload.target,
            if met { "met" } else { "MISSED" }
        ));
        if worst.as_ref().is_none_or(|(w, _)| tput_median < *w) {
            worst = Some((tput_median, workload.name.clone()));
        }
        if worst_p99.as_ref().is_none_or(|(w, _)| p99_median > *w) {
            worst_p99 = Some((p99_median, workload.name.clone()));
        }
    }
    println!();
    println!("Arbiter / baseline, median over rounds [min..max]:");
    println!();
    println!("| workload | throughput | p99 at saturation | server CPU per call | target | |");
    println!("|---|---|---|---|---|---|");
    for line in summary {
        println!("{line}");
    }
    println!();
    if let (Some((t, tn)), Some((p, pn))) = (worst, worst_p99) {
        println!(
            "worst throughput ratio {t:.3} ({tn}); worst p99 ratio {p:.3} ({pn}); targets {}",
            if all_met { "met" } else { "missed" }
        );
    }
    if errors > 0 {
        eprintln!("{errors} calls failed");
        std::process::exit(1);
    }
}
