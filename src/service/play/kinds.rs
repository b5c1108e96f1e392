//! What a PlayMany stream needs to know of the kinds of game it holds, which the
//! registration (`service/registration.rs`) lists: PlayMany itself names no game, so
//! that the list of games sits above the stream machinery, not inside it.

use crate::games::GameKind;
use crate::kit::clock::Moment;
use crate::proto::game_action::Action;
use crate::proto::replies::PlayManyReply;
use crate::proto::wire::Len;

use super::referee::Referee;
use crate::games::LiveGame;

/// The kinds of live game a PlayMany stream holds, and a game of any of them.
pub(crate) trait Kinds: Sized + 'static {
    /// A live game of any of these kinds, as a stream holds it.
    type AnyGame: Send;

    /// What an action without a game's request says: "sets no action", naming every
    /// action there is.
    const NO_ACTION: &'static str;

    /// Which game `game` is.
    fn kind(game: &Self::AnyGame) -> GameKind;

    /// When `game`'s side to move runs out, while its clock runs.
    fn deadline(game: &Self::AnyGame) -> Option<Moment>;

    /// If `game`, number `number`, has its side to move run out by `now`, ends it on
    /// time and writes its announcement into `out`.
    fn run_out(game: &mut Self::AnyGame, number: u64, now: Moment, out: &mut PlayManyReply);

    /// Hands the request a PlayMany action carries to `to`, as the request of its
    /// game's kind; or, for an action that carries none, its `close` (`None` when the
    /// action sets nothing).
    fn with_request<T: TakeRequest<Self>>(
        action: Option<Action>,
        to: T,
    ) -> Result<T::Output, Option<bool>>;
}

/// A game of one of the kinds `K`: how its referee sits in `K::AnyGame` and how its
/// replies sit in a `GameState`.
pub(crate) trait Registered<K: Kinds>: LiveGame {
    /// The action field that carries this kind's messages.
    const ACTION: &'static str;
    /// The field of `GameState` that holds this kind's state.
    const STATE_FIELD: Len;
    /// The game's referee, if the game is of this kind.
    fn referee(game: &mut K::AnyGame) -> Option<&mut Referee<Self>>;
    /// The game of this kind that `referee` plays, as a stream holds it.
    fn hold(referee: Referee<Self>) -> K::AnyGame;
}

/// What PlayMany does with the request an action carries, whatever its game's kind
/// ([`Kinds::with_request`]).
pub(crate) trait TakeRequest<K: Kinds> {
    /// What it gives back.
    type Output;
    /// Takes `request`, a message of a game of kind `G`.
    fn take<G: Registered<K>>(self, request: G::Request) -> Self::Output;
}
