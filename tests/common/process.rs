//! The `arbiter` binary as a child process: stopping it as an orchestrator would.

use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// Sends SIGTERM to `child`.
pub fn terminate(child: &Child) {
    signal(child, "TERM");
}

/// Sends the signal `name` (`TERM`, `INT`) to `child`.
pub fn signal(child: &Child, name: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{name} {}: {sent:?}", child.id());
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
/// is read by a thread, for [`Spawned::wait_for_line`] and [`Spawned::log`]. Killed
/// when dropped, should a test fail before it stops it.
pub struct Spawned {
    pub child: std::process::Child,
    pub addr: std::net::SocketAddr,
    lines: std::sync::mpsc::Receiver<String>,
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
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        Self {
            child,
            addr,
            lines: receiver,
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

    /// Waits for a log line containing `text` and returns it (the lines before it are
    /// skipped), failing if none comes `within`.
    pub fn wait_for_line(&self, text: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(text) => return line,
                Ok(_) => {}
                Err(error) => panic!("no log line with {text:?} within {within:?}: {error}"),
            }
        }
    }

    /// The log lines not read yet, once the server has exited (until then, it waits).
    pub fn log(self) -> Vec<String> {
        self.lines.iter().collect()
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
