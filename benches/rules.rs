//! Criterion benchmarks of the rule engines alone, with no transport.
//!
//! Run with `cargo bench --bench rules`; BENCHMARKS.md records the medians.

use std::hint::black_box;

use arbiter::rules::connect_four::{self, Player};
use arbiter::rules::grid::Cell;
use arbiter::rules::othello::{self, Color};
use arbiter::rules::tic_tac_toe::{self, Game};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

/// A midgame 8x8 Othello position, with several legal moves for black.
const OTHELLO_MIDGAME: [&str; 8] = [
    "..W.....", "..WBW...", ".WWWWB..", "..BWWW..", "..WBBBW.", "...W.B..", "........", "........",
];

/// A dense `side`x`side` Connect Four board: player 1 owns the centre's four lines for
/// their whole length minus one cell at each end, and every other cell is a repeating
/// mix of both players, so each walk runs the full side of the board.
fn dense_connect_four(side: usize) -> Vec<String> {
    let centre = side / 2;
    (0..side)
        .map(|r| {
            (0..side)
                .map(|c| {
                    let on_line = r == centre
                        || c == centre
                        || r as isize - c as isize == 0
                        || r + c == side - 1;
                    if on_line {
                        '1'
                    } else if (r * 7 + c * 3) % 5 < 2 {
                        '2'
                    } else {
                        '1'
                    }
                })
                .collect()
        })
        .collect()
}

fn othello(c: &mut Criterion) {
    let board = othello::Board::parse(&OTHELLO_MIDGAME).unwrap();
    let legal = board
        .legal_moves(Color::Black)
        .first()
        .map(|m| m.cell)
        .unwrap();
    // The same position on bitboards and walked cell by cell, side by side.
    let walked = board.clone().walked();
    for (engine, board) in [("bitboard", &board), ("walk", &walked)] {
        c.bench_function(&format!("othello/check_move 8x8 midgame ({engine})"), |b| {
            b.iter(|| black_box(board).check_move(black_box(legal), Color::Black))
        });
        c.bench_function(
            &format!("othello/legal_moves 8x8 midgame ({engine})"),
            |b| b.iter(|| black_box(board).legal_moves(Color::Black)),
        );
        c.bench_function(
            &format!("othello/legal_cells 8x8 midgame ({engine})"),
            |b| b.iter(|| black_box(board).legal_cells(Color::Black)),
        );
    }
    c.bench_function("othello/parse 8x8", |b| {
        b.iter(|| othello::Board::parse(black_box(&OTHELLO_MIDGAME)))
    });
}

fn connect_four(c: &mut Criterion) {
    let seed = [
        "0000000", "0000000", "0002000", "0021000", "0211000", "2111220",
    ];
    let board = connect_four::Board::parse(&seed).unwrap();
    c.bench_function("connect_four/winning_run 6x7", |b| {
        b.iter(|| black_box(&board).winning_run(black_box(Cell::new(2, 3)), Player::Two, 4))
    });
    let mut group = c.benchmark_group("connect_four/winning_run dense, no win");
    for side in [10, 100, 1000] {
        let board = connect_four::Board::parse(&dense_connect_four(side)).unwrap();
        let centre = Cell::new(side / 2, side / 2);
        // A run length just past the longest line means every walk goes to the end
        // and nothing wins: the worst case for the rule.
        group.bench_with_input(BenchmarkId::from_parameter(side), &board, |b, board| {
            b.iter(|| board.winning_run(black_box(centre), Player::One, side + 1))
        });
    }
    group.finish();
}

fn tic_tac_toe(c: &mut Criterion) {
    let moves = [
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
    c.bench_function("tic_tac_toe/judge nine moves", |b| {
        b.iter(|| tic_tac_toe::judge(black_box(moves)))
    });
    c.bench_function("tic_tac_toe/one move", |b| {
        b.iter_batched(
            Game::new,
            |mut game| game.play(black_box(1), black_box(1)),
            criterion::BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, othello, connect_four, tic_tac_toe);
criterion_main!(benches);
