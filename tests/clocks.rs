//! Live games on the clock, on tokio's stopped clock (`start_paused`): random games of
//! all three kinds, with random time controls and random think times, every reply's
//! clock, verdict, ending and order held against a naive model of the clock; games cut
//! and resumed with the clock of their last reply; PlayMany against the same games on
//! their own streams, every field. The games are played in process
//! (`Arbiter::open_game`, `Arbiter::open_many`), so that no network I/O lets the
//! stopped clock move while a message is on its way.

mod common;

use std::fmt::Debug;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use arbiter::games::{connect_four, othello, tic_tac_toe};
use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::{
    game_action, game_state, play_connect_four_request, play_othello_request, Board, Cell, Clock,
    ConnectFourSetup, Ending, GameAction, OthelloSetup, PlayConnectFourRequest,
    PlayConnectFourResponse, PlayManyRequest, PlayOthelloRequest, PlayOthelloResponse,
    PlayTicTacToeRequest, PlayTicTacToeResponse, TicTacToeMove, TicTacToeSetup, TimeControl,
    Verdict,
};
use arbiter::{Arbiter, LiveGame, ReplyStream, StreamLimits};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;
use tokio_util::sync::CancellationToken;
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

/// The sides of a game: A moves first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    A,
    B,
}

impl Side {
    fn index(self) -> usize {
        match self {
            Self::A => 0,
            Self::B => 1,
        }
    }

    fn other_wins(self) -> Verdict {
        match self {
            Self::A => Verdict::BWins,
            Self::B => Verdict::AWins,
        }
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

/// What the tests read of a live game's reply, whatever its kind.
trait Timed: Clone + Debug + PartialEq + Send + 'static {
    fn clock_field(&self) -> Option<&Clock>;
    fn ending_field(&self) -> Ending;
    fn unprompted_field(&self) -> bool;
    fn verdict_field(&self) -> Verdict;
    fn rejected_field(&self) -> &str;
    fn side_to_move(&self) -> Option<Side>;

    fn left(&self) -> Option<[Duration; 2]> {
        self.clock_field()
            .map(|clock| [std_duration(&clock.a_left), std_duration(&clock.b_left)])
    }
}

macro_rules! timed {
    ($response:ty, $side:expr) => {
        impl Timed for $response {
            fn clock_field(&self) -> Option<&Clock> {
                self.clock.as_ref()
            }
            fn ending_field(&self) -> Ending {
                self.ending()
            }
            fn unprompted_field(&self) -> bool {
                self.unprompted
            }
            fn verdict_field(&self) -> Verdict {
                self.verdict()
            }
            fn rejected_field(&self) -> &str {
                &self.rejected
            }
            fn side_to_move(&self) -> Option<Side> {
                $side(self)
            }
        }
    };
}

timed!(
    PlayOthelloResponse,
    |r: &PlayOthelloResponse| match r.to_move.as_str() {
        "B" => Some(Side::A),
        "W" => Some(Side::B),
        _ => None,
    }
);
timed!(
    PlayConnectFourResponse,
    |r: &PlayConnectFourResponse| match r.to_move {
        1 => Some(Side::A),
        2 => Some(Side::B),
        _ => None,
    }
);
timed!(PlayTicTacToeResponse, |r: &PlayTicTacToeResponse| (r
    .verdict()
    == Verdict::Pending)
    .then_some(if r.moves_played % 2 == 0 {
        Side::A
    } else {
        Side::B
    }));

/// A kind of live game as these tests play it.
trait Kind {
    type Game: LiveGame<Request = Self::Request, Response = Self::Response>;
    type Request: Clone + Debug + Send + 'static + prost::Message + Default;
    type Response: Timed;
    /// A setup on the clock, replaying `history` (the moves' requests, as sent).
    fn setup(
        control: TimeControl,
        clock: Option<Clock>,
        history: &[Self::Request],
    ) -> Self::Request;
    /// A random next message, most often a legal move.
    fn next(rng: &mut Rng, last: &Self::Response) -> Self::Request;
    /// The action of this kind in a PlayMany message.
    fn action(request: Self::Request) -> game_action::Action;
}

struct OthelloKind;
struct ConnectFourKind;
struct TicTacToeKind;

impl Kind for OthelloKind {
    type Game = othello::Game;
    type Request = PlayOthelloRequest;
    type Response = PlayOthelloResponse;

    fn setup(
        control: TimeControl,
        clock: Option<Clock>,
        history: &[PlayOthelloRequest],
    ) -> PlayOthelloRequest {
        let history = history
            .iter()
            .filter_map(|request| match &request.action {
                Some(play_othello_request::Action::Move(cell)) => Some(*cell),
                _ => None,
            })
            .collect();
        PlayOthelloRequest {
            action: Some(play_othello_request::Action::Setup(Box::new(
                OthelloSetup {
                    // Small: games pass and end within a few dozen moves.
                    board: Some(Board::from_rows(["....", ".WB.", ".BW.", "...."])),
                    to_move: "B".into(),
                    history,
                    time_control: Some(control),
                    clock,
                },
            ))),
        }
    }

    fn next(rng: &mut Rng, last: &PlayOthelloResponse) -> PlayOthelloRequest {
        let cell = if !last.legal_moves.is_empty() && rng.percent(85) {
            last.legal_moves[rng.below(last.legal_moves.len() as u64) as usize]
        } else {
            Cell {
                row: rng.below(5) as i32,
                col: rng.below(5) as i32,
            }
        };
        PlayOthelloRequest {
            action: Some(play_othello_request::Action::Move(cell)),
        }
    }

    fn action(request: PlayOthelloRequest) -> game_action::Action {
        game_action::Action::Othello(request)
    }
}

impl Kind for ConnectFourKind {
    type Game = connect_four::Game;
    type Request = PlayConnectFourRequest;
    type Response = PlayConnectFourResponse;

