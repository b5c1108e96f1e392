//! Live games on the clock, every registered live game alike, each played through its
//! fixture (`arbiter::games::Fixture`: its test game's setups, its random next messages,
//! what its replies say), so that a game registered is a game covered with no line here;
//! only Othello's pass is a test of one game. On tokio's stopped clock (`start_paused`):
//! random games of every game, with random time controls and random think times, every
//! reply's clock, verdict, ending and order held against a naive model of the clock;
//! games cut and resumed with the clock of their last reply; PlayMany against the same
//! games on their own streams, every field; limits that end a stream at a flag's instant.
//! Those games are played in process (`Arbiter::open_game`, `Arbiter::open_many`), so that
//! no network I/O lets the stopped clock move while a message is on its way. Over the
//! wire, with real short clocks: flags that fall unprompted, the idle timeout held off by
//! a running clock, malformed clocks named, games ended counted by ending.

mod common;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt::{Debug, Display};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use arbiter::games::othello;
use arbiter::kit::clock::Side;
use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::{
    game_action, game_state, play_othello_request, Board, Clock, Ending, GameAction, OthelloSetup,
    PlayManyRequest, PlayOthelloRequest, TimeControl, Verdict,
};
use arbiter::{visit_live_games, Arbiter, LiveGame, LiveGameVisitor, ReplyStream, StreamLimits};
use common::games::{for_each_game, live_rpcs, open, GameTest};
use futures_util::future::join_all;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;
use tokio_util::sync::CancellationToken;
use tonic::codec::Streaming;
use tonic::transport::Channel;
use tonic::Code;
use tonic_types::StatusExt;

/// A small generator of random numbers, seeded, so that a failing game can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    fn ms(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(lo + self.below(hi - lo + 1))
    }
}

/// `side`'s place in a clock's `[a_left, b_left]`.
fn index(side: Side) -> usize {
    match side {
        Side::A => 0,
        Side::B => 1,
    }
}

/// `side`'s win.
fn wins(side: Side) -> Verdict {
    match side {
        Side::A => Verdict::AWins,
        Side::B => Verdict::BWins,
    }
}

fn proto_duration(d: Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: d.as_secs() as i64,
        nanos: d.subsec_nanos() as i32,
    }
}

fn std_duration(d: &Option<prost_types::Duration>) -> Duration {
    let d = (*d).unwrap_or_default();
    Duration::new(d.seconds as u64, d.nanos as u32)
}

/// Each side's time left on `clock`.
fn left_on(clock: Option<&Clock>) -> Option<[Duration; 2]> {
    clock.map(|clock| [std_duration(&clock.a_left), std_duration(&clock.b_left)])
}

/// Each side's time left, as `reply` of the game `G` says it.
fn times_left<G: LiveGame>(reply: &G::Response) -> Option<[Duration; 2]> {
    left_on(G::seen(reply).clock)
}

/// `reply` of the game `G`, to print: the PlayMany state that carries it (the replies
/// and messages of a live game are not `Debug` themselves).
fn show<G: LiveGame>(reply: &G::Response) -> game_state::State {
    let copy = prost::Message::decode(prost::Message::encode_to_vec(reply).as_slice());
    G::state(copy.expect("a reply decodes"))
}

/// A reply of the game `G`, printed as [`show`] prints it.
struct Shown<'a, G: LiveGame>(&'a G::Response);

impl<G: LiveGame> Debug for Shown<'_, G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        show::<G>(self.0).fmt(f)
    }
}

/// `request` of the game `G`, to print: the PlayMany action that carries it.
fn show_request<G: LiveGame>(request: &G::Request) -> game_action::Action {
    G::action(request.clone())
}

fn control_of(initial: Duration) -> TimeControl {
    TimeControl {
        initial: Some(proto_duration(initial)),
        increment: None,
        move_limit: None,
    }
}

/// Something to learn of every live game, or to do with each: [`GameTest`] with an
/// answer.
trait GameQuery {
    type Answer;
    /// Asks it of the game `G`.
    fn ask<G: LiveGame>(&self) -> impl Future<Output = Self::Answer>;
}

/// `query`'s answer for every registered live game, in the registration's order: asked
/// of one game after another, or, `at_once`, of all of them at once (for the tests on
/// real clocks, each of which takes its time). Fails if no live game is registered.
async fn ask_each_game<Q: GameQuery>(query: &Q, at_once: bool) -> Vec<Q::Answer> {
    type Asked<'a, A> = Pin<Box<dyn Future<Output = A> + 'a>>;
    struct Collect<'a, Q: GameQuery> {
        query: &'a Q,
        asked: Vec<Asked<'a, Q::Answer>>,
    }
    impl<Q: GameQuery> LiveGameVisitor for Collect<'_, Q> {
        fn visit<G: LiveGame>(&mut self) {
            let query = self.query;
            self.asked.push(Box::pin(query.ask::<G>()));
        }
    }
    let mut collect = Collect {
        query,
        asked: Vec::new(),
    };
    visit_live_games(&mut collect);
    assert!(!collect.asked.is_empty(), "no live game is registered");
    if at_once {
        return join_all(collect.asked).await;
    }
    let mut answers = Vec::new();
    for asked in collect.asked {
        answers.push(asked.await);
    }
    answers
}

/// Which sides of `G`'s test game can win it: those that won it on the board in random
/// games without a clock (up to 200 of them, stopping once both have), learnt once per
/// game. A loss on time is the other side's win, or a draw when the other side could
/// not win (chess's rule: it could not checkmate, as the lone king of chess's test game
/// cannot); what a reply says ([`arbiter::games::Seen`]) does not tell which, so the
/// tests hold a loss on time to the other side's win where that side has won on the
/// board, and allow a draw as well where it never did.
async fn winners<G: LiveGame>() -> [bool; 2] {
    static WINNERS: OnceLock<Mutex<HashMap<&'static str, [bool; 2]>>> = OnceLock::new();
    let learnt = WINNERS.get_or_init(Default::default);
    if let Some(winners) = learnt.lock().unwrap().get(G::RPC) {
        return *winners;
    }
    let arbiter = Arbiter::default();
    let mut rng = Rng(0x5eed_0fa1);
    let mut won = [false; 2];
    for _ in 0..200 {
        if won == [true, true] {
            break;
        }
        let mut stream = Stream::<G>::open(&arbiter);
        stream.send(G::setup(None, None, &[])).await;
        let mut last = stream.reply().await;
        for _ in 0..300 {
            if G::seen(&last).to_move.is_none() {
                break;
            }
            stream.send(G::next(rng.next(), &last)).await;
            last = stream.reply().await;
        }
        let seen = G::seen(&last);
        if seen.ending == Ending::Board {
            match seen.verdict {
                Verdict::AWins => won[0] = true,
                Verdict::BWins => won[1] = true,
                _ => {}
            }
        }
    }
    assert!(
        won.contains(&true),
        "{}: no side ever won the test game on the board",
        G::RPC
    );
    println!("{}: the sides that can win: {won:?}", G::RPC);
    learnt.lock().unwrap().insert(G::RPC, won);
    won
}

/// Fails unless `verdict` is what a loss on time by `loser` gives, given which sides
/// can win (see [`winners`]).
fn assert_lost_on_time(verdict: Verdict, loser: Side, winners: [bool; 2], what: impl Display) {
    let winner = loser.other();
    if winners[index(winner)] {
        assert_eq!(verdict, wins(winner), "{what}: lost on time by {loser:?}");
    } else {
        assert!(
            verdict == wins(winner) || verdict == Verdict::Draw,
            "{what}: lost on time by {loser:?}: {verdict:?}"
        );
    }
}

/// The message a oneof (as `encoded`) holds, if it is in the same field as the one
/// `own` (the same oneof, holding a default `M`) is in.
fn in_field<M: prost::Message + Default>(encoded: &[u8], own: &[u8]) -> Option<M> {
    use prost::encoding::{decode_key, decode_varint};
    let (mut rest, mut own) = (encoded, own);
    let key = decode_key(&mut rest).ok()?;
    (key == decode_key(&mut own).ok()?).then_some(())?;
    let length = decode_varint(&mut rest).ok()?;
    (length == rest.len() as u64).then_some(())?;
    M::decode(rest).ok()
}

