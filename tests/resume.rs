//! Live games resumed on another server from their history, over the wire: many games of
//! each kind, played with random messages (mostly legal moves, some illegal ones, later
//! setups, empty messages) on one server, are cut at a random point; the client opens a
//! stream on a second server with a setup whose history is every move applied so far,
//! and sends the rest. The setup's reply is the state after the last applied move, and
//! every later reply is, field for field, the one the same game played without a cut on
//! the first server gave.

mod common;

use common::setups::*;
mod reference;

use std::fmt::Debug;

use arbiter::games::othello::{Color, STANDARD_START};
use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::{
    play_connect_four_request, play_othello_request, Board, Cell, PlayConnectFourRequest,
    PlayConnectFourResponse, PlayOthelloRequest, PlayOthelloResponse, PlayTicTacToeRequest,
    PlayTicTacToeResponse, Verdict,
};
use common::live::{nexts, ConnectFour, Next, Othello, Reply, Request, Response, TicTacToe, Wire};
use common::messages::open_stream;
use common::TestServer;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestRunner};
use reference::games::{NaiveConnectFour, NaiveOthello};
use reference::NaiveReferee;
use tokio::runtime::Runtime;
use tokio::sync::mpsc;
use tonic::transport::Channel;
use tonic::Streaming;

type Client = ArbiterServiceClient<Channel>;

/// Games per kind.
const GAMES: u32 = 40;

/// A stream of one kind of live game: where its messages go, and its replies.
type Stream<W> = (mpsc::Sender<Request<W>>, Streaming<Response<W>>);

/// One kind of live game as a client plays it over the wire and resumes it.
trait Resumable: Wire {
    /// The game, for the summary.
    const NAME: &'static str;

    /// A new stream of this game's RPC.
    async fn open(client: Client) -> Stream<Self>;
    /// The legal moves in the state `reply` shows, or every move on the board once the
    /// game is over.
    fn choices(reply: &Response<Self>) -> Vec<Self::Move>;
    /// The move a message makes when it is applied: none for setups and empty messages.
    fn step(request: &Request<Self>) -> Option<Self::Move>;
}

impl Resumable for Othello {
    const NAME: &'static str = "Othello";

    async fn open(mut client: Client) -> Stream<Self> {
        open_stream(|stream| client.play_othello(stream)).await
    }

    fn choices(reply: &PlayOthelloResponse) -> Vec<(i32, i32)> {
        if reply.legal_moves.is_empty() {
            return on_board(reply.board.as_ref().unwrap());
        }
        reply.legal_moves.iter().map(|c| (c.row, c.col)).collect()
    }

    fn step(request: &PlayOthelloRequest) -> Option<(i32, i32)> {
        match &request.action {
            Some(play_othello_request::Action::Move(cell)) => Some((cell.row, cell.col)),
            _ => None,
        }
    }
}

fn on_board(board: &Board) -> Vec<(i32, i32)> {
    let (h, w) = (
        board.rows.len() as i32,
        board.rows.get(0).unwrap().len() as i32,
    );
    (0..h).flat_map(|r| (0..w).map(move |c| (r, c))).collect()
}

impl Resumable for ConnectFour {
    const NAME: &'static str = "Connect Four";

    async fn open(mut client: Client) -> Stream<Self> {
        open_stream(|stream| client.play_connect_four(stream)).await
    }

    fn choices(reply: &PlayConnectFourResponse) -> Vec<i32> {
        let top = reply.board.as_ref().unwrap().rows.get(0).unwrap();
        let all = 0..top.len() as i32;
        let open: Vec<i32> = all.clone().filter(|&c| top[c as usize] == b'0').collect();
        if reply.to_move == 0 || open.is_empty() {
            all.collect()
        } else {
            open
        }
    }

    fn step(request: &PlayConnectFourRequest) -> Option<i32> {
        match request.action {
            Some(play_connect_four_request::Action::Drop(col)) => Some(col),
            _ => None,
        }
    }
}

impl Resumable for TicTacToe {
    const NAME: &'static str = "Tic-Tac-Toe";

    async fn open(mut client: Client) -> Stream<Self> {
        open_stream(|stream| client.play_tic_tac_toe(stream)).await
    }

    fn choices(reply: &PlayTicTacToeResponse) -> Vec<(i32, i32)> {
        let board = reply.board.as_ref().unwrap();
        let all = on_board(board);
        let free: Vec<(i32, i32)> = all
            .iter()
            .copied()
            .filter(|&(r, c)| board.rows.get(r as usize).unwrap()[c as usize] == b'.')
            .collect();
        if reply.verdict != i32::from(Verdict::Pending) || free.is_empty() {
            all
        } else {
            free
        }
    }

