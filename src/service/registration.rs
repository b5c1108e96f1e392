//! The registration: every game Arbiter serves, listed once, and the dispatch that
//! follows from the list, as mini-redis's `Command` lists its commands. Which game's
//! module answers each of CheckBatch's checks ([`answer_check`]), and the kinds of
//! live game a PlayMany stream holds ([`live_games!`]: [`AnyGame`], [`Registered`],
//! [`with_request`]).
//!
//! A game's requests are answered by its own module (`othello.rs`, `connect_four.rs`,
//! `tic_tac_toe.rs`); this one only says which module answers what. PlayMany's
//! `GameAction.action` oneof is matched here, and CheckBatch's checks (`CheckRef`, one
//! variant for each member of the `Check.check` oneof) too, without a wildcard: a game
//! added to the contract and not registered here does not compile.

use crate::proto::game_action::Action;
#[cfg(test)]
use crate::proto::game_state::State;
use crate::proto::replies::{CheckBatchReply, PlayManyReply};
use crate::proto::requests::CheckRef;
use crate::proto::wire::{fields as wire, Len};
use crate::rules::clock::Moment;
use crate::rules::grid::Cell;
use crate::rules::rows::RowsView;
use crate::rules::{self, GameKind};

use super::answer::Answer;
use super::error::{ServiceError, Violation};
use super::fields::InPlace;
use super::play::sealed::Play;
use super::play::{LiveGame, Referee};
use super::{connect_four, othello, tic_tac_toe};

/// Registers the live games: for each, its variant in [`AnyGame`], its rules' game, and
/// its field in PlayMany's `GameAction.action` and `GameState.state` oneofs (one name in
/// both; `$field` is that name's constant in `wire::fields::game_state`).
macro_rules! live_games {
    ($($variant:ident: $game:ty, $action:literal, $field:ident;)*) => {
        /// A live game of any kind, as a PlayMany stream holds it.
        pub(crate) enum AnyGame {
            $(
                #[doc = concat!("A `", $action, "` game.")]
                $variant(Referee<$game>),
            )*
        }

        impl AnyGame {
            /// Which game it is.
            pub(crate) fn kind(&self) -> GameKind {
                match self {
                    $(Self::$variant(_) => <$game as Play>::KIND,)*
                }
            }

            /// When its side to move runs out, while its clock runs.
            pub(crate) fn deadline(&self) -> Option<Moment> {
                match self {
                    $(Self::$variant(referee) => referee.deadline(),)*
                }
            }

            /// If game number `game`'s side to move has run out by `now`, ends it on
            /// time and writes its announcement into `out`.
            pub(crate) fn run_out(&mut self, game: u64, now: Moment, out: &mut PlayManyReply) {
                match self {
                    $(Self::$variant(referee) => announce(referee, game, now, out),)*
                }
            }
        }

        $(
            impl Registered for $game {
                const ACTION: &'static str = $action;
                const STATE_FIELD: Len = wire::game_state::$field;
                fn referee(game: &mut AnyGame) -> Option<&mut Referee<Self>> {
                    match game {
                        AnyGame::$variant(referee) => Some(referee),
                        #[allow(unreachable_patterns, reason = "with one game, no other game")]
                        _ => None,
                    }
                }
                fn hold(referee: Referee<Self>) -> AnyGame {
                    AnyGame::$variant(referee)
                }
                #[cfg(test)]
                fn state(response: Self::Response) -> State {
                    State::$variant(response)
                }
            }
        )*

        /// Holds every registered game to the contract with `check`.
        #[cfg(test)]
        fn each_registered(check: impl tests::EachGame) {
            $(check.game::<$game>();)*
        }

        /// What a PlayMany action without a game's request says, for the stream to
        /// answer: "sets no action", naming every action there is.
        pub(crate) const NO_ACTION: &str =
            concat!("sets no action: set one of ", $($action, ", ",)* "close");

        /// Hands the request a PlayMany action carries to `to`, as the request of its
        /// game's kind; or, for an action that carries none, its `close` (`None` when
        /// the action sets nothing).
        #[inline(always)]
        pub(crate) fn with_request<T: TakeRequest>(
            action: Option<Action>,
            to: T,
        ) -> Result<T::Output, Option<bool>> {
            match action {
                $(Some(Action::$variant(request)) => Ok(to.take::<$game>(request)),)*
                Some(Action::Close(close)) => Err(Some(close)),
                None => Err(None),
            }
        }
    };
}

