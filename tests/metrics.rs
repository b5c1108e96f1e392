//! Prometheus metrics, scraped over HTTP after a few calls. One server per test binary:
//! the metrics recorder is global to the process.

mod common;

use arbiter::proto::{Board, CheckConnectFourRequest, JudgeTicTacToeRequest, PlayTicTacToeRequest};
use arbiter::server::Server;
use common::{options, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// GETs /metrics from `address` and returns the body.
async fn scrape(address: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream
        .write_all(
            format!("GET /metrics HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response
}

/// The value of the sample whose line starts with `name` and holds every one of `labels`.
fn sample(metrics: &str, name: &str, labels: &[&str]) -> Option<f64> {
    metrics
        .lines()
        .filter(|line| line.starts_with(name) && !line.starts_with('#'))
        .filter(|line| {
            let rest = &line[name.len()..];
            rest.starts_with('{') || rest.starts_with(' ')
        })
        .find(|line| labels.iter().all(|label| line.contains(label)))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
}

#[tokio::test]
async fn calls_codes_latency_games_and_rejections_are_counted() {
    // Both listeners bound on port 0 and handed to the server: no port is freed and
    // bound again, so no other process can take it in between.
    let metrics_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let metrics_address = metrics_listener.local_addr().unwrap().to_string();
    let server = TestServer::start_server(
        Server::new(options(&["--max-in-flight", "1"])).with_metrics_listener(metrics_listener),
    )
    .await;
    let mut client = server.client().await;

    for _ in 0..2 {
        client
            .judge_tic_tac_toe(JudgeTicTacToeRequest { moves: vec![] })
            .await
            .unwrap();
    }
    let bad = CheckConnectFourRequest {
        board: Some(Board {
            rows: vec!["00".into()],
        }),
        row: 0,
        col: 0,
        player: 1,
        run_length: 0,
    };
    client.check_connect_four(bad).await.unwrap_err();
    // A game with one refused move, then half-closed.
    let moves = vec![
        PlayTicTacToeRequest { row: 1, col: 1 },
        PlayTicTacToeRequest { row: 1, col: 1 },
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
    let (moves, outgoing) = tokio::sync::mpsc::channel(1);
    let mut replies = client
        .play_tic_tac_toe(tokio_stream::wrappers::ReceiverStream::new(outgoing))
        .await
        .unwrap()
        .into_inner();
    moves
        .send(PlayTicTacToeRequest { row: 1, col: 1 })
        .await
        .unwrap();
    assert_eq!(replies.message().await.unwrap().unwrap().moves_played, 1);
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
