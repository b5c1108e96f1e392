//! The registration: every game Arbiter serves, listed once, and the dispatch that
//! follows from the list, as mini-redis's `Command` lists its commands: which kinds of
//! live game a PlayMany stream holds ([`live_games!`]: [`AnyGame`], an enum with a
//! variant per game, and each game's [`Registered`]) and which game's module answers
//! each of CheckBatch's checks ([`checks!`]: each a [`BatchCheck`] of its game's
//! module). It sits above the game modules and the stream machinery: `batch.rs` and
//! `play/many.rs` name no game, and call what the list writes here.
//!
//! A game's requests are read, checked and answered by its own `wire` module, in its
//! folder of `crate::games`; this one only says which module answers what.
//! PlayMany's `GameAction.action` oneof is matched here without a wildcard, so a live
//! game added to the contract and not registered does not compile; a check of the
//! contract's `Check` oneof that is not registered fails
//! `every_check_in_the_contract_is_registered`.

use crate::games::{self, GameKind};
use crate::kit::clock::Moment;
use crate::proto::replies::{CheckBatchReply, PlayManyReply};
use crate::proto::requests::CheckRef;
use crate::proto::wire::{fields as wire, Len};

use super::play::Referee;
use crate::games::{LiveGame, LiveGameVisitor};
use crate::glue::answer::Answer;
use crate::glue::batch::{BatchCheck, Scratch};
use crate::glue::error::{ServiceError, Violation};

/// A registered live game: how its referee sits in [`AnyGame`] and its replies in a
/// `GameState`.
pub(crate) trait Registered: LiveGame {
    /// The action field that carries this game's messages.
    const ACTION: &'static str;
    /// The field of `GameState` that holds this game's state.
    const STATE_FIELD: Len;
    /// The game's referee, if `game` is of this kind.
    fn referee(game: &mut AnyGame) -> Option<&mut Referee<Self>>;
    /// The game that `referee` plays, as a stream holds it.
    fn hold(referee: Referee<Self>) -> AnyGame;
}

/// Registers the live games: for each, its variant in [`AnyGame`], its rules' game, and
/// its field in PlayMany's `GameAction.action` and `GameState.state` oneofs (one name in
/// both; `$field` is that name's constant in `wire::fields::game_state`).
macro_rules! live_games {
    ($d:tt; $($variant:ident: $game:ty, $action:literal, $field:ident;)*) => {
        /// A live game of any kind, as a PlayMany stream holds it.
        pub(crate) enum AnyGame {
            $(
                #[doc = concat!("A `", $action, "` game.")]
                $variant(Referee<$game>),
            )*
        }

        /// What an action without a game's request says: "sets no action", naming
        /// every action there is.
        pub(crate) const NO_ACTION: &str =
            concat!("sets no action: set one of ", $($action, ", ",)* "close");

        impl AnyGame {
            /// Which game this is.
            pub(crate) fn kind(&self) -> GameKind {
                match self {
                    $(Self::$variant(_) => <$game as LiveGame>::KIND,)*
                }
            }

            /// When its side to move runs out, while its clock runs.
            pub(crate) fn deadline(&self) -> Option<Moment> {
                match self {
                    $(Self::$variant(referee) => referee.deadline(),)*
                }
            }

            /// If its side to move has run out by `now`, ends the game, number
            /// `number`, on time and writes its announcement into `out`.
            pub(crate) fn run_out(&mut self, number: u64, now: Moment, out: &mut PlayManyReply) {
                match self {
                    $(Self::$variant(referee) => announce(referee, number, now, out),)*
                }
            }
        }

        /// Plays the request a PlayMany action carries, `$action` (an
        /// `Option<Action>`), in game number `$game` of the stream `$games` at `$now`, as
        /// a message of its game's kind (`$games.play::<G>(...)`), its state written into
        /// `$out`: the state's length; or, for an action that carries none, its `close`
        /// (`None` when the action sets nothing). A macro, so that the stream machinery
        /// (`play/many.rs`) calls the list without the list naming the machinery.
        macro_rules! play_action {
            ($d games:expr, $d action:expr, $d game:expr, $d now:expr, $d out:expr) => {
                match $d action {
                    $(Some($crate::proto::game_action::Action::$variant(request)) => {
                        Ok($d games.play::<$game>($d game, request, $d now, $d out))
                    })*
                    Some($crate::proto::game_action::Action::Close(close)) => Err(Some(close)),
                    None => Err(None),
                }
            };
        }
        pub(crate) use play_action;

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
            }
        )*

        /// Hands `visitor` every registered live game, in the registration's order.
        pub fn visit_live_games(visitor: &mut impl LiveGameVisitor) {
            $(visitor.visit::<$game>();)*
        }

        /// Each registered game's RPC, action field and state field.
        #[cfg(test)]
        const REGISTERED_GAMES: &[(&str, &str, Len)] = &[
            $((<$game as crate::glue::play::sealed::Play>::RPC, $action, wire::game_state::$field),)*
        ];
    };
}