/// The reply of the game `G` that a PlayMany state holds, if it is one of `G`'s.
fn response_of<G: LiveGame>(state: &game_state::State) -> Option<G::Response> {
    let encoded = |state: &game_state::State| {
        let mut bytes = Vec::new();
        state.encode(&mut bytes);
        bytes
    };
    in_field(&encoded(state), &encoded(&G::state(G::Response::default())))
}

/// The reply of the game `G` in a PlayMany state; fails if it is none of `G`'s.
fn reply_in<G: LiveGame>(state: &arbiter::proto::GameState, what: &str) -> G::Response {
    state
        .state
        .as_ref()
        .and_then(response_of::<G>)
        .unwrap_or_else(|| panic!("{what}: a state of {}: {state:?}", G::RPC))
}

/// One game's stream, in process.
struct Stream<G: LiveGame> {
    sender: mpsc::Sender<Result<G::Request, tonic::Status>>,
    replies: ReplyStream<G::Response>,
}

impl<G: LiveGame> Stream<G> {
    fn open(arbiter: &Arbiter) -> Self {
        let (sender, requests) = mpsc::channel(4);
        let replies = arbiter.open_game::<G, _>(ReceiverStream::new(requests));
        Self { sender, replies }
    }

    async fn send(&mut self, request: G::Request) {
        self.sender.send(Ok(request)).await.unwrap();
    }

    async fn reply(&mut self) -> G::Response {
        self.replies.next().await.unwrap().unwrap()
    }
}

/// A move of `G`'s test game after `history` (the moves applied from its start, in
/// order): the first of `G::next`'s messages, pick by pick, that a game without a clock
/// applies there as a move (the rejected ones leave the game as it was). In process, on
/// a service of its own; no time passes.
async fn a_move<G: LiveGame>(history: &[G::Request]) -> G::Request {
    let what = format!("{}, after {} moves", G::RPC, history.len());
    let arbiter = Arbiter::default();
    let mut stream = Stream::<G>::open(&arbiter);
    stream.send(G::setup(None, None, history)).await;
    let start = stream.reply().await;
    let seen = G::seen(&start);
    assert!(
        seen.to_move.is_some(),
        "{what}: the game goes on: {:?}",
        Shown::<G>(&start)
    );
    for pick in 0..500 {
        let request = G::next(pick, &start);
        stream.send(request.clone()).await;
        let reply = stream.reply().await;
        let played = G::seen(&reply);
        if played.rejected.is_empty() {
            assert_eq!(
                played.moves_played,
                seen.moves_played + 1,
                "{what}: a move, {:?}: {:?}",
                show_request::<G>(&request),
                Shown::<G>(&reply)
            );
            return request;
        }
    }
    panic!("{what}: no move in 500 picks");
}

/// What the random games of one game went through, to hold that they went through it
/// all.
#[derive(Default)]
struct Counts {
    unprompted: Cell<usize>,
    before_a_move: Cell<usize>,
    resumes: Cell<usize>,
    applied: Cell<usize>,
    rejected: Cell<usize>,
    board_ends: Cell<usize>,
}

impl Counts {
    fn count(case: &Cell<usize>) {
        case.set(case.get() + 1);
    }

    /// Fails unless the random games met every case: losses announced on their own and
    /// before a move, resumes, moves applied and rejected as the game went on, games
    /// ended on the board.
    fn assert_every_case_met(&self, what: &str) {
        let counts = [
            ("announced on its own", self.unprompted.get()),
            ("announced before a move", self.before_a_move.get()),
            ("resumed", self.resumes.get()),
            ("applied", self.applied.get()),
            ("rejected as it went on", self.rejected.get()),
            ("ended on the board", self.board_ends.get()),
        ];
        println!("{what}: {counts:?}");
        for (case, count) in counts {
            assert!(count > 0, "{what}: no game was {case}: {counts:?}");
        }
    }
}

/// The naive model of a game's clock: each side's time at the start of the running
/// turn, whose turn runs and since when (as time since the game's start), who lost on
/// time, and which sides can win (see [`winners`]).
#[derive(Debug, Clone)]
struct Model {
    left: [Duration; 2],
    increment: Duration,
    move_limit: Option<Duration>,
    running: Option<(Side, Duration)>,
    lost: Option<Side>,
    winners: [bool; 2],
}

impl Model {
    fn deadline(&self) -> Option<Duration> {
        let (side, since) = self.running?;
        let mut allowed = self.left[index(side)];
        if let Some(limit) = self.move_limit {
            allowed = allowed.min(limit);
        }
        Some(since + allowed)
    }

    fn left_at(&self, t: Duration) -> [Duration; 2] {
        let mut left = self.left;
        if let Some((side, since)) = self.running {
            left[index(side)] = left[index(side)].saturating_sub(t - since);
        }
        left
    }

    /// If the side to move has run out by `t`: its loss, and the clock as of the
    /// deadline.
    fn flag_by(&mut self, t: Duration) -> Option<(Side, [Duration; 2])> {
        let deadline = self.deadline()?;
        if t < deadline {
            return None;
        }
        let (side, since) = self.running.take()?;
        self.left[index(side)] -= deadline - since;
        self.lost = Some(side);
        Some((side, self.left))
    }

    /// A message at `t`, `applied` or not, after which `next` is to move.
    fn message(&mut self, t: Duration, applied: bool, next: Option<Side>) -> [Duration; 2] {
        if applied {
            if let Some((side, since)) = self.running {
                self.left[index(side)] = self.left[index(side)] - (t - since) + self.increment;
            }
            self.running = next.map(|next| (next, t));
        }
        self.left_at(t)
    }
}

/// A random time control, in whole milliseconds (as tokio's timer counts), and perhaps
/// a clock to start from (as a resumed game does).
fn random_control(
    rng: &mut Rng,
) -> (
    TimeControl,
    Option<Clock>,
    [Duration; 2],
    Duration,
    Option<Duration>,
) {
    let initial = rng.ms(50, 1500);
    let increment = if rng.percent(50) {
        Duration::ZERO
    } else {
        rng.ms(1, 300)
    };
    let move_limit = rng.percent(30).then(|| rng.ms(20, 600));
    let control = TimeControl {
        initial: Some(proto_duration(initial)),
        increment: rng.percent(70).then(|| proto_duration(increment)),
        move_limit: move_limit.map(proto_duration),
    };
    let (clock, left) = if rng.percent(30) {
        let (a, b) = (rng.ms(0, 1000), rng.ms(1, 1000));
        let clock = Clock {
            a_left: Some(proto_duration(a)),
            b_left: rng.percent(80).then(|| proto_duration(b)),
        };
        let b = if clock.b_left.is_some() { b } else { initial };
        (Some(clock), [a, b])
    } else {
        (None, [initial, initial])
    };
    let increment = if control.increment.is_some() {
        increment
    } else {
        Duration::ZERO
    };
    (control, clock, left, increment, move_limit)
}

/// Fails unless `reply` of the game `G` is what the model says of an announcement of
/// `loser`'s loss with the clock at `left`, given which sides can win.
fn assert_announcement<G: LiveGame>(
    reply: &G::Response,
    loser: Side,
    left: [Duration; 2],
    winners: [bool; 2],
    what: &str,
) {
    let seen = G::seen(reply);
    assert!(
        seen.unprompted,
        "{what}: not unprompted: {:?}",
        Shown::<G>(reply)
    );
    assert_eq!(
        left_on(seen.clock),
        Some(left),
        "{what}: clock of {:?}",
        Shown::<G>(reply)
    );
    assert_eq!(seen.ending, Ending::Time, "{what}: {:?}", Shown::<G>(reply));
    assert_lost_on_time(
        seen.verdict,
        loser,
        winners,
        format_args!("{what}: {:?}", Shown::<G>(reply)),
    );
    assert_eq!(seen.rejected, "", "{what}: {:?}", Shown::<G>(reply));
    assert_eq!(seen.to_move, None, "{what}: {:?}", Shown::<G>(reply));
}

