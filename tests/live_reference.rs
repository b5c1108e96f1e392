//! Live Othello and Connect Four games through the service's stream handling, compared
//! reply by reply, every field, with naive referees on random games with random illegal
//! messages mixed in.

#[path = "reference/boards.rs"]
mod boards;

use arbiter::games::connect_four::reference::NaiveConnectFour;
use arbiter::games::othello::reference::NaiveOthello;
use arbiter::games::othello::{Color, STANDARD_START};
use arbiter::games::{connect_four, othello};
use arbiter::kit::naive::Expected;
use arbiter::proto::{
    play_connect_four_request, play_othello_request, Board, Cell, ConnectFourSetup, OthelloSetup,
    PlayConnectFourRequest, PlayOthelloRequest,
};
use arbiter::Arbiter;
use arbiter::{LiveGame, StreamLimits};
use boards::board;
use futures_util::StreamExt;
use proptest::prelude::*;
use tokio_util::sync::CancellationToken;

/// One message of a random game, before the game has run: where a legal move is asked
/// for, it is picked among the referee's legal moves at that point.
#[derive(Debug, Clone)]
enum Message {
    /// A legal move (the n-th, wrapped), or any cell once the game is over.
    Legal(prop::sample::Index),
    /// A cell anywhere, near the board or at the int32 extremes.
    Anywhere(i32, i32),
    /// A second setup.
    Setup,
    /// No action at all.
    Empty,
}

fn coordinate() -> impl Strategy<Value = i32> {
    prop_oneof![8 => -2i32..40, 1 => Just(i32::MIN), 1 => Just(i32::MAX)]
}

fn messages(max: usize) -> impl Strategy<Value = Vec<Message>> {
    prop::collection::vec(
        prop_oneof![
            12 => any::<prop::sample::Index>().prop_map(Message::Legal),
            4 => (coordinate(), coordinate()).prop_map(|(r, c)| Message::Anywhere(r, c)),
            1 => Just(Message::Setup),
            1 => Just(Message::Empty),
        ],
        0..max,
    )
}

/// Runs `requests` through a live game of kind `G` in the service and returns every
/// reply, or the status ending the stream.
fn run<G: LiveGame>(requests: Vec<G::Request>) -> Vec<Result<G::Response, tonic::Status>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        let limits = StreamLimits {
            max_unapplied: 100_000,
            ..StreamLimits::default()
        };
        Arbiter::new(limits, CancellationToken::new())
            .open_game::<G, _>(futures_util::stream::iter(requests.into_iter().map(Ok)))
            .collect()
            .await
    })
}

/// Checks one reply against the referee's: every field, and the reason's gist.
fn check<R: std::fmt::Debug + PartialEq + Clone>(
    got: &R,
    expected: &Expected<R>,
    rejected: impl Fn(&R) -> &str,
    clear: impl Fn(&mut R),
) -> Result<(), TestCaseError> {
    let reason = rejected(got).to_owned();
    match expected.rejected {
        None => prop_assert_eq!(&reason, "", "an applied message was rejected"),
        Some(word) => prop_assert!(
            reason.contains(word),
            "rejection {:?} should mention {:?}",
            reason,
            word
        ),
    }
    let mut got = got.clone();
    clear(&mut got);
    prop_assert_eq!(&got, &expected.reply);
    Ok(())
}

/// Runs `requests` through a live game of kind `G` in the service and checks its
/// replies against `expected`: as many, none a status, each as [`check`] says.
fn replies_match<G: LiveGame>(
    requests: Vec<G::Request>,
    expected: &[Expected<G::Response>],
    rejected: impl Fn(&G::Response) -> &str,
    clear: impl Fn(&mut G::Response),
) -> Result<(), TestCaseError>
where
    G::Response: std::fmt::Debug + PartialEq + Clone,
{
    let replies = run::<G>(requests);
    prop_assert_eq!(replies.len(), expected.len());
    for (got, want) in replies.iter().zip(expected) {
        let got = got
            .as_ref()
            .map_err(|s| TestCaseError::fail(format!("status {s:?}")))?;
        check(got, want, &rejected, &clear)?;
    }
    Ok(())
}

/// A Connect Four setup of `rows` x `cols`, `run_length` to win, no history.
fn connect_four_setup(rows: usize, cols: usize, run_length: usize) -> PlayConnectFourRequest {
    PlayConnectFourRequest {
        action: Some(play_connect_four_request::Action::Setup(Box::new(
            ConnectFourSetup {
                rows: rows as i32,
                cols: cols as i32,
                run_length: run_length as i32,
                history: Vec::new(),
                ..Default::default()
            },
        ))),
    }
}

