//! The h2load load benchmark: Arbiter (with and without its metrics endpoint) against
//! the empty-handler baseline, on the unary workloads and on whole live games (each
//! game's moves posted at once as one stream), driven by h2load at saturation and at
//! one call in flight.
//!
//! 1. Frames each request of `benches/support/requests.rs` as a gRPC message (a 5-byte
//!    prefix and the prost encoding; a game's moves one frame after the other) into a
//!    file h2load posts, and computes the exact reply frames each server must send:
//!    Arbiter's by calling the real service in-process (`arbiter::Arbiter`),
//!    the baseline's the empty message (a 5-byte frame of length 0) per request message.
//! 2. For each workload and round, starts fresh processes, Arbiter, Arbiter with
//!    `--metrics-listen 127.0.0.1:0`, then the baseline, each pinned to the server CPU,
//!    and for each: one tonic call whose whole reply must equal the expected one; then
//!    h2load (on the client CPU) at saturation (connections x streams): a warm-up for a
//!    time, which also gives the rate, then a measurement of a fixed number of calls
//!    (the rate times the duration); the same at one call in flight; then one more
//!    tonic call, checked again.
//! 3. Checks each h2load run: no call failed, errored or timed out, every HTTP status
//!    in its log is 200, and the DATA bytes it received equal the calls it counted
//!    times the expected reply's length (its frames). A gRPC error is also an HTTP 200,
//!    but its reply is trailers-only, without DATA, so each failed call takes a whole
//!    reply out of the sum (and the baseline's empty frames are not Arbiter's). The measurements
//!    are runs of a fixed number of calls so that this holds exactly: a run for a time
//!    stops with calls in flight, some of whose DATA has arrived (see `Length::Time`).
//!    With the metrics endpoint on, the server's own `arbiter_calls_total` for the RPC
//!    must agree: at least as many `Ok` as calls answered, no code but `Ok` beyond the
//!    calls cut off at the end of a timed warm-up.
//! 4. Reports calls/s, p50/p99 latency (from h2load's per-request log), the server's
//!    CPU time per call (utime + stime of `/proc/PID/stat`, the server process only,
//!    over the saturation run), and the ratios to the baseline.
//!
//! Run it with `bash benches/load.sh --h2load-only` (which installs h2load, builds the
//! servers and pins the cores); `target/release/examples/h2load --help` lists the knobs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use clap::Parser;
use tonic::transport::Endpoint;

#[path = "../benches/support/raw.rs"]
mod raw;
#[path = "../benches/support/replies.rs"]
mod replies;
#[path = "../benches/support/requests.rs"]
mod requests;
#[path = "../benches/support/server.rs"]
mod server;
use requests::{batch_workloads, clocked_workloads, game_workloads, unary_workloads, LoadCall};
use server::{median, spread, Rounds, ServerProcess};

