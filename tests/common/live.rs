//! The three live games' messages as the history and resume tests send them, through one
//! trait, and the random messages those tests send once a game has started.

use std::fmt::Debug;

use arbiter::games::othello::Color;
use arbiter::games::{connect_four, othello, tic_tac_toe};
use arbiter::proto::{
    play_connect_four_request, play_othello_request, Cell, PlayConnectFourRequest,
    PlayConnectFourResponse, PlayOthelloRequest, PlayOthelloResponse, PlayTicTacToeRequest,
    PlayTicTacToeResponse,
};
use arbiter::LiveGame;
use proptest::prelude::*;
use proptest::sample::Index;

use super::messages::tic_tac_toe_move;
use super::setups::{connect_four_setup, othello_setup, standard, tic_tac_toe_setup};

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
