//! Connect Four's games and boards that the unit tests, the wire tests, the benchmarks, the
//! load generators and the fuzz targets all play, defined once: plain data, for tests
//! and measurements only (hidden from the docs, not part of the API).

/// The Connect Four seed's example 1, 6x7: player 1's piece at (5, 4) wins on row 5,
/// columns 1 to 4.
pub const CONNECT_FOUR_EXAMPLE_1: [&str; 6] = [
    "0000000", "0000000", "0000000", "0000000", "0222000", "0111100",
];

/// The Connect Four seed's example 2, 6x7: player 2's piece at (2, 3) wins on the
/// anti-diagonal down to (5, 0).
pub const CONNECT_FOUR_EXAMPLE_2: [&str; 6] = [
    "0000000", "0000000", "0002000", "0021000", "0211000", "2111220",
];

/// The Connect Four seed's example 3, 6x7: player 1's piece at (3, 6) wins nothing,
/// though player 1 has a run of four elsewhere (row 5).
pub const CONNECT_FOUR_EXAMPLE_3: [&str; 6] = [
    "0000000", "0000000", "0000000", "0000001", "2220002", "1111002",
];

mod live {
    use crate::games::fixture::{seen, Fixture, Seen};
    use crate::kit::clock::Side;
    use crate::proto::play_connect_four_request::Action;
    use crate::proto::{
        game_action, game_state, Clock, ConnectFourSetup, PlayConnectFourRequest,
        PlayConnectFourResponse, TimeControl,
    };

    /// On a 4x4 board with runs of 3, whose games end within a few dozen moves.
    impl Fixture for super::super::Game {
        fn setup(
            control: Option<TimeControl>,
            clock: Option<Clock>,
            history: &[PlayConnectFourRequest],
        ) -> PlayConnectFourRequest {
            let history = history
                .iter()
                .filter_map(|request| match request.action {
                    Some(Action::Drop(col)) => Some(col),
                    _ => None,
                })
                .collect();
            let setup = ConnectFourSetup {
                rows: 4,
                cols: 4,
                run_length: 3,
                history,
                time_control: control,
                clock,
            };
            PlayConnectFourRequest {
                action: Some(Action::Setup(Box::new(setup))),
            }
        }

        fn next(pick: u64, _last: &PlayConnectFourResponse) -> PlayConnectFourRequest {
            // Mostly on the board; a full column or one off it now and then.
            let col = (pick % 5) as i32 - i32::from((pick / 5).is_multiple_of(20));
            PlayConnectFourRequest {
                action: Some(Action::Drop(col)),
            }
        }

        fn rejected() -> PlayConnectFourRequest {
            PlayConnectFourRequest {
                action: Some(Action::Drop(-1)),
            }
        }

        fn action(request: PlayConnectFourRequest) -> game_action::Action {
            game_action::Action::ConnectFour(request)
        }

        fn state(response: PlayConnectFourResponse) -> game_state::State {
            game_state::State::ConnectFour(response)
        }

        fn seen(response: &PlayConnectFourResponse) -> Seen<'_> {
            let to_move = match response.to_move {
                1 => Some(Side::A),
                2 => Some(Side::B),
                _ => None,
            };
            seen!(response, to_move)
        }
    }
}
