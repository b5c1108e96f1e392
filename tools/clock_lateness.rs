//! How late the server announces a loss on time: 1,000 Tic-Tac-Toe games on the clock in
//! one PlayMany stream, each with its own random initial time (0.1 to 2 s, seeded), no
//! side ever moving; each game's lateness is the time its announcement arrives less its
//! deadline, taken as the time its setup was sent plus its initial time (an upper bound:
//! the server starts the clock when the setup arrives, a little later). Prints p50, p99
//! and the maximum.
//!
//! ```sh
//! cargo run --release --example clock_lateness -- http://127.0.0.1:50051 [GAMES]
//! ```

use std::collections::HashMap;
use std::error::Error;
use std::time::{Duration, Instant};

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::{
    game_action, GameAction, PlayManyRequest, PlayTicTacToeRequest, TicTacToeSetup, TimeControl,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let address = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:50051".into());
    let games: u64 = args.next().map_or(Ok(1000), |n| n.parse())?;
    let mut client = ArbiterServiceClient::connect(address).await?;
    let (sender, requests) = mpsc::channel(4);
    let mut replies = client
        .play_many(ReceiverStream::new(requests))
        .await?
        .into_inner();
    // A seeded xorshift: the same deadlines every run. Every game is set up in one
    // message.
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut initials = HashMap::new();
    let mut actions = Vec::new();
    for game in 0..games {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let initial = Duration::from_millis(100 + seed % 1901);
        initials.insert(game, initial);
        let setup = PlayTicTacToeRequest {
            setup: Some(Box::new(TicTacToeSetup {
                time_control: Some(TimeControl {
                    initial: Some(prost_types::Duration {
                        seconds: initial.as_secs() as i64,
                        nanos: initial.subsec_nanos() as i32,
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            })),
            ..Default::default()
        };
        actions.push(GameAction {
            game,
            action: Some(game_action::Action::TicTacToe(setup)),
        });
    }
    let sent = Instant::now();
    sender.send(PlayManyRequest { actions }).await?;
    let mut deadlines: HashMap<u64, Instant> = initials
        .into_iter()
        .map(|(game, initial)| (game, sent + initial))
        .collect();
    let opened = replies.message().await?.ok_or("the stream ended")?;
    if opened.unprompted || opened.states.len() as u64 != games {
        return Err("the setups were not answered first".into());
    }
    let mut lateness = Vec::new();
    while !deadlines.is_empty() {
        let reply = replies.message().await?.ok_or("the stream ended")?;
        record(&reply, &mut deadlines, &mut lateness);
    }
    lateness.sort();
    let at = |q: f64| lateness[((lateness.len() as f64 * q) as usize).min(lateness.len() - 1)];
    println!(
        "{} announcements: lateness p50 {:?}, p99 {:?}, max {:?}",
        lateness.len(),
        at(0.50),
        at(0.99),
        lateness[lateness.len() - 1]
    );
    Ok(())
}

/// Notes the lateness of each game `reply` announces (an unprompted reply's states).
fn record(
    reply: &arbiter::proto::PlayManyResponse,
    deadlines: &mut HashMap<u64, Instant>,
    lateness: &mut Vec<Duration>,
) {
    let now = Instant::now();
    if !reply.unprompted {
        return;
    }
    for state in &reply.states {
        if let Some(deadline) = deadlines.remove(&state.game) {
            lateness.push(now.saturating_duration_since(deadline));
        }
    }
}