    fn step(request: &PlayTicTacToeRequest) -> Option<(i32, i32)> {
        request
            .setup
            .is_none()
            .then_some((request.row, request.col))
    }
}

/// A game to play, cut and resume: its setup (none for the default start), the setup as
/// a resumed game sends it with the moves applied so far added to its history, what the
/// game shows before its first message, its messages as drawn, and where to cut it (with
/// `cut_after_pass`, right after the first reply that says a side passed, if any).
struct Plan<W: Resumable, F> {
    first: Option<Request<W>>,
    resume: F,
    fresh: Response<W>,
    next: Vec<Next>,
    cut: Index,
    cut_after_pass: bool,
}

/// What one kind's games added up to.
#[derive(Default)]
struct Tally {
    games: usize,
    with_setup: usize,
    cut_before_the_end: usize,
    resumed_moves: usize,
    resumed_after_a_pass: usize,
    compared: usize,
}

/// Sends `message` and reads its reply, which must come.
async fn exchange<Req, Resp>(
    sender: &mpsc::Sender<Req>,
    replies: &mut Streaming<Resp>,
    message: Req,
) -> Result<Resp, TestCaseError> {
    if sender.send(message).await.is_err() {
        return Err(TestCaseError::fail("the stream closed"));
    }
    match replies.message().await {
        Ok(Some(reply)) => Ok(reply),
        Ok(None) => Err(TestCaseError::fail("the stream ended")),
        Err(status) => Err(TestCaseError::fail(format!("status {status:?}"))),
    }
}

/// Sends every message in one stream, each after the reply to the one before: the replies.
async fn play_all<W: Resumable>(
    client: &Client,
    messages: Vec<Request<W>>,
) -> Result<Vec<Response<W>>, TestCaseError> {
    let (sender, mut replies) = W::open(client.clone()).await;
    let mut all = Vec::new();
    for message in messages {
        all.push(exchange(&sender, &mut replies, message).await?);
    }
    Ok(all)
}

/// The whole test of one game.
async fn resume_game<W: Resumable, F: Fn(&[W::Move]) -> Request<W>>(
    one: &Client,
    two: &Client,
    plan: Plan<W, F>,
    tally: &mut Tally,
) -> Result<(), TestCaseError> {
    // The uninterrupted game, on the first server, its messages made as it goes.
    let offset = usize::from(plan.first.is_some());
    let (sender, mut replies) = W::open(one.clone()).await;
    let (mut messages, mut whole) = (Vec::new(), Vec::new());
    if let Some(first) = &plan.first {
        whole.push(exchange(&sender, &mut replies, first.clone()).await?);
        messages.push(first.clone());
    }
    for next in &plan.next {
        let state = whole.last().unwrap_or(&plan.fresh);
        let message = match next {
            Next::Legal(pick) => {
                let choices = W::choices(state);
                W::request(choices[pick.index(choices.len())])
            }
            Next::Anywhere(r, c) => W::request(W::anywhere(*r, *c)),
            // The first message of a game without a setup would be its setup.
            Next::Setup if messages.is_empty() => continue,
            Next::Setup => W::later_setup(),
            Next::Empty => match W::empty() {
                Some(message) => message,
                None => continue,
            },
        };
        whole.push(exchange(&sender, &mut replies, message.clone()).await?);
        messages.push(message);
    }
    drop((sender, replies));

    // The same game on the first server, cut after `cut` messages: what the client saw.
    let pass = whole
        .iter()
        .position(|reply| reply.passed())
        .filter(|_| plan.cut_after_pass);
    let cut = match pass {
        Some(i) => (i + 1).max(offset),
        None => offset + plan.cut.index(messages.len() - offset + 1),
    };
    let (sender, mut replies) = W::open(one.clone()).await;
    let (mut applied, mut last_applied) = (Vec::new(), None);
    for (i, message) in messages[..cut].iter().enumerate() {
        let reply = exchange(&sender, &mut replies, message.clone()).await?;
        prop_assert_eq!(&reply, &whole[i], "the same game on the same server");
        if !reply.rejected().is_empty() {
            continue;
        }
        if i >= offset {
            let step = W::step(message);
            prop_assert!(step.is_some(), "{:?} was applied but is no move", message);
            applied.extend(step);
        }
        last_applied = Some(reply);
    }
    // A cut, not a half-close: the replies are dropped first, which resets the stream.
    drop(replies);
    drop(sender);

    // Resumed on the second server.
    let mut resumed_messages = vec![(plan.resume)(&applied)];
    resumed_messages.extend(messages[cut..].iter().cloned());
    let resumed = play_all::<W>(two, resumed_messages).await?;
    prop_assert_eq!(
        &resumed[0],
        last_applied.as_ref().unwrap_or(&plan.fresh),
        "the resumed setup's reply is the state after the last applied move, {:?}",
        applied
    );
    for (k, reply) in resumed[1..].iter().enumerate() {
        prop_assert_eq!(reply, &whole[cut + k], "reply to message {}", cut + k);
    }

    tally.games += 1;
    tally.with_setup += offset;
    tally.cut_before_the_end += usize::from(cut < messages.len());
    tally.resumed_moves += applied.len();
    tally.resumed_after_a_pass += usize::from(resumed[0].passed());
    tally.compared += resumed.len();
    Ok(())
}