live_games! {
    Othello: rules::othello::Game, "othello", OTHELLO;
    ConnectFour: rules::connect_four::Game, "connect_four", CONNECT_FOUR;
    TicTacToe: rules::tic_tac_toe::Game, "tic_tac_toe", TIC_TAC_TOE;
}

/// A registered live game, as PlayMany holds it: how its referee sits in [`AnyGame`]
/// and how its replies sit in a `GameState`.
pub(crate) trait Registered: LiveGame {
    /// The action field that carries this kind's messages.
    const ACTION: &'static str;
    /// The field of `GameState` that holds this kind's state.
    const STATE_FIELD: Len;
    /// The game's referee, if the game is of this kind.
    fn referee(game: &mut AnyGame) -> Option<&mut Referee<Self>>;
    /// The game of this kind that `referee` plays, as a stream holds it.
    fn hold(referee: Referee<Self>) -> AnyGame;
    /// The state that holds a reply of this kind (for the tests that compare).
    #[cfg(test)]
    fn state(response: Self::Response) -> State;
}

/// What PlayMany does with the request an action carries, whatever its game's kind
/// ([`with_request`]).
pub(crate) trait TakeRequest {
    /// What it gives back.
    type Output;
    /// Takes `request`, a message of a game of kind `G`.
    fn take<G: Registered>(self, request: G::Request) -> Self::Output;
}

/// Ends `referee`'s game, number `game`, on time at `now` if its side to move has run
/// out, its announcement written into `out`.
fn announce<G: Registered>(
    referee: &mut Referee<G>,
    game: u64,
    now: Moment,
    out: &mut PlayManyReply,
) {
    referee.run_out(now, |answer| {
        out.push_state(game, G::STATE_FIELD, |w| answer.write(w));
    });
}

/// The buffers one check after another of a CheckBatch uses, each given back by the
/// check that took it once answered (a refused check's are dropped, and the next check
/// allocates).
#[derive(Default)]
pub(crate) struct Scratch {
    /// A board's cells.
    cells: Vec<u8>,
    /// An Othello move's flips.
    flips: Vec<Cell>,
}

/// The room set aside in a CheckBatch reply for a check's result: what a small board's
/// result takes (a larger board's grows the buffer).
pub(crate) fn result_bytes(check: CheckRef<'_>) -> usize {
    match check {
        CheckRef::ListOthelloMoves { .. } => 512,
        CheckRef::JudgeTicTacToe { .. } => 48,
        CheckRef::OthelloMove { .. } | CheckRef::ConnectFour { .. } | CheckRef::Unset => 32,
    }
}

