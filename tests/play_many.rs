//! PlayMany: many games of every kind in one stream, each answered field for field as
//! its kind's own stream answers the same messages; compared on random interleavings
//! (setups, histories, illegal moves, wrong kinds, closes, reused numbers), and each
//! rule of the stream by name, over the wire.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use arbiter::games::othello::STANDARD_START;
use arbiter::games::{connect_four, othello, tic_tac_toe};
use arbiter::proto::game_action::Action;
use arbiter::proto::game_state::State;
use arbiter::proto::{
    play_connect_four_request, play_othello_request, Board, Cell, ConnectFourSetup, FieldViolation,
    GameAction, GameState, OthelloSetup, PlayConnectFourRequest, PlayManyRequest, PlayManyResponse,
    PlayOthelloRequest, PlayTicTacToeRequest, TicTacToeMove, TicTacToeSetup,
};
use arbiter::server::Settings;
use arbiter::Arbiter;
use arbiter::{LiveGame, StreamLimits};
use common::bulk::{
    answered_within_budget, close, drop, exchange, game_action, message, only_violation, open_many,
    othello, tic_tac_toe, ManyStream,
};
use common::setups::connect_four_setup;
use common::TestServer;
use futures_util::StreamExt;
use proptest::prelude::*;
use tokio_util::sync::CancellationToken;
use tonic::{Code, Status};
use tonic_types::StatusExt;

/// A message of one kind's stream, as PlayMany carries it.
#[derive(Debug, Clone, PartialEq)]
enum Message {
    Othello(PlayOthelloRequest),
    ConnectFour(PlayConnectFourRequest),
    TicTacToe(PlayTicTacToeRequest),
}

impl Message {
    fn kind(&self) -> &'static str {
        match self {
            Self::Othello(_) => "othello",
            Self::ConnectFour(_) => "connect_four",
            Self::TicTacToe(_) => "tic_tac_toe",
        }
    }

    fn action(self) -> Action {
        match self {
            Self::Othello(m) => Action::Othello(m),
            Self::ConnectFour(m) => Action::ConnectFour(m),
            Self::TicTacToe(m) => Action::TicTacToe(m),
        }
    }
}

fn othello_message() -> impl Strategy<Value = PlayOthelloRequest> {
    let mover = (0i32..8, 0i32..8)
        .prop_map(|(row, col)| Some(play_othello_request::Action::Move(Cell { row, col })));
    let anywhere = (-2i32..12, -2i32..12)
        .prop_map(|(row, col)| Some(play_othello_request::Action::Move(Cell { row, col })));
    let setup = (
        prop_oneof![Just("B"), Just("W"), Just("x")],
        prop::collection::vec((2i32..6, 2i32..6), 0..4),
        any::<bool>(),
    )
        .prop_map(|(to_move, history, standard)| {
            let rows: Vec<&str> = if standard {
                STANDARD_START.to_vec()
            } else {
                vec!["....", ".WB.", ".BW.", "...?"]
            };
            Some(play_othello_request::Action::Setup(Box::new(
                OthelloSetup {
                    board: Some(Board::from_rows(rows)),
                    to_move: to_move.into(),
                    history: history
                        .into_iter()
                        .map(|(row, col)| Cell { row, col })
                        .collect(),
                    ..Default::default()
                },
            )))
        });
    prop_oneof![8 => mover, 2 => anywhere, 2 => setup, 1 => Just(None)]
        .prop_map(|action| PlayOthelloRequest { action })
}

fn connect_four_message() -> impl Strategy<Value = PlayConnectFourRequest> {
    let drop = (-1i32..8).prop_map(|col| Some(play_connect_four_request::Action::Drop(col)));
    let setup = (
        0i32..6,
        0i32..6,
        0i32..5,
        prop::collection::vec(0i32..5, 0..12),
    )
        .prop_map(|(rows, cols, run_length, history)| {
            Some(play_connect_four_request::Action::Setup(Box::new(
                ConnectFourSetup {
                    rows,
                    cols,
                    run_length,
                    history,
                    ..Default::default()
                },
            )))
        });
    prop_oneof![10 => drop, 2 => setup, 1 => Just(None)]
        .prop_map(|action| PlayConnectFourRequest { action })
}

