//! Othello's games and boards that the unit tests, the wire tests, the benchmarks, the
//! load generators and the fuzz targets all play, defined once: plain data, for tests
//! and measurements only (hidden from the docs, not part of the API).
//!
//! The standard start is [`STANDARD_START`](super::STANDARD_START).

/// The Othello seed problem (LeetCode 1958), example 1: black at (4, 3) is legal, with
/// good lines up column 3 and along row 4.
pub const LC1958_EXAMPLE_1: [&str; 8] = [
    "...B....", "...W....", "...W....", "...W....", "WBB.WWWB", "...B....", "...B....", "...W....",
];

/// The Othello seed problem (LeetCode 1958), example 2: white at (4, 4) closes no line,
/// so it is not legal.
pub const LC1958_EXAMPLE_2: [&str; 8] = [
    "........", ".B..W...", "..W.....", "...WB...", "........", "....BW..", "......W.", ".......B",
];

mod live {
    use crate::games::fixture::{seen, side_named, Fixture, Seen};
    use crate::proto::play_othello_request::Action;
    use crate::proto::{
        game_action, game_state, Board, Cell, Clock, OthelloSetup, PlayOthelloRequest,
        PlayOthelloResponse, TimeControl,
    };

    /// On a 4x4 board, whose games pass and end within a few dozen moves.
    impl Fixture for super::super::Game {
        fn setup(
            control: Option<TimeControl>,
            clock: Option<Clock>,
            history: &[PlayOthelloRequest],
        ) -> PlayOthelloRequest {
            let history = history
                .iter()
                .filter_map(|request| match &request.action {
                    Some(Action::Move(cell)) => Some(*cell),
                    _ => None,
                })
                .collect();
            let setup = OthelloSetup {
                board: Some(Board::from_rows(["....", ".WB.", ".BW.", "...."])),
                to_move: "B".into(),
                history,
                time_control: control,
                clock,
            };
            PlayOthelloRequest {
                action: Some(Action::Setup(Box::new(setup))),
            }
        }

        fn next(pick: u64, last: &PlayOthelloResponse) -> PlayOthelloRequest {
            let legal = &last.legal_moves;
            let cell = if !legal.is_empty() && pick % 100 < 85 {
                legal[(pick / 100) as usize % legal.len()]
            } else {
                Cell {
                    row: (pick / 100 % 5) as i32,
                    col: (pick / 500 % 5) as i32,
                }
            };
            PlayOthelloRequest {
                action: Some(Action::Move(cell)),
            }
        }

        fn rejected() -> PlayOthelloRequest {
            PlayOthelloRequest {
                action: Some(Action::Move(Cell { row: -1, col: 0 })),
            }
        }

        fn action(request: PlayOthelloRequest) -> game_action::Action {
            game_action::Action::Othello(request)
        }

        fn state(response: PlayOthelloResponse) -> game_state::State {
            game_state::State::Othello(response)
        }

        fn seen(response: &PlayOthelloResponse) -> Seen<'_> {
            seen!(response, side_named(&response.to_move, ["B", "W"]))
        }
    }
}