/// Writes into `out` the answer to one check of a CheckBatch, as its own RPC gives it,
/// or its violations; returns the result's length, as [`CheckBatchReply::push`] does. A
/// board is parsed into the scratch cells, an Othello move's flips into its flips.
pub(crate) fn answer_check(
    check: CheckRef<'_>,
    out: &mut CheckBatchReply,
    scratch: &mut Scratch,
) -> usize {
    use wire::check_result as result;
    let cells = &mut scratch.cells;
    let result = match check {
        CheckRef::OthelloMove {
            board,
            row,
            col,
            color,
        } => {
            let flips = std::mem::take(&mut scratch.flips);
            othello::check_move_of(in_place(board, cells), (row, col), color, flips).map(
                |(answer, board)| {
                    let len = write(&answer, result::CHECK_OTHELLO_MOVE, out);
                    *cells = board.into_cells();
                    scratch.flips = answer.into_flips();
                    len
                },
            )
        }
        CheckRef::ListOthelloMoves { board, color } => {
            othello::list_moves_of(in_place(board, cells), color).map(|listing| {
                let len = write(&listing, result::LIST_OTHELLO_MOVES, out);
                *cells = listing.into_cells();
                len
            })
        }
        CheckRef::ConnectFour {
            board,
            row,
            col,
            player,
            run_length,
        } => connect_four::check_of(in_place(board, cells), (row, col), player, run_length).map(
            |(answer, board)| {
                let len = write(&answer, result::CHECK_CONNECT_FOUR, out);
                *cells = board.into_cells();
                len
            },
        ),
        CheckRef::JudgeTicTacToe { moves } => tic_tac_toe::judge_moves(moves)
            .map(|judged| write(&judged, result::JUDGE_TIC_TAC_TOE, out)),
        CheckRef::Unset => Err(ServiceError::InvalidRequest {
            message: "Check",
            violations: Violation::new(
                "check",
                "sets no check: set one of check_othello_move, list_othello_moves, \
                 check_connect_four, judge_tic_tac_toe",
            )
            .into(),
        }),
    };
    result.unwrap_or_else(|error| {
        out.push_invalid(|w| error.write_field_violations("check", result::INVALID, w))
    })
}

/// A board read in place, to be parsed into `cells` (taken: the board gives it back).
fn in_place<'a>(rows: Option<RowsView<'a>>, cells: &mut Vec<u8>) -> Option<InPlace<'a>> {
    rows.map(|rows| InPlace {
        rows,
        cells: std::mem::take(cells),
    })
}

/// Writes a check's answer into `out` as the `result` field `field` of a `CheckResult`,
/// and returns its length.
fn write<A: Answer>(answer: &A, field: Len, out: &mut CheckBatchReply) -> usize {
    out.push_result(field, |w| answer.write(w))
}

#[cfg(test)]
mod tests {
    use prost::Message;
    use prost_types::{FileDescriptorProto, FileDescriptorSet};

    use super::Registered;

    /// Something to do with each registered game.
    pub(super) trait EachGame: Copy {
        fn game<G: Registered>(self);
    }

    /// The contract's own words for a registered game: the RPC that plays it names a
    /// streaming method whose reply is the game's reply, and its action and state fields
    /// are fields of PlayMany's `GameAction` and `GameState`.
    #[derive(Clone, Copy)]
    struct InTheContract<'a>(&'a FileDescriptorProto);

    impl EachGame for InTheContract<'_> {
        fn game<G: Registered>(self) {
            let file = self.0;
            let method = file
                .service
                .iter()
                .flat_map(|service| &service.method)
                .find(|method| method.name() == G::RPC)
                .unwrap_or_else(|| panic!("{} is not an RPC", G::RPC));
            assert!(
                method.client_streaming() && method.server_streaming(),
                "{}",
                G::RPC
            );
            let response = std::any::type_name::<G::Response>();
            let response = response.rsplit("::").next().unwrap();
            assert_eq!(
                method.output_type(),
                format!(".arbiter.v1.{response}"),
                "{}",
                G::RPC
            );
            let field = |message: &str| {
                file.message_type
                    .iter()
                    .find(|m| m.name() == message)
                    .and_then(|m| m.field.iter().find(|field| field.name() == G::ACTION))
                    .map(|field| field.number())
            };
            assert!(field("GameAction").is_some(), "GameAction.{}", G::ACTION);
            assert_eq!(
                field("GameState").and_then(|number| u32::try_from(number).ok()),
                Some(G::STATE_FIELD.0),
                "GameState.{}",
                G::ACTION
            );
        }
    }

    #[test]
    fn every_registered_game_is_in_the_contract_under_its_names() {
        let set = FileDescriptorSet::decode(crate::proto::FILE_DESCRIPTOR_SET).unwrap();
        let file = set
            .file
            .iter()
            .find(|file| file.package() == "arbiter.v1")
            .unwrap();
        super::each_registered(InTheContract(file));
    }
}
