//! Chess positions that the unit tests, the wire tests and the benchmarks share, with
//! their move counts by depth (perft) from the chessprogramming wiki's table: plain
//! data, for tests and measurements only (hidden from the docs, not part of the API).

/// A position and its perft counts: the leaves of the legal move tree at depth 1, 2...
pub struct Perft {
    /// Its name in the table.
    pub name: &'static str,
    /// The position.
    pub fen: &'static str,
    /// The counts at depth 1, 2, 3, ...
    pub counts: &'static [u64],
}

/// The table's positions: the start, Kiwipete, and positions 3 to 6.
pub const PERFT: [Perft; 6] = [
    Perft {
        name: "start",
        fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        counts: &[20, 400, 8_902, 197_281, 4_865_609, 119_060_324],
    },
    Perft {
        name: "Kiwipete",
        fen: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        counts: &[48, 2_039, 97_862, 4_085_603, 193_690_690],
    },
    Perft {
        name: "position 3",
        fen: "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        counts: &[14, 191, 2_812, 43_238, 674_624, 11_030_083],
    },
    Perft {
        name: "position 4",
        fen: "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        counts: &[6, 264, 9_467, 422_333, 15_833_292],
    },
    Perft {
        name: "position 5",
        fen: "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        counts: &[44, 1_486, 62_379, 2_103_487, 89_941_194],
    },
    Perft {
        name: "position 6",
        fen: "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
        counts: &[46, 2_079, 89_890, 3_894_594, 164_075_551],
    },
];

/// The first position of the Chess960 perft table (Shredder-FEN castling), with its
/// counts.
pub const PERFT_960: Perft = Perft {
    name: "Chess960 position 1",
    fen: "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    counts: &[21, 528, 12_189, 326_672, 8_146_062],
};

/// Fool's mate, as UCI moves from the start: Black mates on its second move.
pub const FOOLS_MATE: [&str; 4] = ["f2f3", "e7e5", "g2g4", "d8h4"];

/// The knights out and back twice from the start: the start position stands a third
/// time after the eighth ply.
pub const KNIGHTS_SHUFFLE: [&str; 8] = [
    "Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8",
];

mod live {
    use crate::games::fixture::{seen, side_named, Fixture, Seen};
    use crate::proto::play_chess_request::Action;
    use crate::proto::{
        game_action, game_state, ChessSetup, Clock, PlayChessRequest, PlayChessResponse,
        TimeControl,
    };

    /// A queen and king against a king, from a position where the queen mates, stalemates
    /// or is taken within a few dozen random moves; every reply lists the legal moves.
    impl Fixture for super::super::Game {
        fn setup(
            control: Option<TimeControl>,
            clock: Option<Clock>,
            history: &[PlayChessRequest],
        ) -> PlayChessRequest {
            let history = history
                .iter()
                .filter_map(|request| match &request.action {
                    Some(Action::Move(played)) => Some(played.clone()),
                    _ => None,
                })
                .collect();
            let setup = ChessSetup {
                fen: "k7/8/1K6/8/8/8/7Q/8 w - - 0 1".into(),
                chess960: false,
                history,
                time_control: control,
                clock,
                legal_moves: true,
            };
            PlayChessRequest {
                action: Some(Action::Setup(Box::new(setup))),
            }
        }

        fn next(pick: u64, last: &PlayChessResponse) -> PlayChessRequest {
            let legal = &last.legal_moves;
            let action = match pick % 100 {
                // A claim, which the rules rarely allow here.
                0..=4 => Action::ClaimDraw(true),
                // A move that is no move of this position.
                5..=14 => Action::Move("e2e4".into()),
                _ if legal.is_empty() => Action::Move("a1a2".into()),
                _ => {
                    let chosen = &legal[(pick / 100) as usize % legal.len()];
                    // In UCI or in SAN, both accepted.
                    Action::Move(if (pick / 100_000).is_multiple_of(2) {
                        chosen.uci.clone()
                    } else {
                        chosen.san.clone()
                    })
                }
            };
            PlayChessRequest {
                action: Some(action),
            }
        }

        fn rejected() -> PlayChessRequest {
            PlayChessRequest {
                action: Some(Action::Move("z9z9".into())),
            }
        }

        fn action(request: PlayChessRequest) -> game_action::Action {
            game_action::Action::Chess(request)
        }

        fn state(response: PlayChessResponse) -> game_state::State {
            game_state::State::Chess(response)
        }

        fn seen(response: &PlayChessResponse) -> Seen<'_> {
            seen!(response, side_named(&response.to_move, ["w", "b"]))
        }
    }
}