/// h2load benchmark of Arbiter against the empty-handler baseline (unary calls, and
/// whole live games posted at once).
#[derive(Parser)]
struct Args {
    /// The servers and the rounds.
    #[command(flatten)]
    runs: Rounds,
    /// The h2load binary.
    #[arg(long, default_value = "h2load")]
    h2load: PathBuf,
    /// HTTP/2 connections at saturation (h2load -c).
    #[arg(long, default_value_t = 16)]
    connections: usize,
    /// Streams in flight per connection at saturation (h2load -m).
    #[arg(long, default_value_t = 32)]
    streams: usize,
    /// HTTP/2 connections at saturation for CheckBatch and PlayMany, whose calls carry
    /// a thousand decisions each (a PlayMany call holds 1,000 live games, and a server
    /// holds at most 10,000 by default).
    #[arg(long, default_value_t = 2)]
    batch_connections: usize,
    /// Streams in flight per connection at saturation for CheckBatch and PlayMany.
    #[arg(long, default_value_t = 2)]
    batch_streams: usize,
    /// Also run the same-bytes baseline (`baseline_server --same-bytes`: tonic's
    /// default server replying, built once and cloned, the very bytes Arbiter replies),
    /// checked against Arbiter's replies.
    #[arg(long)]
    same_bytes: bool,
    /// Only write the request bodies, the expected replies and the items per call into
    /// `--out` (what `benches/callgrind.sh` posts), and run nothing.
    #[arg(long)]
    prepare: bool,
    /// The CPU list the servers are pinned to (taskset -c).
    #[arg(long, default_value = "0")]
    server_cpus: String,
    /// The CPU list h2load is pinned to (taskset -c).
    #[arg(long, default_value = "1")]
    client_cpus: String,
    /// Run only the workloads whose name contains one of these (comma-separated, or
    /// the option repeated).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Which Arbiter configurations to run against the baseline: without the metrics
    /// endpoint, with it (`--metrics-listen 127.0.0.1:0`, as production runs), or both.
    #[arg(long, value_enum, default_value_t = Metrics::Both)]
    metrics: Metrics,
    /// Where the framed bodies, the expected replies and h2load's logs are written.
    #[arg(long, default_value = "target/h2load")]
    out: PathBuf,
    /// An argument passed to the Arbiter servers only (repeat it for several), for
    /// example `--arbiter-arg=--max-in-flight --arbiter-arg=16`.
    #[arg(long, allow_hyphen_values = true)]
    arbiter_arg: Vec<String>,
    /// Post this file instead of the generated request body (to check the checks: a
    /// malformed body must fail the run).
    #[arg(long)]
    request_body: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Metrics {
    Off,
    On,
    Both,
}

/// One server set-up the rounds alternate.
struct Config {
    name: &'static str,
    binary: PathBuf,
    extra: Vec<String>,
    /// Whether it answers as Arbiter does (else the empty reply of the baseline).
    real: bool,
    /// Whether it serves its metrics (then its count of calls is checked too).
    metered: bool,
}

/// The server's `arbiter_calls_total` for `method`, by status code, scraped from the
/// metrics endpoint it logged ("metrics on http://ADDR/metrics").
fn calls_by_code(server: &ServerProcess, method: &str) -> Result<Vec<(String, u64)>, String> {
    use std::io::{Read, Write};
    let line = server
        .line_containing("metrics on http://")
        .ok_or("the server did not log its metrics address")?;
    let address = line
        .split("metrics on http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .ok_or_else(|| format!("no address in {line:?}"))?;
    let mut stream =
        std::net::TcpStream::connect(address).map_err(|e| format!("metrics at {address}: {e}"))?;
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\n\r\n")
        .map_err(|e| format!("metrics at {address}: {e}"))?;
    let mut text = String::new();
    stream
        .read_to_string(&mut text)
        .map_err(|e| format!("metrics at {address}: {e}"))?;
    // arbiter_calls_total{rpc="arbiter.v1.ArbiterService/CheckOthelloMove",code="Ok"} 123
    let rpc = format!("rpc=\"arbiter.v1.ArbiterService/{method}\"");
    let mut counts = Vec::new();
    for row in text.lines() {
        if !row.starts_with("arbiter_calls_total{") || !row.contains(&rpc) {
            continue;
        }
        let code = row
            .split("code=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or("?");
        let value = row.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok());
        counts.push((code.to_string(), value.unwrap_or(f64::NAN) as u64));
    }
    if counts.is_empty() {
        return Err(format!(
            "no arbiter_calls_total for {method} in the metrics"
        ));
    }
    Ok(counts)
}

/// Arbiter's reply frames to `call`, from the real service called in-process.
async fn expected_reply(call: &LoadCall) -> Vec<u8> {
    replies::in_process(call)
        .await
        .iter()
        .flat_map(|m| replies::frame(m))
        .collect()
}

/// One call over the wire with tonic, by its path with its messages' bytes; its reply
/// frames.
async fn tonic_call(addr: std::net::SocketAddr, call: &LoadCall) -> Result<Vec<u8>, String> {
    let channel = Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(10))
        .connect()
        .await
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let replies = raw::call(channel, call)
        .await
        .map_err(|status| format!("the call failed: {status:?}"))?;
    Ok(replies.iter().flat_map(|m| replies::frame(m)).collect())
}

/// What one h2load run reported, and what its log says.
struct H2Run {
    seconds: f64,
    /// Calls sent, answered or not (more than `succeeded` only in a run for a time).
    started: u64,
    succeeded: u64,
    latencies_us: Vec<u64>,
}

impl H2Run {
    fn per_second(&self) -> f64 {
        self.succeeded as f64 / self.seconds
    }

    fn quantile(&self, q: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return f64::NAN;
        }
        let i = ((self.latencies_us.len() as f64 * q).ceil() as usize)
            .clamp(1, self.latencies_us.len());
        self.latencies_us[i - 1] as f64
    }
}

