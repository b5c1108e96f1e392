//! The bulk RPCs in the metrics: CheckBatch and PlayMany counted under their own names,
//! each PlayMany game in `arbiter_live_games{game}` while it lives, its rejected moves in
//! `arbiter_rejected_moves_total{game}`. One server per test binary: the metrics
//! recorder is global to the process.

mod common;

use arbiter::proto::game_action::Action;
use arbiter::proto::{
    play_othello_request, Cell, CheckBatchRequest, GameAction, PlayManyRequest, PlayOthelloRequest,
    PlayTicTacToeRequest,
};
use arbiter::server::Server;
use common::messages::open_stream;
use common::metrics::{sample, scrape};
use common::{options, TestServer};
use tokio::net::TcpListener;

fn othello(game: u64, row: i32, col: i32) -> GameAction {
    GameAction {
        game,
        action: Some(Action::Othello(PlayOthelloRequest {
            action: Some(play_othello_request::Action::Move(Cell { row, col })),
        })),
    }
}

/// Fails against a server that counts the bulk RPCs as `other`, leaves PlayMany games
/// out of the live-game gauge (or never takes them out), or skips their rejections.
#[tokio::test]
async fn bulk_calls_games_and_rejections_are_counted() {
    let metrics_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let metrics_address = metrics_listener.local_addr().unwrap().to_string();
    let server =
        TestServer::start_server(Server::new(options(&[])).with_metrics_listener(metrics_listener))
            .await;
    let mut client = server.client().await;
    client
        .check_batch(CheckBatchRequest::default())
        .await
        .unwrap();

    let (actions, mut replies) = open_stream(|stream| client.play_many(stream)).await;
    let tic_tac_toe = GameAction {
        game: 3,
        action: Some(Action::TicTacToe(PlayTicTacToeRequest {
            row: 1,
            col: 1,
            setup: None,
        })),
    };
    // Two Othello games and one of Tic-Tac-Toe; game 2's move at (0, 0) is rejected.
    actions
        .send(PlayManyRequest {
            actions: vec![othello(1, 2, 3), othello(2, 0, 0), tic_tac_toe],
        })
        .await
        .unwrap();
    replies.message().await.unwrap().unwrap();
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