    fn setup(
        control: TimeControl,
        clock: Option<Clock>,
        history: &[PlayConnectFourRequest],
    ) -> PlayConnectFourRequest {
        let history = history
            .iter()
            .filter_map(|request| match request.action {
                Some(play_connect_four_request::Action::Drop(col)) => Some(col),
                _ => None,
            })
            .collect();
        PlayConnectFourRequest {
            action: Some(play_connect_four_request::Action::Setup(Box::new(
                ConnectFourSetup {
                    rows: 4,
                    cols: 4,
                    run_length: 3,
                    history,
                    time_control: Some(control),
                    clock,
                },
            ))),
        }
    }

    fn next(rng: &mut Rng, _last: &PlayConnectFourResponse) -> PlayConnectFourRequest {
        // Mostly on the board; a full column or one off it now and then.
        let col = rng.below(5) as i32 - i32::from(rng.percent(5));
        PlayConnectFourRequest {
            action: Some(play_connect_four_request::Action::Drop(col)),
        }
    }

    fn action(request: PlayConnectFourRequest) -> game_action::Action {
        game_action::Action::ConnectFour(request)
    }
}

impl Kind for TicTacToeKind {
    type Game = tic_tac_toe::Game;
    type Request = PlayTicTacToeRequest;
    type Response = PlayTicTacToeResponse;

    fn setup(
        control: TimeControl,
        clock: Option<Clock>,
        history: &[PlayTicTacToeRequest],
    ) -> PlayTicTacToeRequest {
        let history = history
            .iter()
            .map(|request| TicTacToeMove {
                row: request.row,
                col: request.col,
            })
            .collect();
        PlayTicTacToeRequest {
            row: 0,
            col: 0,
            setup: Some(Box::new(TicTacToeSetup {
                history,
                time_control: Some(control),
                clock,
            })),
        }
    }

    fn next(rng: &mut Rng, _last: &PlayTicTacToeResponse) -> PlayTicTacToeRequest {
        PlayTicTacToeRequest {
            row: rng.below(4) as i32,
            col: rng.below(3) as i32,
            setup: None,
        }
    }

    fn action(request: PlayTicTacToeRequest) -> game_action::Action {
        game_action::Action::TicTacToe(request)
    }
}

/// What the random games went through, to hold that they went through it all.
struct Counts {
    unprompted: AtomicUsize,
    before_a_move: AtomicUsize,
    resumes: AtomicUsize,
    applied: AtomicUsize,
    board_ends: AtomicUsize,
}

thread_local! {
    // Per test: each runs on a thread of its own.
    static COUNTS: Counts = const {
        Counts {
            unprompted: AtomicUsize::new(0),
            before_a_move: AtomicUsize::new(0),
            resumes: AtomicUsize::new(0),
            applied: AtomicUsize::new(0),
            board_ends: AtomicUsize::new(0),
        }
    };
}

/// Fails unless the random games so far met every case: losses announced on their own
/// and before a move, resumes, moves applied, games ended on the board.
fn assert_every_case_met(what: &str) {
    COUNTS.with(|c| every_case_met(c, what));
}

fn every_case_met(c: &Counts, what: &str) {
    let counts = [
        ("announced on its own", c.unprompted.load(Ordering::Relaxed)),
        (
            "announced before a move",
            c.before_a_move.load(Ordering::Relaxed),
        ),
        ("resumed", c.resumes.load(Ordering::Relaxed)),
        ("applied", c.applied.load(Ordering::Relaxed)),
        ("ended on the board", c.board_ends.load(Ordering::Relaxed)),
    ];
    println!("{what}: {counts:?}");
    for (case, count) in counts {
        assert!(count > 0, "{what}: no game was {case}: {counts:?}");
    }
}

/// The naive model of a game's clock: each side's time at the start of the running
/// turn, whose turn runs and since when (as time since the game's start), and who lost
/// on time.
#[derive(Debug, Clone)]
struct Model {
    left: [Duration; 2],
    increment: Duration,
    move_limit: Option<Duration>,
    running: Option<(Side, Duration)>,
    lost: Option<Side>,
}

impl Model {
    fn deadline(&self) -> Option<Duration> {
        let (side, since) = self.running?;
        let mut allowed = self.left[side.index()];
        if let Some(limit) = self.move_limit {
            allowed = allowed.min(limit);
        }
        Some(since + allowed)
    }

