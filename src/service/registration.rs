//! The registration: every game Arbiter serves, listed once, and the dispatch that
//! follows from the list, as mini-redis's `Command` lists its commands. [`Registry`]
//! says which game's module answers each of CheckBatch's checks ([`Checks`]) and which
//! kinds of live game a PlayMany stream holds ([`Kinds`], through [`live_games!`]:
//! [`AnyGame`] and each game's [`Registered`]). It sits above the game modules and the
//! stream machinery: `batch.rs` and `play/many.rs` name no game, and are handed the
//! registry by the handlers (`service/mod.rs`).
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
use super::batch::Checks;
use super::error::{ServiceError, Violation};
use super::fields::InPlace;
use super::play::kinds::{Kinds, Registered, TakeRequest};
use super::play::sealed::Play;
use super::play::Referee;
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

        impl Kinds for Registry {
            type AnyGame = AnyGame;

            const NO_ACTION: &'static str =
                concat!("sets no action: set one of ", $($action, ", ",)* "close");

            fn kind(game: &AnyGame) -> GameKind {
                match game {
                    $(AnyGame::$variant(_) => <$game as Play>::KIND,)*
                }
            }

            fn deadline(game: &AnyGame) -> Option<Moment> {
                match game {
                    $(AnyGame::$variant(referee) => referee.deadline(),)*
                }
            }

            fn run_out(game: &mut AnyGame, number: u64, now: Moment, out: &mut PlayManyReply) {
                match game {
                    $(AnyGame::$variant(referee) => announce(referee, number, now, out),)*
                }
            }

            #[inline(always)]
            fn with_request<T: TakeRequest<Self>>(
                action: Option<Action>,
                to: T,
            ) -> Result<T::Output, Option<bool>> {
                match action {
                    $(Some(Action::$variant(request)) => Ok(to.take::<$game>(request)),)*
                    Some(Action::Close(close)) => Err(Some(close)),
                    None => Err(None),
                }
            }
        }

        $(
            impl Registered<Registry> for $game {
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
    };
}

/// Every game Arbiter serves: the kinds of live game a PlayMany stream holds
/// ([`Kinds`]) and which game's module answers each of CheckBatch's checks ([`Checks`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Registry;

live_games! {
    Othello: rules::othello::Game, "othello", OTHELLO;
    ConnectFour: rules::connect_four::Game, "connect_four", CONNECT_FOUR;
    TicTacToe: rules::tic_tac_toe::Game, "tic_tac_toe", TIC_TAC_TOE;
}