/// The number after `label` in `line` ("... 31027 succeeded, ..." with label
/// "succeeded" gives 31027).
fn count_before(line: &str, label: &str) -> Option<u64> {
    let words: Vec<&str> = line
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    let at = words.iter().position(|w| *w == label)?;
    words.get(at.checked_sub(1)?)?.parse().ok()
}

/// How long one h2load run goes on.
#[derive(Clone, Copy)]
enum Length {
    /// For a time (`-D`): the warm-ups, which also measure the rate. h2load stops with
    /// calls still in flight, some of whose replies have arrived but not their trailers,
    /// so their DATA is in the total while the calls are not counted: the DATA check is
    /// looser (between the calls counted and the calls started times the reply; a
    /// game's reply arrives a move at a time, so a call cut off may have part of it).
    Time(Duration),
    /// For a number of calls (`-n`): the measurements, where every call started ends, so
    /// the DATA received must be exactly the calls times the reply frame.
    Calls(u64),
}

/// One h2load run's shape: connections, streams in flight on each, and length.
struct Shape {
    connections: usize,
    streams: usize,
    length: Length,
}

/// What one h2load run posts, where, and the reply frame it must get back.
struct Target<'a> {
    server: &'a ServerProcess,
    url: &'a str,
    body: &'a Path,
    reply_len: usize,
    log: &'a Path,
}

/// h2load's "finished in 301.52ms" or "finished in 3.00s", in seconds.
fn finished_in(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with("finished in "))?;
    let value = line.strip_prefix("finished in ")?.split(',').next()?.trim();
    let (number, scale) = if let Some(ms) = value.strip_suffix("ms") {
        (ms, 1e-3)
    } else if let Some(us) = value.strip_suffix("us") {
        (us, 1e-6)
    } else {
        (value.strip_suffix('s')?, 1.0)
    };
    Some(number.parse::<f64>().ok()? * scale)
}