/// A Connect Four drop into column `col`.
fn drop_into(col: i64) -> PlayConnectFourRequest {
    PlayConnectFourRequest {
        action: Some(play_connect_four_request::Action::Drop(col as i32)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn othello_games_match_the_naive_referee(
        setup in prop::option::of((board(30, b".BW"), any::<bool>())),
        script in messages(120),
    ) {
        let (mut referee, mut expected, mut requests) = match &setup {
            Some((rows, black)) => {
                let color = if *black { Color::Black } else { Color::White };
                let (referee, passed) = NaiveOthello::new(rows.clone(), color);
                let first = Expected { reply: referee.reply(Vec::new(), passed), rejected: None };
                let request = PlayOthelloRequest {
                    action: Some(play_othello_request::Action::Setup(Box::new(OthelloSetup {
                        board: Some(Board::from_rows(rows.clone())),
                        to_move: (if *black { "B" } else { "W" }).to_owned(),
                        history: Vec::new(),
                        ..Default::default()
                    }))),
                };
                (referee, vec![first], vec![request])
            }
            None => {
                let rows = STANDARD_START.iter().map(|r| r.to_string()).collect();
                (NaiveOthello::new(rows, Color::Black).0, Vec::new(), Vec::new())
            }
        };
        for message in &script {
            let (action, outcome) = match message {
                Message::Legal(pick) => {
                    let legal = referee.legal_cells();
                    let (r, c) = if legal.is_empty() {
                        (pick.index(referee.rows.len()), 0)
                    } else {
                        let cell = legal[pick.index(legal.len())];
                        (cell.row, cell.col)
                    };
                    let cell = Cell { row: r as i32, col: c as i32 };
                    (Some(play_othello_request::Action::Move(cell)), referee.play(r as i64, c as i64))
                }
                Message::Anywhere(r, c) => (
                    Some(play_othello_request::Action::Move(Cell { row: *r, col: *c })),
                    referee.play(i64::from(*r), i64::from(*c)),
                ),
                // A setup as the stream's first message is the game's setup, tried elsewhere.
                Message::Setup if requests.is_empty() => continue,
                Message::Setup => (
                    Some(play_othello_request::Action::Setup(Box::<OthelloSetup>::default())),
                    Expected { reply: referee.reply(Vec::new(), false), rejected: Some("setup") },
                ),
                Message::Empty => (
                    None,
                    Expected { reply: referee.reply(Vec::new(), false), rejected: Some("no action") },
                ),
            };
            requests.push(PlayOthelloRequest { action });
            expected.push(outcome);
        }
        replies_match::<othello::Game>(requests, &expected, |r| &r.rejected, |r| r.rejected.clear())?;
    }

    #[test]
    fn connect_four_games_match_the_naive_referee(
        shape in prop::option::of((1usize..=100, 1usize..=100, 1usize..=8)),
        script in prop::collection::vec(
            prop_oneof![
                20 => (-1i64..=101).prop_map(Some),
                1 => Just(Some(i64::from(i32::MIN))),
                1 => Just(Some(i64::from(i32::MAX))),
                1 => Just(None),
            ],
            0..400,
        ),
        empty_message_at in any::<prop::sample::Index>(),
    ) {
        let (h, w, k) = shape.unwrap_or((6, 7, 4));
        let mut referee = NaiveConnectFour::new(h, w, k);
        let (mut expected, mut requests) = (Vec::new(), Vec::new());
        if shape.is_some() {
            expected.push(Expected { reply: referee.reply(None, Vec::new()), rejected: None });
            requests.push(connect_four_setup(h, w, k));
        }
        let empty_at = empty_message_at.index(script.len() + 1);
        for (i, drop) in script.iter().enumerate() {
            if i == empty_at {
                expected.push(Expected { reply: referee.reply(None, Vec::new()), rejected: Some("no action") });
                requests.push(PlayConnectFourRequest { action: None });
            }
            match drop {
                // Columns drawn past the board are folded onto it half the time, so that
                // boards fill up and columns overflow.
                Some(col) => {
                    let col = if *col > w as i64 && *col % 2 == 0 { *col % w as i64 } else { *col };
                    expected.push(referee.drop_piece(col));
                    requests.push(drop_into(col));
                }
                // A setup as the stream's first message is the game's setup, tried elsewhere.
                None if requests.is_empty() => {}
                None => {
                    expected.push(Expected { reply: referee.reply(None, Vec::new()), rejected: Some("setup") });
                    requests.push(PlayConnectFourRequest {
                        action: Some(play_connect_four_request::Action::Setup(Box::<ConnectFourSetup>::default())),
                    });
                }
            }
        }
        replies_match::<connect_four::Game>(requests, &expected, |r| &r.rejected, |r| r.rejected.clear())?;
    }
}

/// Small boards played to the end, many times: draws, full columns and games over.
#[test]
fn small_connect_four_boards_are_played_out() {
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(300));
    runner
        .run(
            &(
                (1usize..=5, 1usize..=5, 1usize..=5),
                prop::collection::vec(0i64..6, 0..60),
            ),
            |((h, w, k), cols)| {
                let mut referee = NaiveConnectFour::new(h, w, k);
                let mut expected = vec![Expected {
                    reply: referee.reply(None, Vec::new()),
                    rejected: None,
                }];
                let mut requests = vec![connect_four_setup(h, w, k)];
                for col in cols {
                    expected.push(referee.drop_piece(col));
                    requests.push(drop_into(col));
                }
                replies_match::<connect_four::Game>(
                    requests,
                    &expected,
                    |r| &r.rejected,
                    |r| r.rejected.clear(),
                )
            },
        )
        .unwrap();
}
