//! The `arbiter` binary as a child process: stopping it as an orchestrator would.

use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// Sends SIGTERM to `child`.
pub fn terminate(child: &Child) {
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -TERM {}: {sent:?}", child.id());
}

/// Waits for `child` to exit and returns its status, failing if it is still running
/// after `within`.
pub async fn wait_exit(child: &mut Child, within: Duration) -> ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "process {} did not exit within {within:?}",
            child.id()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The `arbiter` binary started with `args` (and `--listen 127.0.0.1:0`), its log read
/// until the start-up line: the child and the address it serves on. The rest of its log
/// is collected by a thread, and returned by [`Spawned::log`] once it exits. Killed
/// when dropped, should a test fail before it stops it.
pub struct Spawned {
    pub child: std::process::Child,
    pub addr: std::net::SocketAddr,
    log: Option<std::thread::JoinHandle<Vec<String>>>,
}

impl Spawned {
    /// Starts the binary.
    pub fn start(args: &[&str]) -> Self {
        Self::start_with_env(args, &[])
    }

    /// Starts the binary with these environment variables set too.
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Self {
        use std::io::{BufRead, BufReader};
        let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().unwrap().unwrap();
        let (_, addr) = first
            .split_once("arbiter listening on ")
            .unwrap_or_else(|| panic!("no start-up line: {first}"));
        let addr = addr.trim().parse().unwrap();
        // Read on, so that the server never blocks on a full pipe.
        let log = std::thread::spawn(move || lines.map_while(Result::ok).collect());
        Self {
            child,
            addr,
            log: Some(log),
        }
    }

    /// The server's resident memory now, in bytes (VmRSS of /proc/PID/status).
    pub fn resident_bytes(&self) -> u64 {
        self.status_bytes("VmRSS")
    }

    /// The most memory the server has held resident at once since it started, in bytes
    /// (VmHWM of /proc/PID/status): a peak that an allocation freed since still shows.
    pub fn peak_resident_bytes(&self) -> u64 {
        self.status_bytes("VmHWM")
    }

    /// A `kB` field of /proc/PID/status, in bytes.
    fn status_bytes(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status
            .lines()
            .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
            .unwrap_or_else(|| panic!("no {field} in {status}"));
        let kib: u64 = line.trim().trim_end_matches("kB").trim().parse().unwrap();
        kib * 1024
    }

    /// The log lines after the start-up line, once the server has exited.
    pub fn log(mut self) -> Vec<String> {
        self.log.take().unwrap().join().unwrap()
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