/// Fails unless `reply` of the game `G`, to a message at `t`, is what the model says;
/// applies it to the model.
fn assert_reply<G: LiveGame>(model: &mut Model, reply: &G::Response, t: Duration, what: &str) {
    let seen = G::seen(reply);
    assert!(
        !seen.unprompted,
        "{what}: unprompted: {:?}",
        Shown::<G>(reply)
    );
    let applied = seen.rejected.is_empty();
    if model.lost.is_some() {
        assert!(
            !applied,
            "{what}: a move applied after a loss on time: {:?}",
            Shown::<G>(reply)
        );
    }
    let left = model.message(t, applied, seen.to_move);
    assert_eq!(
        left_on(seen.clock),
        Some(left),
        "{what}: clock of {:?}",
        Shown::<G>(reply)
    );
    match (model.lost, seen.to_move) {
        (Some(loser), _) => {
            let shown = Shown::<G>(reply);
            let winners = model.winners;
            assert_lost_on_time(
                seen.verdict,
                loser,
                winners,
                format_args!("{what}: {shown:?}"),
            );
            assert_eq!(seen.ending, Ending::Time, "{what}: {shown:?}");
        }
        (None, None) => {
            // Decided by the rules, or by a draw claimed (in chess).
            assert!(
                matches!(seen.ending, Ending::Board | Ending::Claim),
                "{what}: {:?}",
                Shown::<G>(reply)
            );
            assert_ne!(
                seen.verdict,
                Verdict::Pending,
                "{what}: {:?}",
                Shown::<G>(reply)
            );
        }
        (None, Some(_)) => {
            assert_eq!(
                seen.ending,
                Ending::Unspecified,
                "{what}: {:?}",
                Shown::<G>(reply)
            );
            assert_eq!(
                seen.verdict,
                Verdict::Pending,
                "{what}: {:?}",
                Shown::<G>(reply)
            );
        }
    }
}

/// Plays one random game of `G` on the clock, from `seed`, against the model, counting
/// what it went through in `counts`; returns the messages sent on each of its streams
/// (the first, then each resume's), each with the time it was sent at.
async fn random_game<G: LiveGame>(
    seed: u64,
    counts: &Counts,
    winners: [bool; 2],
) -> Vec<Vec<(Duration, G::Request)>> {
    let mut rng = Rng(seed | 1);
    let arbiter = Arbiter::default();
    let start = Instant::now();
    let (control, clock, left, increment, move_limit) = random_control(&mut rng);
    let mut model = Model {
        left,
        increment,
        move_limit,
        running: None,
        lost: None,
        winners,
    };
    let mut stream = Stream::<G>::open(&arbiter);
    let setup = G::setup(Some(control), clock, &[]);
    let mut sent = vec![vec![(Duration::ZERO, setup.clone())]];
    stream.send(setup).await;
    let first = stream.reply().await;
    model.running = G::seen(&first).to_move.map(|side| (side, Duration::ZERO));
    assert_eq!(
        times_left::<G>(&first),
        Some(model.left),
        "seed {seed}: setup"
    );
    let mut last = first;
    let mut applied: Vec<G::Request> = Vec::new();
    for step in 0..40 {
        let what = format!("{}, seed {seed}, step {step}", G::RPC);
        // Think: mostly within the time left, now and then past it.
        let allowed = model.deadline().map_or(Duration::from_millis(200), |d| {
            d.saturating_sub(start.elapsed())
        });
        // Think: mostly well within the time left; now and then up to a quarter past it.
        let most = if rng.percent(75) { 3 } else { 12 };
        let think = rng.ms(0, (allowed.as_millis() as u64 * most / 10).max(1));
        if rng.percent(4) && model.lost.is_none() {
            if let Some(deadline) = model.deadline() {
                // No message: the server announces the loss at the deadline, itself.
                let announcement = stream.reply().await;
                assert_eq!(start.elapsed(), deadline, "{what}: announced late or early");
                let (loser, left) = model.flag_by(deadline).unwrap();
                assert_announcement::<G>(&announcement, loser, left, winners, &what);
                Counts::count(&counts.unprompted);
                continue;
            }
        }
        tokio::time::sleep(think).await;
        let t = start.elapsed();
        if rng.percent(10) && model.lost.is_none() {
            // The stream is lost; the game resumes on a new one from its history, with
            // the clock of its last reply. The time in between is not charged.
            drop(stream);
            tokio::time::sleep(rng.ms(0, 3000)).await;
            let resumed_at = start.elapsed();
            stream = Stream::<G>::open(&arbiter);
            let setup = G::setup(Some(control), G::seen(&last).clock.cloned(), &applied);
            sent.push(vec![(resumed_at, setup.clone())]);
            stream.send(setup).await;
            let reply = stream.reply().await;
            model.left = times_left::<G>(&last).unwrap();
            model.running = G::seen(&reply).to_move.map(|side| (side, resumed_at));
            assert_eq!(times_left::<G>(&reply), Some(model.left), "{what}: resumed");
            Counts::count(&counts.resumes);
            last = reply;
            continue;
        }
        let request = G::next(rng.next(), &last);
        sent.last_mut().unwrap().push((t, request.clone()));
        stream.send(request.clone()).await;
        if let Some((loser, left)) = model.flag_by(t) {
            // The deadline passed before the move: the announcement goes first.
            let announcement = stream.reply().await;
            assert_announcement::<G>(&announcement, loser, left, winners, &what);
            Counts::count(&counts.before_a_move);
        }
        let going_on = model.lost.is_none() && G::seen(&last).to_move.is_some();
        let reply = stream.reply().await;
        assert_reply::<G>(&mut model, &reply, t, &what);
        let seen = G::seen(&reply);
        if seen.rejected.is_empty() {
            applied.push(request);
            Counts::count(&counts.applied);
        } else if going_on {
            Counts::count(&counts.rejected);
        }
        if seen.ending == Ending::Board && G::seen(&last).ending != Ending::Board {
            Counts::count(&counts.board_ends);
        }
        last = reply;
        if G::seen(&last).to_move.is_none() && rng.percent(30) {
            break;
        }
    }
    sent
}

/// Random games of every registered game on the clock keep time as the model does:
/// every reply's clock, verdict and ending, every announcement's instant. Fails on a
/// server that charges a side's time wrongly (a rejected move's increment, the time
/// between a cut stream and its resume, a pass), announces a loss late, early, or not
/// before the move that came after the deadline, applies a move after a loss on time,
/// or resumes a game with other times than its setup's clock; and if some registered
/// game's random games never met one of the cases [`Counts`] counts.
#[tokio::test(start_paused = true)]
async fn random_games_keep_time_as_the_model_does() {
    struct RandomGames;
    impl GameTest for RandomGames {
        async fn run<G: LiveGame>(&self) {
            let counts = Counts::default();
            let winners = winners::<G>().await;
            for seed in 0..60 {
                random_game::<G>(seed * 7919 + 1, &counts, winners).await;
            }
            counts.assert_every_case_met(G::RPC);
        }
    }
    for_each_game(&RandomGames).await;
}

