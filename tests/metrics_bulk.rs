//! The bulk RPCs in the metrics: CheckBatch and PlayMany counted under their own names,
//! each PlayMany game in `arbiter_live_games{game}` while it lives, its rejected moves in
//! `arbiter_rejected_moves_total{game}`. One server per test binary: the metrics
//! recorder is global to the process.

mod common;

use common::bulk::{check_batch, exchange, open_many, othello, tic_tac_toe};
use common::metrics::{sample, scrape, start_with_metrics};

/// Fails against a server that counts the bulk RPCs as `other`, leaves PlayMany games
/// out of the live-game gauge (or never takes them out), or skips their rejections.
#[tokio::test]
async fn bulk_calls_games_and_rejections_are_counted() {
    let (server, metrics_address) = start_with_metrics(&[]).await;
    let mut client = server.client().await;
    check_batch(&mut client, Vec::new()).await;

    let mut stream = open_many(&mut client).await;
    // Two Othello games and one of Tic-Tac-Toe; game 2's move at (0, 0) is rejected.
    let actions = vec![othello(1, 2, 3), othello(2, 0, 0), tic_tac_toe(3, 1, 1)];
    exchange(&mut stream, actions).await;
    let metrics = scrape(&metrics_address).await;
    let live = |metrics: &str, game: &str| {
        sample(
            metrics,
            "arbiter_live_games",
            &[&format!("game=\"{game}\"")],
        )
    };
    assert_eq!(live(&metrics, "othello"), Some(2.0), "{metrics}");
    assert_eq!(live(&metrics, "tic_tac_toe"), Some(1.0), "{metrics}");
    assert_eq!(
        sample(
            &metrics,
            "arbiter_rejected_moves_total",
            &["game=\"othello\""]
        ),
        Some(1.0),
        "{metrics}"
    );

    let (actions, mut replies) = stream;
    drop(actions);
    while replies.message().await.unwrap().is_some() {}
    server.wait_for_live_games(0).await;
    let metrics = scrape(&metrics_address).await;
    assert_eq!(live(&metrics, "othello"), Some(0.0), "{metrics}");
    for rpc in ["CheckBatch", "PlayMany"] {
        assert_eq!(
            sample(
                &metrics,
                "arbiter_calls_total",
                &[
                    &format!("rpc=\"arbiter.v1.ArbiterService/{rpc}\""),
                    "code=\"Ok\""
                ]
            ),
            Some(1.0),
            "{rpc}: {metrics}"
        );
    }
}