fn tic_tac_toe_message() -> impl Strategy<Value = PlayTicTacToeRequest> {
    let mover = (-1i32..4, -1i32..4).prop_map(|(row, col)| PlayTicTacToeRequest {
        row,
        col,
        setup: None,
    });
    let setup =
        prop::collection::vec((0i32..3, 0i32..3), 0..6).prop_map(|history| PlayTicTacToeRequest {
            row: 0,
            col: 0,
            setup: Some(Box::new(TicTacToeSetup {
                history: history
                    .into_iter()
                    .map(|(row, col)| TicTacToeMove { row, col })
                    .collect(),
                ..Default::default()
            })),
        });
    prop_oneof![8 => mover, 2 => setup]
}

/// One action of a random script: a message of some kind, a close, or nothing.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // a test's script: size does not matter
enum Step {
    Send(u64, Message),
    Close(u64),
    CloseFalse(u64),
    Nothing(u64),
}

fn step() -> impl Strategy<Value = Step> {
    let game = 0u64..5;
    let message = prop_oneof![
        othello_message().prop_map(Message::Othello),
        connect_four_message().prop_map(Message::ConnectFour),
        tic_tac_toe_message().prop_map(Message::TicTacToe),
    ];
    prop_oneof![
        20 => (game.clone(), message).prop_map(|(g, m)| Step::Send(g, m)),
        2 => game.clone().prop_map(Step::Close),
        1 => game.clone().prop_map(Step::CloseFalse),
        1 => game.prop_map(Step::Nothing),
    ]
}

/// A script cut into messages: each inner list is one PlayMany message.
fn script() -> impl Strategy<Value = Vec<Vec<Step>>> {
    prop::collection::vec(prop::collection::vec(step(), 0..8), 1..12)
}

fn action(step: &Step) -> GameAction {
    match step.clone() {
        Step::Send(game, message) => game_action(game, message.action()),
        Step::Close(game) => close(game),
        Step::CloseFalse(game) => game_action(game, Action::Close(false)),
        Step::Nothing(game) => GameAction { game, action: None },
    }
}