/// The move limit ends a turn that has time left; the increment is added after each
/// applied move and not after a rejected one; any message after the end is rejected,
/// the clock stopped. For every registered game, with its own always-rejected message
/// and moves its `next` finds legal. Fails on a server that adds the increment after a
/// rejected message, ignores the move limit, keeps the clock running after the end,
/// or applies a move that comes after it.
#[tokio::test(start_paused = true)]
async fn the_move_limit_and_the_increment() {
    struct MoveLimit;
    impl GameTest for MoveLimit {
        async fn run<G: LiveGame>(&self) {
            let what = G::RPC;
            let winners = winners::<G>().await;
            let first = a_move::<G>(&[]).await;
            // A move B could make after A's, if the game went on.
            let second = a_move::<G>(std::slice::from_ref(&first)).await;
            let arbiter = Arbiter::default();
            let mut stream = Stream::<G>::open(&arbiter);
            let control = TimeControl {
                initial: Some(proto_duration(Duration::from_secs(10))),
                increment: Some(proto_duration(Duration::from_secs(1))),
                move_limit: Some(proto_duration(Duration::from_secs(2))),
            };
            let start = Instant::now();
            stream.send(G::setup(Some(control), None, &[])).await;
            stream.reply().await;
            tokio::time::sleep(Duration::from_millis(1500)).await;
            // Rejected: no increment, the time runs on.
            stream.send(G::rejected()).await;
            let rejected = stream.reply().await;
            assert!(
                !G::seen(&rejected).rejected.is_empty(),
                "{what}: {:?}",
                Shown::<G>(&rejected)
            );
            assert_eq!(
                times_left::<G>(&rejected),
                Some([Duration::from_millis(8500), Duration::from_secs(10)]),
                "{what}: {:?}",
                Shown::<G>(&rejected)
            );
            stream.send(first).await;
            let applied = stream.reply().await;
            assert!(
                G::seen(&applied).rejected.is_empty(),
                "{what}: {:?}",
                Shown::<G>(&applied)
            );
            assert_eq!(
                times_left::<G>(&applied),
                Some([Duration::from_millis(9500), Duration::from_secs(10)]),
                "{what}: {:?}",
                Shown::<G>(&applied)
            );
            // B thinks past the move limit, with 10 s left: it loses at 2 s, keeping 8 s.
            let announcement = stream.reply().await;
            assert_eq!(start.elapsed(), Duration::from_millis(3500), "{what}");
            assert_announcement::<G>(
                &announcement,
                Side::B,
                [Duration::from_millis(9500), Duration::from_secs(8)],
                winners,
                &format!("{what}: move limit"),
            );
            // Any message after the end is rejected, the clock stopped.
            tokio::time::sleep(Duration::from_secs(5)).await;
            stream.send(second).await;
            let after = stream.reply().await;
            let seen = G::seen(&after);
            assert!(
                seen.rejected.contains("over"),
                "{what}: rejected as after the end: {:?}",
                Shown::<G>(&after)
            );
            assert_eq!(
                times_left::<G>(&after),
                times_left::<G>(&announcement),
                "{what}"
            );
            assert_eq!(
                seen.ending,
                Ending::Time,
                "{what}: {:?}",
                Shown::<G>(&after)
            );
            assert_eq!(seen.verdict, G::seen(&announcement).verdict, "{what}");
            assert!(!seen.unprompted, "{what}: {:?}", Shown::<G>(&after));
        }
    }
    for_each_game(&MoveLimit).await;
}

/// Othello's passes: the side that moves again keeps its own time running, from the
/// move that made the other pass. (Othello's own: no other game passes.)
#[tokio::test(start_paused = true)]
async fn a_pass_keeps_the_movers_time_running() {
    let arbiter = Arbiter::default();
    let mut stream = Stream::<othello::Game>::open(&arbiter);
    let control = TimeControl {
        initial: Some(proto_duration(Duration::from_secs(5))),
        increment: None,
        move_limit: None,
    };
    // Black at (0, 2) turns over (0, 1); White then has no move and passes.
    let setup = PlayOthelloRequest {
        action: Some(play_othello_request::Action::Setup(Box::new(
            OthelloSetup {
                board: Some(Board::from_rows([".W.WB"])),
                to_move: "B".into(),
                time_control: Some(control),
                ..Default::default()
            },
        ))),
    };
    let start = Instant::now();
    stream.send(setup).await;
    stream.reply().await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    stream
        .send(PlayOthelloRequest {
            action: Some(play_othello_request::Action::Move(arbiter::proto::Cell {
                row: 0,
                col: 2,
            })),
        })
        .await;
    let reply = stream.reply().await;
    assert!(reply.passed, "{reply:?}");
    assert_eq!(reply.to_move, "B");
    assert_eq!(
        times_left::<othello::Game>(&reply),
        Some([Duration::from_secs(4), Duration::from_secs(5)])
    );
    // Black's time runs again at once: it runs out 4 s later.
    let announcement = stream.reply().await;
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    assert_announcement::<othello::Game>(
        &announcement,
        Side::A,
        [Duration::ZERO, Duration::from_secs(5)],
        // Either side can win at Othello: White wins.
        [true, true],
        "pass",
    );
}

/// One game's part of a PlayMany stream on the clock: its seed, its game, its messages
/// (those of a random game's first stream) as actions, and every reply they got on a
/// stream of their own, as PlayMany states.
struct Alone {
    seed: u64,
    rpc: &'static str,
    actions: Vec<(Duration, game_action::Action)>,
    replies: Vec<game_state::State>,
}

/// PlayMany on the clock: random games of every registered game, interleaved on one
/// stream, give, game by game, the replies the same games give on their own streams,
/// the announcements of losses on time included, every field; and so does each game
/// alone on a PlayMany stream. Fails on a PlayMany that keeps a game's clock otherwise
/// than its own stream does (one game's time charged to another, an announcement
/// missed, doubled, late, or sent after the reply to a later action), or answers any
/// field otherwise; and if some registered game's games never had a loss on time
/// announced, a move applied or a message rejected.
#[tokio::test(start_paused = true)]
async fn play_many_on_the_clock_is_each_game_on_its_own_stream() {
    const SEEDS: u64 = 20;
    struct OnTheirOwn(RefCell<Vec<Alone>>);
    impl GameTest for OnTheirOwn {
        async fn run<G: LiveGame>(&self) {
            let winners = winners::<G>().await;
            let (mut announced, mut applied, mut rejected) = (0, 0, 0);
            for seed in 0..SEEDS {
                let what = format!("{}, seed {seed}", G::RPC);
                let mut rng = Rng(seed * 31 + 7);
                let sent = random_game::<G>(rng.next(), &Counts::default(), winners).await;
                // The messages of its first stream, up to its first resume.
                let sent = &sent[0];
                let replies = single::<G>(sent).await;
                for reply in &replies {
                    let seen = G::seen(reply);
                    if seen.unprompted {
                        announced += 1;
                    } else if !seen.rejected.is_empty() {
                        rejected += 1;
                    } else if seen.moves_played > 0 {
                        applied += 1;
                    }
                }
                let replies: Vec<_> = replies.into_iter().map(G::state).collect();
                let actions: Vec<_> = sent
                    .iter()
                    .map(|(t, request)| (*t, G::action(request.clone())))
                    .collect();
                let schedule: Vec<_> = actions
                    .iter()
                    .map(|(t, action)| (*t, 1, action.clone()))
                    .collect();
                let [in_many] = &play_many_at(&schedule, 1).await[..] else {
                    unreachable!()
                };
                assert_eq!(
                    in_many, &replies,
                    "{what}: alone in PlayMany and on its own stream"
                );
                self.0.borrow_mut().push(Alone {
                    seed,
                    rpc: G::RPC,
                    actions,
                    replies,
                });
            }
            let counts = [announced, applied, rejected];
            println!("{}: announced, applied, rejected: {counts:?}", G::RPC);
            assert!(counts.iter().all(|&n| n > 0), "{}: {counts:?}", G::RPC);
        }
    }
    let alone = OnTheirOwn(RefCell::new(Vec::new()));
    for_each_game(&alone).await;
    let alone = alone.0.into_inner();
    let games = live_rpcs().len();
    for seed in 0..SEEDS {
        let alone: Vec<&Alone> = alone.iter().filter(|game| game.seed == seed).collect();
        assert_eq!(alone.len(), games, "seed {seed}: one game of each");
        // Games 1, 2, ... played again together, each at its own times.
        let mut schedule: Vec<(Duration, u64, game_action::Action)> = Vec::new();
        for (game, played) in (1..).zip(&alone) {
            for (t, action) in &played.actions {
                schedule.push((*t, game, action.clone()));
            }
        }
        schedule.sort_by_key(|(t, game, _)| (*t, *game));
        let many = play_many_at(&schedule, games).await;
        for (in_many, played) in many.iter().zip(&alone) {
            assert_eq!(in_many, &played.replies, "seed {seed}, {}", played.rpc);
        }
    }
}