/// Two servers on a runtime that outlives the test's cases, and a client of each.
struct Servers {
    runtime: Runtime,
    one: (TestServer, Client),
    two: (TestServer, Client),
}

impl Servers {
    fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (one, two) = runtime.block_on(async {
            let (one, two) = (TestServer::start().await, TestServer::start().await);
            let (c1, c2) = (one.client().await, two.client().await);
            ((one, c1), (two, c2))
        });
        Self { runtime, one, two }
    }

    /// Plays `GAMES` games drawn by `strategy` and made into plans by `plan`, and
    /// prints what they added up to.
    fn run<W: Resumable, S: Strategy, F: Fn(&[W::Move]) -> Request<W>>(
        self,
        strategy: S,
        plan: impl Fn(S::Value) -> Plan<W, F>,
    ) where
        S::Value: Debug,
    {
        let mut runner = TestRunner::new(Config {
            cases: GAMES,
            failure_persistence: None,
            ..Config::default()
        });
        let tally = std::cell::RefCell::new(Tally::default());
        runner
            .run(&strategy, |drawn| {
                let plan = plan(drawn);
                self.runtime.block_on(resume_game(
                    &self.one.1,
                    &self.two.1,
                    plan,
                    &mut tally.borrow_mut(),
                ))
            })
            .unwrap();
        let tally = tally.into_inner();
        println!(
            "{}: {} games ({} with a setup, {} cut before their end, {} resumed just after a \
             pass), {} moves applied before the cut, {} replies compared",
            W::NAME,
            tally.games,
            tally.with_setup,
            tally.cut_before_the_end,
            tally.resumed_after_a_pass,
            tally.resumed_moves,
            tally.compared
        );
        assert!(tally.games >= GAMES as usize);
        // Every cut stream, and every finished one, freed its game on both servers.
        self.runtime.block_on(async {
            self.one.0.wait_for_live_games(0).await;
            self.two.0.wait_for_live_games(0).await;
        });
    }
}

/// Othello from the standard start without a setup, from it with a setup, and from
/// random boards up to 10x10 and boards where passes come soon, with either side to move, each setup with a random legal
/// history of its own, which the resumed history starts with.
///
/// Broken servers this fails: one whose history replay differs from live play (passes
/// not automatic, the setup's `to_move` ignored, `moves_played` not counting the
/// history, `flips` or `passed` not of the history's last move), or that rejects a
/// history of moves it applied itself.
#[test]
fn othello_games_resume_on_another_server() {
    let start = prop_oneof![
        1 => Just(None),
        1 => (Just(standard()), Just(true)).prop_map(Some),
        2 => (othello_board(10), any::<bool>()).prop_map(Some),
        2 => (pass_board(), any::<bool>()).prop_map(Some),
    ];
    let strategy = (
        start,
        prop::collection::vec(any::<Index>(), 0..12),
        nexts(60, 12, 3),
        any::<Index>(),
        any::<bool>(),
    );
    Servers::start().run::<Othello, _, _>(strategy, |(start, picks, next, cut, cut_after_pass)| {
        let (rows, color) = match &start {
            Some((rows, black)) => (
                rows.clone(),
                if *black { Color::Black } else { Color::White },
            ),
            None => (standard(), Color::Black),
        };
        // The setup's own history: legal moves picked by the naive referee.
        let mut referee = NaiveOthello::new(rows.clone(), color).0;
        let history: Vec<(i32, i32)> = if start.is_some() {
            picks
                .iter()
                .map_while(|pick| {
                    let legal = referee.legal_cells();
                    let cell = *legal.get(pick.index(legal.len().max(1)))?;
                    referee.play(cell.row as i64, cell.col as i64);
                    Some((cell.row as i32, cell.col as i32))
                })
                .collect()
        } else {
            Vec::new()
        };
        let first = start
            .is_some()
            .then(|| othello_setup(&rows, color, &history));
        Plan {
            first,
            resume: move |applied: &[(i32, i32)]| {
                othello_setup(&rows, color, &[&history[..], applied].concat())
            },
            fresh: standard_othello(),
            next,
            cut,
            cut_after_pass,
        }
    });
}

