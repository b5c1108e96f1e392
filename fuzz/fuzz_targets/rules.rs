//! Every rule engine on arbitrary boards, cells and run lengths, against the naive
//! references of the property tests (each game's `reference`; Gomoku's, both freestyle
//! and exact): any disagreement, or any panic, is a finding.
#![no_main]

use arbiter::games::connect_four::reference::naive_connect_four;
use arbiter::games::gomoku::reference::naive_gomoku;
use arbiter::games::othello::reference::naive_othello_flips;
use arbiter::games::othello::{self, Color};
use arbiter::games::tic_tac_toe::reference::NaiveReferee;
use arbiter::games::tic_tac_toe::Game;
use arbiter::games::{connect_four, gomoku};
use arbiter::kit::grid::Cell;
use arbiter::kit::naive::at;
use libfuzzer_sys::fuzz_target;

/// Reads the fuzzer's bytes as a board of `alphabet` and a target: two bytes of size,
/// two of target, one of run length, one of colour, then one byte per cell.
fn board(data: &[u8], alphabet: &[u8; 3]) -> Option<(Vec<String>, Cell, usize, bool)> {
    let (&[h, w, r, c, k, who], cells) = data.split_first_chunk::<6>()?;
    let (rows, cols) = (usize::from(h % 24) + 1, usize::from(w % 24) + 1);
    let board: Vec<String> = (0..rows)
        .map(|row| {
            (0..cols)
                .map(|col| {
                    let byte = cells.get(row * cols + col).copied().unwrap_or(0);
                    char::from(alphabet[usize::from(byte % 3)])
                })
                .collect()
        })
        .collect();
    let target = Cell::new(usize::from(r) % rows, usize::from(c) % cols);
    Some((board, target, usize::from(k % 10), who % 2 == 0))
}

fuzz_target!(|data: &[u8]| {
    if let Some((rows, target, _, black)) = board(data, b".BW") {
        let engine = othello::Board::parse(&rows).expect("a well-formed board");
        let color = if black { Color::Black } else { Color::White };
        let check = engine.check_move(target, color);
        let expected: Vec<Cell> = naive_othello_flips(&rows, target, color)
            .into_iter()
            .collect();
        assert_eq!(check.flips, expected);
        assert_eq!(check.legal, !expected.is_empty());
    }
    if let Some((rows, target, run_length, _)) = board(data, b"012") {
        let engine = connect_four::Board::parse(&rows).expect("a well-formed board");
        let found = at(&rows, target.row, target.col);
        for player in [connect_four::Player::One, connect_four::Player::Two] {
            let piece = engine.check_piece(target, player);
            if found == player.byte() {
                let expected = naive_connect_four(&rows, target, found, run_length);
                let piece = piece.expect("the player's piece");
                assert_eq!(engine.winning_run(piece, run_length), expected);
            } else {
                assert!(piece.is_err());
            }
        }
    }
    if let Some((rows, target, run_length, black)) = board(data, b".BW") {
        let engine = gomoku::Board::parse(&rows).expect("a well-formed board");
        let color = if black { Color::Black } else { Color::White };
        let empty = at(&rows, target.row, target.col) == b'.';
        for exact in [false, true] {
            let check = engine.check_move(target, color, run_length, exact);
            assert_eq!(check.is_legal(), empty);
            let expected = empty
                .then(|| naive_gomoku(&rows, target, color.byte(), run_length, exact))
                .flatten();
            assert_eq!(check.line().map(|line| line.to_vec()), expected);
        }
    }
    // Tic-Tac-Toe: each pair of bytes is a move, coordinates from -2 to 4.
    let mut game = Game::new();
    let mut referee = NaiveReferee::default();
    for pair in data.chunks_exact(2).take(20) {
        let (row, col) = (i64::from(pair[0] % 7) - 2, i64::from(pair[1] % 7) - 2);
        let before = game.clone();
        match (game.play(row, col), referee.play(row, col)) {
            (Ok(verdict), Ok(expected)) => assert_eq!(verdict, expected),
            (Err(_), Err(_)) => assert_eq!(game, before),
            (engine, naive) => panic!("engine {engine:?}, reference {naive:?}"),
        }
    }
});
