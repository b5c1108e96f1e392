//! Live games as the history and resume tests play them. Every registered game, through
//! its `Fixture`: a stream of it, in process or over the wire, sent one message at a
//! time ([`Live`]); the random messages of a game once it has started ([`Pick`]); the
//! game as played ([`Played`]); its replies as values that compare ([`state`]); and
//! proptest's cases run on the test's runtime ([`check`]). The three games the naive
//! referees cover: their messages through one trait ([`Wire`]), and the random messages
//! their history tests send once a game has started ([`Next`]).

use std::cell::RefCell;
use std::fmt::Debug;
use std::future::Future;

use arbiter::games::othello::Color;
use arbiter::games::{connect_four, othello, tic_tac_toe};
use arbiter::proto::{
    game_state, play_connect_four_request, play_othello_request, Cell, PlayConnectFourRequest,
    PlayConnectFourResponse, PlayOthelloRequest, PlayOthelloResponse, PlayTicTacToeRequest,
    PlayTicTacToeResponse,
};
use arbiter::{Arbiter, LiveGame, ReplyStream};
use futures_util::StreamExt;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestRunner};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;
use tonic::transport::Channel;
use tonic::{Status, Streaming};

use super::games::open;
use super::messages::tic_tac_toe_move;
use super::setups::{connect_four_setup, othello_setup, standard, tic_tac_toe_setup};

/// The setup of `G`'s test start with `history` replayed, off the clock: how the generic
/// tests open a game, and resume one.
pub fn setup<G: LiveGame>(history: &[G::Request]) -> G::Request {
    G::setup(None, None, history)
}

/// Whether `message` goes into a setup's history: the setup with it is not the setup
/// without (a chess claim, a later setup or a message with no action is left out).
pub fn in_history<G: LiveGame>(message: &G::Request) -> bool {
    use prost::Message;
    let with = setup::<G>(std::slice::from_ref(message));
    with.encode_to_vec() != setup::<G>(&[]).encode_to_vec()
}

/// One message of a random game of any live game once it has started, drawn before the
/// game runs and made from the reply before it.
#[derive(Debug, Clone, Copy)]
pub enum Pick {
    /// The game's next message from this number (`Fixture::next`): most often a legal
    /// move.
    Next(u64),
    /// The message the game rejects whatever the position (`Fixture::rejected`).
    Rejected,
    /// A setup (of the test start), which is not the first message: rejected.
    Setup,
    /// The message with no field set: no action, or Tic-Tac-Toe's move at (0, 0).
    Empty,
}

impl Pick {
    /// The message of `G` this pick makes after the reply `last`.
    pub fn message<G: LiveGame>(self, last: &G::Response) -> G::Request {
        match self {
            Pick::Next(pick) => G::next(pick, last),
            Pick::Rejected => G::rejected(),
            Pick::Setup => setup::<G>(&[]),
            Pick::Empty => G::Request::default(),
        }
    }
}

/// Up to `max` picks: of every 19, 16 of the game's next messages, one message it
/// rejects, one later setup and one empty message.
pub fn picks(max: usize) -> impl Strategy<Value = Vec<Pick>> {
    prop::collection::vec(
        prop_oneof![
            16 => any::<u64>().prop_map(Pick::Next),
            1 => Just(Pick::Rejected),
            1 => Just(Pick::Setup),
            1 => Just(Pick::Empty),
        ],
        0..max,
    )
}

/// A reply of `G` as PlayMany's state carries it: the same fields, which compare
/// (`PartialEq`) and print (`Debug`), as the reply's own type need not.
pub fn state<G: LiveGame>(reply: &G::Response) -> game_state::State {
    use prost::Message;
    let copy = G::Response::decode(&*reply.encode_to_vec()).expect("a reply decodes");
    G::state(copy)
}

/// A stream of the live game `G`, in process or over the wire, sent one message at a
/// time. Dropped, its replies go first: the stream is reset (a cut), not half-closed.
pub struct Live<G: LiveGame, S> {
    replies: S,
    sender: mpsc::Sender<G::Request>,
}

impl<G: LiveGame> Live<G, Streaming<G::Response>> {
    /// A stream of `G` over `channel`, by its RPC's path.
    pub async fn over(channel: &Channel) -> Result<Self, TestCaseError> {
        let (sender, messages) = mpsc::channel(4);
        let replies = open::<G>(channel, ReceiverStream::new(messages))
            .await
            .map_err(|status| TestCaseError::fail(format!("not opened: {status:?}")))?;
        Ok(Self { replies, sender })
    }
}

