//! What the tests that hold for every game need of each live game ([`Fixture`]),
//! implemented in each game's `fixtures` module: hidden, for the project's own tests,
//! benchmarks and fuzz targets, which then cover every registered game with no line of
//! their own (through [`crate::visit_live_games`]).

use crate::glue::play::sealed::Play;
use crate::kit::clock::Side;
use crate::proto::{game_action, game_state, Clock, Ending, TimeControl, Verdict};

/// What every live game's reply says alike, whatever its game: the fields the generic
/// tests read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen<'a> {
    /// Who won, or that the game goes on.
    pub verdict: Verdict,
    /// Moves applied so far.
    pub moves_played: i32,
    /// Why the message was not applied; empty when it was.
    pub rejected: &'a str,
    /// Each side's time left, on the clock.
    pub clock: Option<&'a Clock>,
    /// How the game ended.
    pub ending: Ending,
    /// The reply answers no message: a loss on time.
    pub unprompted: bool,
    /// The side to move; `None` once the game is over.
    pub to_move: Option<Side>,
}

/// A live game as the tests that hold for every game play it: a small game that ends
/// within a few dozen random moves, set up on any clock and from any history, and its
/// messages and replies as PlayMany carries them.
pub trait Fixture: Play {
    /// The setup of the game's test start, on the clock of `control` (if any) from
    /// `clock` (if any; else `initial` each), with `history` (messages that were applied
    /// in that game, in order) replayed: the setup that resumes a game.
    fn setup(
        control: Option<TimeControl>,
        clock: Option<Clock>,
        history: &[Self::Request],
    ) -> Self::Request;

    /// A message to send after `last`, from the random number `pick`: most often a
    /// legal move, now and then one the game rejects.
    fn next(pick: u64, last: &Self::Response) -> Self::Request;

    /// A message the game rejects whatever the position, the game going on.
    fn rejected() -> Self::Request;

    /// The same message as PlayMany's action.
    fn action(request: Self::Request) -> game_action::Action;

    /// The same reply as PlayMany's state.
    fn state(response: Self::Response) -> game_state::State;

    /// What `response` says that every game's reply says.
    fn seen(response: &Self::Response) -> Seen<'_>;
}

/// The side a reply's `to_move` names, its two names `[a, b]` (`["B", "W"]`); `None` for
/// any other, as once the game is over.
pub(crate) fn side_named(to_move: &str, [a, b]: [&str; 2]) -> Option<Side> {
    match to_move {
        name if name == a => Some(Side::A),
        name if name == b => Some(Side::B),
        _ => None,
    }
}

/// The `ending` a naive reference expects of a reply whose verdict is `verdict`, in a
/// game without a clock: the board decided it once it is not pending.
pub fn naive_ending(verdict: Verdict) -> i32 {
    match verdict {
        Verdict::Pending | Verdict::Unspecified => Ending::Unspecified,
        _ => Ending::Board,
    }
    .into()
}

/// [`Seen`] of a live reply, whose fields are named as every live reply names them, with
/// its side to move `to_move`.
macro_rules! seen {
    ($response:expr, $to_move:expr) => {{
        let response = $response;
        $crate::games::fixture::Seen {
            verdict: response.verdict(),
            moves_played: response.moves_played,
            rejected: &response.rejected,
            clock: response.clock.as_ref(),
            ending: response.ending(),
            unprompted: response.unprompted,
            to_move: $to_move,
        }
    }};
}
pub(crate) use seen;
