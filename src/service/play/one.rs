//! The one game of a Play* stream: how a single-game stream is opened and answered.

use std::collections::VecDeque;

use futures_util::Stream;
use tokio_util::sync::CancellationToken;
use tonic::Status;

use super::limits::StreamLimits;
use super::live_games::{GameHolder, LiveGames, OpenGame};
use super::referee::Referee;
use super::session::{session, Games, ReplyStream};
use crate::games::LiveGame;
use crate::glue::answer::Answer;
use crate::glue::error::ServiceError;
use crate::glue::play::WrittenReplyOf;
use crate::kit::clock::Moment;
use crate::proto::replies::WrittenReply;

/// The one game of a Play* stream, and its place in the live-game count: taken with its
/// first message, so that a stream with none holds no place.
struct OneGame<G> {
    referee: Option<Referee<G>>,
    limits: StreamLimits,
    live_games: LiveGames,
    holder: Option<GameHolder>,
    open: Option<OpenGame>,
}

/// The announcement, written, that `referee`'s side to move ran out by `now`, if it has.
fn run_out<G: LiveGame>(referee: &mut Referee<G>, now: Moment) -> Option<WrittenReplyOf<G>> {
    referee.run_out(now, |answer| {
        WrittenReplyOf::<G>::written(|w| answer.write(w))
    })
}

impl<G: LiveGame> Games for OneGame<G> {
    type Request = G::Request;
    type Response = WrittenReplyOf<G>;

    /// Its reply to `request`, written straight from the game.
    fn handle(
        &mut self,
        request: G::Request,
        now: Moment,
        announced: &mut VecDeque<WrittenReplyOf<G>>,
    ) -> Result<WrittenReplyOf<G>, ServiceError> {
        match &mut self.referee {
            Some(referee) => {
                // A move that arrives after the deadline is never applied: the
                // announcement goes first, and the move is answered as after the end.
                if referee.is_clocked() {
                    announced.extend(run_out(referee, now));
                }
                referee.play(request, self.limits.max_unapplied, now, |answer| {
                    WrittenReplyOf::<G>::written(|w| answer.write(w))
                })
            }
            None => {
                if self.open.is_none() {
                    let open =
                        self.live_games
                            .try_open(&self.limits, G::KIND, self.holder.as_ref())?;
                    self.open = Some(open);
                }
                let (referee, reply) = Referee::open(request, self.limits.max_unapplied, now)?;
                self.referee = Some(referee);
                Ok(reply)
            }
        }
    }

    fn deadline(&self) -> Option<Moment> {
        self.referee.as_ref().and_then(Referee::deadline)
    }

    fn expire(&mut self, now: Moment, announced: &mut VecDeque<WrittenReplyOf<G>>) {
        if let Some(referee) = &mut self.referee {
            announced.extend(run_out(referee, now));
        }
    }
}

/// Opens a game of kind `G` fed by `messages` and returns its replies: one per message,
/// in order.
///
/// The game counts as live from its first message, which is refused (and the stream
/// ended) with RESOURCE_EXHAUSTED when the server already holds
/// `limits.max_live_games`, or `holder`'s connection or caller its share. The stream
/// ends when the client half-closes; it ends with an error status after more than
/// `limits.max_unapplied` messages that were not applied moves, after
/// `limits.idle_timeout` without a message, after `limits.max_game_duration` in all,
/// or when `end_streams` is cancelled (the server's shutdown grace period is over).
pub(crate) fn open<G, S>(
    messages: S,
    limits: StreamLimits,
    live_games: &LiveGames,
    holder: Option<GameHolder>,
    end_streams: &CancellationToken,
) -> ReplyStream<WrittenReplyOf<G>>
where
    G: LiveGame,
    S: Stream<Item = Result<G::Request, Status>> + Unpin + Send + 'static,
{
    let games = OneGame::<G> {
        referee: None,
        limits,
        live_games: live_games.clone(),
        holder,
        open: None,
    };
    session(games, messages, limits, live_games, end_streams)
}
