//! What a game implements to be played live: the sealed [`sealed::Play`] behind
//! [`LiveGame`](crate::LiveGame), what becomes of a message ([`Handled`], [`Reply`]),
//! and the two ways a game opens that every game shares ([`set_up`], [`first_move`]).

use super::answer::Answer;
use super::error::ServiceError;
use super::timing::{Timekeeper, Timing};
use crate::kit::clock::{Clock, Moment};
use crate::proto::replies::WrittenAs;

impl<R> Reply<R> {
    /// The reply `response` to a message that `handled` says what became of.
    pub(crate) fn new(response: R, handled: Handled) -> Self {
        Self { response, handled }
    }

    /// The reply to a setup: the game as it starts.
    pub(crate) fn setup(response: R) -> Self {
        Self {
            response,
            handled: Handled::Setup,
        }
    }
}

pub(crate) use self::sealed::{Handled, Opened, Reply};

/// The reply to a game's message as the server writes it.
pub(crate) type WrittenReplyOf<G> = <<G as sealed::Play>::Response as WrittenAs>::Reply;

/// The part of [`LiveGame`](crate::LiveGame) that only this crate implements.
pub(crate) mod sealed {
    use super::ServiceError;
    use crate::glue::answer::Answer;
    use crate::glue::timing::{Timekeeper, Timing, TimingFields};
    use crate::kit::clock::{Moment, Turns};
    use crate::proto::replies::WrittenAs;

    /// What became of one message of a live game.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Handled {
        /// A move was applied.
        Applied,
        /// The message set up the game.
        Setup,
        /// The message was rejected; the game is unchanged.
        Rejected,
    }

    /// A reply to one message, and what became of the message.
    pub struct Reply<R> {
        /// The reply.
        pub response: R,
        /// What became of the message.
        pub handled: Handled,
    }

    /// A game just opened, with its clock and its reply to the first message, written,
    /// or why it was not.
    pub(crate) type Opened<G> = Result<
        (
            G,
            Option<Timekeeper>,
            Reply<<<G as Play>::Response as WrittenAs>::Reply>,
        ),
        ServiceError,
    >;

    /// How a game is played on a stream: its messages, and how it answers them.
    pub trait Play: Turns + Sized + Send + 'static {
        /// A message from the client.
        type Request: prost::Message + Default + Clone + Send + 'static;
        /// A reply to the client (which the server writes as its [`WrittenAs::Reply`]).
        type Response: WrittenAs + Send + 'static;
        /// The RPC that plays it on a stream of its own.
        const RPC: &'static str;
        /// The fields of its reply that say the clock and the end.
        const TIMING: TimingFields;
        /// Its answer to a message, before it is a reply.
        type Played<'a>: Answer<Response = Self::Response>
        where
            Self: 'a;

        /// The game a stream's first message, received at `now`, opens, with its clock,
        /// and the reply to that message; an error (a malformed setup) ends the stream.
        fn open(first: Self::Request, now: Moment) -> Opened<Self>;

        /// Plays a later message: what became of it, and its answer, whose clock
        /// `keeper` keeps.
        fn answer<'a>(
            &'a mut self,
            request: Self::Request,
            keeper: Option<&'a mut Timekeeper>,
        ) -> (Handled, Self::Played<'a>);

        /// Messages of one game, its setup first, whose replies between them write
        /// every field of its reply but the clock's: a move applied and one rejected,
        /// and the game's end (for the test `every_field_of_every_written_reply_is_written`).
        #[cfg(test)]
        fn corpus() -> Vec<Self::Request>;

        /// The game as it stands, as the answer to no message: the announcement of a
        /// loss on time.
        fn standing<'a>(&'a self, timing: &'a Timing) -> Self::Played<'a>;

        /// The reply to a message, written.
        fn reply(
            &mut self,
            request: Self::Request,
            keeper: Option<&mut Timekeeper>,
        ) -> Reply<<Self::Response as WrittenAs>::Reply> {
            let (handled, answer) = self.answer(request, keeper);
            Reply {
                response: answer.written(),
                handled,
            }
        }
    }
}

/// Opens `game`, just set up, with its clock (if the setup set one) running from `now`
/// for the side to move, and the reply to the setup, which `answer` makes from the game
/// and what the clock says.
pub(crate) fn set_up<G: sealed::Play>(
    game: G,
    clock: Option<Clock>,
    now: Moment,
    answer: impl for<'a> FnOnce(&'a G, Option<&'a Timing>) -> G::Played<'a>,
) -> Opened<G> {
    let keeper = clock.map(|clock| Timekeeper::open(clock, now, game.side_to_move()));
    let reply = answer(&game, keeper.as_ref().map(Timekeeper::said)).written();
    Ok((game, keeper, Reply::setup(reply)))
}

/// Opens `game` as it stands, with no clock, with `first`, received at `now`, as its
/// first move: for streams that start without a setup.
pub(crate) fn first_move<G: sealed::Play>(mut game: G, first: G::Request) -> Opened<G> {
    let reply = game.reply(first, None);
    Ok((game, None, reply))
}

/// The rejection of a setup that is not a stream's first message.
pub(crate) const SETUP_NOT_FIRST: &str =
    "a setup is accepted only as the first message of a stream; the game goes on";
