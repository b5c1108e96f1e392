//! A real Arbiter server on a loopback port, and clients for it, for the wire tests.
#![allow(dead_code)]

pub mod bulk;
pub mod callers;
pub mod contract;
pub mod games;
pub mod live;
pub mod messages;
pub mod metrics;
pub mod process;
pub mod setups;
pub mod status;

use std::net::SocketAddr;
use std::time::Duration;

use arbiter::config::Options;
use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::server::{Server, ServerError, Settings};
use arbiter::LiveGames;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::{Channel, Endpoint};

/// A running server, stopped when dropped.
pub struct TestServer {
    pub addr: SocketAddr,
    pub live_games: LiveGames,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), ServerError>>>,
}

impl TestServer {
    /// Starts a server with the default settings on 127.0.0.1, port chosen by the OS.
    pub async fn start() -> Self {
        Self::start_with(Settings::default()).await
    }

    /// Starts a server with `settings` on 127.0.0.1, port chosen by the OS (whatever
    /// `settings.listen` says).
    pub async fn start_with(settings: Settings) -> Self {
        Self::start_server(Server::new(settings)).await
    }

    /// Starts a server with the settings of the command line `arbiter FLAGS`, `flags`
    /// written as on a command line (`"--max-live-games 2 --shutdown-grace 1s"`), on
    /// 127.0.0.1, port chosen by the OS.
    pub async fn start_with_flags(flags: &str) -> Self {
        let args: Vec<&str> = flags.split_whitespace().collect();
        Self::start_with(options(&args)).await
    }

    /// Starts `server` on 127.0.0.1, port chosen by the OS.
    pub async fn start_server(server: Server) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let live_games = server.live_games();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.run(listener, async {
            let _ = stopped.await;
        }));
        Self {
            addr,
            live_games,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// A new connection to the server.
    pub async fn channel(&self) -> Channel {
        Endpoint::from_shared(format!("http://{}", self.addr))
            .unwrap()
            .connect()
            .await
            .unwrap()
    }

    /// An Arbiter client on a new connection.
    pub async fn client(&self) -> ArbiterServiceClient<Channel> {
        ArbiterServiceClient::new(self.channel().await)
    }

    /// `count` Arbiter clients, each on a connection of its own.
    pub async fn clients(&self, count: usize) -> Vec<ArbiterServiceClient<Channel>> {
        let mut clients = Vec::with_capacity(count);
        for _ in 0..count {
            clients.push(self.client().await);
        }
        clients
    }

    /// Signals shutdown, as SIGTERM would, without waiting.
    pub fn begin_shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Signals shutdown and waits for the server to stop, returning its result.
    pub async fn shutdown(mut self) -> Result<(), ServerError> {
        self.begin_shutdown();
        let task = self.task.take().unwrap();
        tokio::time::timeout(Duration::from_secs(30), task)
            .await
            .expect("the server did not stop")
            .unwrap()
    }

    /// Waits until the live-game count is `expected`, failing after a generous deadline.
    pub async fn wait_for_live_games(&self, expected: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.live_games.count() != expected {
            assert!(
                tokio::time::Instant::now() < deadline,
                "live games stayed at {} instead of {expected}",
                self.live_games.count()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// The settings the command line `arbiter ARGS` asks for: the defaults with a setting
/// or two changed, written as flags.
pub fn options(args: &[&str]) -> Settings {
    use clap::Parser;
    Options::try_parse_from(std::iter::once("arbiter").chain(args.iter().copied()))
        .unwrap_or_else(|error| panic!("bad test flags {args:?}: {error}"))
        .settings()
}