impl<G: LiveGame> Live<G, ReplyStream<G::Response>> {
    /// A stream of `G` in process, as `arbiter` plays its Play RPC's streams.
    pub fn within(arbiter: &Arbiter) -> Result<Self, TestCaseError> {
        let (sender, messages) = mpsc::channel(4);
        let replies = arbiter.open_game::<G, _>(ReceiverStream::new(messages).map(Ok));
        Ok(Self { replies, sender })
    }
}

impl<G: LiveGame, S: Stream<Item = Result<G::Response, Status>> + Unpin> Live<G, S> {
    /// Sends `message` and reads its reply, which must come.
    pub async fn send(&mut self, message: G::Request) -> Result<G::Response, TestCaseError> {
        if self.sender.send(message).await.is_err() {
            return Err(TestCaseError::fail("the stream closed"));
        }
        match self.replies.next().await {
            Some(Ok(reply)) => Ok(reply),
            Some(Err(status)) => Err(TestCaseError::fail(format!("status {status:?}"))),
            None => Err(TestCaseError::fail("the stream ended")),
        }
    }

    /// Sends `first`, then the message of each of `picks`, made from the reply before:
    /// the game as played.
    pub async fn play(
        mut self,
        first: G::Request,
        picks: &[Pick],
    ) -> Result<Played<G>, TestCaseError> {
        let mut played = Played {
            messages: vec![first.clone()],
            replies: vec![self.send(first).await?],
        };
        for pick in picks {
            let message = pick.message::<G>(played.replies.last().unwrap());
            played.replies.push(self.send(message.clone()).await?);
            played.messages.push(message);
        }
        Ok(played)
    }
}

/// A live game as played: every message sent, its first one first, and the reply to each.
pub struct Played<G: LiveGame> {
    pub messages: Vec<G::Request>,
    pub replies: Vec<G::Response>,
}

impl<G: LiveGame> Played<G> {
    /// Whether message `i` (after the first) was applied.
    fn applied(&self, i: usize) -> bool {
        G::seen(&self.replies[i]).rejected.is_empty()
    }

    /// Whether message `i` (after the first) applied a move: one more move is played
    /// after it than before.
    fn moved(&self, i: usize) -> bool {
        let moves = |i: usize| G::seen(&self.replies[i]).moves_played;
        self.applied(i) && moves(i) == moves(i - 1) + 1
    }

    /// How many of the messages, from the first, a setup's history can stand for: those
    /// before the first one applied that is no move (chess's claim of a draw, which ends
    /// the game with no move), or all.
    pub fn resumable(&self) -> usize {
        (1..self.messages.len())
            .find(|&i| self.applied(i) && !self.moved(i))
            .unwrap_or(self.messages.len())
    }

    /// The indices of the messages among the first `count` that applied a move.
    pub fn moves(&self, count: usize) -> Vec<usize> {
        (1..count).filter(|&i| self.moved(i)).collect()
    }

    /// The messages at `indices`, in order.
    pub fn messages_at(&self, indices: &[usize]) -> Vec<G::Request> {
        indices.iter().map(|&i| self.messages[i].clone()).collect()
    }
}

/// Runs `test` on `cases` values drawn from `strategy`, as proptest runs a test (failing
/// with the smallest value that fails): what each case came to. Each case runs on the
/// test's runtime, which must be a multi-threaded one.
pub fn check<S, R, F>(cases: u32, strategy: S, test: impl Fn(S::Value) -> F) -> Vec<R>
where
    S: Strategy,
    S::Value: Debug,
    F: Future<Output = Result<R, TestCaseError>>,
{
    let runtime = tokio::runtime::Handle::current();
    let outcomes = RefCell::new(Vec::new());
    tokio::task::block_in_place(|| {
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&strategy, |value| {
            let outcome = runtime.block_on(test(value))?;
            outcomes.borrow_mut().push(outcome);
            Ok(())
        });
        if let Err(error) = result {
            panic!("{error}");
        }
    });
    outcomes.into_inner()
}

/// What every live game's reply says alike.
pub trait Reply {
    /// Why the message was rejected; empty when it was applied.
    fn rejected(&self) -> &str;
    /// Clears `rejected`.
    fn clear_rejected(&mut self);
    /// Whether the reply says the side due next had to pass (only Othello passes).
    fn passed(&self) -> bool;
}

macro_rules! reply {
    ($response:ty, $passed:expr) => {
        impl Reply for $response {
            fn rejected(&self) -> &str {
                &self.rejected
            }

            fn clear_rejected(&mut self) {
                self.rejected.clear();
            }

            fn passed(&self) -> bool {
                $passed(self)
            }
        }
    };
}

reply!(PlayOthelloResponse, |reply: &PlayOthelloResponse| reply
    .passed);