/// Every state of each of games 1 to `games` that a PlayMany stream sends when the
/// actions of `schedule` are sent at their times, then the stream waits 5 s.
async fn play_many_at(
    schedule: &[(Duration, u64, game_action::Action)],
    games: usize,
) -> Vec<Vec<game_state::State>> {
    let arbiter = Arbiter::default();
    let (sender, requests) = mpsc::channel(4);
    let mut replies = arbiter.open_many(ReceiverStream::new(requests));
    let start = Instant::now();
    let mut states = vec![Vec::new(); games];
    let mut collect = |reply: arbiter::proto::PlayManyResponse| {
        for state in reply.states {
            if let Some(s) = state.state {
                states[state.game as usize - 1].push(s);
            }
        }
    };
    for (index, (t, game, action)) in schedule.iter().enumerate() {
        // Announcements due before this action's time come on their own while the
        // stream is read; one action in two, it is not read in between, so they come
        // with the reply to the next action, before it.
        if index % 2 == 0 {
            while let Ok(reply) = tokio::time::timeout_at(start + *t, replies.next()).await {
                collect(reply.unwrap().unwrap().to_response().unwrap());
            }
        }
        tokio::time::sleep_until(start + *t).await;
        sender
            .send(Ok(PlayManyRequest {
                actions: vec![GameAction {
                    game: *game,
                    action: Some(action.clone()),
                }],
            }))
            .await
            .unwrap();
        // The reply to the action, after any announcement due by then.
        loop {
            let reply = replies
                .next()
                .await
                .unwrap()
                .unwrap()
                .to_response()
                .unwrap();
            let unprompted = reply.unprompted;
            collect(reply);
            if !unprompted {
                break;
            }
        }
    }
    while let Ok(Some(reply)) = tokio::time::timeout(Duration::from_secs(5), replies.next()).await {
        collect(reply.unwrap().to_response().unwrap());
    }
    states
}

/// The replies of a single-game stream of `G` sent the messages of `sent` at their
/// times, then waiting 5 s.
async fn single<G: LiveGame>(sent: &[(Duration, G::Request)]) -> Vec<G::Response> {
    let arbiter = Arbiter::default();
    let mut stream = Stream::<G>::open(&arbiter);
    let start = Instant::now();
    let mut out = Vec::new();
    for (t, request) in sent {
        while let Ok(reply) = tokio::time::timeout_at(start + *t, stream.replies.next()).await {
            out.push(reply.unwrap().unwrap());
        }
        tokio::time::sleep_until(start + *t).await;
        stream.send(request.clone()).await;
        loop {
            let reply = stream.reply().await;
            let unprompted = G::seen(&reply).unprompted;
            out.push(reply);
            if !unprompted {
                break;
            }
        }
    }
    while let Ok(Some(reply)) =
        tokio::time::timeout(Duration::from_secs(5), stream.replies.next()).await
    {
        out.push(reply.unwrap());
    }
    out
}

// Over the wire, with real short clocks: tolerances a loaded machine cannot break.

/// Opens a stream of `G` on `channel`, by its RPC's path, with `first` sent, and returns
/// the sender of later messages and its reply stream (the first message's reply
/// unread).
async fn open_on_the_wire<G: LiveGame>(
    channel: &Channel,
    first: G::Request,
) -> (mpsc::Sender<G::Request>, Streaming<G::Response>) {
    let (sender, requests) = mpsc::channel(8);
    sender.send(first).await.unwrap();
    let replies = open::<G>(channel, ReceiverStream::new(requests))
        .await
        .unwrap();
    (sender, replies)
}

/// The status that ends `replies` of `G` at its next read; fails if a reply, or the
/// end with no status, comes instead.
async fn status_next<G: LiveGame>(
    replies: &mut Streaming<G::Response>,
    what: &str,
) -> tonic::Status {
    match replies.message().await {
        Err(status) => status,
        Ok(Some(reply)) => panic!("{what}: a status, not {:?}", Shown::<G>(&reply)),
        Ok(None) => panic!("{what}: a status, not the end"),
    }
}

/// On every registered game's own stream, a side that does not move in its 200 ms
/// loses: the server announces it unprompted, no sooner than the deadline, and no
/// message is needed. Fails on a server that announces a loss on time only when the
/// next message comes, or before the deadline, or with another clock or verdict.
#[tokio::test]
async fn a_flag_falls_unprompted_on_each_kind_of_stream() {
    struct FlagFalls(Channel);
    impl GameTest for FlagFalls {
        async fn run<G: LiveGame>(&self) {
            let winners = winners::<G>().await;
            let initial = Duration::from_millis(200);
            let setup = G::setup(Some(control_of(initial)), None, &[]);
            let started = std::time::Instant::now();
            let (_sender, mut replies) = open_on_the_wire::<G>(&self.0, setup).await;
            let first = replies.message().await.unwrap().unwrap();
            assert_eq!(
                times_left::<G>(&first),
                Some([initial, initial]),
                "{}",
                G::RPC
            );
            let announcement = tokio::time::timeout(Duration::from_secs(60), replies.message())
                .await
                .expect("announced within a minute")
                .unwrap()
                .unwrap();
            assert!(
                started.elapsed() >= initial,
                "{}: announced before the deadline",
                G::RPC
            );
            let what = format!("{}: on the wire", G::RPC);
            assert_announcement::<G>(
                &announcement,
                Side::A,
                [Duration::ZERO, initial],
                winners,
                &what,
            );
        }
    }
    let server = common::TestServer::start().await;
    for_each_game(&FlagFalls(server.channel().await)).await;
}

/// A live game as a PlayMany stream of any game carries it.
struct InPlayMany {
    rpc: &'static str,
    winners: [bool; 2],
    /// The action that sets up its test game on the clock of a time control.
    setup: fn(TimeControl) -> game_action::Action,
    /// Fails unless a state is its announcement of a side's loss with the clock at the
    /// given times, given which sides can win.
    announcement: fn(&arbiter::proto::GameState, Side, [Duration; 2], [bool; 2], &str),
}

struct EachInPlayMany;

impl GameQuery for EachInPlayMany {
    type Answer = InPlayMany;
    async fn ask<G: LiveGame>(&self) -> InPlayMany {
        fn setup<G: LiveGame>(control: TimeControl) -> game_action::Action {
            G::action(G::setup(Some(control), None, &[]))
        }
        fn announcement<G: LiveGame>(
            state: &arbiter::proto::GameState,
            loser: Side,
            left: [Duration; 2],
            winners: [bool; 2],
            what: &str,
        ) {
            let reply = reply_in::<G>(state, what);
            assert_announcement::<G>(&reply, loser, left, winners, what);
        }
        InPlayMany {
            rpc: G::RPC,
            winners: winners::<G>().await,
            setup: setup::<G>,
            announcement: announcement::<G>,
        }
    }
}

/// A thousand games on the clock in one PlayMany stream, of every registered game in
/// turn, with deadlines spread over 100 to 500 ms: each is announced exactly once, in a
/// reply marked unprompted, each as its own stream would announce it. Fails on a
/// PlayMany that misses or doubles an announcement, sends one in a reply to no message
/// not marked unprompted, or announces a game with another game's clock or state.
#[tokio::test]
async fn a_thousand_games_on_the_clock_in_one_play_many_stream() {
    let kinds = ask_each_game(&EachInPlayMany, false).await;
    let kind = |game: u64| &kinds[game as usize % kinds.len()];
    let initial = |game: u64| Duration::from_millis(100 + game % 401);
    let server = common::TestServer::start().await;
    let mut client = server.client().await;
    let (sender, requests) = mpsc::channel(4);
    let actions = (0..1000u64)
        .map(|game| GameAction {
            game,
            action: Some((kind(game).setup)(control_of(initial(game)))),
        })
        .collect();
    sender.send(PlayManyRequest { actions }).await.unwrap();
    let started = std::time::Instant::now();
    let mut replies = client
        .play_many(ReceiverStream::new(requests))
        .await
        .unwrap()
        .into_inner();
    let opened = replies.message().await.unwrap().unwrap();
    assert!(!opened.unprompted);
    assert_eq!(opened.states.len(), 1000);
    let mut announced = vec![0; 1000];
    while announced.contains(&0) {
        let reply = tokio::time::timeout(Duration::from_secs(60), replies.message())
            .await
            .expect("every game announced within a minute")
            .unwrap()
            .unwrap();
        assert!(reply.unprompted, "a reply to no message: {reply:?}");
        for state in reply.states {
            let game = state.game;
            announced[game as usize] += 1;
            let kind = kind(game);
            let what = format!("PlayMany, game {game}, {}", kind.rpc);
            let left = [Duration::ZERO, initial(game)];
            (kind.announcement)(&state, Side::A, left, kind.winners, &what);
        }
    }
    assert!(started.elapsed() >= Duration::from_millis(100));
    drop(sender);
    // No announcement twice: the stream ends with nothing more.
    assert!(replies.message().await.unwrap().is_none());
    assert!(announced.iter().all(|&n| n == 1));
}