/// The standard start's state: what a resumed game that had applied no move from it
/// must show.
fn standard_othello() -> PlayOthelloResponse {
    PlayOthelloResponse {
        verdict: Verdict::Pending.into(),
        board: Some(Board::from_rows(STANDARD_START)),
        flips: Vec::new(),
        to_move: "B".into(),
        passed: false,
        legal_moves: [(2, 3), (3, 2), (4, 5), (5, 4)]
            .map(|(row, col)| Cell { row, col })
            .to_vec(),
        black_discs: 2,
        white_discs: 2,
        moves_played: 0,
        rejected: String::new(),
        ..Default::default()
    }
}

/// Connect Four on the default board without a setup, and on random sizes up to 10x10
/// and run lengths up to 6 (each sometimes the default), each setup with a random legal
/// history of its own.
///
/// Broken servers this fails: one that replays a history on another board than the
/// setup's size (or the default's when 0), with another run length, or with player 2
/// first; that reports no `placed` and `run` for the history's last drop; or whose
/// `moves_played` or `to_move` after a history differ from the live game's.
#[test]
fn connect_four_games_resume_on_another_server() {
    let strategy = (
        prop::option::weighted(0.75, (side(10), side(10), side(6))),
        prop::collection::vec(any::<Index>(), 0..12),
        nexts(60, 12, 3),
        any::<Index>(),
    );
    Servers::start().run::<ConnectFour, _, _>(strategy, |(shape, picks, next, cut)| {
        let sizes = shape.unwrap_or((0, 0, 0));
        let or = |value: i32, default: usize| if value == 0 { default } else { value as usize };
        let mut referee = NaiveConnectFour::new(or(sizes.0, 6), or(sizes.1, 7), or(sizes.2, 4));
        let history: Vec<i32> = if shape.is_some() {
            picks
                .iter()
                .map_while(|pick| {
                    let open: Vec<usize> = (0..referee.rows[0].len())
                        .filter(|&c| referee.rows[0][c] == b'0' && referee.over.is_none())
                        .collect();
                    let col = *open.get(pick.index(open.len().max(1)))?;
                    referee.drop_piece(col as i64);
                    Some(col as i32)
                })
                .collect()
        } else {
            Vec::new()
        };
        Plan {
            first: shape.map(|shape| connect_four_setup(shape, &history)),
            resume: move |applied: &[i32]| {
                connect_four_setup(sizes, &[&history[..], applied].concat())
            },
            fresh: NaiveConnectFour::new(6, 7, 4).reply(None, Vec::new()),
            next,
            cut,
            cut_after_pass: false,
        }
    });
}

/// Tic-Tac-Toe without a setup and with a setup of a random legal history (its row and
/// col set, which a setup must not play).
///
/// Broken servers this fails: one that plays a setup's history with B first, plays the
/// setup message's row and col as a move, leaves a history that ended the game open, or
/// accepts a later setup.
#[test]
fn tic_tac_toe_games_resume_on_another_server() {
    let strategy = (
        prop::option::of(prop::collection::vec(any::<Index>(), 0..6)),
        nexts(14, 4, 3),
        any::<Index>(),
        (0..3, 0..3),
    );
    Servers::start().run::<TicTacToe, _, _>(strategy, |(setup, next, cut, square)| {
        let mut referee = NaiveReferee::default();
        let history: Vec<(i32, i32)> = setup
            .iter()
            .flatten()
            .map_while(|pick| {
                let free: Vec<(i32, i32)> = (0..3)
                    .flat_map(|r| (0..3).map(move |c| (r, c)))
                    .filter(|&(r, c)| referee.squares[r as usize][c as usize] == 0)
                    .collect();
                let step = *free.get(pick.index(free.len().max(1)))?;
                referee.play(i64::from(step.0), i64::from(step.1)).ok()?;
                Some(step)
            })
            .collect();
        Plan {
            first: setup.map(|_| tic_tac_toe_setup(&history, square)),
            resume: move |applied: &[(i32, i32)]| {
                tic_tac_toe_setup(&[&history[..], applied].concat(), square)
            },
            fresh: pending_tic_tac_toe(["...", "...", "..."], 0),
            next,
            cut,
            cut_after_pass: false,
        }
    });
}
