//! PlayMany: many games of every registered kind in one stream, each answered field for
//! field as its kind's own stream answers the same messages; compared on random
//! interleavings (setups, histories, illegal moves, wrong kinds, closes, reused numbers),
//! and each rule of the stream by name, over the wire. The games are every game
//! [`arbiter::visit_live_games`] hands out, played through their `Fixture` (a game
//! registered is a game covered); only the rules that belong to one game's messages
//! (an Othello board's rows, a 100x100 Connect Four board's replies) name their game.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use arbiter::proto::game_action::Action;
use arbiter::proto::game_state::State;
use arbiter::proto::{
    play_othello_request, Board, FieldViolation, GameAction, GameState, OthelloSetup,
    PlayManyRequest, PlayManyResponse, PlayOthelloRequest,
};
use arbiter::server::Settings;
use arbiter::{Arbiter, LiveGame, LiveGameVisitor, StreamLimits};
use common::bulk::{
    answered_within_budget, close, drop, exchange, game_action, message, only_violation, open_many,
    ManyStream,
};
use common::games::{hold_open, live_rpcs, Held};
use common::setups::connect_four_setup;
use common::TestServer;
use futures_util::future::{BoxFuture, LocalBoxFuture};
use futures_util::StreamExt;
use proptest::prelude::*;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt;

/// A registered live game's kind, whatever its game: what the tests that mix kinds in
/// one stream need of it.
#[derive(Clone, Copy)]
struct Kind {
    /// Its label (`GameKind::label`), by which PlayMany names a game's kind.
    label: &'static str,
    /// Its own RPC.
    rpc: &'static str,
    /// A game of this kind not yet sent anything, played alone.
    alone: fn() -> Box<dyn Alone>,
    /// A stream of this kind opened over the wire on a channel and sent nothing: what
    /// keeps it open, or the status refusing it.
    open_alone: fn(Channel) -> BoxFuture<'static, Result<Held, Status>>,
}

/// Every registered live game's kind, in the registration's order.
fn kinds() -> Vec<Kind> {
    struct Kinds(Vec<Kind>);
    impl LiveGameVisitor for Kinds {
        fn visit<G: LiveGame>(&mut self) {
            self.0.push(Kind {
                label: G::KIND.label(),
                rpc: G::RPC,
                alone: alone::<G>,
                open_alone: hold_open::<G>,
            });
        }
    }
    let mut kinds = Kinds(Vec::new());
    arbiter::visit_live_games(&mut kinds);
    assert!(!kinds.0.is_empty(), "no live game is registered");
    kinds.0
}

/// One message to a game, whatever its kind: made into the game's own message by its
/// `Fixture` when it is played.
#[derive(Debug, Clone)]
enum Pick {
    /// The fixture's setup, its history the moves applied in a random game of the
    /// fixture (its messages made from these picks), then `bad` rejected messages.
    Setup { moves: Vec<u64>, bad: usize },
    /// The fixture's next message after the game's last reply.
    Next(u64),
    /// The message the fixture says is always rejected.
    Rejected,
    /// The request's default (no action set, in most games).
    Default,
    /// A message after the game's last reply that is applied and leaves the game going
    /// on, the first found of those made from picks drawn from this seed.
    Applied(u64),
}

/// A game of some kind as its own stream plays it: the messages it has been sent.
trait Alone {
    /// Plays `pick`, made into the game's next message: the action that carries the
    /// message in PlayMany, and the last answer of the game's own stream (on `service`)
    /// sent every message so far, as PlayMany states it: its reply, or the status ending
    /// the stream.
    fn play<'a>(
        &'a mut self,
        service: &'a Arbiter,
        pick: &'a Pick,
    ) -> LocalBoxFuture<'a, (Action, Result<State, Status>)>;

    /// Whether the game has ended.
    fn over(&self) -> bool;
}

/// A game of `G` as its own stream plays it.
struct AloneGame<G: LiveGame> {
    messages: Vec<G::Request>,
    /// Its last reply; the default before any.
    last: G::Response,
}