/// The field violations a status names.
fn violations(status: &tonic::Status) -> Vec<String> {
    status
        .get_details_bad_request()
        .unwrap_or_else(|| panic!("a bad request's details: {status:?}"))
        .field_violations
        .into_iter()
        .map(|v| v.field)
        .collect()
}

/// Each malformed clock field, by name: a setup on every registered game's own stream
/// ends the stream with INVALID_ARGUMENT naming it; the same setup in PlayMany is
/// answered in place, naming it. So is a clock without a time control. Fails on a
/// server that takes a malformed clock (out of range, negative, nanos out of their
/// range, a clock without a time control) in some game, or names another field.
#[tokio::test]
async fn malformed_clocks_are_named() {
    struct Malformed(Channel);
    impl GameTest for Malformed {
        async fn run<G: LiveGame>(&self) {
            let mut cases = malformed_cases();
            // A clock without a time control.
            cases.push((
                "setup.clock",
                None,
                Some(Clock {
                    a_left: Some(proto_duration(Duration::from_secs(1))),
                    b_left: None,
                }),
            ));
            let mut client = ArbiterServiceClient::new(self.0.clone());
            for (field, control, clock) in cases {
                let what = format!("{}, {field}: {control:?} {clock:?}", G::RPC);
                let setup = G::setup(control, clock, &[]);
                let status = match open::<G>(&self.0, tokio_stream::iter([setup.clone()])).await {
                    Ok(mut replies) => status_next::<G>(&mut replies, &what).await,
                    Err(status) => status,
                };
                assert_eq!(status.code(), Code::InvalidArgument, "{what}: {status:?}");
                assert_eq!(violations(&status), [field], "{what}: {status:?}");
                let reply = client
                    .play_many(tokio_stream::iter([PlayManyRequest {
                        actions: vec![GameAction {
                            game: 1,
                            action: Some(G::action(setup)),
                        }],
                    }]))
                    .await
                    .unwrap()
                    .into_inner()
                    .message()
                    .await
                    .unwrap()
                    .unwrap();
                let invalid: Vec<&str> = reply.states[0]
                    .invalid
                    .iter()
                    .map(|v| v.field.as_str())
                    .collect();
                assert_eq!(invalid, [field], "PlayMany, {what}: {reply:?}");
            }
        }
    }
    let server = common::TestServer::start().await;
    for_each_game(&Malformed(server.channel().await)).await;
}

/// Each malformed time control or clock, and the field that names it.
fn malformed_cases() -> Vec<(&'static str, Option<TimeControl>, Option<Clock>)> {
    let d = |seconds: i64, nanos: i32| Some(prost_types::Duration { seconds, nanos });
    let hour = 3600;
    let ok = d(60, 0);
    let cases = [
        (
            "setup.time_control.initial",
            TimeControl {
                initial: None,
                ..control_of(Duration::ZERO)
            },
            None,
        ),
        (
            "setup.time_control.initial",
            TimeControl {
                initial: d(0, 0),
                ..Default::default()
            },
            None,
        ),
        (
            "setup.time_control.initial",
            TimeControl {
                initial: d(24 * hour, 1),
                ..Default::default()
            },
            None,
        ),
        (
            "setup.time_control.initial",
            TimeControl {
                initial: d(-1, 0),
                ..Default::default()
            },
            None,
        ),
        (
            "setup.time_control.initial",
            TimeControl {
                initial: d(1, 1_000_000_000),
                ..Default::default()
            },
            None,
        ),
        (
            "setup.time_control.initial",
            TimeControl {
                initial: d(1, -5),
                ..Default::default()
            },
            None,
        ),
        (
            "setup.time_control.increment",
            TimeControl {
                initial: ok,
                increment: d(-1, 0),
                ..Default::default()
            },
            None,
        ),
        (
            "setup.time_control.increment",
            TimeControl {
                initial: ok,
                increment: d(hour, 1),
                ..Default::default()
            },
            None,
        ),
        (
            "setup.time_control.move_limit",
            TimeControl {
                initial: ok,
                move_limit: d(0, -1),
                ..Default::default()
            },
            None,
        ),
        (
            "setup.time_control.move_limit",
            TimeControl {
                initial: ok,
                move_limit: d(24 * hour + 1, 0),
                ..Default::default()
            },
            None,
        ),
        (
            "setup.clock.a_left",
            TimeControl {
                initial: ok,
                ..Default::default()
            },
            Some(Clock {
                a_left: d(-3, 0),
                b_left: None,
            }),
        ),
        (
            "setup.clock.b_left",
            TimeControl {
                initial: ok,
                ..Default::default()
            },
            Some(Clock {
                a_left: None,
                b_left: d(48 * hour, 1),
            }),
        ),
    ];
    cases
        .into_iter()
        .map(|(field, control, clock)| (field, Some(control), clock))
        .collect()
}

/// The idle timeout does not end a game whose clock runs: on every registered game's
/// own stream, all at once, a game on a 1.5 s clock outlives a 300 ms idle timeout, and
/// is announced lost on time; a game without a clock on the same server is closed idle.
/// Fails on a server whose idle timeout ends a game on the clock before its flag falls
/// (or never ends an idle game without one).
#[tokio::test]
async fn a_running_clock_holds_off_the_idle_timeout() {
    struct HeldOff(Channel);
    impl GameQuery for HeldOff {
        type Answer = ();
        async fn ask<G: LiveGame>(&self) {
            let what = G::RPC;
            let winners = winners::<G>().await;
            let initial = Duration::from_millis(1500);
            let setup = G::setup(Some(control_of(initial)), None, &[]);
            let (_sender, mut replies) = open_on_the_wire::<G>(&self.0, setup).await;
            replies.message().await.unwrap().unwrap();
            let announcement = replies.message().await.unwrap().unwrap();
            let left = [Duration::ZERO, initial];
            assert_announcement::<G>(&announcement, Side::A, left, winners, what);
            // Without a clock, the same silence ends the stream.
            let setup = G::setup(None, None, &[]);
            let (_sender, mut replies) = open_on_the_wire::<G>(&self.0, setup).await;
            replies.message().await.unwrap().unwrap();
            let status = status_next::<G>(&mut replies, what).await;
            assert_eq!(status.code(), Code::DeadlineExceeded, "{what}: {status:?}");
        }
    }
    let server = common::TestServer::start_with_flags("--stream-idle-timeout 300ms").await;
    ask_each_game(&HeldOff(server.channel().await), true).await;
}

