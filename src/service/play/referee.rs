//! [`Referee`]: one live game as its messages reach it, with its clock and its counts,
//! the same for a single-game stream and for each game of a PlayMany stream.

use crate::games::LiveGame;
use crate::glue::error::ServiceError;
use crate::glue::play::{Handled, Reply, WrittenReplyOf};
use crate::glue::timing::Timekeeper;
use crate::kit::clock::Moment;
use crate::telemetry::games::{self, GameEnding};

/// One game as its messages reach it, with its clock and the count of its messages that
/// were not applied moves: what a single-game stream and each game of a PlayMany stream
/// share, so that both answer the same messages alike.
pub(crate) struct Referee<G> {
    game: G,
    /// The clock of a game on the clock; boxed, so that a game without one carries a
    /// pointer's worth.
    keeper: Option<Box<Timekeeper>>,
    unapplied: usize,
    /// The game's end has been counted in the metrics.
    end_counted: bool,
}

impl<G: LiveGame> Referee<G> {
    /// Opens a game with its first message, received at `now`; an error (a malformed
    /// setup, or a setup past `max_unapplied`) opens none.
    pub(crate) fn open(
        first: G::Request,
        max_unapplied: usize,
        now: Moment,
    ) -> Result<(Self, WrittenReplyOf<G>), ServiceError> {
        let (game, keeper, reply) = G::open(first, now)?;
        let mut referee = Self {
            game,
            keeper: keeper.map(Box::new),
            unapplied: 0,
            end_counted: false,
        };
        let response = referee.count(reply, max_unapplied)?;
        Ok((referee, response))
    }

    /// Plays `request`, a later message received at `now`, and makes its reply with
    /// `reply` from the game's answer (written straight from it); an error when it is
    /// one unapplied message more than `max_unapplied`, which ends the game.
    pub(crate) fn play<T>(
        &mut self,
        request: G::Request,
        max_unapplied: usize,
        now: Moment,
        reply: impl FnOnce(G::Played<'_>) -> T,
    ) -> Result<T, ServiceError> {
        if let Some(keeper) = &mut self.keeper {
            keeper.received(now);
        }
        let (handled, answer) = self.game.answer(request, self.keeper.as_deref_mut());
        let reply = reply(answer);
        self.count(Reply::new(reply, handled), max_unapplied)
    }

    /// Whether the game is on the clock.
    pub(crate) fn is_clocked(&self) -> bool {
        self.keeper.is_some()
    }

    /// When the side to move runs out, if the game is on the clock and goes on.
    pub(crate) fn deadline(&self) -> Option<Moment> {
        self.keeper.as_ref().and_then(|keeper| keeper.deadline())
    }

    /// If the side to move has run out by `now`, ends the game on time and makes the
    /// announcement of it with `announce`, from the game's answer to no message.
    pub(crate) fn run_out<T>(
        &mut self,
        now: Moment,
        announce: impl FnOnce(G::Played<'_>) -> T,
    ) -> Option<T> {
        let keeper = self.keeper.as_mut()?;
        if !keeper.is_out(now) {
            return None;
        }
        let (loser, timing) = keeper.run_out()?;
        self.game.lose_on_time(loser);
        self.count_end(GameEnding::Time);
        Some(announce(self.game.standing(&timing)))
    }

    fn count<R>(&mut self, reply: Reply<R>, max_unapplied: usize) -> Result<R, ServiceError> {
        match reply.handled {
            Handled::Applied => {
                if !self.end_counted && self.game.side_to_move().is_none() {
                    self.count_end(GameEnding::Board);
                }
            }
            Handled::Rejected => {
                games::rejected(G::KIND);
                self.unapplied += 1;
            }
            Handled::Setup => {
                if self.game.side_to_move().is_none() {
                    self.count_end(GameEnding::Board);
                }
                self.unapplied += 1;
            }
        }
        if self.unapplied > max_unapplied {
            return Err(ServiceError::TooManyMessages {
                rpc: G::RPC,
                limit: max_unapplied,
            });
        }
        Ok(reply.response)
    }

    /// Counts the game's end, so, in the metrics: once a game.
    #[cold]
    fn count_end(&mut self, ending: GameEnding) {
        self.end_counted = true;
        games::ended(G::KIND, ending);
    }
}
