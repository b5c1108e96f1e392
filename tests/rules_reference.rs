//! The rule engines against deliberately naive references, on many random boards.
//!
//! Each reference walks the board cell by cell and builds the lines explicitly; any
//! disagreement with the engine fails the test.

#[path = "reference/boards.rs"]
mod boards;

use arbiter::games::connect_four::{self, reference::naive_connect_four};
use arbiter::games::othello::{self, reference::naive_othello_flips, Color};
use arbiter::games::tic_tac_toe::{self, reference::NaiveReferee, Game, MoveError, Outcome};
use arbiter::kit::grid::{Cell, GridError};
use arbiter::kit::naive::{at, naive_grid_problem, naive_grid_problems};
use boards::board;
use proptest::prelude::*;

/// The engine's error for a move the naive referee refused with `kind`, at (`row`, `col`),
/// after a game whose verdict was `verdict`.
fn naive_move_error(kind: &str, row: i64, col: i64, verdict: Outcome) -> MoveError {
    match kind {
        "over" => MoveError::GameOver { outcome: verdict },
        "outside" => MoveError::OffBoard(arbiter::kit::grid::locate(3, 3, row, col).unwrap_err()),
        "taken" => MoveError::Occupied {
            cell: Cell::new(row as usize, col as usize),
        },
        other => panic!("the referee refused a move as {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn othello_check_matches_reference(
        rows in board(100, b".BW"),
        pick in any::<(prop::sample::Index, prop::sample::Index)>(),
        black in any::<bool>(),
    ) {
        let board = othello::Board::parse(&rows).unwrap();
        let target = Cell::new(pick.0.index(rows.len()), pick.1.index(rows[0].len()));
        let color = if black { Color::Black } else { Color::White };
        let check = board.check_move(target, color);
        let expected = naive_othello_flips(&rows, target, color);
        prop_assert_eq!(check.legal, !expected.is_empty());
        prop_assert_eq!(check.flips, expected.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn connect_four_matches_reference(
        rows in board(100, b"012"),
        pick in any::<(prop::sample::Index, prop::sample::Index)>(),
        run_length in 1usize..=8,
    ) {
        let board = connect_four::Board::parse(&rows).unwrap();
        let target = Cell::new(pick.0.index(rows.len()), pick.1.index(rows[0].len()));
        let found = at(&rows, target.row, target.col);
        for player in [connect_four::Player::One, connect_four::Player::Two] {
            let owned = board.check_piece(target, player);
            if found == player.byte() {
                let expected = naive_connect_four(&rows, target, found, run_length);
                let piece = owned.expect("the player's piece");
                prop_assert_eq!(board.winning_run(piece, run_length), expected);
            } else {
                prop_assert_eq!(owned.map_err(|e| e.found), Err(char::from(found)));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn othello_listing_matches_reference(rows in board(24, b".BW"), black in any::<bool>()) {
        let board = othello::Board::parse(&rows).unwrap();
        let color = if black { Color::Black } else { Color::White };
        let mut expected = Vec::new();
        for r in 0..rows.len() {
            for c in 0..rows[0].len() {
                let flips = naive_othello_flips(&rows, Cell::new(r, c), color);
                if !flips.is_empty() {
                    expected.push((Cell::new(r, c), flips.into_iter().collect::<Vec<_>>()));
                }
            }
        }
        let listed: Vec<(Cell, Vec<Cell>)> = board
            .legal_moves(color)
            .into_iter()
            .map(|m| (m.cell, m.flips))
            .collect();
        prop_assert_eq!(listed, expected);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Boards of at most 8x8 are answered on bitboards: every cell's check, the listing
    /// and the legal cells must match the naive reference and the cell-by-cell walk.
    #[test]
    fn othello_bitboards_match_reference_and_walk(rows in board(8, b".BW"), black in any::<bool>()) {
        let board = othello::Board::parse(&rows).unwrap();
        let walked = board.clone().walked();
        let color = if black { Color::Black } else { Color::White };
        let mut legal = Vec::new();
        for r in 0..rows.len() {
            for c in 0..rows[0].len() {
                let target = Cell::new(r, c);
                let expected: Vec<Cell> =
                    naive_othello_flips(&rows, target, color).into_iter().collect();
                let check = board.check_move(target, color);
                prop_assert_eq!(&check.flips, &expected, "{:?}", target);
                prop_assert_eq!(check.legal, !expected.is_empty());
                prop_assert_eq!(&walked.check_move(target, color), &check);
                if check.legal {
                    legal.push(target);
                }
            }
        }
        // A bitboard knows its count without a walk; the walk does not.
        prop_assert_eq!(board.known_legal_move_count(color), Some(legal.len()));
        prop_assert_eq!(walked.known_legal_move_count(color), None);
        prop_assert_eq!(board.legal_cells(color), legal);
        prop_assert_eq!(board.legal_moves(color), walked.legal_moves(color));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn tic_tac_toe_matches_reference(
        moves in prop::collection::vec((-1i64..=3, -1i64..=3), 0..=14),
        extremes in any::<bool>(),
    ) {
        let mut game = Game::new();
        let mut referee = NaiveReferee::default();
        for (i, &(mut row, col)) in moves.iter().enumerate() {
            if extremes && i == 3 {
                row = i64::from(i32::MIN);
            }
            let before = game.clone();
            match (game.play(row, col), referee.play(row, col)) {
                (Ok(verdict), Ok(expected)) => prop_assert_eq!(verdict, expected),
                (Err(err), Err(kind)) => {
                    prop_assert_eq!(err, naive_move_error(kind, row, col, before.outcome()));
                    prop_assert_eq!(&game, &before);
                }
                (engine, reference) => {
                    prop_assert!(false, "engine {:?}, reference {:?}", engine, reference);
                }
            }
            let rendered: Vec<String> = referee
                .squares
                .iter()
                .map(|row| row.iter().map(|&m| if m == 0 { '.' } else { char::from(m) }).collect())
                .collect();
            prop_assert_eq!(game.rows().to_vec(), rendered);
            prop_assert_eq!(game.moves_played(), referee.moves);
        }
        // Judging the whole list agrees with a fresh naive referee: the same game if every
        // move applies, else the first refused move's exact index and error.
        let moves: Vec<(i64, i64)> = moves
            .iter()
            .enumerate()
            .map(|(i, &(r, c))| if extremes && i == 3 { (i64::from(i32::MIN), c) } else { (r, c) })
            .collect();
        let mut referee = NaiveReferee::default();
        let mut verdict = Outcome::Pending;
        let mut refused = None;
        for (index, &(row, col)) in moves.iter().enumerate() {
            match referee.play(row, col) {
                Ok(after) => verdict = after,
                Err(kind) => {
                    refused = Some((index, naive_move_error(kind, row, col, verdict)));
                    break;
                }
            }
        }
        match (tic_tac_toe::judge(moves.iter().copied()), refused) {
            (Ok(judged), None) => prop_assert_eq!(judged, game),
            (Err(err), Some((index, expected))) => {
                prop_assert_eq!(err.index, index);
                prop_assert_eq!(err.error, expected);
            }
            (judged, refused) => {
                prop_assert!(false, "judge {:?}, reference {:?}", judged, refused);
            }
        }
    }

    #[test]
    fn grid_errors_name_the_row(
        rows in prop::collection::vec("[.BWxé]{0,5}|[.BW]{3}", 0..6),
    ) {
        let parsed = othello::Board::parse(&rows);
        let expected = naive_grid_problem(&rows, ".BW");
        prop_assert_eq!(parsed.err(), expected.clone());
        // The same rows as they come off the wire, in one buffer.
        let from_wire = othello::Board::parse_rows(rows.iter().collect());
        prop_assert_eq!(from_wire.as_ref().err().map(|bad| bad.first().clone()), expected);
        // Every bad row is named, each once, in order.
        let every: Vec<GridError> = from_wire.err().iter().flat_map(|bad| bad.problems()).collect();
        prop_assert_eq!(every, naive_grid_problems(&rows, ".BW"));
    }
}