/// A client that half-closes a game on the clock (as grpcurl does once its messages are
/// sent) still hears the side to move lose on time; then the stream ends. Without a
/// clock, the stream ends at once. On every registered game's stream. Fails on a server
/// that ends a half-closed stream at once though a clock runs (the loss never
/// announced), or waits on one without a clock.
#[tokio::test(start_paused = true)]
async fn a_half_closed_game_on_the_clock_ends_on_time() {
    struct HalfClosed;
    impl GameTest for HalfClosed {
        async fn run<G: LiveGame>(&self) {
            let what = G::RPC;
            let winners = winners::<G>().await;
            let first = a_move::<G>(&[]).await;
            let arbiter = Arbiter::default();
            let mut stream = Stream::<G>::open(&arbiter);
            let start = Instant::now();
            let initial = Duration::from_millis(500);
            stream
                .send(G::setup(Some(control_of(initial)), None, &[]))
                .await;
            stream.send(first.clone()).await;
            drop(stream.sender);
            let setup = stream.replies.next().await.unwrap().unwrap();
            assert_eq!(times_left::<G>(&setup), Some([initial, initial]), "{what}");
            let moved = stream.replies.next().await.unwrap().unwrap();
            assert_eq!(
                G::seen(&moved).moves_played,
                1,
                "{what}: {:?}",
                Shown::<G>(&moved)
            );
            let announcement = stream.replies.next().await.unwrap().unwrap();
            assert_eq!(start.elapsed(), initial, "{what}");
            let left = [initial, Duration::ZERO];
            let half_closed = format!("{what}: half-closed");
            assert_announcement::<G>(&announcement, Side::B, left, winners, &half_closed);
            assert!(stream.replies.next().await.is_none(), "{what}");
            let mut stream = Stream::<G>::open(&arbiter);
            stream.send(G::setup(None, None, &[])).await;
            stream.send(first).await;
            drop(stream.sender);
            stream.replies.next().await.unwrap().unwrap();
            stream.replies.next().await.unwrap().unwrap();
            assert!(stream.replies.next().await.is_none(), "{what}");
            assert_eq!(
                start.elapsed(),
                initial,
                "{what}: no time passed waiting for a game without a clock"
            );
        }
    }
    for_each_game(&HalfClosed).await;
}

/// A PlayMany message that sets a game up with no time left for the side to move, then
/// moves in it, in every registered game: the move is not applied. The announcement of
/// the loss on time comes first, in its own reply, and the message's reply answers the
/// move as after the end, as a single-game stream answers it (where the announcement
/// comes between the setup's reply and the move's). Fails on a server that checks
/// clocks only as a message begins, which applied the move.
#[tokio::test(start_paused = true)]
async fn a_move_after_a_setup_with_no_time_left_in_one_play_many_message() {
    struct NoTimeLeft;
    impl GameTest for NoTimeLeft {
        async fn run<G: LiveGame>(&self) {
            let what = G::RPC;
            let winners = winners::<G>().await;
            let first = a_move::<G>(&[]).await;
            let arbiter = Arbiter::default();
            let (sender, requests) = mpsc::channel(4);
            let mut replies = arbiter.open_many(ReceiverStream::new(requests));
            let minute = Duration::from_secs(60);
            let setup = G::setup(
                Some(control_of(minute)),
                Some(Clock {
                    a_left: Some(proto_duration(Duration::ZERO)),
                    b_left: Some(proto_duration(minute)),
                }),
                &[],
            );
            let actions = [setup, first]
                .into_iter()
                .map(|request| GameAction {
                    game: 1,
                    action: Some(G::action(request)),
                })
                .collect();
            sender.send(Ok(PlayManyRequest { actions })).await.unwrap();
            let announcement = replies.next().await.unwrap().unwrap();
            let announcement = announcement.to_response().unwrap();
            assert!(announcement.unprompted, "{what}: {announcement:?}");
            let [state] = &announcement.states[..] else {
                panic!("{what}: one announcement: {announcement:?}");
            };
            let lost = reply_in::<G>(state, what);
            let left = [Duration::ZERO, minute];
            let in_one = format!("{what}: in one message");
            assert_announcement::<G>(&lost, Side::A, left, winners, &in_one);
            let reply = replies.next().await.unwrap().unwrap();
            let reply = reply.to_response().unwrap();
            assert!(!reply.unprompted, "{what}: {reply:?}");
            let [set_up, moved] = &reply.states[..] else {
                panic!("{what}: one state per action: {reply:?}");
            };
            let (set_up, moved) = (reply_in::<G>(set_up, what), reply_in::<G>(moved, what));
            assert_eq!(
                G::seen(&set_up).moves_played,
                0,
                "{what}: {:?}",
                Shown::<G>(&set_up)
            );
            let seen = G::seen(&moved);
            assert_eq!(
                seen.moves_played,
                0,
                "{what}: the move is not applied: {:?}",
                Shown::<G>(&moved)
            );
            assert!(
                !seen.rejected.is_empty(),
                "{what}: the move is rejected: {:?}",
                Shown::<G>(&moved)
            );
            assert_eq!(
                seen.ending,
                Ending::Time,
                "{what}: {:?}",
                Shown::<G>(&moved)
            );
        }
    }
    for_each_game(&NoTimeLeft).await;
}

// A limit that ends a stream at the very instant a clock runs out: the flag goes out
// first. Each test sets both to the same instant on purpose, and makes either side of the
// race go first: the server's watch (the stream not polled until after the instant) or
// the stream's own timer (the stream polled throughout).

/// When the clock of every game below runs out: its setup gives each side this long,
/// and nobody moves.
const FLAG: Duration = Duration::from_secs(3);

/// A limit that ends a live stream.
#[derive(Debug, Clone, Copy)]
enum Limit {
    /// The idle timeout (1 s), which a running clock holds off until the clock runs out:
    /// it falls due at the flag's instant.
    Idle,
    /// The game's lifetime, set to end it at the given time after it opened.
    Lifetime(Duration),
    /// The end of the server's shutdown grace period, at the flag's instant.
    Shutdown,
}

impl Limit {
    /// Every limit, each ending the stream at the flag's instant.
    const AT_THE_FLAG: [Limit; 3] = [Limit::Idle, Limit::Lifetime(FLAG), Limit::Shutdown];

    /// A service on which this limit ends a game opened now, and the token that ends its
    /// streams; for the shutdown's limit, the token is cancelled at the flag's instant.
    fn arbiter(self) -> Arbiter {
        let limits = match self {
            Limit::Idle => StreamLimits {
                idle_timeout: Duration::from_secs(1),
                ..StreamLimits::DEFAULT
            },
            Limit::Lifetime(lifetime) => StreamLimits {
                max_game_duration: lifetime,
                ..StreamLimits::DEFAULT
            },
            Limit::Shutdown => StreamLimits::DEFAULT,
        };
        let end_streams = CancellationToken::new();
        if let Limit::Shutdown = self {
            let end_streams = end_streams.clone();
            let at = Instant::now() + FLAG;
            tokio::spawn(async move {
                tokio::time::sleep_until(at).await;
                end_streams.cancel();
            });
        }
        Arbiter::new(limits, end_streams)
    }

    /// The status the limit ends a stream with.
    fn code(self) -> Code {
        match self {
            Limit::Idle | Limit::Lifetime(_) => Code::DeadlineExceeded,
            Limit::Shutdown => Code::Unavailable,
        }
    }
}

/// Reads `replies` to their end: every reply, and the status that ended them.
async fn to_the_end<R, D: Debug>(
    replies: &mut ReplyStream<R>,
    what: &str,
    show: fn(&R) -> D,
) -> (Vec<R>, tonic::Status) {
    let mut read = Vec::new();
    loop {
        match replies.next().await {
            Some(Ok(reply)) => read.push(reply),
            Some(Err(status)) => {
                assert!(
                    replies.next().await.is_none(),
                    "{what}: nothing after {status:?}"
                );
                return (read, status);
            }
            None => {
                let read: Vec<D> = read.iter().map(show).collect();
                panic!("{what}: the stream ended with no status after {read:?}")
            }
        }
    }
}

/// A game of `G` on a clock of `FLAG` that nobody moves in, ended by `limit`; with
/// `watch_first`, the stream is not polled from its first reply until a second after the
/// flag. Its replies after the first, and the status that ended it.
async fn ended_by<G: LiveGame>(
    limit: Limit,
    watch_first: bool,
) -> (Vec<G::Response>, tonic::Status) {
    let arbiter = limit.arbiter();
    let mut stream = Stream::<G>::open(&arbiter);
    stream
        .send(G::setup(Some(control_of(FLAG)), None, &[]))
        .await;
    assert_eq!(times_left::<G>(&stream.reply().await), Some([FLAG, FLAG]));
    if watch_first {
        tokio::time::sleep(FLAG + Duration::from_secs(1)).await;
    }
    let what = format!("{}, {limit:?}, watch first: {watch_first}", G::RPC);
    to_the_end(&mut stream.replies, &what, show::<G>).await
}

