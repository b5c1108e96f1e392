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
