//! The live glue of the games whose move places a piece on one cell (Connect Four's
//! drop, Gomoku's stone), written once: [`Placed`], the answer to a message, made after
//! a setup, a move applied or rejected, or a loss on time. Each game writes it as its
//! own reply (its `Answer`), and reads its own messages.

use super::play::{Handled, SETUP_NOT_FIRST};
use super::timing::{Timekeeper, Timing};
use crate::kit::clock::Turns;
use crate::kit::grid::Cell;

/// The answer to a live message of a placement game, before it is a reply: the game
/// after the message, and what the message did.
pub struct Placed<'a, G> {
    /// The game after the message.
    pub(crate) game: &'a G,
    /// Where the piece went, if a move was applied (or the setup's last, for a setup).
    pub(crate) placed: Option<Cell>,
    /// Why the message was not applied; empty when it was.
    pub(crate) rejected: String,
    /// The clock and the end as of the message, for a game on the clock.
    pub(crate) timing: Option<&'a Timing>,
}

/// What a placement game's message asked for: a move (its result: where the piece
/// went, or why it could not go), a setup after the first message, or nothing.
pub(crate) enum Asked {
    /// A move, played: where the piece went, or why not.
    Move(Result<Cell, String>),
    /// A setup, which only a stream's first message may be.
    Setup,
    /// No action: the message says what to send instead.
    Nothing(&'static str),
}

impl<'a, G: Turns> Placed<'a, G> {
    /// The answer to a setup: `game` as it starts, the setup history's last piece
    /// `placed`, and the clock.
    pub(crate) fn set_up(game: &'a G, placed: Option<Cell>, timing: Option<&'a Timing>) -> Self {
        Self {
            game,
            placed,
            rejected: String::new(),
            timing,
        }
    }

    /// The game as it stands, as the answer to no message: a loss on time.
    pub(crate) fn standing(game: &'a G, timing: &'a Timing) -> Self {
        Self::set_up(game, None, Some(timing))
    }

    /// The answer to a later message that `asked` what it asked of `game`, and what
    /// became of it; the clock, if any, kept by `keeper`.
    pub(crate) fn after(
        game: &'a G,
        asked: Asked,
        keeper: Option<&'a mut Timekeeper>,
    ) -> (Handled, Self) {
        let moved = match asked {
            Asked::Move(moved) => moved,
            Asked::Setup => Err(SETUP_NOT_FIRST.to_owned()),
            Asked::Nothing(what) => Err(what.to_owned()),
        };
        let (handled, placed, rejected) = match moved {
            Ok(placed) => (Handled::Applied, Some(placed), String::new()),
            Err(rejected) => (Handled::Rejected, None, rejected),
        };
        let timing =
            keeper.map(|keeper| keeper.after(handled == Handled::Applied, game.side_to_move()));
        let answer = Self {
            game,
            placed,
            rejected,
            timing,
        };
        (handled, answer)
    }

    /// `run`, the winning line, as the reply shows it: with the move that made it,
    /// not after.
    pub(crate) fn shown<'r>(&self, run: &'r [Cell]) -> &'r [Cell] {
        if self.placed.is_some() {
            run
        } else {
            &[]
        }
    }
}
