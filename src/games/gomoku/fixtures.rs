//! Gomoku's live game as the tests that hold for every game play it: plain data, for
//! tests and measurements only (hidden from the docs, not part of the API).

mod live {
    use crate::games::fixture::{seen, side_named, Fixture, Seen};
    use crate::proto::play_gomoku_request::Action;
    use crate::proto::{
        game_action, game_state, Cell, Clock, GomokuSetup, PlayGomokuRequest, PlayGomokuResponse,
        TimeControl,
    };

    /// On a 4x4 board with lines of 3 (freestyle), whose games end within a few dozen
    /// moves.
    impl Fixture for super::super::Game {
        fn setup(
            control: Option<TimeControl>,
            clock: Option<Clock>,
            history: &[PlayGomokuRequest],
        ) -> PlayGomokuRequest {
            let history = history
                .iter()
                .filter_map(|request| match &request.action {
                    Some(Action::Move(cell)) => Some(*cell),
                    _ => None,
                })
                .collect();
            let setup = GomokuSetup {
                rows: 4,
                cols: 4,
                run_length: 3,
                exact: false,
                history,
                time_control: control,
                clock,
            };
            PlayGomokuRequest {
                action: Some(Action::Setup(Box::new(setup))),
            }
        }

        fn next(pick: u64, _last: &PlayGomokuResponse) -> PlayGomokuRequest {
            // Mostly on the board, a taken cell now and then, now and then off it.
            let cell = Cell {
                row: (pick % 5) as i32,
                col: (pick / 5 % 4) as i32,
            };
            PlayGomokuRequest {
                action: Some(Action::Move(cell)),
            }
        }

        fn rejected() -> PlayGomokuRequest {
            PlayGomokuRequest {
                action: Some(Action::Move(Cell { row: 0, col: -1 })),
            }
        }

        fn action(request: PlayGomokuRequest) -> game_action::Action {
            game_action::Action::Gomoku(request)
        }

        fn state(response: PlayGomokuResponse) -> game_state::State {
            game_state::State::Gomoku(response)
        }

        fn seen(response: &PlayGomokuResponse) -> Seen<'_> {
            seen!(response, side_named(&response.to_move, ["B", "W"]))
        }
    }
}
