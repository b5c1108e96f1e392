//! A server process for the load generators (`tools/load.rs`, `tools/h2load.rs`):
//! started fresh, pinned to its cores, on a port the OS picks, and measured from
//! `/proc`; the runtime their clients run on; and the medians and spreads their tables
//! report over rounds.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One server process, pinned, on a loopback port the OS picked.
pub struct ServerProcess {
    child: Child,
    /// The gRPC address it bound.
    pub addr: SocketAddr,
    /// Its first lines on stdout (the start-up lines; calls are not logged at info).
    lines: Arc<Mutex<Vec<String>>>,
}

impl ServerProcess {
    /// Starts `binary --listen 127.0.0.1:0 EXTRA...` pinned to `cpus` (taskset -c) and
    /// reads the address it bound from its start-up line ("arbiter listening on ADDR",
    /// "baseline listening on ADDR"): no port is freed and bound again, so no other
    /// process can take it in between. taskset execs the binary, so the child's PID is
    /// the server's own.
    pub fn start(binary: &Path, cpus: &str, extra: &[String]) -> Self {
        let mut child = Command::new("taskset")
            .args(["-c", cpus])
            .arg(binary)
            .args(["--listen", "127.0.0.1:0"])
            .args(extra)
            .env("RUST_LOG", "warn,arbiter=info")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let addr = loop {
            let line = match lines.next() {
                Some(Ok(line)) => line,
                _ => panic!("{} exited before listening", binary.display()),
            };
            if let Some((_, rest)) = line.split_once(" listening on ") {
                let addr = rest.split_whitespace().next().unwrap_or_default();
                break addr
                    .parse::<SocketAddr>()
                    .unwrap_or_else(|e| panic!("not an address in {line:?}: {e}"));
            }
        };
        // Keep reading, so that the server never blocks on a full pipe; keep the first
        // lines.
        let kept = Arc::new(Mutex::new(Vec::new()));
        let keep = Arc::clone(&kept);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let mut keep = keep.lock().unwrap();
                if keep.len() < 100 {
                    keep.push(line);
                }
            }
        });
        Self {
            child,
            addr,
            lines: kept,
        }
    }

    /// The first of its lines so far that contains `text`.
    #[allow(dead_code)] // tools/load.rs does not look
    pub fn line_containing(&self, text: &str) -> Option<String> {
        let lines = self.lines.lock().unwrap();
        lines.iter().find(|l| l.contains(text)).cloned()
    }

    /// User plus system CPU time the server process has used so far (utime + stime of
    /// `/proc/PID/stat`, every thread of this process and nothing else).
    pub fn cpu_time(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))
            .expect("the server's /proc stat");
        // Fields after the parenthesised command name; utime and stime are 14th and 15th.
        let after = &stat[stat.rfind(')').expect("a command name") + 2..];
        let fields: Vec<&str> = after.split_whitespace().collect();
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        Duration::from_secs_f64(ticks as f64 / clock_ticks_per_second())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn clock_ticks_per_second() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        let out = Command::new("getconf").arg("CLK_TCK").output();
        out.ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100.0)
    })
}

/// The one-thread runtime on which a load generator drives its clients.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The median of `values` (sorted in place): the figure each table reports over rounds.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// `values` as "median [min..max]", for the ratio tables.
pub fn spread(values: &[f64]) -> String {
    let mut sorted = values.to_vec();
    let mid = median(&mut sorted);
    format!(
        "{mid:.3} [{:.3}..{:.3}]",
        sorted[0],
        sorted[sorted.len() - 1]
    )
}

/// The servers both load generators compare and how they run them: one set of flags.
#[derive(clap::Args, Clone)]
pub struct Rounds {
    /// The Arbiter server binary.
    #[arg(long, default_value = "target/release/arbiter")]
    pub arbiter: std::path::PathBuf,
    /// The empty-handler baseline binary.
    #[arg(long, default_value = "target/release/examples/baseline_server")]
    pub baseline: std::path::PathBuf,
    /// Rounds per workload; each round runs every server, in a fresh process each.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Warm-up before each measurement.
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    pub warmup: Duration,
    /// Length of the saturation measurement.
    #[arg(long, default_value = "3s", value_parser = humantime::parse_duration)]
    pub duration: Duration,
    /// Length of the one-call-in-flight measurement.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    pub latency_duration: Duration,
}
