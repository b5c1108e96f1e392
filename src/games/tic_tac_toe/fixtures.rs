//! Tic-Tac-Toe's games and boards that the unit tests, the wire tests, the benchmarks, the
//! load generators and the fuzz targets all play, defined once: plain data, for tests
//! and measurements only (hidden from the docs, not part of the API).

/// A Tic-Tac-Toe game that fills the board with no line: a draw on the ninth move,
/// leaving [`TIC_TAC_TOE_DRAW_BOARD`].
pub const TIC_TAC_TOE_DRAW: [(i32, i32); 9] = [
    (0, 0),
    (1, 1),
    (2, 0),
    (1, 0),
    (1, 2),
    (2, 1),
    (0, 1),
    (0, 2),
    (2, 2),
];

/// The board [`TIC_TAC_TOE_DRAW`] leaves, A as `X` and B as `O`.
pub const TIC_TAC_TOE_DRAW_BOARD: [&str; 3] = ["XXO", "OOX", "XOX"];

mod live {
    use crate::games::fixture::{seen, Fixture, Seen};
    use crate::kit::clock::Side;
    use crate::proto::{
        game_action, game_state, Clock, PlayTicTacToeRequest, PlayTicTacToeResponse,
        TicTacToeMove, TicTacToeSetup, TimeControl, Verdict,
    };

    /// The game itself: it ends within nine moves.
    impl Fixture for super::super::Game {
        fn setup(
            control: Option<TimeControl>,
            clock: Option<Clock>,
            history: &[PlayTicTacToeRequest],
        ) -> PlayTicTacToeRequest {
            let history = history
                .iter()
                .filter(|request| request.setup.is_none())
                .map(|request| TicTacToeMove {
                    row: request.row,
                    col: request.col,
                })
                .collect();
            let setup = TicTacToeSetup {
                history,
                time_control: control,
                clock,
            };
            PlayTicTacToeRequest {
                row: 0,
                col: 0,
                setup: Some(Box::new(setup)),
            }
        }

        fn next(pick: u64, _last: &PlayTicTacToeResponse) -> PlayTicTacToeRequest {
            PlayTicTacToeRequest {
                row: (pick % 4) as i32,
                col: (pick / 4 % 3) as i32,
                setup: None,
            }
        }

        fn rejected() -> PlayTicTacToeRequest {
            PlayTicTacToeRequest {
                row: 3,
                col: 0,
                setup: None,
            }
        }

        fn action(request: PlayTicTacToeRequest) -> game_action::Action {
            game_action::Action::TicTacToe(request)
        }

        fn state(response: PlayTicTacToeResponse) -> game_state::State {
            game_state::State::TicTacToe(response)
        }

        fn seen(response: &PlayTicTacToeResponse) -> Seen<'_> {
            let to_move = (response.verdict() == Verdict::Pending).then_some(
                if response.moves_played % 2 == 0 {
                    Side::A
                } else {
                    Side::B
                },
            );
            seen!(response, to_move)
        }
    }
}