reply!(PlayConnectFourResponse, |_| false);
reply!(PlayTicTacToeResponse, |_| false);

/// One kind of live game as a client sends it messages.
pub trait Wire {
    /// A move as the wire carries it.
    type Move: Copy + Debug;
    /// The service's game, whose messages these are.
    type Game: LiveGame<Request: Clone + Debug, Response: Reply + Clone + Debug + PartialEq>;

    /// The message that makes a move.
    fn request(step: Self::Move) -> Request<Self>;
    /// A move at (row, col), for games whose moves have both.
    fn anywhere(row: i32, col: i32) -> Self::Move;
    /// A setup sent after the first message, which must be rejected.
    fn later_setup() -> Request<Self>;
    /// A message with no action, for games that have one.
    fn empty() -> Option<Request<Self>>;
}

/// A message of the game `W`.
pub type Request<W> = <<W as Wire>::Game as Messages>::Request;
/// A reply of the game `W`.
pub type Response<W> = <<W as Wire>::Game as Messages>::Response;

/// A live game's message types, by name outside the crate.
pub trait Messages {
    type Request;
    type Response;
}

impl<G: LiveGame> Messages for G {
    type Request = G::Request;
    type Response = G::Response;
}

/// Live Othello: a move is a (row, col) cell.
pub struct Othello;

impl Wire for Othello {
    type Move = (i32, i32);
    type Game = othello::Game;

    fn request((row, col): (i32, i32)) -> PlayOthelloRequest {
        PlayOthelloRequest {
            action: Some(play_othello_request::Action::Move(Cell { row, col })),
        }
    }

    fn anywhere(row: i32, col: i32) -> (i32, i32) {
        (row, col)
    }

    fn later_setup() -> PlayOthelloRequest {
        othello_setup(&standard(), Color::Black, &[(2, 3)])
    }

    fn empty() -> Option<PlayOthelloRequest> {
        Some(PlayOthelloRequest { action: None })
    }
}

/// Live Connect Four: a move is a column.
pub struct ConnectFour;

impl Wire for ConnectFour {
    type Move = i32;
    type Game = connect_four::Game;

    fn request(col: i32) -> PlayConnectFourRequest {
        PlayConnectFourRequest {
            action: Some(play_connect_four_request::Action::Drop(col)),
        }
    }

    fn anywhere(_row: i32, col: i32) -> i32 {
        col
    }

    fn later_setup() -> PlayConnectFourRequest {
        connect_four_setup((0, 0, 0), &[0])
    }

    fn empty() -> Option<PlayConnectFourRequest> {
        Some(PlayConnectFourRequest { action: None })
    }
}

/// Live Tic-Tac-Toe: a move is a (row, col) square; every message has one.
pub struct TicTacToe;

impl Wire for TicTacToe {
    type Move = (i32, i32);
    type Game = tic_tac_toe::Game;

    fn request((row, col): (i32, i32)) -> PlayTicTacToeRequest {
        tic_tac_toe_move(row, col)
    }

    fn anywhere(row: i32, col: i32) -> (i32, i32) {
        (row, col)
    }

    fn later_setup() -> PlayTicTacToeRequest {
        // Its row and col name a square that is free unless the game took it.
        tic_tac_toe_setup(&[(0, 0)], (2, 2))
    }

    fn empty() -> Option<PlayTicTacToeRequest> {
        None
    }
}

/// One message of a random game once it has started, before the game has run: a legal
/// move is picked among those the game offers when the message is sent.
#[derive(Debug, Clone)]
pub enum Next {
    /// A legal move (the n-th, wrapped), or any move on the board once the game is over.
    Legal(Index),
    /// A move anywhere, near the board or at the int32 extremes.
    Anywhere(i32, i32),
    /// A setup, which is not the first message.
    Setup,
    /// No action at all (Tic-Tac-Toe has no such message: skipped).
    Empty,
}

/// Up to `max` messages, moves anywhere within `-2..near` or at the int32 extremes; of
/// every 14 + `anywhere` messages, 12 are legal moves, `anywhere` moves anywhere, one a
/// setup and one empty.
pub fn nexts(max: usize, near: i32, anywhere: u32) -> impl Strategy<Value = Vec<Next>> {
    let coordinate = prop_oneof![8 => -2..near, 1 => Just(i32::MIN), 1 => Just(i32::MAX)];
    prop::collection::vec(
        prop_oneof![
            12 => any::<Index>().prop_map(Next::Legal),
            anywhere => (coordinate.clone(), coordinate).prop_map(|(r, c)| Next::Anywhere(r, c)),
            1 => Just(Next::Setup),
            1 => Just(Next::Empty),
        ],
        0..max,
    )
}