    fn left_at(&self, t: Duration) -> [Duration; 2] {
        let mut left = self.left;
        if let Some((side, since)) = self.running {
            left[side.index()] = left[side.index()].saturating_sub(t - since);
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
        self.left[side.index()] -= deadline - since;
        self.lost = Some(side);
        Some((side, self.left))
    }

    /// A message at `t`, `applied` or not, after which `next` is to move.
    fn message(&mut self, t: Duration, applied: bool, next: Option<Side>) -> [Duration; 2] {
        if applied {
            if let Some((side, since)) = self.running {
                self.left[side.index()] = self.left[side.index()] - (t - since) + self.increment;
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

/// Fails unless `reply` is what the model says of an announcement of `loser`'s loss
/// with the clock at `left`.
fn assert_announcement<R: Timed>(reply: &R, loser: Side, left: [Duration; 2], what: &str) {
    assert!(
        reply.unprompted_field(),
        "{what}: not unprompted: {reply:?}"
    );
    assert_eq!(reply.left(), Some(left), "{what}: clock of {reply:?}");
    assert_eq!(reply.ending_field(), Ending::Time, "{what}: {reply:?}");
    assert_eq!(
        reply.verdict_field(),
        loser.other_wins(),
        "{what}: {reply:?}"
    );
    assert_eq!(reply.rejected_field(), "", "{what}: {reply:?}");
    assert_eq!(reply.side_to_move(), None, "{what}: {reply:?}");
}

/// Fails unless `reply`, to a message at `t`, is what the model says; applies it to the
/// model.
fn assert_reply<R: Timed>(model: &mut Model, reply: &R, t: Duration, what: &str) {
    assert!(!reply.unprompted_field(), "{what}: unprompted: {reply:?}");
    let applied = reply.rejected_field().is_empty();
    if model.lost.is_some() {
        assert!(
            !applied,
            "{what}: a move applied after a loss on time: {reply:?}"
        );
    }
    let left = model.message(t, applied, reply.side_to_move());
    assert_eq!(reply.left(), Some(left), "{what}: clock of {reply:?}");
    let ending = match (model.lost, reply.side_to_move()) {
        (Some(loser), _) => {
            assert_eq!(
                reply.verdict_field(),
                loser.other_wins(),
                "{what}: {reply:?}"
            );
            Ending::Time
        }
        (None, None) => Ending::Board,
        (None, Some(_)) => Ending::Unspecified,
    };
    assert_eq!(reply.ending_field(), ending, "{what}: {reply:?}");
}

/// One game's stream, in process.
struct Stream<K: Kind> {
    sender: mpsc::Sender<Result<K::Request, tonic::Status>>,
    replies: ReplyStream<K::Response>,
}

impl<K: Kind> Stream<K> {
    fn open(arbiter: &Arbiter) -> Self {
        let (sender, requests) = mpsc::channel(4);
        let replies = arbiter
            .open_game::<K::Game, _>(ReceiverStream::new(requests))
            .unwrap();
        Self { sender, replies }
    }

    async fn send(&mut self, request: K::Request) {
        self.sender.send(Ok(request)).await.unwrap();
    }

    async fn reply(&mut self) -> K::Response {
        self.replies.next().await.unwrap().unwrap()
    }
}

/// Plays one random game of kind `K` on the clock, from `seed`, against the model;
/// returns the messages sent, each with the time it was sent at, and every reply.
async fn random_game<K: Kind>(seed: u64) -> (Vec<(Duration, K::Request)>, Vec<K::Response>) {
    let count = |field: fn(&Counts) -> &AtomicUsize| {
        COUNTS.with(|c| field(c).fetch_add(1, Ordering::Relaxed));
    };
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
    };
    let mut stream = Stream::<K>::open(&arbiter);
    let setup = K::setup(control, clock, &[]);
    let mut sent = vec![(Duration::ZERO, setup.clone())];
    let mut replies = Vec::new();
    stream.send(setup).await;
    let first = stream.reply().await;
    model.running = first.side_to_move().map(|side| (side, Duration::ZERO));
    assert_eq!(first.left(), Some(model.left), "seed {seed}: setup");
    replies.push(first.clone());
    let mut last = first;
    let mut applied: Vec<K::Request> = Vec::new();
    for step in 0..40 {
        let what = format!("seed {seed}, step {step}");
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
                assert_announcement(&announcement, loser, left, &what);
                count(|c| &c.unprompted);
                replies.push(announcement);
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
            stream = Stream::<K>::open(&arbiter);
            let setup = K::setup(control, last.clock_field().cloned(), &applied);
            sent.push((resumed_at, setup.clone()));
            stream.send(setup).await;
            let reply = stream.reply().await;
            model.left = last.left().unwrap();
            model.running = reply.side_to_move().map(|side| (side, resumed_at));
            assert_eq!(reply.left(), Some(model.left), "{what}: resumed");
            count(|c| &c.resumes);
            replies.push(reply.clone());
            last = reply;
            continue;
        }
        let request = K::next(&mut rng, &last);
        sent.push((t, request.clone()));
        stream.send(request.clone()).await;
        if let Some((loser, left)) = model.flag_by(t) {
            // The deadline passed before the move: the announcement goes first.
            let announcement = stream.reply().await;
            assert_announcement(&announcement, loser, left, &what);
            count(|c| &c.before_a_move);
            replies.push(announcement);
        }
        let reply = stream.reply().await;
        assert_reply(&mut model, &reply, t, &what);
        if reply.rejected_field().is_empty() {
            applied.push(request);
            count(|c| &c.applied);
        }
        if reply.ending_field() == Ending::Board && last.ending_field() != Ending::Board {
            count(|c| &c.board_ends);
        }
        replies.push(reply.clone());
        last = reply;
        if last.side_to_move().is_none() && rng.percent(30) {
            break;
        }
    }
    (sent, replies)
}

#[tokio::test(start_paused = true)]
async fn random_othello_games_keep_time_as_the_model_does() {
    for seed in 0..60 {
        random_game::<OthelloKind>(seed * 7919 + 1).await;
    }
    assert_every_case_met("othello");
}

#[tokio::test(start_paused = true)]
async fn random_connect_four_games_keep_time_as_the_model_does() {
    for seed in 0..60 {
        random_game::<ConnectFourKind>(seed * 104_729 + 3).await;
    }
    assert_every_case_met("connect_four");
}

#[tokio::test(start_paused = true)]
async fn random_tic_tac_toe_games_keep_time_as_the_model_does() {
    for seed in 0..60 {
        random_game::<TicTacToeKind>(seed * 1_299_709 + 5).await;
    }
    assert_every_case_met("tic_tac_toe");
}

/// The move limit ends a turn that has time left; the increment is added after each
/// applied move and not after a rejected one.
#[tokio::test(start_paused = true)]
async fn the_move_limit_and_the_increment() {
    let arbiter = Arbiter::default();
    let mut stream = Stream::<ConnectFourKind>::open(&arbiter);
    let control = TimeControl {
        initial: Some(proto_duration(Duration::from_secs(10))),
        increment: Some(proto_duration(Duration::from_secs(1))),
        move_limit: Some(proto_duration(Duration::from_secs(2))),
    };
    let start = Instant::now();
    stream
        .send(ConnectFourKind::setup(control, None, &[]))
        .await;
    stream.reply().await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stream.send(drop_in(9)).await; // off the board: no increment, the time runs on
    let rejected = stream.reply().await;
    assert!(!rejected.rejected.is_empty());
    assert_eq!(
        rejected.left(),
        Some([Duration::from_millis(8500), Duration::from_secs(10)])
    );
    stream.send(drop_in(0)).await;
    let applied = stream.reply().await;
    assert_eq!(
        applied.left(),
        Some([Duration::from_millis(9500), Duration::from_secs(10)])
    );
    // B thinks past the move limit, with 10 s left: it loses at 2 s, keeping 8 s.
    let announcement = stream.reply().await;
    assert_eq!(start.elapsed(), Duration::from_millis(3500));
    assert_announcement(
        &announcement,
        Side::B,
        [Duration::from_millis(9500), Duration::from_secs(8)],
        "move limit",
    );
    // Any message after the end is rejected, the clock stopped.
    tokio::time::sleep(Duration::from_secs(5)).await;
    stream.send(drop_in(1)).await;
    let after = stream.reply().await;
    assert!(after.rejected.contains("over"), "{after:?}");
    assert_eq!(after.left(), announcement.left());
    assert_eq!(after.ending(), Ending::Time);
    assert!(!after.unprompted);
}

fn drop_in(col: i32) -> PlayConnectFourRequest {
    PlayConnectFourRequest {
        action: Some(play_connect_four_request::Action::Drop(col)),
    }
}

/// Othello's passes: the side that moves again keeps its own time running, from the
/// move that made the other pass.
#[tokio::test(start_paused = true)]
async fn a_pass_keeps_the_movers_time_running() {
    let arbiter = Arbiter::default();
    let mut stream = Stream::<OthelloKind>::open(&arbiter);
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
            action: Some(play_othello_request::Action::Move(Cell { row: 0, col: 2 })),
        })
        .await;
    let reply = stream.reply().await;
    assert!(reply.passed, "{reply:?}");
    assert_eq!(reply.to_move, "B");
    assert_eq!(
        reply.left(),
        Some([Duration::from_secs(4), Duration::from_secs(5)])
    );
    // Black's time runs again at once: it runs out 4 s later.
    let announcement = stream.reply().await;
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    assert_announcement(
        &announcement,
        Side::A,
        [Duration::ZERO, Duration::from_secs(5)],
        "pass",
    );
}

/// PlayMany on the clock: random games of all three kinds interleaved on one stream
/// give, game by game, the replies the same games give on their own streams, the
/// announcements of losses on time included, every field.
#[tokio::test(start_paused = true)]
async fn play_many_on_the_clock_is_each_game_on_its_own_stream() {
    for seed in 0..20 {
        let mut rng = Rng(seed * 31 + 7);
        // Each game's messages and the times they are sent at, from a random game.
        let othello = random_game::<OthelloKind>(rng.next()).await.0;
        let connect_four = random_game::<ConnectFourKind>(rng.next()).await.0;
        let tic_tac_toe = random_game::<TicTacToeKind>(rng.next()).await.0;
        // Those whose stream was never cut, played again together.
        let mut schedule: Vec<(Duration, u64, game_action::Action)> = Vec::new();
        let games: [(u64, Vec<(Duration, game_action::Action)>); 3] = [
            (1, actions::<OthelloKind>(&othello)),
            (2, actions::<ConnectFourKind>(&connect_four)),
            (3, actions::<TicTacToeKind>(&tic_tac_toe)),
        ];
        for (game, actions) in &games {
            for (t, action) in actions {
                schedule.push((*t, *game, action.clone()));
            }
        }
        schedule.sort_by_key(|(t, game, _)| (*t, *game));
        let many = play_many_at(&schedule).await;
        for (game, actions) in games {
            let alone = alone_at(game, &actions).await;
            assert_eq!(many[game as usize - 1], alone, "seed {seed}, game {game}");
        }
    }
}

/// A game's messages as PlayMany actions, up to the first resume (a second setup).
fn actions<K: Kind>(sent: &[(Duration, K::Request)]) -> Vec<(Duration, game_action::Action)> {
    let setups = sent
        .iter()
        .enumerate()
        .filter(|(i, (_, request))| *i > 0 && format!("{request:?}").contains("Setup"))
        .map(|(i, _)| i)
        .next()
        .unwrap_or(sent.len());
    sent[..setups]
        .iter()
        .map(|(t, request)| (*t, K::action(request.clone())))
        .collect()
}

/// Every state of each of games 1 to 3 that a PlayMany stream sends when the actions of
/// `schedule` are sent at their times, then the stream waits 5 s.
async fn play_many_at(
    schedule: &[(Duration, u64, game_action::Action)],
) -> Vec<Vec<game_state::State>> {
    let arbiter = Arbiter::default();
    let (sender, requests) = mpsc::channel(4);
    let mut replies = arbiter.open_many(ReceiverStream::new(requests));
    let start = Instant::now();
    let mut states = vec![Vec::new(), Vec::new(), Vec::new()];
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

/// Every reply game `game`'s actions get on a stream of their own, as PlayMany states.
async fn alone_at(
    game: u64,
    actions: &[(Duration, game_action::Action)],
) -> Vec<game_state::State> {
    let mut many = play_many_at(
        &actions
            .iter()
            .map(|(t, action)| (*t, game, action.clone()))
            .collect::<Vec<_>>(),
    )
    .await;
    let on_its_own = std::mem::take(&mut many[game as usize - 1]);
    // The same on the game's own stream.
    let single = match game {
        1 => single::<OthelloKind>(actions, game_state::State::Othello).await,
        2 => single::<ConnectFourKind>(actions, game_state::State::ConnectFour).await,
        _ => single::<TicTacToeKind>(actions, game_state::State::TicTacToe).await,
    };
    assert_eq!(
        on_its_own, single,
        "game {game} alone in PlayMany and on its own stream"
    );
    single
}

/// The replies of a single-game stream of kind `K` sent `actions` at their times, then
/// waiting 5 s.
async fn single<K: Kind>(
    actions: &[(Duration, game_action::Action)],
    wrap: fn(K::Response) -> game_state::State,
) -> Vec<game_state::State> {
    let arbiter = Arbiter::default();
    let mut stream = Stream::<K>::open(&arbiter);
    let start = Instant::now();
    let mut out = Vec::new();
    for (t, action) in actions {
        while let Ok(reply) = tokio::time::timeout_at(start + *t, stream.replies.next()).await {
            out.push(wrap(reply.unwrap().unwrap()));
        }
        tokio::time::sleep_until(start + *t).await;
        let request = match K::state_request(action.clone()) {
            Some(request) => request,
            None => continue,
        };
        stream.send(request).await;
        loop {
            let reply = stream.reply().await;
            let unprompted = reply.unprompted_field();
            out.push(wrap(reply));
            if !unprompted {
                break;
            }
        }
    }
    while let Ok(Some(reply)) =
        tokio::time::timeout(Duration::from_secs(5), stream.replies.next()).await
    {
        out.push(wrap(reply.unwrap()));
    }
    out
}

/// A kind's request back out of a PlayMany action.
trait FromAction: Kind {
    fn state_request(action: game_action::Action) -> Option<Self::Request>;
}

impl<K: Kind> FromAction for K {
    /// By its field: the action's, as prost encodes it, against `K`'s.
    fn state_request(action: game_action::Action) -> Option<K::Request> {
        use prost::encoding::{decode_key, decode_varint};
        let encoded = |action: &game_action::Action| {
            let mut bytes = Vec::new();
            action.encode(&mut bytes);
            bytes
        };
        let (bytes, own) = (encoded(&action), encoded(&K::action(K::Request::default())));
        let (mut rest, mut own) = (&bytes[..], &own[..]);
        let field = decode_key(&mut rest).ok()?;
        (field == decode_key(&mut own).ok()?).then_some(())?;
        decode_varint(&mut rest).ok()?;
        <K::Request as prost::Message>::decode(rest).ok()
    }
}

// Over the wire, with real short clocks: tolerances a loaded machine cannot break.

fn control_of(initial: Duration) -> TimeControl {
    TimeControl {
        initial: Some(proto_duration(initial)),
        increment: None,
        move_limit: None,
    }
}

/// Opens a stream of `K` on `client` with `first` sent, and returns its reply stream
/// (the first message's reply unread) and the sender of later messages.
async fn open_on_the_wire<K: OnTheWire>(
    client: &mut ArbiterServiceClient<Channel>,
    first: K::Request,
) -> (mpsc::Sender<K::Request>, tonic::Streaming<K::Response>) {
    let (sender, requests) = mpsc::channel(8);
    sender.send(first).await.unwrap();
    let replies = K::call(client, ReceiverStream::new(requests)).await;
    (sender, replies)
}

/// A kind's own RPC.
trait OnTheWire: Kind {
    async fn call(
        client: &mut ArbiterServiceClient<Channel>,
        requests: ReceiverStream<Self::Request>,
    ) -> tonic::Streaming<Self::Response>;
}

impl OnTheWire for OthelloKind {
    async fn call(
        client: &mut ArbiterServiceClient<Channel>,
        requests: ReceiverStream<PlayOthelloRequest>,
    ) -> tonic::Streaming<PlayOthelloResponse> {
        client.play_othello(requests).await.unwrap().into_inner()
    }
}

impl OnTheWire for ConnectFourKind {
    async fn call(
        client: &mut ArbiterServiceClient<Channel>,
        requests: ReceiverStream<PlayConnectFourRequest>,
    ) -> tonic::Streaming<PlayConnectFourResponse> {
        client
            .play_connect_four(requests)
            .await
            .unwrap()
            .into_inner()
    }
}

impl OnTheWire for TicTacToeKind {
    async fn call(
        client: &mut ArbiterServiceClient<Channel>,
        requests: ReceiverStream<PlayTicTacToeRequest>,
    ) -> tonic::Streaming<PlayTicTacToeResponse> {
        client
            .play_tic_tac_toe(requests)
            .await
            .unwrap()
            .into_inner()
    }
}

/// On each kind of stream, a side that does not move in its 200 ms loses: the server
/// announces it unprompted, no sooner than the deadline, and no message is needed.
async fn a_flag_falls_unprompted<K: OnTheWire>() {
    let server = common::TestServer::start().await;
    let mut client = server.client().await;
    let initial = Duration::from_millis(200);
    let setup = K::setup(control_of(initial), None, &[]);
    let started = std::time::Instant::now();
    let (_sender, mut replies) = open_on_the_wire::<K>(&mut client, setup).await;
    let first = replies.message().await.unwrap().unwrap();
    assert_eq!(first.left(), Some([initial, initial]));
    let announcement = tokio::time::timeout(Duration::from_secs(60), replies.message())
        .await
        .expect("announced within a minute")
        .unwrap()
        .unwrap();
    assert!(
        started.elapsed() >= initial,
        "announced before the deadline"
    );
    assert_announcement(
        &announcement,
        Side::A,
        [Duration::ZERO, initial],
        "on the wire",
    );
}

#[tokio::test]
async fn a_flag_falls_unprompted_on_each_kind_of_stream() {
    a_flag_falls_unprompted::<OthelloKind>().await;
    a_flag_falls_unprompted::<ConnectFourKind>().await;
    a_flag_falls_unprompted::<TicTacToeKind>().await;
}

/// A thousand games on the clock in one PlayMany stream, with deadlines spread over
/// 100 to 500 ms: each is announced exactly once, in a reply marked unprompted, each
/// as its own stream would announce it.
#[tokio::test]
async fn a_thousand_games_on_the_clock_in_one_play_many_stream() {
    let server = common::TestServer::start().await;
    let mut client = server.client().await;
    let (sender, requests) = mpsc::channel(4);
    let actions = (0..1000u64)
        .map(|game| GameAction {
            game,
            action: Some(game_action::Action::ConnectFour(ConnectFourKind::setup(
                control_of(Duration::from_millis(100 + game % 401)),
                None,
                &[],
            ))),
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
            let game = state.game as usize;
            announced[game] += 1;
            let Some(game_state::State::ConnectFour(reply)) = state.state else {
                panic!("game {game}: {state:?}");
            };
            let initial = Duration::from_millis(100 + game as u64 % 401);
            assert_announcement(&reply, Side::A, [Duration::ZERO, initial], "PlayMany");
        }
    }
    assert!(started.elapsed() >= Duration::from_millis(100));
    drop(sender);
    // No announcement twice: the stream ends with nothing more.
    assert!(replies.message().await.unwrap().is_none());
    assert!(announced.iter().all(|&n| n == 1));
}

/// Each malformed clock field, by name: a setup on each kind of stream ends the stream
/// with INVALID_ARGUMENT naming it; the same setup in PlayMany is answered in place.
#[tokio::test]
async fn malformed_clocks_are_named() {
    let d = |seconds: i64, nanos: i32| Some(prost_types::Duration { seconds, nanos });
    let hour = 3600;
    let ok = d(60, 0);
    let cases: Vec<(&str, TimeControl, Option<Clock>)> = vec![
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
    let server = common::TestServer::start().await;
    let mut client = server.client().await;
    for (field, control, clock) in cases {
        let what = format!("{field}: {control:?} {clock:?}");
        malformed_on_the_wire::<OthelloKind>(&mut client, control, clock, field, &what).await;
        malformed_on_the_wire::<ConnectFourKind>(&mut client, control, clock, field, &what).await;
        malformed_on_the_wire::<TicTacToeKind>(&mut client, control, clock, field, &what).await;
        let action = game_action::Action::Othello(OthelloKind::setup(control, clock, &[]));
        let reply = client
            .play_many(tokio_stream::iter([PlayManyRequest {
                actions: vec![GameAction {
                    game: 1,
                    action: Some(action),
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
        assert_eq!(invalid, [field], "PlayMany, {what}");
    }
    // A clock without a time control.
    let setup = PlayConnectFourRequest {
        action: Some(play_connect_four_request::Action::Setup(Box::new(
            ConnectFourSetup {
                clock: Some(Clock {
                    a_left: d(1, 0),
                    b_left: None,
                }),
                ..Default::default()
            },
        ))),
    };
    let status = client
        .play_connect_four(tokio_stream::iter([setup]))
        .await
        .unwrap()
        .into_inner()
        .message()
        .await
        .unwrap_err();
    let fields: Vec<String> = status
        .get_details_bad_request()
        .unwrap()
        .field_violations
        .into_iter()
        .map(|v| v.field)
        .collect();
    assert_eq!(fields, ["setup.clock"]);
}

async fn malformed_on_the_wire<K: OnTheWire>(
    client: &mut ArbiterServiceClient<Channel>,
    control: TimeControl,
    clock: Option<Clock>,
    field: &str,
    what: &str,
) {
    let (_sender, mut replies) = open_on_the_wire::<K>(client, K::setup(control, clock, &[])).await;
    let status = replies.message().await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{what}");
    let fields: Vec<String> = status
        .get_details_bad_request()
        .unwrap()
        .field_violations
        .into_iter()
        .map(|v| v.field)
        .collect();
    assert_eq!(fields, [field], "{what}: {status:?}");
}

/// The idle timeout does not end a game whose clock runs: a game on a 1.5 s clock
/// outlives a 300 ms idle timeout, and is announced lost on time; a game without a
/// clock on the same server is closed idle.
#[tokio::test]
async fn a_running_clock_holds_off_the_idle_timeout() {
    let server = common::TestServer::start_with_flags("--stream-idle-timeout 300ms").await;
    let mut client = server.client().await;
    let initial = Duration::from_millis(1500);
    let setup = TicTacToeKind::setup(control_of(initial), None, &[]);
    let (_sender, mut replies) = open_on_the_wire::<TicTacToeKind>(&mut client, setup).await;
    replies.message().await.unwrap().unwrap();
    let announcement = replies.message().await.unwrap().unwrap();
    assert_announcement(&announcement, Side::A, [Duration::ZERO, initial], "idle");
    // Without a clock, the same silence ends the stream.
    let setup = PlayTicTacToeRequest {
        setup: Some(Box::<TicTacToeSetup>::default()),
        ..Default::default()
    };
    let (_sender, mut replies) = open_on_the_wire::<TicTacToeKind>(&mut client, setup).await;
    replies.message().await.unwrap().unwrap();
    let status = replies.message().await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
}

/// Games that end are counted by game and by ending.
#[tokio::test]
async fn games_ended_are_counted_by_ending() {
    let (server, metrics) = common::metrics::start_with_metrics(&[]).await;
    let mut client = server.client().await;
    // One on time.
    a_flag_falls_on(&mut client).await;
    // One on the board: A wins along the top row.
    let moves = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)];
    let requests = moves.map(|(row, col)| PlayTicTacToeRequest {
        row,
        col,
        setup: None,
    });
    let mut replies = client
        .play_tic_tac_toe(tokio_stream::iter(requests))
        .await
        .unwrap()
        .into_inner();
    while replies.message().await.unwrap().is_some() {}
    let text = common::metrics::scrape(&metrics).await;
    let count = |ending| {
        common::metrics::sample(
            &text,
            "arbiter_games_ended_total",
            &["game=\"tic_tac_toe\"", ending],
        )
    };
    assert_eq!(count("ending=\"time\""), Some(1.0), "{text}");
    assert_eq!(count("ending=\"board\""), Some(1.0), "{text}");
}

async fn a_flag_falls_on(client: &mut ArbiterServiceClient<Channel>) {
    let setup = TicTacToeKind::setup(control_of(Duration::from_millis(100)), None, &[]);
    let (_sender, mut replies) = open_on_the_wire::<TicTacToeKind>(client, setup).await;
    replies.message().await.unwrap().unwrap();
    let announcement = replies.message().await.unwrap().unwrap();
    assert!(announcement.unprompted);
}

/// A client that half-closes a game on the clock (as grpcurl does once its messages are
/// sent) still hears the side to move lose on time; then the stream ends. Without a
/// clock, the stream ends at once.
#[tokio::test(start_paused = true)]
async fn a_half_closed_game_on_the_clock_ends_on_time() {
    let arbiter = Arbiter::default();
    let mut stream = Stream::<TicTacToeKind>::open(&arbiter);
    let start = Instant::now();
    let initial = Duration::from_millis(500);
    stream
        .send(TicTacToeKind::setup(control_of(initial), None, &[]))
        .await;
    stream
        .send(PlayTicTacToeRequest {
            row: 1,
            col: 1,
            setup: None,
        })
        .await;
    drop(stream.sender);
    let setup = stream.replies.next().await.unwrap().unwrap();
    assert_eq!(setup.left(), Some([initial, initial]));
    let moved = stream.replies.next().await.unwrap().unwrap();
    assert_eq!(moved.moves_played, 1);
    let announcement = stream.replies.next().await.unwrap().unwrap();
    assert_eq!(start.elapsed(), initial);
    assert_announcement(
        &announcement,
        Side::B,
        [initial, Duration::ZERO],
        "half-closed",
    );
    assert!(stream.replies.next().await.is_none());
    let mut stream = Stream::<TicTacToeKind>::open(&arbiter);
    stream
        .send(PlayTicTacToeRequest {
            row: 1,
            col: 1,
            setup: None,
        })
        .await;
    drop(stream.sender);
    stream.replies.next().await.unwrap().unwrap();
    assert!(stream.replies.next().await.is_none());
    assert_eq!(
        start.elapsed(),
        initial,
        "no time passed waiting for a game without a clock"
    );
}

/// A PlayMany message that sets a game up with no time left for the side to move, then
/// moves in it: the move is not applied. The announcement of the loss on time comes
/// first, in its own reply, and the message's reply answers the move as after the end,
/// as a single-game stream answers it (where the announcement comes between the setup's
/// reply and the move's). Fails on a server that checks clocks only as a message
/// begins, which applied the move.
#[tokio::test(start_paused = true)]
async fn a_move_after_a_setup_with_no_time_left_in_one_play_many_message() {
    let arbiter = Arbiter::default();
    let (sender, requests) = mpsc::channel(4);
    let mut replies = arbiter.open_many(ReceiverStream::new(requests));
    let minute = Duration::from_secs(60);
    let setup = TicTacToeKind::setup(
        control_of(minute),
        Some(Clock {
            a_left: Some(proto_duration(Duration::ZERO)),
            b_left: Some(proto_duration(minute)),
        }),
        &[],
    );
    let centre = PlayTicTacToeRequest {
        row: 1,
        col: 1,
        setup: None,
    };
    let actions = [setup, centre]
        .into_iter()
        .map(|request| GameAction {
            game: 1,
            action: Some(game_action::Action::TicTacToe(request)),
        })
        .collect();
    sender.send(Ok(PlayManyRequest { actions })).await.unwrap();
    let announcement = replies.next().await.unwrap().unwrap();
    let announcement = announcement.to_response().unwrap();
    assert!(announcement.unprompted);
    let [state] = &announcement.states[..] else {
        panic!("one announcement: {announcement:?}");
    };
    let Some(game_state::State::TicTacToe(lost)) = &state.state else {
        panic!("a Tic-Tac-Toe state: {state:?}");
    };
    assert_announcement(lost, Side::A, [Duration::ZERO, minute], "in one message");
    let reply = replies.next().await.unwrap().unwrap();
    let reply = reply.to_response().unwrap();
    assert!(!reply.unprompted);
    let [set_up, moved] = &reply.states[..] else {
        panic!("one state per action: {reply:?}");
    };
    let (Some(game_state::State::TicTacToe(set_up)), Some(game_state::State::TicTacToe(moved))) =
        (&set_up.state, &moved.state)
    else {
        panic!("Tic-Tac-Toe states: {reply:?}");
    };
    assert_eq!(set_up.moves_played, 0);
    assert_eq!(moved.moves_played, 0, "the move is not applied: {moved:?}");
    assert!(
        !moved.rejected.is_empty(),
        "the move is rejected: {moved:?}"
    );
    assert_eq!(moved.ending, i32::from(Ending::Time));
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
async fn to_the_end<R: Debug>(replies: &mut ReplyStream<R>, what: &str) -> (Vec<R>, tonic::Status) {
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
            None => panic!("{what}: the stream ended with no status after {read:?}"),
        }
    }
}

/// A game of kind `K` on a clock of `FLAG` that nobody moves in, ended by `limit`; with
/// `watch_first`, the stream is not polled from its first reply until a second after the
/// flag. Its replies after the first, and the status that ended it.
async fn ended_by<K: Kind>(limit: Limit, watch_first: bool) -> (Vec<K::Response>, tonic::Status) {
    let arbiter = limit.arbiter();
    let mut stream = Stream::<K>::open(&arbiter);
    stream.send(K::setup(control_of(FLAG), None, &[])).await;
    assert_eq!(stream.reply().await.left(), Some([FLAG, FLAG]));
    if watch_first {
        tokio::time::sleep(FLAG + Duration::from_secs(1)).await;
    }
    let what = format!("{limit:?}, watch first: {watch_first}");
    to_the_end(&mut stream.replies, &what).await
}

/// On each kind of single-game stream, a limit that ends the stream at the instant its
/// clock runs out (the idle timeout, the game's lifetime, the shutdown's grace) sends
/// the announcement of the loss on time first, then its status; whichever of the
/// server's watch and the stream's timer finds them due first. Fails on a server whose
/// watch frees a game without announcing the clocks run out by then (the idle timeout
/// then closed 3 of 6 fresh servers' games with no result), or whose idle watch learns
/// of a running clock only when the stream is next polled.
#[tokio::test(start_paused = true)]
async fn a_flag_at_the_instant_a_limit_ends_the_stream_goes_out_first() {
    async fn each<K: Kind>() {
        for limit in Limit::AT_THE_FLAG {
            for watch_first in [true, false] {
                let what = format!("{limit:?}, watch first: {watch_first}");
                let (replies, status) = ended_by::<K>(limit, watch_first).await;
                let [announcement] = &replies[..] else {
                    panic!("{what}: one announcement before {status:?}, not {replies:?}");
                };
                assert_announcement(announcement, Side::A, [Duration::ZERO, FLAG], &what);
                assert_eq!(status.code(), limit.code(), "{what}: {status:?}");
            }
        }
    }
    each::<OthelloKind>().await;
    each::<ConnectFourKind>().await;
    each::<TicTacToeKind>().await;
}

/// A limit that ends the stream a millisecond before the clock runs out announces
/// nothing: the game ended before the flag fell. Fails on a server that announces the
/// clocks run out by when the watch looked, rather than by when the limit fell due.
#[tokio::test(start_paused = true)]
async fn a_limit_just_before_the_flag_announces_nothing() {
    let limit = Limit::Lifetime(FLAG - Duration::from_millis(1));
    for watch_first in [true, false] {
        let (replies, status) = ended_by::<TicTacToeKind>(limit, watch_first).await;
        assert!(
            replies.is_empty(),
            "watch first: {watch_first}: {replies:?}"
        );
        assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    }
}

/// The same in PlayMany: a clocked game among the stream's games is announced lost on
/// time before a limit due at its flag's instant ends the stream.
#[tokio::test(start_paused = true)]
async fn in_play_many_a_flag_at_the_instant_a_limit_ends_the_stream_goes_out_first() {
    for limit in Limit::AT_THE_FLAG {
        for watch_first in [true, false] {
            let what = format!("{limit:?}, watch first: {watch_first}");
            let arbiter = limit.arbiter();
            let (sender, requests) = mpsc::channel(4);
            let mut replies = arbiter.open_many(ReceiverStream::new(requests));
            let setup = TicTacToeKind::setup(control_of(FLAG), None, &[]);
            let actions = vec![GameAction {
                game: 7,
                action: Some(game_action::Action::TicTacToe(setup)),
            }];
            sender.send(Ok(PlayManyRequest { actions })).await.unwrap();
            replies.next().await.unwrap().unwrap();
            if watch_first {
                tokio::time::sleep(FLAG + Duration::from_secs(1)).await;
            }
            let (read, status) = to_the_end(&mut replies, &what).await;
            let [announcement] = &read[..] else {
                panic!("{what}: one announcement before {status:?}, not {read:?}");
            };
            let announcement = announcement.to_response().unwrap();
            assert!(announcement.unprompted, "{what}: {announcement:?}");
            let [state] = &announcement.states[..] else {
                panic!("{what}: one game announced: {announcement:?}");
            };
            assert_eq!(state.game, 7, "{what}: {state:?}");
            let Some(game_state::State::TicTacToe(lost)) = &state.state else {
                panic!("{what}: a Tic-Tac-Toe state: {state:?}");
            };
            assert_announcement(lost, Side::A, [Duration::ZERO, FLAG], &what);
            assert_eq!(status.code(), limit.code(), "{what}: {status:?}");
            drop(sender);
        }
    }
}

/// Over the wire, on fresh servers: `--stream-idle-timeout 200ms` and a game on a 600 ms
/// clock that nobody moves in, so that the idle timeout falls due at the very instant the
/// clock runs out. On every kind of stream, four fresh servers each, all at once: each
/// game's loss on time is announced, then the stream ends idle. Fails on a server whose
/// watch ends the game without its announcement (seen on half of the fresh servers).
#[tokio::test]
async fn over_the_wire_the_flag_goes_out_before_the_idle_timeout_due_at_its_instant() {
    async fn flag_then_idle<K: OnTheWire>() {
        let server = common::TestServer::start_with_flags("--stream-idle-timeout 200ms").await;
        let mut client = server.client().await;
        let initial = Duration::from_millis(600);
        let setup = K::setup(control_of(initial), None, &[]);
        let (_sender, mut replies) = open_on_the_wire::<K>(&mut client, setup).await;
        replies.message().await.unwrap().unwrap();
        let announcement = match replies.message().await {
            Ok(Some(announcement)) => announcement,
            other => panic!("the flag before the idle timeout, not {other:?}"),
        };
        assert_announcement(&announcement, Side::A, [Duration::ZERO, initial], "wire");
        let status = replies.message().await.unwrap_err();
        assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    }
    async fn in_play_many() {
        let server = common::TestServer::start_with_flags("--stream-idle-timeout 200ms").await;
        let mut client = server.client().await;
        let initial = Duration::from_millis(600);
        let setup = TicTacToeKind::setup(control_of(initial), None, &[]);
        let (sender, requests) = mpsc::channel(4);
        let actions = vec![GameAction {
            game: 1,
            action: Some(game_action::Action::TicTacToe(setup)),
        }];
        sender.send(PlayManyRequest { actions }).await.unwrap();
        let mut replies = client
            .play_many(ReceiverStream::new(requests))
            .await
            .unwrap()
            .into_inner();
        replies.message().await.unwrap().unwrap();
        let announcement = match replies.message().await {
            Ok(Some(announcement)) => announcement,
            other => panic!("the flag before the idle timeout, not {other:?}"),
        };
        assert!(announcement.unprompted, "{announcement:?}");
        let Some(game_state::State::TicTacToe(lost)) = &announcement.states[0].state else {
            panic!("a Tic-Tac-Toe state: {announcement:?}");
        };
        assert_announcement(lost, Side::A, [Duration::ZERO, initial], "PlayMany");
        let status = replies.message().await.unwrap_err();
        assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    }
    let mut tries = tokio::task::JoinSet::new();
    for _ in 0..4 {
        tries.spawn(flag_then_idle::<OthelloKind>());
        tries.spawn(flag_then_idle::<ConnectFourKind>());
        tries.spawn(flag_then_idle::<TicTacToeKind>());
        tries.spawn(in_play_many());
    }
    while let Some(done) = tries.join_next().await {
        done.unwrap();
    }
}