fn alone<G: LiveGame>() -> Box<dyn Alone> {
    Box::new(AloneGame::<G> {
        messages: Vec::new(),
        last: G::Response::default(),
    })
}

impl<G: LiveGame> Alone for AloneGame<G> {
    fn play<'a>(
        &'a mut self,
        service: &'a Arbiter,
        pick: &'a Pick,
    ) -> LocalBoxFuture<'a, (Action, Result<State, Status>)> {
        Box::pin(async move {
            let message = match pick {
                Pick::Setup { moves, bad } => {
                    let mut history = playout::<G>(moves).await;
                    history.extend(std::iter::repeat_n(G::rejected(), *bad));
                    G::setup(None, None, &history)
                }
                Pick::Next(pick) => G::next(*pick, &self.last),
                Pick::Rejected => G::rejected(),
                Pick::Default => G::Request::default(),
                Pick::Applied(seed) => {
                    applied::<G>(service, &self.messages, &self.last, *seed).await
                }
            };
            self.messages.push(message.clone());
            let answer = single::<G>(service, self.messages.clone())
                .await
                .pop()
                .expect("an answer to every message");
            let answer = answer.map(|reply| {
                let state = G::state(copy(&reply));
                self.last = reply;
                state
            });
            (G::action(message), answer)
        })
    }

    fn over(&self) -> bool {
        !self.messages.is_empty() && G::seen(&self.last).to_move.is_none()
    }
}

/// A copy of `message` (the games' replies are not `Clone` as `LiveGame` names them).
fn copy<M: prost::Message + Default>(message: &M) -> M {
    M::decode(&message.encode_to_vec()[..]).expect("a message decodes from its own bytes")
}

/// Whether `after`, the reply to the message after `before`'s, says the message was
/// applied as a move.
fn moved<G: LiveGame>(before: &G::Response, after: &G::Response) -> bool {
    let after = G::seen(after);
    after.rejected.is_empty() && after.moves_played == G::seen(before).moves_played + 1
}