/// Runs h2load once and checks it: no call failed, errored or timed out, every logged
/// call answered with HTTP 200, and `reply_len` bytes of DATA per call answered
/// (exactly, for a run of `Length::Calls`). Err says what failed, with h2load's output.
fn h2load(args: &Args, target: &Target, shape: Shape) -> Result<H2Run, String> {
    let Target {
        url,
        body,
        reply_len,
        log,
        ..
    } = *target;
    let _ = fs::remove_file(log);
    let mut command = Command::new("taskset");
    command
        .args(["-c", &args.client_cpus])
        .arg(&args.h2load)
        .args(["-t", "1", "-c", &shape.connections.to_string()])
        .args(["-m", &shape.streams.to_string()]);
    match shape.length {
        Length::Time(duration) => command.args(["-D", &format!("{}ms", duration.as_millis())]),
        Length::Calls(calls) => command.args(["-n", &calls.to_string()]),
    };
    let output = command
        .arg("-d")
        .arg(body)
        .args(["-H", "content-type: application/grpc", "-H", "te: trailers"])
        .arg(format!("--log-file={}", log.display()))
        .arg(url)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", args.h2load.display()))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let fail = |why: String| Err(format!("{why}\nh2load said:\n{text}"));
    if !output.status.success() {
        return fail(format!("h2load exited with {}", output.status));
    }
    let line = |start: &str| text.lines().find(|l| l.starts_with(start)).unwrap_or("");
    let requests = line("requests:");
    let counts = (
        count_before(requests, "total"),
        count_before(requests, "started"),
        count_before(requests, "done"),
        count_before(requests, "succeeded"),
        count_before(requests, "failed"),
        count_before(requests, "errored"),
        count_before(requests, "timeout"),
    );
    let (Some(total), Some(started), Some(done), Some(succeeded), Some(0), Some(0), Some(0)) =
        counts
    else {
        return fail(format!("calls failed, errored or timed out: {requests:?}"));
    };
    if done != succeeded || succeeded == 0 {
        return fail(format!("{succeeded} calls succeeded of {done} done"));
    }
    if let Length::Calls(calls) = shape.length {
        if total != calls || started != calls || done != calls {
            return fail(format!("{calls} calls asked for: {requests:?}"));
        }
    }
    // "traffic: 1.07MB (1119228) total, 92.17KB (94377) headers (...), 151.50KB (155135) data"
    let traffic = line("traffic:");
    let data_bytes = traffic
        .rsplit_once(") data")
        .and_then(|(before, _)| before.rsplit_once('('))
        .and_then(|(_, n)| n.parse::<u64>().ok());
    let Some(data_bytes) = data_bytes else {
        return fail(format!("no DATA byte count in {traffic:?}"));
    };
    let frame_len = reply_len as u64;
    let in_flight_at_stop = started - done;
    let data_ok = match shape.length {
        Length::Calls(_) => data_bytes == succeeded * frame_len,
        // A game's reply is many frames, streamed one move at a time, so a call cut off
        // by the stop may have received part of its reply.
        Length::Time(_) => (succeeded * frame_len..=(succeeded + in_flight_at_stop) * frame_len)
            .contains(&data_bytes),
    };
    if !data_ok {
        return fail(format!(
            "{data_bytes} bytes of DATA for {succeeded} calls ({in_flight_at_stop} in flight at \
             the stop), where every call's reply is {reply_len} bytes of frames: some calls did \
             not return the expected reply (a gRPC error is a trailers-only HTTP 200, without \
             DATA)"
        ));
    }
    let Some(seconds) = finished_in(&text) else {
        return fail("no duration in h2load's output".into());
    };
    let log_text = fs::read_to_string(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut latencies_us = Vec::with_capacity(succeeded as usize);
    for row in log_text.lines() {
        let columns: Vec<&str> = row.split('\t').collect();
        if columns.len() < 3 || columns[1] != "200" {
            return fail(format!("a call logged {row:?}"));
        }
        latencies_us.push(columns[2].parse().map_err(|e| format!("{row:?}: {e}"))?);
    }
    if latencies_us.len() as u64 != succeeded {
        return fail(format!(
            "{} calls in the log, {succeeded} counted",
            latencies_us.len()
        ));
    }
    latencies_us.sort_unstable();
    Ok(H2Run {
        seconds,
        started,
        succeeded,
        latencies_us,
    })
}

/// Warms up for `warmup` at `connections` x `streams` (checked, but loosely: see
/// `Length::Time`; a batch workload, whose one call may outlast a warm-up, warms up
/// with two calls per stream instead, checked exactly), then measures about `duration` of calls at the rate the warm-up
/// reached, as a fixed number of calls, all of them checked exactly. Returns the
/// warm-up, the measurement and the server's CPU time over the measurement.
fn measure(
    args: &Args,
    target: &Target,
    connections: usize,
    streams: usize,
    duration: Duration,
    batch: bool,
) -> Result<(H2Run, H2Run, Duration), String> {
    let length = if batch {
        Length::Calls(2 * (connections * streams) as u64)
    } else {
        Length::Time(args.runs.warmup)
    };
    let warm = h2load(
        args,
        target,
        Shape {
            connections,
            streams,
            length,
        },
    )?;
    let calls =
        ((warm.per_second() * duration.as_secs_f64()) as u64).max((connections * streams) as u64);
    let cpu_before = target.server.cpu_time();
    let run = h2load(
        args,
        target,
        Shape {
            connections,
            streams,
            length: Length::Calls(calls),
        },
    )?;
    let cpu = target.server.cpu_time().saturating_sub(cpu_before);
    Ok((warm, run, cpu))
}

/// One server's figures in one round.
struct Run {
    saturation: H2Run,
    single: H2Run,
    cpu_us_per_call: f64,
}

/// Files of one workload: the request body and, per server kind, the expected reply.
struct Bodies {
    request: PathBuf,
    arbiter_reply: Vec<u8>,
    baseline_reply: Vec<u8>,
}

fn run_once(
    args: &Args,
    runtime: &tokio::runtime::Runtime,
    config: &Config,
    slug: &str,
    call: &LoadCall,
    bodies: &Bodies,
) -> Result<Run, String> {
    let server = ServerProcess::start(&config.binary, &args.server_cpus, &config.extra);
    let url = format!(
        "http://{}/arbiter.v1.ArbiterService/{}",
        server.addr,
        call.method()
    );
    let reply = if config.real {
        &bodies.arbiter_reply
    } else {
        &bodies.baseline_reply
    };
    let check = |when: &str| -> Result<(), String> {
        let got = runtime.block_on(tonic_call(server.addr, call))?;
        if got != *reply {
            return Err(format!(
                "{} {when} the load: the reply is {:02x?}, expected {:02x?}",
                config.name, got, reply
            ));
        }
        Ok(())
    };
    check("before")?;
    let log = args.out.join(format!("{slug}.{}.log", config.name));
    let target = Target {
        server: &server,
        url: &url,
        body: &bodies.request,
        reply_len: reply.len(),
        log: &log,
    };
    let (c, m) = if call.is_batch() {
        (args.batch_connections, args.batch_streams)
    } else {
        (args.connections, args.streams)
    };
    let batch = call.is_batch();
    let (warm, saturation, cpu) = measure(args, &target, c, m, args.runs.duration, batch)?;
    let (warm_single, single, _) = measure(args, &target, 1, 1, args.runs.latency_duration, batch)?;
    check("after")?;
    if config.metered {
        // The server's own count of the calls, by final status, must agree: every call
        // answered was OK, and the rest are the calls h2load left in flight when a
        // warm-up's time was up, which the server counts OK (if it had answered) or
        // Cancelled (a call whose client went away mid-call, as
        // tests/metrics_lifecycle.rs holds it): never Unknown, a server fault.
        let runs = [&warm, &saturation, &warm_single, &single];
        let answered = 2 + runs.iter().map(|r| r.succeeded).sum::<u64>();
        let sent = 2 + runs.iter().map(|r| r.started).sum::<u64>();
        let counts = calls_by_code(&server, call.method())?;
        let count = |code: &str| {
            counts
                .iter()
                .filter(|c| c.0 == code)
                .map(|c| c.1)
                .sum::<u64>()
        };
        let ok = count("Ok");
        let cut_off = count("Cancelled");
        let others: Vec<_> = counts
            .iter()
            .filter(|(code, n)| !["Ok", "Cancelled"].contains(&code.as_str()) && *n > 0)
            .collect();
        if !others.is_empty() || ok < answered || ok + cut_off > sent {
            return Err(format!(
                "{}: arbiter_calls_total says {counts:?}, where h2load and tonic had {answered} \
                 calls answered of {sent} sent",
                config.name
            ));
        }
    }
    Ok(Run {
        cpu_us_per_call: cpu.as_secs_f64() * 1e6 / saturation.succeeded as f64,
        saturation,
        single,
    })
}

fn main() {
    let args = Args::parse();
    let runtime = server::runtime();
    fs::create_dir_all(&args.out).expect("the output directory");

    let mut configs = Vec::new();
    if args.metrics != Metrics::On {
        configs.push(Config {
            name: "arbiter",
            binary: args.runs.arbiter.clone(),
            extra: args.arbiter_arg.clone(),
            real: true,
            metered: false,
        });
    }
    if args.metrics != Metrics::Off {
        configs.push(Config {
            name: "arbiter+metrics",
            binary: args.runs.arbiter.clone(),
            extra: [
                &["--metrics-listen".into(), "127.0.0.1:0".into()],
                &args.arbiter_arg[..],
            ]
            .concat(),
            real: true,
            metered: true,
        });
    }
    if args.same_bytes {
        configs.push(Config {
            name: "baseline-same",
            binary: args.runs.baseline.clone(),
            extra: vec!["--same-bytes".into()],
            real: true,
            metered: false,
        });
    }
    configs.push(Config {
        name: "baseline",
        binary: args.runs.baseline.clone(),
        extra: vec![],
        real: false,
        metered: false,
    });

    println!(
        "# h2load: servers on CPU {}, h2load on CPU {}, {} round(s), warm-up {:?}, saturation {:?} at {} connections x {} streams, then {:?} at 1 call in flight",
        args.server_cpus,
        args.client_cpus,
        args.runs.rounds,
        args.runs.warmup,
        args.runs.duration,
        args.connections,
        args.streams,
        args.runs.latency_duration
    );
    if !args.arbiter_arg.is_empty() {
        println!("# arbiter started with: {}", args.arbiter_arg.join(" "));
    }
    println!();
    println!("| workload | server | request B | reply B | calls/s | p50 µs | p99 µs | 1 in flight calls/s | p50 µs | p99 µs | server CPU µs/call |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    // Per workload and server: median calls/s at saturation and CPU µs per call, for
    // the per-item table of the batch workloads.
    let mut medians: Vec<(&str, &str, usize, f64, f64)> = Vec::new();
    let workloads = unary_workloads()
        .into_iter()
        .chain(game_workloads())
        .chain(batch_workloads())
        // The clocked workloads' bodies are written for benches/callgrind.sh; their
        // replies differ from run to run, so the load runs leave them out.
        .chain(if args.prepare {
            clocked_workloads()
        } else {
            Vec::new()
        });
    for (name, call) in workloads {
        if !args.only.is_empty() && !args.only.iter().any(|o| name.contains(o.as_str())) {
            continue;
        }
        let slug = name.replace(' ', "_");
        let request = args.out.join(format!("{slug}.request"));
        let messages = call.messages();
        let request_frame: Vec<u8> = messages.iter().flat_map(|m| replies::frame(m)).collect();
        fs::write(&request, &request_frame).expect("the request body file");
        fs::write(
            args.out.join(format!("{slug}.items")),
            format!("{}\n", call.items()),
        )
        .expect("the items file");
        let bodies = Bodies {
            request: args.request_body.clone().unwrap_or(request),
            arbiter_reply: runtime.block_on(expected_reply(&call)),
            baseline_reply: messages.iter().flat_map(|_| replies::frame(&[])).collect(),
        };
        fs::write(
            args.out.join(format!("{slug}.arbiter.reply")),
            &bodies.arbiter_reply,
        )
        .expect("the reply file");
        fs::write(
            args.out.join(format!("{slug}.baseline.reply")),
            &bodies.baseline_reply,
        )
        .expect("the reply file");
        if args.prepare {
            continue;
        }

        let mut runs: Vec<Vec<Run>> = configs.iter().map(|_| Vec::new()).collect();
        'rounds: for _ in 0..args.runs.rounds {
            for (config, runs) in configs.iter().zip(&mut runs) {
                match run_once(&args, &runtime, config, &slug, &call, &bodies) {
                    Ok(run) => runs.push(run),
                    Err(why) => {
                        eprintln!("FAILED: {name} on {}: {why}", config.name);
                        failures.push(format!("{name} on {}", config.name));
                        break 'rounds;
                    }
                }
            }
        }
        if runs.iter().any(|r| r.len() < args.runs.rounds) {
            continue;
        }
        for (config, runs) in configs.iter().zip(&runs) {
            let q = |f: &dyn Fn(&Run) -> f64| {
                let mut v: Vec<f64> = runs.iter().map(f).collect();
                median(&mut v)
            };
            let reply_len = if config.real {
                bodies.arbiter_reply.len()
            } else {
                bodies.baseline_reply.len()
            };
            medians.push((
                name,
                config.name,
                call.items(),
                q(&|r| r.saturation.per_second()),
                q(&|r| r.cpu_us_per_call),
            ));
            println!(
                "| {name} | {} | {} | {reply_len} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1} |",
                config.name,
                request_frame.len(),
                q(&|r| r.saturation.per_second()),
                q(&|r| r.saturation.quantile(0.5)),
                q(&|r| r.saturation.quantile(0.99)),
                q(&|r| r.single.per_second()),
                q(&|r| r.single.quantile(0.5)),
                q(&|r| r.single.quantile(0.99)),
                q(&|r| r.cpu_us_per_call),
            );
        }
        let baseline = runs.last().expect("the baseline's runs");
        let same = configs
            .iter()
            .position(|c| c.name == "baseline-same")
            .map(|i| &runs[i]);
        for (config, runs) in configs.iter().zip(&runs).take(configs.len() - 1) {
            let ratio_to = |f: &dyn Fn(&Run) -> f64, to: &[Run]| -> String {
                let v: Vec<f64> = runs.iter().zip(to).map(|(a, b)| f(a) / f(b)).collect();
                spread(&v)
            };
            let ratio = |f: &dyn Fn(&Run) -> f64| ratio_to(f, baseline);
            let same_cpu = match same {
                Some(same) if config.name != "baseline-same" => {
                    ratio_to(&|r| r.cpu_us_per_call, same)
                }
                _ => "-".into(),
            };
            summary.push(format!(
                "| {name} | {} | {} | {} | {} | {} | {} | {} |",
                config.name,
                ratio(&|r| r.saturation.per_second()),
                ratio(&|r| r.saturation.quantile(0.99)),
                ratio(&|r| r.single.quantile(0.5)),
                ratio(&|r| r.single.quantile(0.99)),
                ratio(&|r| r.cpu_us_per_call),
                same_cpu,
            ));
        }
    }
    if args.prepare {
        return;
    }
    println!();
    println!("Arbiter / baseline, median over rounds [min..max] (each round's pair, same round):");
    println!();
    println!("| workload | server | calls/s at saturation | p99 at saturation | p50 at 1 in flight | p99 at 1 in flight | server CPU per call | CPU per call / same-bytes baseline's |");
    println!("|---|---|---|---|---|---|---|---|");
    for line in summary {
        println!("{line}");
    }
    per_item_table(&medians);
    if !failures.is_empty() {
        eprintln!(
            "{} run(s) failed the checks: {}",
            failures.len(),
            failures.join("; ")
        );
        std::process::exit(1);
    }
    println!();
    println!(
        "every call checked: h2load counted no failure, every status 200, DATA = calls x the expected reply frame; tonic calls before and after returned the expected reply; with metrics on, the server's arbiter_calls_total agrees"
    );
}

/// The workload whose one-decision calls a batch workload's items are: CheckBatch of a
/// check, its unary RPC; PlayMany of a game, that game's single-game stream (per move).
fn counterpart(batch: &str) -> Option<&'static str> {
    const PAIRS: [(&str, &str); 10] = [
        (
            "CheckBatch 1000 CheckOthelloMove 8x8",
            "CheckOthelloMove 8x8",
        ),
        (
            "CheckBatch 1000 ListOthelloMoves 8x8",
            "ListOthelloMoves 8x8",
        ),
        (
            "CheckBatch 1000 CheckConnectFour 6x7",
            "CheckConnectFour 6x7",
        ),
        (
            "CheckBatch 50 CheckConnectFour 100x100",
            "CheckConnectFour 100x100",
        ),
        (
            "CheckBatch 1000 JudgeTicTacToe 9 moves",
            "JudgeTicTacToe 9 moves",
        ),
        (
            "CheckBatch 1000 CheckGomokuMove 15x15",
            "CheckGomokuMove 15x15",
        ),
        (
            "PlayMany 1000 TicTacToe games of 9 moves",
            "PlayTicTacToe game of 9 moves",
        ),
        (
            "PlayMany 1000 Othello whole games",
            "PlayOthello whole game",
        ),
        (
            "PlayMany 1000 ConnectFour games on 6x7",
            "PlayConnectFour game on 6x7",
        ),
        (
            "PlayMany 1000 Gomoku games on 15x15",
            "PlayGomoku game on 15x15",
        ),
    ];
    PAIRS.iter().find(|(b, _)| *b == batch).map(|(_, u)| *u)
}