/// Ends `referee`'s game, number `game`, on time at `now` if its side to move has run
/// out, its announcement written into `out`.
fn announce<G: Registered<Registry>>(
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

impl Checks for Registry {
    type Scratch = Scratch;

    fn result_bytes(check: CheckRef<'_>) -> usize {
        match check {
            CheckRef::ListOthelloMoves { .. } => 512,
            CheckRef::JudgeTicTacToe { .. } => 48,
            CheckRef::OthelloMove { .. } | CheckRef::ConnectFour { .. } | CheckRef::Unset => 32,
        }
    }

    /// A board is parsed into the scratch cells, an Othello move's flips into its
    /// flips.
    fn answer(check: CheckRef<'_>, out: &mut CheckBatchReply, scratch: &mut Scratch) -> usize {
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
            } => connect_four::check_of(in_place(board, cells), (row, col), player, run_length)
                .map(|(answer, board)| {
                    let len = write(&answer, result::CHECK_CONNECT_FOUR, out);
                    *cells = board.into_cells();
                    len
                }),
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

    use super::{Registered, Registry};

    /// Something to do with each registered game.
    pub(super) trait EachGame: Copy {
        fn game<G: Registered<Registry>>(self);
    }

    /// The contract's own words for a registered game: the RPC that plays it names a
    /// streaming method whose reply is the game's reply, and its action and state fields
    /// are fields of PlayMany's `GameAction` and `GameState`.
    #[derive(Clone, Copy)]
    struct InTheContract<'a>(&'a FileDescriptorProto);

    impl EachGame for InTheContract<'_> {
        fn game<G: Registered<Registry>>(self) {
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

/// Every game's states written straight into a PlayMany reply, held byte for byte to
/// the states prost builds and encodes, on random games.
#[cfg(test)]
mod written_states {
    use proptest::prelude::*;
    use prost::Message;

    use super::*;
    use crate::proto::replies::PlayManyReply;
    use crate::proto::GameState;
    use crate::proto::{
        play_connect_four_request, play_othello_request, Cell, ConnectFourSetup, OthelloSetup,
        PlayConnectFourRequest, PlayOthelloRequest, PlayTicTacToeRequest, TicTacToeSetup,
    };
    use crate::rules::{connect_four, othello, tic_tac_toe};
    use std::time::Duration;

    use crate::rules::clock::{Clock, TimeControl};
    use crate::service::clock::{Timekeeper, Timing};
    use crate::service::connect_four::{DEFAULT_COLS, DEFAULT_ROWS};

    /// Plays on `game` the request that `request` makes of each step and the game so
    /// far, and fails unless every answer written straight into a PlayMany reply is, byte
    /// for byte, the `GameState` holding the reply built from the same answer (the
    /// built reply that a unary-like client would decode).
    /// Also on the clock (`clocked`): each message 137 ms after the one before, and,
    /// once the messages are played, a loss on time announced.
    fn written_as_built<G: Registered<Registry>, S>(
        mut game: G,
        steps: Vec<S>,
        clocked: bool,
        request: impl Fn(&G, S) -> G::Request,
    ) -> Result<(), TestCaseError> {
        fn same<G: Registered<Registry>>(
            answer: G::Played<'_>,
            index: usize,
        ) -> Result<(), TestCaseError> {
            let mut written = PlayManyReply::default();
            written.push_state(7, G::STATE_FIELD, |w| answer.write(w));
            let built = GameState {
                game: 7,
                invalid: Vec::new(),
                state: Some(G::state(answer.into_response())),
            };
            let mut expected = PlayManyReply::default();
            expected.push(&built);
            prop_assert_eq!(written.as_bytes(), expected.as_bytes(), "message {}", index);
            prop_assert_eq!(
                written.as_bytes(),
                &crate::proto::PlayManyResponse {
                    states: vec![built],
                    unprompted: false,
                }
                .encode_to_vec()[..]
            );
            Ok(())
        }
        let start = Moment::from_nanos(0);
        let clock = clocked.then(|| {
            let control = TimeControl {
                initial: Duration::from_secs(60),
                increment: Duration::from_millis(1500),
                move_limit: None,
            };
            Clock::new(
                control,
                [Duration::from_secs(60), Duration::from_millis(61_001)],
            )
        });
        let mut keeper = clock.map(|clock| Timekeeper::open(clock, start, game.side_to_move()));
        let count = steps.len();
        for (index, step) in steps.into_iter().enumerate() {
            let request = request(&game, step);
            if let Some(keeper) = &mut keeper {
                keeper.received(start.after(Duration::from_millis(137) * (index as u32 + 1)));
            }
            let (_, answer) = game.answer(request, keeper.as_mut());
            same::<G>(answer, index)?;
        }
        if let (Some(loser), true) = (game.side_to_move(), clocked) {
            game.lose_on_time(loser);
            let timing = Timing::new(
                [Duration::ZERO, Duration::from_millis(2500)],
                crate::proto::Ending::Time,
                true,
            );
            same::<G>(game.standing(&timing), count)?;
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Whole games (legal moves mostly, so that games pass and end; off-board,
        /// taken and late moves, setups after the first message and empty messages too),
        /// each state compared.
        #[test]
        fn othello_states_are_written_as_built(
            moves in prop::collection::vec((0..12usize, -1..9i32, -1..9i32), 0..100),
            small in any::<bool>(),
            clocked in any::<bool>(),
        ) {
            // A small board passes often; the standard one, near its end.
            let game = if small {
                let board = othello::Board::parse(&["W.B.", "BW..", ".W.B", "...."]).unwrap();
                othello::Game::from_position(board, othello::Color::Black).0
            } else {
                othello::Game::standard()
            };
            written_as_built(game, moves, clocked, |game, (kind, row, col)| {
                let legal = game.legal_cells();
                let cell = match legal.len() {
                    0 => Cell { row, col },
                    len if kind >= 3 => {
                        let pick = legal[(row * 9 + col).unsigned_abs() as usize % len];
                        Cell { row: pick.row as i32, col: pick.col as i32 }
                    }
                    _ => Cell { row, col },
                };
                let action = match kind {
                    0 => None,
                    1 => Some(play_othello_request::Action::Setup(Box::<OthelloSetup>::default())),
                    _ => Some(play_othello_request::Action::Move(cell)),
                };
                PlayOthelloRequest { action }
            })?;
        }

        #[test]
        fn connect_four_states_are_written_as_built(
            drops in prop::collection::vec((0..10usize, -1..8i32), 0..60),
            run_length in 1..6usize,
            clocked in any::<bool>(),
        ) {
            let game = connect_four::Game::new(DEFAULT_ROWS, DEFAULT_COLS, run_length);
            written_as_built(game, drops, clocked, |_, (kind, col)| PlayConnectFourRequest {
                action: match kind {
                    0 => None,
                    1 => Some(play_connect_four_request::Action::Setup(Box::<ConnectFourSetup>::default())),
                    _ => Some(play_connect_four_request::Action::Drop(col)),
                },
            })?;
        }

        #[test]
        fn tic_tac_toe_states_are_written_as_built(
            moves in prop::collection::vec((0..10usize, -1..4i32, -1..4i32), 0..15),
            clocked in any::<bool>(),
        ) {
            written_as_built(tic_tac_toe::Game::new(), moves, clocked, |_, (kind, row, col)| {
                let setup = (kind == 0).then(Box::<TicTacToeSetup>::default);
                PlayTicTacToeRequest { row, col, setup }
            })?;
        }
    }
}