/// The `n`th number drawn from `seed` (splitmix64).
fn mix(seed: u64, n: u64) -> u64 {
    let mut z = seed.wrapping_add(n.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The moves applied in a random game of `G` from its fixture's start, its messages
/// made from `picks` in turn: a history its setup replays.
async fn playout<G: LiveGame>(picks: &[u64]) -> Vec<G::Request> {
    let service = Arbiter::default();
    let (sender, requests) = tokio::sync::mpsc::unbounded_channel();
    let mut replies = service.open_game::<G, _>(UnboundedReceiverStream::new(requests));
    sender.send(Ok(G::setup(None, None, &[]))).unwrap();
    let mut last = match replies.next().await {
        Some(Ok(reply)) => reply,
        other => panic!(
            "{}: the fixture's setup is refused: {:?}",
            G::RPC,
            other.map(|answer| answer.err())
        ),
    };
    let mut applied = Vec::new();
    for &pick in picks {
        if G::seen(&last).to_move.is_none() {
            break;
        }
        let message = G::next(pick, &last);
        sender.send(Ok(message.clone())).unwrap();
        let Some(Ok(reply)) = replies.next().await else {
            break;
        };
        if moved::<G>(&last, &reply) {
            applied.push(message);
        }
        last = reply;
    }
    applied
}

/// A message after `sent` (whose last reply is `last`) that `G`'s own stream applies,
/// the game going on: the first of the fixture's next messages, made from picks drawn
/// from `seed`, that is.
async fn applied<G: LiveGame>(
    service: &Arbiter,
    sent: &[G::Request],
    last: &G::Response,
    seed: u64,
) -> G::Request {
    for n in 0..1000 {
        let message = G::next(mix(seed, n), last);
        let mut messages = sent.to_vec();
        messages.push(message.clone());
        if let Some(Ok(reply)) = single::<G>(service, messages).await.pop() {
            if moved::<G>(last, &reply) && G::seen(&reply).to_move.is_some() {
                return message;
            }
        }
    }
    panic!("{}: none of a thousand messages was applied", G::RPC)
}

/// One action of a random script: a message to a game, a close, or nothing.
#[derive(Debug, Clone)]
enum Step {
    /// A message to game number `.0`, of the kind `.1` (by its place in [`kinds`]), or,
    /// if `None`, of the kind its game is (of kind `.0` modulo the kinds if it holds
    /// none).
    Send(u64, Option<usize>, Pick),
    Close(u64),
    CloseFalse(u64),
    Nothing(u64),
}

fn pick() -> impl Strategy<Value = Pick> {
    let setup = (
        prop::collection::vec(any::<u64>(), 0..6),
        prop_oneof![3 => Just(0usize), 1 => 1usize..3],
    )
        .prop_map(|(moves, bad)| Pick::Setup { moves, bad });
    prop_oneof![
        8 => any::<u64>().prop_map(Pick::Next),
        2 => Just(Pick::Rejected),
        2 => setup,
        1 => Just(Pick::Default),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    let game = 0u64..6;
    let kind = prop_oneof![4 => Just(None), 1 => (0..live_rpcs().len()).prop_map(Some)];
    prop_oneof![
        20 => (game.clone(), kind, pick()).prop_map(|(g, k, p)| Step::Send(g, k, p)),
        2 => game.clone().prop_map(Step::Close),
        1 => game.clone().prop_map(Step::CloseFalse),
        1 => game.prop_map(Step::Nothing),
    ]
}

/// A script cut into messages: each inner list is one PlayMany message.
fn script() -> impl Strategy<Value = Vec<Vec<Step>>> {
    prop::collection::vec(prop::collection::vec(step(), 0..8), 1..12)
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
        .collect()
        .await
}

/// What the model expects of one action.
#[derive(Debug)]
enum Expect {
    State(State),
    Closed,
    /// Violations: exactly these (a malformed setup's), as its stream's BadRequest.
    Exactly(Vec<FieldViolation>),
    /// One violation on this field.
    On(&'static str),
    /// One violation on this field, whose description holds each of these.
    Said(&'static str, Vec<String>),
}

impl Expect {
    /// What PlayMany states for a game whose own stream gave `answer`: its reply, the
    /// violations of the malformed setup that ended it, or a violation on `game` for a
    /// limit that did.
    fn answer(answer: Result<State, Status>) -> Self {
        match answer {
            Ok(state) => Self::State(state),
            Err(status) => match status.code() {
                Code::InvalidArgument => Self::Exactly(violations(&status)),
                Code::ResourceExhausted => Self::On("game"),
                other => panic!("{other:?}: {status:?}"),
            },
        }
    }

    /// What its stream's reply to a message answered with `answer` must state: the
    /// reply; anything else is a broken fixture.
    fn state(answer: Result<State, Status>, what: &str) -> Self {
        Self::State(answer.unwrap_or_else(|status| panic!("{what}: {status:?}")))
    }
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
        Expect::Said(field, parts) => {
            prop_assert_eq!(got.invalid.len(), 1, "{:?}", got);
            prop_assert_eq!(&got.invalid[0].field, field);
            for part in parts {
                prop_assert!(
                    got.invalid[0].description.contains(part.as_str()),
                    "{:?}",
                    got
                );
            }
            prop_assert!(got.state.is_none());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// Random scripts of every registered game, mixed in one stream. Fails against a
    /// PlayMany whose game answers differ in any field from its kind's own stream's for
    /// the same messages, that lets one game's action touch another, that keeps a game
    /// ended by a limit or a close, or that starts one from a malformed setup.
    #[test]
    fn every_game_is_answered_as_its_own_stream_answers_it(script in script()) {
        runtime().block_on(async {
            let kinds = kinds();
            let service = Arbiter::new(limits(), CancellationToken::new());
            // The model: per game number, its kind and its game played alone; the
            // messages sent and what each action must get.
            let mut games: HashMap<u64, (usize, Box<dyn Alone>)> = HashMap::new();
            let mut requests = Vec::new();
            let mut expected = Vec::new();
            for message in &script {
                let mut actions = Vec::new();
                for step in message {
                    let (action, expect) = match step {
                        Step::Send(game, kind, pick) => {
                            let held = games.get(game).map(|(kind, _)| *kind);
                            let kind = kind.or(held).unwrap_or(*game as usize % kinds.len());
                            let (action, expect) = match held {
                                Some(held) if held != kind => {
                                    let mut other = (kinds[kind].alone)();
                                    (other.play(&service, pick).await.0, Expect::On("action"))
                                }
                                _ => {
                                    let (_, alone) = games
                                        .entry(*game)
                                        .or_insert_with(|| (kind, (kinds[kind].alone)()));
                                    let (action, answer) = alone.play(&service, pick).await;
                                    if answer.is_err() {
                                        games.remove(game);
                                    }
                                    (action, Expect::answer(answer))
                                }
                            };
                            (game_action(*game, action), expect)
                        }
                        Step::Close(game) => match games.remove(game) {
                            Some(_) => (close(*game), Expect::Closed),
                            None => (close(*game), Expect::On("game")),
                        },
                        Step::CloseFalse(game) => {
                            (game_action(*game, Action::Close(false)), Expect::On("action"))
                        }
                        Step::Nothing(game) => {
                            (GameAction { game: *game, action: None }, Expect::On("action"))
                        }
                    };
                    expected.push((action.game, expect));
                    actions.push(action);
                }
                requests.push(PlayManyRequest { actions });
            }
            let replies: Vec<PlayManyResponse> = service
                .open_many(futures_util::stream::iter(requests.into_iter().map(Ok)))
                .map(|reply| reply.unwrap().to_response().unwrap())
                .collect()
                .await;
            prop_assert_eq!(replies.len(), script.len());
            let mut expected = expected.iter();
            for (message, reply) in script.iter().zip(&replies) {
                prop_assert_eq!(reply.states.len(), message.len());
                for got in &reply.states {
                    let (game, expect) = expected.next().unwrap();
                    matches(got, *game, expect)?;
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

/// Sends one message of `sent`'s actions on `stream` and checks its reply: a state for
/// each action, in order, for its game, as the action expects.
async fn expect_states(stream: &mut ManyStream, sent: Vec<(GameAction, Expect)>) {
    let numbers: Vec<u64> = sent.iter().map(|(action, _)| action.game).collect();
    let (actions, expected): (Vec<_>, Vec<_>) = sent.into_iter().unzip();
    let states = exchange(stream, actions).await;
    assert_eq!(
        states.iter().map(|state| state.game).collect::<Vec<_>>(),
        numbers
    );
    for ((got, number), expect) in states.iter().zip(numbers).zip(&expected) {
        matches(got, number, expect).unwrap();
    }
}

/// The fixture's setup with an empty history.
fn fresh() -> Pick {
    Pick::Setup {
        moves: Vec::new(),
        bad: 0,
    }
}

/// A new game of `kind` sent its fixture's setup, on `service`: the game, and the
/// setup's action with the state it must get.
async fn set_up(
    kind: &Kind,
    service: &Arbiter,
    game: u64,
) -> (Box<dyn Alone>, (GameAction, Expect)) {
    let mut alone = (kind.alone)();
    let (action, answer) = alone.play(service, &fresh()).await;
    let expect = Expect::state(answer, kind.rpc);
    (alone, (game_action(game, action), expect))
}

/// A game of every registered kind in one message, a move in each, then their closes
/// and, at each number freed, a game of the next kind: each state in order, field for
/// field the one its kind's own stream gives. Fails against a server that mixes games
/// or kinds up, answers out of order or otherwise than a game's own stream, or keeps a
/// closed game (its number would not start a game of another kind).
#[tokio::test]
async fn games_of_different_kinds_share_a_stream_and_close() {
    let kinds = kinds();
    let service = Arbiter::default();
    let server = TestServer::start().await;
    let mut stream = open(&server).await;
    let number = |i: usize| 7 + 2 * i as u64;
    let mut games = Vec::new();
    let mut sent = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        let (game, setup) = set_up(kind, &service, number(i)).await;
        games.push(game);
        sent.push(setup);
    }
    expect_states(&mut stream, sent).await;
    let mut sent = Vec::new();
    for (i, game) in games.iter_mut().enumerate() {
        let (action, answer) = game.play(&service, &Pick::Applied(i as u64)).await;
        sent.push((
            game_action(number(i), action),
            Expect::state(answer, kinds[i].rpc),
        ));
    }
    expect_states(&mut stream, sent).await;
    server.wait_for_live_games(kinds.len()).await;
    // Every game closed, then each number holds a game of the next kind, a move in.
    let mut sent: Vec<_> = (0..kinds.len())
        .map(|i| (close(number(i)), Expect::Closed))
        .collect();
    for i in 0..kinds.len() {
        let next = &kinds[(i + 1) % kinds.len()];
        let (mut game, setup) = set_up(next, &service, number(i)).await;
        let (action, answer) = game.play(&service, &Pick::Applied(i as u64)).await;
        sent.push(setup);
        sent.push((
            game_action(number(i), action),
            Expect::state(answer, next.rpc),
        ));
    }
    expect_states(&mut stream, sent).await;
    server.wait_for_live_games(kinds.len()).await;
    drop_stream(stream);
    server.wait_for_live_games(0).await;
}

fn drop_stream<T>(stream: T) {
    std::mem::drop(stream);
}

/// For a game of every registered kind in turn: actions that reach no game change
/// nothing and are answered in place: a message of every other kind (naming both
/// kinds), no action, `close: false`, a close of a number that holds no game; then the
/// game goes on where it was. Fails against a server that ends the stream for them,
/// lets them touch the game, or names the kinds otherwise.
#[tokio::test]
async fn actions_that_reach_no_game_are_answered_in_place() {
    let kinds = kinds();
    let service = Arbiter::default();
    let server = TestServer::start().await;
    let mut stream = open(&server).await;
    for (h, held) in kinds.iter().enumerate() {
        let (mut game, setup) = set_up(held, &service, 1).await;
        let (first, answer) = game.play(&service, &Pick::Applied(h as u64)).await;
        expect_states(
            &mut stream,
            vec![
                setup,
                (game_action(1, first), Expect::state(answer, held.rpc)),
            ],
        )
        .await;
        let mut sent = Vec::new();
        for other in kinds.iter().filter(|other| other.rpc != held.rpc) {
            let (action, _) = (other.alone)().play(&service, &fresh()).await;
            let said = vec![
                format!("game 1 is a {} game", held.label),
                format!("is for a {} game", other.label),
            ];
            sent.push((game_action(1, action), Expect::Said("action", said)));
        }
        sent.push((
            GameAction {
                game: 1,
                action: None,
            },
            Expect::On("action"),
        ));
        sent.push((game_action(1, Action::Close(false)), Expect::On("action")));
        let no_game = vec!["game 2 holds no game to close".to_string()];
        sent.push((close(2), Expect::Said("game", no_game)));
        // The game went on where it was: its second move.
        let (second, answer) = game.play(&service, &Pick::Applied(h as u64 + 100)).await;
        sent.push((game_action(1, second), Expect::state(answer, held.rpc)));
        expect_states(&mut stream, sent).await;
        expect_states(&mut stream, vec![(close(1), Expect::Closed)]).await;
    }
}

/// A setup of every registered kind whose history holds rejected moves starts no game
/// and names its fields as the kind's own stream does (`setup.history[0]` first); the
/// number stays free: a setup sent to it next starts a game. Fails against a server
/// that starts a game from it (the next setup would then be refused as late) or names
/// the fields otherwise.
#[tokio::test]
async fn a_malformed_setup_starts_no_game() {
    let kinds = kinds();
    let service = Arbiter::default();
    let server = TestServer::start().await;
    let mut stream = open(&server).await;
    let mut sent = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        let bad = Pick::Setup {
            moves: Vec::new(),
            bad: 3,
        };
        let (action, answer) = (kind.alone)().play(&service, &bad).await;
        let Err(status) = answer else {
            panic!("{}: a setup of rejected moves was answered", kind.rpc);
        };
        assert_eq!(
            status.code(),
            Code::InvalidArgument,
            "{}: {status:?}",
            kind.rpc
        );
        let found = violations(&status);
        assert_eq!(
            found[0].field, "setup.history[0]",
            "{}: {found:?}",
            kind.rpc
        );
        sent.push((game_action(i as u64, action), Expect::Exactly(found)));
        sent.push(set_up(kind, &service, i as u64).await.1);
    }
    expect_states(&mut stream, sent).await;
    server.wait_for_live_games(kinds.len()).await;
}

/// An Othello setup's malformed board starts no game and names its rows and its side
/// to move as Othello's own stream does; the number stays free. (The fixtures set up no
/// malformed board: this is Othello's.) Fails against a server that starts a game from
/// it or names the fields otherwise.
#[tokio::test]
async fn a_malformed_othello_board_is_named_field_by_field() {
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

/// For every registered kind, two games: one sent more unapplied messages (its setup,
/// then rejected moves) than its stream allows is ended alone, with `invalid` on
/// `game`, and its number freed; the other goes on, and so do the other kinds' games.
/// Fails against a server without the per-game limit, that counts another game's
/// messages, or that ends the whole stream.
#[tokio::test]
async fn the_unapplied_message_limit_ends_only_its_game() {
    let kinds = kinds();
    let server = TestServer::start_with(common::options(&["--max-unapplied-messages", "2"])).await;
    let service = Arbiter::new(
        StreamLimits {
            max_unapplied: 2,
            ..StreamLimits::default()
        },
        CancellationToken::new(),
    );
    let mut stream = open(&server).await;
    let (ended, going) = (|i: usize| 10 * i as u64 + 1, |i: usize| 10 * i as u64 + 2);
    let mut games = Vec::new();
    let mut sent = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        let (first, setup) = set_up(kind, &service, ended(i)).await;
        let (second, other) = set_up(kind, &service, going(i)).await;
        games.push((first, second));
        sent.extend([setup, other]);
    }
    expect_states(&mut stream, sent).await;
    server.wait_for_live_games(2 * kinds.len()).await;
    // The setup and one rejected move are allowed ...
    let mut sent = Vec::new();
    for (i, (first, _)) in games.iter_mut().enumerate() {
        let (action, answer) = first.play(&service, &Pick::Rejected).await;
        sent.push((
            game_action(ended(i), action),
            Expect::state(answer, kinds[i].rpc),
        ));
    }
    expect_states(&mut stream, sent).await;
    // ... the next rejected move ends the game; the other is played.
    let mut sent = Vec::new();
    for (i, (first, second)) in games.iter_mut().enumerate() {
        let (action, answer) = first.play(&service, &Pick::Rejected).await;
        let Err(status) = answer else {
            panic!("{}: its own stream went on", kinds[i].rpc);
        };
        assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
        let said = vec![
            "more than 2 messages".to_string(),
            "it is ended".to_string(),
        ];
        sent.push((game_action(ended(i), action), Expect::Said("game", said)));
        let (action, answer) = second.play(&service, &Pick::Applied(i as u64)).await;
        sent.push((
            game_action(going(i), action),
            Expect::state(answer, kinds[i].rpc),
        ));
    }
    expect_states(&mut stream, sent).await;
    server.wait_for_live_games(kinds.len()).await;
    // Each number is free: a new game starts there.
    let mut sent = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        sent.push(set_up(kind, &service, ended(i)).await.1);
    }
    expect_states(&mut stream, sent).await;
    server.wait_for_live_games(2 * kinds.len()).await;
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

/// A stream holds at most --max-games-per-stream games, here one of each registered
/// kind; past it a new game of every kind is refused in place and the stream goes on; a
/// close of a game of one kind makes room for a game of another. Fails against a server
/// without the limit, or one that counts some kind's games apart.
#[tokio::test]
async fn a_stream_holds_at_most_its_limit_of_games() {
    let kinds = kinds();
    let limit = kinds.len().to_string();
    let server = TestServer::start_with(common::options(&["--max-games-per-stream", &limit])).await;
    let service = Arbiter::default();
    let mut stream = open(&server).await;
    let refused = || Expect::Said("game", vec![format!("limit of {limit} games")]);
    let mut sent = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        sent.push(set_up(kind, &service, i as u64).await.1);
    }
    expect_states(&mut stream, sent).await;
    server.wait_for_live_games(kinds.len()).await;
    let mut sent = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        let (action, _) = set_up(kind, &service, 100 + i as u64).await.1;
        sent.push((action, refused()));
    }
    expect_states(&mut stream, sent).await;
    // A close makes room, for a game of the next kind.
    let mut sent = Vec::new();
    for i in 0..kinds.len() {
        let next = &kinds[(i + 1) % kinds.len()];
        sent.push((close(i as u64), Expect::Closed));
        sent.push(set_up(next, &service, 100 + i as u64).await.1);
    }
    expect_states(&mut stream, sent).await;
    let mut sent = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        let (action, _) = set_up(kind, &service, 200 + i as u64).await.1;
        sent.push((action, refused()));
    }
    expect_states(&mut stream, sent).await;
    server.wait_for_live_games(kinds.len()).await;
}

/// Checks the server, whose live-game limit is one game of each of `kinds` and full,
/// refuses a game of every kind, in PlayMany on `stream` (numbers from `first`) and as a
/// single stream on `channel`.
async fn all_refused(
    kinds: &[Kind],
    service: &Arbiter,
    channel: &Channel,
    stream: &mut ManyStream,
    first: u64,
) {
    let said = format!("limit of {} live games", kinds.len());
    let mut sent = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        let (action, _) = set_up(kind, service, first + i as u64).await.1;
        sent.push((action, Expect::Said("game", vec![said.clone()])));
    }
    expect_states(stream, sent).await;
    for kind in kinds {
        let Err(status) = (kind.open_alone)(channel.clone()).await else {
            panic!("{}: a stream opened past the limit", kind.rpc);
        };
        assert_eq!(
            status.code(),
            Code::ResourceExhausted,
            "{}: {status:?}",
            kind.rpc
        );
        assert!(status.message().contains(&said), "{status:?}");
    }
}

/// The live-game limit counts PlayMany games and single streams together, both ways,
/// whatever their kinds: with the limit filled by a single stream of every registered
/// kind, a PlayMany game of every kind is refused; each single stream ended in turn lets
/// a PlayMany game of its kind in, after which a game of every kind is refused again,
/// as a PlayMany game and as a single stream; each PlayMany game closed lets a single
/// stream of the next kind in. Fails against a server that counts either alone, or
/// leaves some kind out.
#[tokio::test]
async fn the_live_game_limit_counts_playmany_games_and_streams_alike() {
    let kinds = kinds();
    let limit = kinds.len();
    let server =
        TestServer::start_with(common::options(&["--max-live-games", &limit.to_string()])).await;
    let service = Arbiter::default();
    let channel = server.channel().await;
    let mut alone = Vec::new();
    for kind in &kinds {
        let held = (kind.open_alone)(channel.clone()).await;
        alone.push(Some(
            held.unwrap_or_else(|status| panic!("{}: {status:?}", kind.rpc)),
        ));
    }
    server.wait_for_live_games(limit).await;
    let mut stream = open(&server).await;
    all_refused(&kinds, &service, &channel, &mut stream, 100).await;
    for (i, kind) in kinds.iter().enumerate() {
        alone[i] = None;
        server.wait_for_live_games(limit - 1).await;
        expect_states(&mut stream, vec![set_up(kind, &service, i as u64).await.1]).await;
        server.wait_for_live_games(limit).await;
        all_refused(
            &kinds,
            &service,
            &channel,
            &mut stream,
            100 * (i as u64 + 2),
        )
        .await;
    }
    // Closing one lets a single stream in again, of another kind.
    for (i, slot) in alone.iter_mut().enumerate() {
        expect_states(&mut stream, vec![(close(i as u64), Expect::Closed)]).await;
        server.wait_for_live_games(limit - 1).await;
        let next = &kinds[(i + 1) % limit];
        let held = (next.open_alone)(channel.clone()).await;
        *slot = Some(held.unwrap_or_else(|status| panic!("{}: {status:?}", next.rpc)));
        server.wait_for_live_games(limit).await;
    }
    all_refused(&kinds, &service, &channel, &mut stream, 10_000).await;
}

/// A game of `kind` played alone to its end from its fixture's setup, its messages (some
/// rejected) made from picks drawn from `seed`: each message's action, and the state it
/// must get.
async fn to_the_end(kind: &Kind, seed: u64) -> Vec<(Action, State)> {
    let service = Arbiter::default();
    let mut game = (kind.alone)();
    let mut script = Vec::new();
    let mut pick = fresh();
    for n in 0..300 {
        let (action, answer) = game.play(&service, &pick).await;
        let state = answer.unwrap_or_else(|status| panic!("{}: {status:?}", kind.rpc));
        script.push((action, state));
        if game.over() {
            return script;
        }
        pick = Pick::Next(mix(seed, n));
    }
    panic!("{}: a game of 300 messages did not end", kind.rpc)
}

/// 100 concurrent PlayMany streams of 100 games each, of every registered kind in turn,
/// every game played to its end: all answered in order, each state the one the game's
/// own stream gives. Fails against a server that mixes up streams, games or kinds under
/// concurrency.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_streams_of_a_hundred_games() {
    const SEEDS: usize = 3;
    let kinds = kinds();
    let mut scripts = Vec::new();
    for kind in &kinds {
        for seed in 0..SEEDS {
            scripts.push(to_the_end(kind, seed as u64).await);
        }
    }
    // Game `g` of stream `s` plays script `script(s, g)`.
    let count = kinds.len();
    let script = move |s: u64, g: u64| (g as usize % count) * SEEDS + (s + g) as usize % SEEDS;
    let scripts = std::sync::Arc::new(scripts);
    let server = TestServer::start().await;
    let mut tasks = Vec::new();
    for s in 0..100u64 {
        let mut client = server.client().await;
        let scripts = scripts.clone();
        tasks.push(tokio::spawn(async move {
            let length = (0..100).map(|g| scripts[script(s, g)].len()).max().unwrap();
            // Message `t`: the `t`th message of every game whose script has one.
            let expected: Vec<Vec<(u64, &State)>> = (0..length)
                .map(|t| {
                    (0..100)
                        .filter_map(|g| {
                            let (_, state) = scripts[script(s, g)].get(t)?;
                            Some((s * 1000 + g, state))
                        })
                        .collect()
                })
                .collect();
            let requests: Vec<PlayManyRequest> = (0..length)
                .map(|t| {
                    message(
                        (0..100)
                            .filter_map(|g| {
                                let (action, _) = scripts[script(s, g)].get(t)?;
                                Some(game_action(s * 1000 + g, action.clone()))
                            })
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
                let expected = &expected[count];
                assert_eq!(reply.states.len(), expected.len());
                for (got, (game, state)) in reply.states.iter().zip(expected) {
                    assert_eq!(got.game, *game);
                    assert!(got.invalid.is_empty(), "{got:?}");
                    assert_eq!(got.state.as_ref(), Some(*state), "game {game}");
                }
                count += 1;
            }
            assert_eq!(count, length);
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

/// At shutdown, once the grace is over, a PlayMany stream holding a game of every
/// registered kind ends with UNAVAILABLE saying how to resume. Fails against a server
/// that leaves it open or says nothing of it.
#[tokio::test]
async fn shutdown_ends_a_playmany_stream_with_the_way_to_resume() {
    let kinds = kinds();
    let service = Arbiter::default();
    let mut settings = Settings::default();
    settings.shutdown_drain = Duration::ZERO;
    settings.shutdown_grace = Duration::from_millis(100);
    let mut server = TestServer::start_with(settings).await;
    let mut stream = open(&server).await;
    let mut sent = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        sent.push(set_up(kind, &service, i as u64).await.1);
    }
    expect_states(&mut stream, sent).await;
    server.wait_for_live_games(kinds.len()).await;
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