/// The batch workloads per item (check or move): items/s at saturation, server CPU per
/// item, and their ratios to the same run's one-decision figures: items/s over the empty
/// baseline's CheckOthelloMove calls/s (the transport's floor), and over Arbiter's own
/// calls/s (or moves/s) of the counterpart; CPU per item over the counterpart's.
fn per_item_table(medians: &[(&str, &str, usize, f64, f64)]) {
    let find = |workload: &str, server: &str| {
        medians
            .iter()
            .find(|m| m.0 == workload && m.1 == server)
            .copied()
    };
    let floor = find("CheckOthelloMove 8x8", "baseline").map(|m| m.3);
    let mut rows = Vec::new();
    for &(name, server, items, calls_per_s, cpu_us) in medians {
        let Some(unary) = counterpart(name) else {
            continue;
        };
        if server == "baseline" {
            continue;
        }
        let per_s = calls_per_s * items as f64;
        let cpu_ns = cpu_us * 1e3 / items as f64;
        let fmt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        let one = find(unary, server);
        let one_per_s = one.map(|m| m.3 * m.2 as f64);
        let one_cpu_ns = one.map(|m| m.4 * 1e3 / m.2 as f64);
        rows.push(format!(
            "| {name} | {server} | {per_s:.0} | {cpu_ns:.0} | {} | {} | {} |",
            fmt(floor.map(|f| per_s / f)),
            fmt(one_per_s.map(|o| per_s / o)),
            fmt(one_cpu_ns.map(|o| cpu_ns / o)),
        ));
    }
    if rows.is_empty() {
        return;
    }
    println!();
    println!("CheckBatch and PlayMany per item (a check, or a move), medians over rounds; \"unary\" is the same run's one-decision calls: the empty baseline's CheckOthelloMove (the floor), and this server's own unary call or single-game stream of the same item:");
    println!();
    println!("| workload | server | items/s | server CPU ns/item | items/s / baseline unary calls/s | items/s / own unary items/s | CPU per item / own unary |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for row in rows {
        println!("{row}");
    }
}