/// On every registered game's own stream, a limit that ends the stream at the instant
/// its clock runs out (the idle timeout, the game's lifetime, the shutdown's grace)
/// sends the announcement of the loss on time first, then its status; whichever of the
/// server's watch and the stream's timer finds them due first. Fails on a server whose
/// watch frees a game without announcing the clocks run out by then (the idle timeout
/// then closed 3 of 6 fresh servers' games with no result), or whose idle watch learns
/// of a running clock only when the stream is next polled.
#[tokio::test(start_paused = true)]
async fn a_flag_at_the_instant_a_limit_ends_the_stream_goes_out_first() {
    struct AtTheFlag;
    impl GameTest for AtTheFlag {
        async fn run<G: LiveGame>(&self) {
            let winners = winners::<G>().await;
            for limit in Limit::AT_THE_FLAG {
                for watch_first in [true, false] {
                    let what = format!("{}, {limit:?}, watch first: {watch_first}", G::RPC);
                    let (replies, status) = ended_by::<G>(limit, watch_first).await;
                    let [announcement] = &replies[..] else {
                        let replies: Vec<_> = replies.iter().map(show::<G>).collect();
                        panic!("{what}: one announcement before {status:?}, not {replies:?}");
                    };
                    let left = [Duration::ZERO, FLAG];
                    assert_announcement::<G>(announcement, Side::A, left, winners, &what);
                    assert_eq!(status.code(), limit.code(), "{what}: {status:?}");
                }
            }
        }
    }
    for_each_game(&AtTheFlag).await;
}

/// A limit that ends the stream a millisecond before the clock runs out announces
/// nothing, on every registered game's stream: the game ended before the flag fell.
/// Fails on a server that announces the clocks run out by when the watch looked, rather
/// than by when the limit fell due.
#[tokio::test(start_paused = true)]
async fn a_limit_just_before_the_flag_announces_nothing() {
    struct JustBefore;
    impl GameTest for JustBefore {
        async fn run<G: LiveGame>(&self) {
            let limit = Limit::Lifetime(FLAG - Duration::from_millis(1));
            for watch_first in [true, false] {
                let what = format!("{}, watch first: {watch_first}", G::RPC);
                let (replies, status) = ended_by::<G>(limit, watch_first).await;
                let replies: Vec<_> = replies.iter().map(show::<G>).collect();
                assert!(replies.is_empty(), "{what}: {replies:?}");
                assert_eq!(status.code(), Code::DeadlineExceeded, "{what}: {status:?}");
            }
        }
    }
    for_each_game(&JustBefore).await;
}

/// The same in PlayMany: a clocked game of every registered game, alone on a PlayMany
/// stream, is announced lost on time before a limit due at its flag's instant ends the
/// stream. Fails as the single-game test does, on PlayMany's watch.
#[tokio::test(start_paused = true)]
async fn in_play_many_a_flag_at_the_instant_a_limit_ends_the_stream_goes_out_first() {
    struct InPlayManyAtTheFlag;
    impl GameTest for InPlayManyAtTheFlag {
        async fn run<G: LiveGame>(&self) {
            let winners = winners::<G>().await;
            for limit in Limit::AT_THE_FLAG {
                for watch_first in [true, false] {
                    let what = format!("{}, {limit:?}, watch first: {watch_first}", G::RPC);
                    let arbiter = limit.arbiter();
                    let (sender, requests) = mpsc::channel(4);
                    let mut replies = arbiter.open_many(ReceiverStream::new(requests));
                    let setup = G::setup(Some(control_of(FLAG)), None, &[]);
                    let actions = vec![GameAction {
                        game: 7,
                        action: Some(G::action(setup)),
                    }];
                    sender.send(Ok(PlayManyRequest { actions })).await.unwrap();
                    replies.next().await.unwrap().unwrap();
                    if watch_first {
                        tokio::time::sleep(FLAG + Duration::from_secs(1)).await;
                    }
                    let (read, status) = to_the_end(&mut replies, &what, Clone::clone).await;
                    let [announcement] = &read[..] else {
                        panic!("{what}: one announcement before {status:?}, not {read:?}");
                    };
                    let announcement = announcement.to_response().unwrap();
                    assert!(announcement.unprompted, "{what}: {announcement:?}");
                    let [state] = &announcement.states[..] else {
                        panic!("{what}: one game announced: {announcement:?}");
                    };
                    assert_eq!(state.game, 7, "{what}: {state:?}");
                    let lost = reply_in::<G>(state, &what);
                    let left = [Duration::ZERO, FLAG];
                    assert_announcement::<G>(&lost, Side::A, left, winners, &what);
                    assert_eq!(status.code(), limit.code(), "{what}: {status:?}");
                    drop(sender);
                }
            }
        }
    }
    for_each_game(&InPlayManyAtTheFlag).await;
}

/// Over the wire, on fresh servers: `--stream-idle-timeout 200ms` and a game on a 600 ms
/// clock that nobody moves in, so that the idle timeout falls due at the very instant the
/// clock runs out. For every registered game, on its own stream and alone on a PlayMany
/// stream, four fresh servers each, all at once: each game's loss on time is announced,
/// then the stream ends idle. Fails on a server whose watch ends the game without its
/// announcement (seen on half of the fresh servers).
#[tokio::test]
async fn over_the_wire_the_flag_goes_out_before_the_idle_timeout_due_at_its_instant() {
    const FLAGS: &str = "--stream-idle-timeout 200ms";
    const INITIAL: Duration = Duration::from_millis(600);
    async fn flag_then_idle<G: LiveGame>(winners: [bool; 2]) {
        let server = common::TestServer::start_with_flags(FLAGS).await;
        let setup = G::setup(Some(control_of(INITIAL)), None, &[]);
        let (_sender, mut replies) = open_on_the_wire::<G>(&server.channel().await, setup).await;
        replies.message().await.unwrap().unwrap();
        let what = format!("{}: wire", G::RPC);
        let announcement = match replies.message().await {
            Ok(Some(announcement)) => announcement,
            Ok(None) => panic!("{what}: the flag before the idle timeout, not the end"),
            Err(status) => panic!("{what}: the flag before the idle timeout, not {status:?}"),
        };
        let left = [Duration::ZERO, INITIAL];
        assert_announcement::<G>(&announcement, Side::A, left, winners, &what);
        let status = status_next::<G>(&mut replies, &what).await;
        assert_eq!(status.code(), Code::DeadlineExceeded, "{what}: {status:?}");
    }
    async fn in_play_many<G: LiveGame>(winners: [bool; 2]) {
        let server = common::TestServer::start_with_flags(FLAGS).await;
        let mut client = server.client().await;
        let setup = G::setup(Some(control_of(INITIAL)), None, &[]);
        let (sender, requests) = mpsc::channel(4);
        let actions = vec![GameAction {
            game: 1,
            action: Some(G::action(setup)),
        }];
        sender.send(PlayManyRequest { actions }).await.unwrap();
        let mut replies = client
            .play_many(ReceiverStream::new(requests))
            .await
            .unwrap()
            .into_inner();
        replies.message().await.unwrap().unwrap();
        let what = format!("{}: PlayMany", G::RPC);
        let announcement = match replies.message().await {
            Ok(Some(announcement)) => announcement,
            other => panic!("{what}: the flag before the idle timeout, not {other:?}"),
        };
        assert!(announcement.unprompted, "{what}: {announcement:?}");
        let [state] = &announcement.states[..] else {
            panic!("{what}: one game announced: {announcement:?}");
        };
        let lost = reply_in::<G>(state, &what);
        let left = [Duration::ZERO, INITIAL];
        assert_announcement::<G>(&lost, Side::A, left, winners, &what);
        let status = replies.message().await.unwrap_err();
        assert_eq!(status.code(), Code::DeadlineExceeded, "{what}: {status:?}");
    }
    struct Tries;
    impl GameQuery for Tries {
        type Answer = ();
        async fn ask<G: LiveGame>(&self) {
            let winners = winners::<G>().await;
            let mut tries: Vec<Pin<Box<dyn Future<Output = ()>>>> = Vec::new();
            for _ in 0..4 {
                tries.push(Box::pin(flag_then_idle::<G>(winners)));
                tries.push(Box::pin(in_play_many::<G>(winners)));
            }
            join_all(tries).await;
        }
    }
    ask_each_game(&Tries, true).await;
}