// `$` first: the token the macro `play_action!` it writes names its own arguments with.
live_games! { $;
    Othello: crate::games::othello::Game, "othello", OTHELLO;
    ConnectFour: crate::games::connect_four::Game, "connect_four", CONNECT_FOUR;
    TicTacToe: crate::games::tic_tac_toe::Game, "tic_tac_toe", TIC_TAC_TOE;
    Gomoku: crate::games::gomoku::Game, "gomoku", GOMOKU;
    Chess: crate::games::chess::Game, "chess", CHESS;
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

/// Registers CheckBatch's checks: each a [`BatchCheck`] of its game's module, which
/// names its field in `Check`'s oneof. A check of the contract that is not registered
/// here is answered as not served, and fails the test
/// `every_check_in_the_contract_is_registered`.
macro_rules! checks {
    ($($check:ty,)*) => {
        /// The room to set aside in a reply for `check`'s result: what a small board's
        /// result takes (a larger board's grows the buffer).
        pub(crate) fn result_bytes(check: CheckRef<'_>) -> usize {
            $(
                if check.kind == <$check as BatchCheck>::CHECK.0 {
                    return <$check as BatchCheck>::RESULT_BYTES;
                }
            )*
            32
        }

        /// Writes into `out` the answer to `check`, as its own RPC gives it, or its
        /// violations; returns the result's length, as [`CheckBatchReply::push`] does.
        pub(crate) fn answer(check: CheckRef<'_>, out: &mut CheckBatchReply, scratch: &mut Scratch) -> usize {
            let result = 'answered: {
                $(
                    if check.kind == <$check as BatchCheck>::CHECK.0 {
                        break 'answered <$check as BatchCheck>::answer(check, scratch, out);
                    }
                )*
                Err(not_a_check(check.kind))
            };
            result.unwrap_or_else(|error| {
                out.push_invalid(|w| {
                    error.write_field_violations("check", wire::check_result::INVALID, w)
                })
            })
        }

        /// The field numbers in `Check`'s oneof of every registered check.
        #[cfg(test)]
        const REGISTERED_CHECKS: &[u32] = &[$(<$check as BatchCheck>::CHECK.0,)*];

        /// Every registered check's corpus, end to end: checks that, between them,
        /// give every field of every check's answer, and a malformed one of each kind.
        /// For the tests, in the crate and outside it, that hold for every check.
        pub fn check_corpus() -> Vec<crate::proto::check::Check> {
            [$(<$check as BatchCheck>::corpus(),)*].concat()
        }
    };
}

checks! {
    games::othello::wire::CheckMove,
    games::othello::wire::ListMoves,
    games::connect_four::wire::CheckRun,
    games::tic_tac_toe::wire::Judge,
    games::gomoku::wire::CheckMove,
    games::chess::wire::CheckMove,
    games::chess::wire::ListMoves,
    games::chess::wire::JudgeGame,
}