/// The limits both sides of the comparison run under: a small unapplied-message limit,
/// so that games are ended by it.
fn limits() -> StreamLimits {
    StreamLimits {
        max_unapplied: 4,
        ..StreamLimits::default()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Every reply of a single-game stream of kind `G` fed `messages`, then the status
/// ending it, if one did.
async fn single<G: LiveGame>(
    service: &Arbiter,
    messages: Vec<G::Request>,
) -> Vec<Result<G::Response, Status>> {
    service
        .open_game::<G, _>(futures_util::stream::iter(messages.into_iter().map(Ok)))
        .unwrap()
        .collect()
        .await
}

/// The last answer of a single-game stream fed `messages`, all of one kind, as PlayMany
/// states it: the reply, or the ending status.
async fn last_answer(service: &Arbiter, messages: &[Message]) -> Result<State, Status> {
    macro_rules! run {
        ($game:ty, $variant:ident, $state:ident) => {{
            let requests = messages
                .iter()
                .map(|m| match m {
                    Message::$variant(r) => r.clone(),
                    other => panic!("a {} message in another game: {other:?}", other.kind()),
                })
                .collect();
            single::<$game>(service, requests)
                .await
                .pop()
                .unwrap()
                .map(State::$state)
        }};
    }
    match &messages[0] {
        Message::Othello(_) => run!(othello::Game, Othello, Othello),
        Message::ConnectFour(_) => run!(connect_four::Game, ConnectFour, ConnectFour),
        Message::TicTacToe(_) => run!(tic_tac_toe::Game, TicTacToe, TicTacToe),
    }
}

/// What the model expects of one action: its field violations' fields, or a state.
#[derive(Debug)]
enum Expect {
    State(State),
    Closed,
    /// Violations: exactly these (a malformed setup's), as its stream's BadRequest.
    Exactly(Vec<FieldViolation>),
    /// One violation on this field.
    On(&'static str),
}

fn violations(status: &Status) -> Vec<FieldViolation> {
    status
        .get_details_bad_request()
        .expect("a BadRequest")
        .field_violations
        .into_iter()
        .map(|v| FieldViolation {
            field: v.field,
            description: v.description,
        })
        .collect()
}

fn matches(got: &GameState, game: u64, expect: &Expect) -> Result<(), TestCaseError> {
    prop_assert_eq!(got.game, game);
    match expect {
        Expect::State(state) => {
            prop_assert!(got.invalid.is_empty(), "{:?}", got.invalid);
            prop_assert_eq!(got.state.as_ref(), Some(state));
        }
        Expect::Closed => {
            prop_assert!(got.invalid.is_empty() && got.state.is_none(), "{:?}", got);
        }
        Expect::Exactly(violations) => {
            prop_assert_eq!(&got.invalid, violations);
            prop_assert!(got.state.is_none());
        }
        Expect::On(field) => {
            prop_assert_eq!(got.invalid.len(), 1, "{:?}", got);
            prop_assert_eq!(&got.invalid[0].field, field);
            prop_assert!(got.state.is_none());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// Fails against a PlayMany whose game answers differ in any field from its kind's
    /// own stream's for the same messages, that lets one game's action touch another,
    /// that keeps a game ended by a limit or a close, or that starts one from a
    /// malformed setup.
    #[test]
    fn every_game_is_answered_as_its_own_stream_answers_it(script in script()) {
        runtime().block_on(async {
            let service = Arbiter::new(limits(), CancellationToken::new());
            let requests: Vec<PlayManyRequest> = script
                .iter()
                .map(|message| PlayManyRequest { actions: message.iter().map(action).collect() })
                .collect();
            let replies: Vec<PlayManyResponse> = service
                .open_many(futures_util::stream::iter(requests.into_iter().map(Ok)))
                .map(|reply| reply.unwrap().to_response().unwrap())
                .collect()
                .await;
            prop_assert_eq!(replies.len(), script.len());
            // The model: per game number, the messages its game has been sent so far.
            let mut games: HashMap<u64, Vec<Message>> = HashMap::new();
            for (message, reply) in script.iter().zip(&replies) {
                prop_assert_eq!(reply.states.len(), message.len());
                for (step, got) in message.iter().zip(&reply.states) {
                    let (game, expect) = match step {
                        Step::Send(game, sent) => {
                            let held_kind = games.get(game).map(|m| m[0].kind());
                            let expect = match held_kind {
                                Some(kind) if kind != sent.kind() => Expect::On("action"),
                                _ => {
                                    let mut messages = games.get(game).cloned().unwrap_or_default();
                                    messages.push(sent.clone());
                                    match last_answer(&service, &messages).await {
                                        Ok(state) => {
                                            games.insert(*game, messages);
                                            Expect::State(state)
                                        }
                                        Err(status) => {
                                            games.remove(game);
                                            match status.code() {
                                                Code::InvalidArgument => Expect::Exactly(violations(&status)),
                                                Code::ResourceExhausted => Expect::On("game"),
                                                other => panic!("{other:?}: {status:?}"),
                                            }
                                        }
                                    }
                                }
                            };
                            (*game, expect)
                        }
                        Step::Close(game) => match games.remove(game) {
                            Some(_) => (*game, Expect::Closed),
                            None => (*game, Expect::On("game")),
                        },
                        Step::CloseFalse(game) | Step::Nothing(game) => (*game, Expect::On("action")),
                    };
                    matches(got, game, &expect)?;
                }
            }
            // Every game the model holds is live; the stream is gone, and so are they.
            prop_assert_eq!(service.live_games().count(), 0);
            Ok(())
        })?;
    }
}

/// A PlayMany stream on `server`, on a connection of its own.
async fn open(server: &TestServer) -> ManyStream {
    open_many(&mut server.client().await).await
}

/// Two games of different kinds in one message, then a close: each state in order, the
/// close frees the number, which then starts a new game. Fails against a server that
/// mixes games up, answers out of order, or keeps a closed game.
#[tokio::test]
async fn games_of_different_kinds_share_a_stream_and_close() {
    let server = TestServer::start().await;
    let mut stream = open(&server).await;
    let states = exchange(
        &mut stream,
        vec![othello(7, 2, 3), drop(9, 3), tic_tac_toe(11, 1, 1)],
    )
    .await;
    assert_eq!(
        states.iter().map(|s| s.game).collect::<Vec<_>>(),
        [7, 9, 11]
    );
    match &states[0].state {
        Some(State::Othello(reply)) => {
            assert_eq!(reply.moves_played, 1);
            assert_eq!(reply.to_move, "W");
            assert_eq!(reply.flips, [Cell { row: 3, col: 3 }]);
        }
        other => panic!("{other:?}"),
    }
    match &states[1].state {
        Some(State::ConnectFour(reply)) => {
            assert_eq!(reply.placed, Some(Cell { row: 5, col: 3 }));
            assert_eq!(reply.to_move, 2);
        }
        other => panic!("{other:?}"),
    }
    server.wait_for_live_games(3).await;
    let states = exchange(&mut stream, vec![close(9), drop(9, 0)]).await;
    assert!(states[0].invalid.is_empty() && states[0].state.is_none());
    match &states[1].state {
        // A new game: the first piece, player 1's.
        Some(State::ConnectFour(reply)) => {
            assert_eq!(reply.moves_played, 1);
            assert_eq!(reply.placed, Some(Cell { row: 5, col: 0 }));
        }
        other => panic!("{other:?}"),
    }
    drop_stream(stream);
    server.wait_for_live_games(0).await;
}

fn drop_stream<T>(stream: T) {
    std::mem::drop(stream);
}

/// Actions that reach no game change nothing and are answered in place: another kind,
/// no action, `close: false`, a close of a number that holds no game. Fails against a
/// server that ends the stream for them or lets them touch the game.
#[tokio::test]
async fn actions_that_reach_no_game_are_answered_in_place() {
    let server = TestServer::start().await;
    let mut stream = open(&server).await;
    exchange(&mut stream, vec![tic_tac_toe(1, 0, 0)]).await;
    let states = exchange(
        &mut stream,
        vec![
            othello(1, 2, 3),
            GameAction {
                game: 1,
                action: None,
            },
            game_action(1, Action::Close(false)),
            close(2),
            tic_tac_toe(1, 1, 1),
        ],
    )
    .await;
    let wrong_kind = only_violation(&states[0]);
    assert_eq!(wrong_kind.field, "action");
    assert!(
        wrong_kind.description.contains("tic_tac_toe"),
        "{wrong_kind:?}"
    );
    assert_eq!(only_violation(&states[1]).field, "action");
    assert_eq!(only_violation(&states[2]).field, "action");
    let no_game = only_violation(&states[3]);
    assert_eq!(no_game.field, "game");
    assert_eq!(states[3].game, 2);
    // The game went on where it was: the second move of the game.
    match &states[4].state {
        Some(State::TicTacToe(reply)) => {
            assert_eq!(reply.moves_played, 2);
            assert_eq!(reply.rejected, "");
        }
        other => panic!("{other:?}"),
    }
}

/// A malformed setup starts no game and names its fields as the kind's own stream
/// does; the number stays free. Fails against a server that starts a game from it or
/// names the fields otherwise.
#[tokio::test]
async fn a_malformed_setup_starts_no_game() {
    let server = TestServer::start().await;
    let mut stream = open(&server).await;
    let setup = OthelloSetup {
        board: Some(Board::from_rows(["...", "..", "..."])),
        to_move: "Q".into(),
        history: Vec::new(),
        ..Default::default()
    };
    let bad = game_action(
        3,
        Action::Othello(PlayOthelloRequest {
            action: Some(play_othello_request::Action::Setup(Box::new(setup))),
        }),
    );
    let states = exchange(&mut stream, vec![bad, drop(3, 0)]).await;
    let fields: Vec<&str> = states[0].invalid.iter().map(|v| v.field.as_str()).collect();
    assert_eq!(fields, ["setup.board.rows[1]", "setup.to_move"]);
    assert!(states[0].state.is_none());
    // Number 3 held no game, so the drop started a Connect Four game.
    assert!(matches!(&states[1].state, Some(State::ConnectFour(_))));
    server.wait_for_live_games(1).await;
}

/// A game sent more unapplied messages than its stream allows is ended alone, with
/// `invalid` on `game`, and its number freed; the other games go on. Fails against a
/// server without the per-game limit, or that ends the whole stream.
#[tokio::test]
async fn the_unapplied_message_limit_ends_only_its_game() {
    let server = TestServer::start_with(common::options(&["--max-unapplied-messages", "2"])).await;
    let mut stream = open(&server).await;
    exchange(
        &mut stream,
        vec![tic_tac_toe(1, 1, 1), tic_tac_toe(2, 1, 1)],
    )
    .await;
    server.wait_for_live_games(2).await;
    // Two rejected moves are allowed ...
    let states = exchange(
        &mut stream,
        vec![tic_tac_toe(1, 9, 9), tic_tac_toe(1, 9, 9)],
    )
    .await;
    for state in &states {
        match &state.state {
            Some(State::TicTacToe(reply)) => assert!(!reply.rejected.is_empty()),
            other => panic!("{other:?}"),
        }
    }
    // ... the third ends game 1.
    let states = exchange(
        &mut stream,
        vec![tic_tac_toe(1, 9, 9), tic_tac_toe(2, 0, 0)],
    )
    .await;
    let ended = only_violation(&states[0]);
    assert_eq!(ended.field, "game");
    assert!(ended.description.contains("ended"), "{ended:?}");
    assert!(matches!(&states[1].state, Some(State::TicTacToe(r)) if r.moves_played == 2));
    server.wait_for_live_games(1).await;
    // Its number is free: a new game starts there.
    let states = exchange(&mut stream, vec![tic_tac_toe(1, 0, 0)]).await;
    assert!(matches!(&states[0].state, Some(State::TicTacToe(r)) if r.moves_played == 1));
}

/// An empty message gets an empty reply; 10,000 actions are answered; 10,001 end the
/// stream with INVALID_ARGUMENT naming `actions`. Fails against a server that skips
/// the empty reply or has another cap.
#[tokio::test]
async fn messages_hold_up_to_ten_thousand_actions() {
    let server = TestServer::start().await;
    let mut stream = open(&server).await;
    assert!(exchange(&mut stream, Vec::new()).await.is_empty());
    let many: Vec<GameAction> = (0..10_000).map(|_| close(5)).collect();
    let states = exchange(&mut stream, many).await;
    assert_eq!(states.len(), 10_000);
    let too_many: Vec<GameAction> = (0..10_001).map(|_| close(5)).collect();
    stream.0.send(message(too_many)).await.unwrap();
    let status = stream.1.message().await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let violations = status.get_details_bad_request().unwrap().field_violations;
    assert_eq!(violations[0].field, "actions");
}

/// A stream holds at most --max-games-per-stream games; past it a new game is refused
/// in place and the stream goes on. Fails against a server without the limit.
#[tokio::test]
async fn a_stream_holds_at_most_its_limit_of_games() {
    let server = TestServer::start_with(common::options(&["--max-games-per-stream", "3"])).await;
    let mut stream = open(&server).await;
    let states = exchange(&mut stream, (0..5).map(|g| tic_tac_toe(g, 0, 0)).collect()).await;
    assert!(states[..3].iter().all(|s| s.state.is_some()));
    for state in &states[3..] {
        let refused = only_violation(state);
        assert_eq!(refused.field, "game");
        assert!(refused.description.contains("limit of 3"), "{refused:?}");
    }
    server.wait_for_live_games(3).await;
    // A close makes room.
    let states = exchange(&mut stream, vec![close(0), tic_tac_toe(4, 0, 0)]).await;
    assert!(states[1].state.is_some(), "{:?}", states[1]);
}

/// The live-game limit counts PlayMany games and single streams together, both ways.
/// Fails against a server that counts either alone.
#[tokio::test]
async fn the_live_game_limit_counts_playmany_games_and_streams_alike() {
    let server = TestServer::start_with(common::options(&["--max-live-games", "3"])).await;
    let mut client = server.client().await;
    // One single-game stream ...
    let _single = common::messages::live_tic_tac_toe(&mut client).await;
    // ... leaves room for two PlayMany games.
    let mut stream = open(&server).await;
    let states = exchange(&mut stream, (0..3).map(|g| drop(g, 0)).collect()).await;
    assert!(states[0].state.is_some() && states[1].state.is_some());
    assert_eq!(only_violation(&states[2]).field, "game");
    // And the PlayMany games keep a new single stream out.
    let mut other = server.client().await;
    let first = PlayTicTacToeRequest {
        row: 0,
        col: 0,
        setup: None,
    };
    let status = other
        .play_tic_tac_toe(tokio_stream::iter([first]))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted);
    // Closing one lets a single stream in again.
    exchange(&mut stream, vec![close(0)]).await;
    server.wait_for_live_games(2).await;
    let _again = common::messages::live_tic_tac_toe(&mut client).await;
    server.wait_for_live_games(3).await;
}

/// 100 concurrent PlayMany streams of 100 games each, every game played to its end:
/// Tic-Tac-Toe draws, all answered in order. Fails against a server that mixes up
/// streams or games under concurrency.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_streams_of_a_hundred_games() {
    let server = TestServer::start().await;
    let draw = arbiter::games::tic_tac_toe::fixtures::TIC_TAC_TOE_DRAW;
    let mut tasks = Vec::new();
    for s in 0..100u64 {
        let mut client = server.client().await;
        tasks.push(tokio::spawn(async move {
            let requests: Vec<PlayManyRequest> = draw
                .iter()
                .map(|&(row, col)| {
                    message(
                        (0..100)
                            .map(|g| tic_tac_toe(s * 1000 + g, row, col))
                            .collect(),
                    )
                })
                .collect();
            let mut replies = client
                .play_many(tokio_stream::iter(requests))
                .await
                .unwrap()
                .into_inner();
            let mut count = 0;
            while let Some(reply) = replies.message().await.unwrap() {
                count += 1;
                for (g, state) in reply.states.iter().enumerate() {
                    assert_eq!(state.game, s * 1000 + g as u64);
                    match &state.state {
                        Some(State::TicTacToe(r)) => {
                            assert_eq!(r.moves_played, count);
                            assert_eq!(r.rejected, "");
                        }
                        other => panic!("{other:?}"),
                    }
                }
            }
            assert_eq!(count, 9);
        }));
    }
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .unwrap()
            .unwrap();
    }
    server.wait_for_live_games(0).await;
}

/// At shutdown, once the grace is over, a PlayMany stream ends with UNAVAILABLE saying
/// how to resume. Fails against a server that leaves it open or says nothing of it.
#[tokio::test]
async fn shutdown_ends_a_playmany_stream_with_the_way_to_resume() {
    let mut settings = Settings::default();
    settings.shutdown_drain = Duration::ZERO;
    settings.shutdown_grace = Duration::from_millis(100);
    let mut server = TestServer::start_with(settings).await;
    let mut stream = open(&server).await;
    exchange(&mut stream, vec![drop(1, 0)]).await;
    server.begin_shutdown();
    let status = tokio::time::timeout(Duration::from_secs(10), stream.1.message())
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
    assert!(
        status.message().contains("setup and its history"),
        "{status:?}"
    );
    server.wait_for_live_games(0).await;
}

/// One message of 10,000 drops into 100x100 games would be a 100 MB reply: the reply
/// stops growing at MAX_REPLY_BYTES (and one state), and the actions past it are
/// answered with `invalid` on `action`, unapplied. Fails against a server whose reply
/// grows with every action, or that applies the actions it does not report.
#[tokio::test]
async fn a_reply_holds_at_most_its_byte_budget() {
    let server = TestServer::start().await;
    let mut stream = open(&server).await;
    let setup = connect_four_setup((100, 100, 100), &[]);
    exchange(
        &mut stream,
        vec![game_action(1, Action::ConnectFour(setup))],
    )
    .await;
    let drops: Vec<GameAction> = (0..10_000).map(|i| drop(1, i % 100)).collect();
    stream.0.send(message(drops)).await.unwrap();
    let reply = stream.1.message().await.unwrap().unwrap();
    assert_eq!(reply.states.len(), 10_000);
    let applied = answered_within_budget(&reply, &reply.states, |s| s.state.is_some());
    assert!(applied > 100 && applied < 1000, "{applied} applied");
    for state in &reply.states[applied..] {
        assert_eq!(only_violation(state).field, "action");
    }
    // The game holds exactly the drops reported: the next one is the next piece.
    let states = exchange(&mut stream, vec![drop(1, 0)]).await;
    match &states[0].state {
        Some(State::ConnectFour(r)) => assert_eq!(r.moves_played, applied as i32 + 1),
        other => panic!("{other:?}"),
    }
}
