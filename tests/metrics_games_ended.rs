//! Live games that end are counted by game and by ending, for every registered game.
//! One server per test binary: the metrics recorder is global to the process, so any
//! other test here that ended a game would be counted too.

mod common;

use std::time::Duration;

use arbiter::proto::{Ending, TimeControl};
use arbiter::LiveGame;
use common::games::{for_each_game, open, GameTest};
use common::metrics::{sample, scrape, start_with_metrics};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

/// Games that end are counted by game and by ending: for every registered game, one
/// game lost on time and one played at random to its end on the board (or by a draw
/// claimed, which the rules decide too) give one of each, under the game's own label.
/// Fails on a server that counts an ending under another game or another ending, twice,
/// or not at all.
#[tokio::test]
async fn games_ended_are_counted_by_ending() {
    struct Counted {
        channel: Channel,
        metrics: String,
    }
    impl GameTest for Counted {
        async fn run<G: LiveGame>(&self) {
            let what = G::RPC;
            // One on time: its side to move has 100 ms.
            let control = TimeControl {
                initial: Some(prost_types::Duration {
                    seconds: 0,
                    nanos: 100_000_000,
                }),
                ..Default::default()
            };
            let (timed, requests) = mpsc::channel(8);
            timed
                .send(G::setup(Some(control), None, &[]))
                .await
                .unwrap();
            let mut replies = open::<G>(&self.channel, ReceiverStream::new(requests))
                .await
                .unwrap();
            replies.message().await.unwrap().unwrap();
            let announcement = tokio::time::timeout(Duration::from_secs(60), replies.message())
                .await
                .expect("announced within a minute")
                .unwrap()
                .unwrap();
            assert!(G::seen(&announcement).unprompted, "{what}");
            drop(timed);
            while replies.message().await.unwrap().is_some() {}
            // One on the board, at random, with no clock.
            let (sender, requests) = mpsc::channel(8);
            sender.send(G::setup(None, None, &[])).await.unwrap();
            let mut replies = open::<G>(&self.channel, ReceiverStream::new(requests))
                .await
                .unwrap();
            let mut last = replies.message().await.unwrap().unwrap();
            let mut state = 0xe2d_u64;
            for _ in 0..500 {
                if G::seen(&last).to_move.is_none() {
                    break;
                }
                // xorshift64*
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                let pick = state.wrapping_mul(0x2545_f491_4f6c_dd1d);
                sender.send(G::next(pick, &last)).await.unwrap();
                last = replies.message().await.unwrap().unwrap();
            }
            let ending = G::seen(&last).ending;
            assert!(
                matches!(ending, Ending::Board | Ending::Claim),
                "{what}: ended by the rules, not {ending:?}"
            );
            drop(sender);
            while replies.message().await.unwrap().is_some() {}
            let text = scrape(&self.metrics).await;
            let game = format!("game=\"{}\"", G::KIND.label());
            let count = |ending| sample(&text, "arbiter_games_ended_total", &[&game, ending]);
            assert_eq!(count("ending=\"time\""), Some(1.0), "{what}: {text}");
            assert_eq!(count("ending=\"board\""), Some(1.0), "{what}: {text}");
        }
    }
    let (server, metrics) = start_with_metrics(&[]).await;
    let channel = server.channel().await;
    for_each_game(&Counted { channel, metrics }).await;
}
