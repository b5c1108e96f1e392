//! Starts and boards of the history tests against the naive referees: setups of
//! Othello, Connect Four (which a few other tests send too) and Tic-Tac-Toe, and random
//! Othello boards, with some on which passes come soon.
#![allow(dead_code)]

use arbiter::games::othello::{Color, STANDARD_START};
use arbiter::proto::{
    play_connect_four_request, play_othello_request, Board, Cell, ConnectFourSetup, OthelloSetup,
    PlayConnectFourRequest, PlayOthelloRequest, PlayTicTacToeRequest, PlayTicTacToeResponse,
    TicTacToeSetup, Verdict,
};
use proptest::prelude::*;

use super::messages::moves;

/// The standard Othello start, as rows.
pub fn standard() -> Vec<String> {
    STANDARD_START.iter().map(|r| r.to_string()).collect()
}

/// A PlayConnectFour setup of (rows, cols, run length) with `history`.
pub fn connect_four_setup(
    (rows, cols, run_length): (i32, i32, i32),
    history: &[i32],
) -> PlayConnectFourRequest {
    PlayConnectFourRequest {
        action: Some(play_connect_four_request::Action::Setup(Box::new(
            ConnectFourSetup {
                rows,
                cols,
                run_length,
                history: history.to_vec(),
                ..Default::default()
            },
        ))),
    }
}

/// A PlayOthello setup of `rows`, `to_move` first, with `history`.
pub fn othello_setup(
    rows: &[String],
    to_move: Color,
    history: &[(i32, i32)],
) -> PlayOthelloRequest {
    PlayOthelloRequest {
        action: Some(play_othello_request::Action::Setup(Box::new(
            OthelloSetup {
                board: Some(Board::from_rows(rows)),
                to_move: char::from(to_move.byte()).to_string(),
                history: history
                    .iter()
                    .map(|&(row, col)| Cell { row, col })
                    .collect(),
                ..Default::default()
            },
        ))),
    }
}

/// A PlayTicTacToe setup of `history`, its `row` and `col` (which a setup must not play)
/// set to `square`.
pub fn tic_tac_toe_setup(history: &[(i32, i32)], (row, col): (i32, i32)) -> PlayTicTacToeRequest {
    PlayTicTacToeRequest {
        row,
        col,
        setup: Some(Box::new(TicTacToeSetup {
            history: moves(history),
            ..Default::default()
        })),
    }
}

/// The state of a Tic-Tac-Toe game still pending on `rows` after `moves_played` moves,
/// as its stream replies to an applied message.
pub fn pending_tic_tac_toe(rows: [&str; 3], moves_played: i32) -> PlayTicTacToeResponse {
    PlayTicTacToeResponse {
        verdict: Verdict::Pending.into(),
        line: Vec::new(),
        board: Some(Board::from_rows(rows)),
        moves_played,
        rejected: String::new(),
        ..Default::default()
    }
}

/// Small boards on which Black, to move, or a side soon after, has to pass: "WB." at
/// once, ".W.WB" after Black's (0, 2), the others in nearly every random game (found by
/// random playouts).
pub const PASS_BOARDS: [&[&str]; 5] = [
    &["WB."],
    &[".W.WB"],
    &["WWW..", "B..W.", "W.B..", ".B.BB"],
    &["WW.B", "BW..", "W..."],
    &["WW.", "W..", "BW.", "..."],
];

pub fn pass_board() -> impl Strategy<Value = Vec<String>> {
    prop::sample::select(&PASS_BOARDS[..])
        .prop_map(|rows| rows.iter().map(|row| row.to_string()).collect())
}

/// A random Othello board up to `max_side` square, small ones (where passes and ends
/// come soon) as often as the others, with a random share of the discs black (a side
/// with few discs often has to pass).
pub fn othello_board(max_side: usize) -> impl Strategy<Value = Vec<String>> {
    let side = move || prop_oneof![1usize..=4, 1usize..=max_side];
    (side(), side(), 20u8..=90, 0u8..100).prop_flat_map(|(rows, cols, empty, black)| {
        prop::collection::vec(0u8..200, rows * cols).prop_map(move |draws| {
            draws
                .chunks(cols)
                .map(|row| {
                    row.iter()
                        .map(|&d| match d {
                            d if d / 2 < empty => '.',
                            d if d % 100 < black => 'B',
                            _ => 'W',
                        })
                        .collect()
                })
                .collect()
        })
    })
}

/// A Connect Four size or run length as a setup gives it: 0 (the default) or `1..=max`.
pub fn side(max: i32) -> impl Strategy<Value = i32> {
    prop_oneof![1 => Just(0), 4 => 1..=max]
}