/// The violation of a check of `kind`, which no game answers: 0, a check that sets
/// none; else one of the contract's that is not registered.
#[cold]
fn not_a_check(kind: u32) -> ServiceError {
    let checks = wire::check::ALL.iter().map(|(name, _)| *name);
    let problem = if kind == 0 {
        let names: Vec<&str> = checks.collect();
        format!("sets no check: set one of {}", names.join(", "))
    } else {
        let name = wire::check::ALL.iter().find(|(_, number)| *number == kind);
        format!(
            "{} is not served",
            name.map_or("this check", |(name, _)| name)
        )
    };
    ServiceError::InvalidRequest {
        message: "Check",
        violations: Violation::new("check", problem).into(),
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;
    use prost_types::FileDescriptorSet;

    /// The contract's own words for each registered game: the RPC that plays it names a
    /// streaming method, and its action and state fields are fields of PlayMany's
    /// `GameAction` and `GameState`, the state's at the number registered.
    #[test]
    fn every_registered_game_is_in_the_contract_under_its_names() {
        let set = FileDescriptorSet::decode(crate::proto::FILE_DESCRIPTOR_SET).unwrap();
        let file = set
            .file
            .iter()
            .find(|file| file.package() == "arbiter.v1")
            .unwrap();
        for &(rpc, action, state) in super::REGISTERED_GAMES {
            let method = file
                .service
                .iter()
                .flat_map(|service| &service.method)
                .find(|method| method.name() == rpc)
                .unwrap_or_else(|| panic!("{rpc} is not an RPC"));
            assert!(
                method.client_streaming() && method.server_streaming(),
                "{rpc}"
            );
            let field = |message: &str| {
                file.message_type
                    .iter()
                    .find(|m| m.name() == message)
                    .and_then(|m| m.field.iter().find(|field| field.name() == action))
                    .map(|field| field.number())
            };
            assert!(field("GameAction").is_some(), "GameAction.{action}");
            assert_eq!(
                field("GameState").and_then(|number| u32::try_from(number).ok()),
                Some(state.0),
                "GameState.{action}"
            );
        }
        let mut rpcs = Vec::new();
        super::visit_live_games(&mut Rpcs(&mut rpcs));
        let registered: Vec<&str> = super::REGISTERED_GAMES.iter().map(|game| game.0).collect();
        assert_eq!(rpcs, registered);
    }

    /// Collects the RPC of each game it visits.
    struct Rpcs<'a>(&'a mut Vec<&'static str>);

    impl crate::games::LiveGameVisitor for Rpcs<'_> {
        fn visit<G: crate::games::LiveGame>(&mut self) {
            // Its reply is the one the contract's method answers with.
            let set = FileDescriptorSet::decode(crate::proto::FILE_DESCRIPTOR_SET).unwrap();
            let method = set
                .file
                .iter()
                .flat_map(|file| &file.service)
                .flat_map(|service| &service.method)
                .find(|method| method.name() == G::RPC)
                .unwrap();
            let response = std::any::type_name::<G::Response>();
            let response = response.rsplit("::").next().unwrap();
            assert_eq!(method.output_type(), format!(".arbiter.v1.{response}"));
            self.0.push(G::RPC);
        }
    }

    /// Every check of `Check`'s oneof is answered by a registered game's module, once,
    /// and the message naming them when none is set names them all.
    #[test]
    fn every_check_in_the_contract_is_registered() {
        use crate::proto::wire::fields::check;
        let mut registered = super::REGISTERED_CHECKS.to_vec();
        registered.sort_unstable();
        let contract: Vec<u32> = check::ALL.iter().map(|(_, number)| *number).collect();
        assert_eq!(registered, contract);
        let unset = format!("{:?}", super::not_a_check(0));
        for (name, _) in check::ALL {
            assert!(unset.contains(name), "{unset} does not name {name}");
        }
    }
}

/// Every game's states written straight into a PlayMany reply, held byte for byte to
/// the states prost builds and encodes, on random games.
#[cfg(test)]
mod written_states {
    use proptest::prelude::*;
    use prost::Message;

    use super::*;
    use crate::games::{connect_four, othello, tic_tac_toe};
    use crate::proto::replies::{PlayManyReply, WrittenReply};
    use crate::proto::GameState;
    use crate::proto::{
        play_connect_four_request, play_othello_request, Cell, ConnectFourSetup, OthelloSetup,
        PlayConnectFourRequest, PlayOthelloRequest, PlayTicTacToeRequest, TicTacToeSetup,
    };
    use std::time::Duration;

    use crate::games::connect_four::wire::{DEFAULT_COLS, DEFAULT_ROWS};
    use crate::glue::timing::{Timekeeper, Timing};
    use crate::kit::clock::{Clock, TimeControl};

    /// Plays on `game` the request that `request` makes of each step and the game so
    /// far, and fails unless every answer, written into a PlayMany reply and as a reply
    /// of its own, is what prost encodes of what prost decodes from it, byte for byte,
    /// and the same message both ways (prost's types are the oracle of the one
    /// encoder).
    /// Also on the clock (`clocked`): each message 137 ms after the one before, and,
    /// once the messages are played, a loss on time announced.
    fn written_as_built<G: Registered, S>(
        mut game: G,
        steps: Vec<S>,
        clocked: bool,
        request: impl Fn(&G, S) -> G::Request,
    ) -> Result<(), TestCaseError> {
        fn same<G: Registered>(answer: G::Played<'_>, index: usize) -> Result<(), TestCaseError> {
            // In a PlayMany reply: prost reads the bytes as one state of this game, and
            // writes what it read as the same bytes.
            let mut written = PlayManyReply::default();
            written.push_state(7, G::STATE_FIELD, |w| answer.write(w));
            let many = crate::proto::PlayManyResponse::decode(written.as_bytes());
            prop_assert!(many.is_ok(), "message {}: {:?}", index, many);
            let many = many.unwrap();
            prop_assert_eq!(
                &many.encode_to_vec()[..],
                written.as_bytes(),
                "message {}",
                index
            );
            // Alone, as its own stream's reply: the same message, the same bytes.
            let alone = answer.written();
            let response = G::Response::decode(alone.bytes());
            prop_assert!(response.is_ok(), "message {}: {:?}", index, response.err());
            let response = response.unwrap();
            prop_assert_eq!(
                &response.encode_to_vec()[..],
                alone.bytes(),
                "message {}",
                index
            );
            let state = GameState {
                game: 7,
                invalid: Vec::new(),
                state: Some(G::state(response)),
            };
            prop_assert_eq!(many.states, vec![state], "message {}", index);
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
