//! Prometheus metrics, scraped over HTTP after a few calls. One server per test binary:
//! the metrics recorder is global to the process.

mod common;

use arbiter::proto::{Board, CheckConnectFourRequest, JudgeTicTacToeRequest, PlayTicTacToeRequest};
use common::messages::live_tic_tac_toe;
use common::metrics::{sample, scrape, start_with_metrics};

#[tokio::test]
async fn calls_codes_latency_games_and_rejections_are_counted() {
    let (server, metrics_address) = start_with_metrics(&["--max-in-flight", "1"]).await;
    let mut client = server.client().await;

    for _ in 0..2 {
        client
            .judge_tic_tac_toe(JudgeTicTacToeRequest { moves: vec![] })
            .await
            .unwrap();
    }
    let bad = CheckConnectFourRequest {
        board: Some(Board::from_rows(["00"])),
        row: 0,
        col: 0,
        player: 1,
        run_length: 0,
    };
    client.check_connect_four(bad).await.unwrap_err();
    // A game with one refused move, then half-closed.
    let moves = vec![
        PlayTicTacToeRequest {
            row: 1,
            col: 1,
            setup: None,
        },
        PlayTicTacToeRequest {
            row: 1,
            col: 1,
            setup: None,
        },
    ];
    let mut replies = client
        .play_tic_tac_toe(tokio_stream::iter(moves))
        .await
        .unwrap()
        .into_inner();
    while replies.message().await.unwrap().is_some() {}
    server.wait_for_live_games(0).await;

    let metrics = scrape(&metrics_address).await;
    let calls = |rpc: &str, code: &str| {
        sample(
            &metrics,
            "arbiter_calls_total",
            &[&format!("rpc=\"{rpc}\""), &format!("code=\"{code}\"")],
        )
    };
    assert_eq!(
        calls("arbiter.v1.ArbiterService/JudgeTicTacToe", "Ok"),
        Some(2.0),
        "{metrics}"
    );
    assert_eq!(
        calls(
            "arbiter.v1.ArbiterService/CheckConnectFour",
            "InvalidArgument"
        ),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        calls("arbiter.v1.ArbiterService/PlayTicTacToe", "Ok"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        sample(
            &metrics,
            "arbiter_call_duration_seconds_count",
            &["rpc=\"arbiter.v1.ArbiterService/JudgeTicTacToe\""]
        ),
        Some(2.0),
        "{metrics}"
    );
    assert_eq!(
        sample(
            &metrics,
            "arbiter_rejected_moves_total",
            &["game=\"tic_tac_toe\""]
        ),
        Some(1.0)
    );
    for game in ["tic_tac_toe", "othello", "connect_four"] {
        let label = format!("game=\"{game}\"");
        assert_eq!(
            sample(&metrics, "arbiter_live_games", &[&label]),
            Some(0.0),
            "{metrics}"
        );
    }
    // Registered at start-up, before any game of these kinds was played.
    for game in ["othello", "connect_four"] {
        let label = format!("game=\"{game}\"");
        assert_eq!(
            sample(&metrics, "arbiter_rejected_moves_total", &[&label]),
            Some(0.0),
            "{metrics}"
        );
    }
    assert!(
        metrics.contains("# HELP arbiter_live_games Live games open now"),
        "{metrics}"
    );
    assert_eq!(sample(&metrics, "arbiter_calls_in_flight", &[]), Some(0.0));

    // An open stream counts in arbiter_calls_in_flight until it ends, but holds no
    // --max-in-flight slot (1 here): a unary call still gets through beside it.
    let (moves, mut replies) = live_tic_tac_toe(&mut client).await;
    client
        .judge_tic_tac_toe(JudgeTicTacToeRequest { moves: vec![] })
        .await
        .expect("a unary call beside an open stream, with --max-in-flight 1");
    let metrics = scrape(&metrics_address).await;
    assert_eq!(
        sample(&metrics, "arbiter_calls_in_flight", &[]),
        Some(1.0),
        "{metrics}"
    );
    drop(moves);
    while replies.message().await.unwrap().is_some() {}
}
