//! Criterion benchmarks of the rule engines alone, with no transport.
//!
//! Run with `cargo bench --bench rules`; BENCHMARKS.md records the medians.

use std::hint::black_box;

use arbiter::games::connect_four::{self, Player};
use arbiter::games::gomoku;
use arbiter::games::othello::{self, Color};
use arbiter::games::tic_tac_toe::{self, Game};
use arbiter::kit::grid::Cell;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

#[path = "support/requests.rs"]
mod requests;
use requests::games::{CONNECT_FOUR_EXAMPLE_2, TIC_TAC_TOE_DRAW};
use requests::{connect_four_long_lines, gomoku_long_lines, GOMOKU_BEFORE_FIVE, OTHELLO_MIDGAME};

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
    let board = connect_four::Board::parse(&CONNECT_FOUR_EXAMPLE_2).unwrap();
    c.bench_function("connect_four/winning_run 6x7", |b| {
        let piece = board.check_piece(Cell::new(2, 3), Player::Two).unwrap();
        b.iter(|| black_box(&board).winning_run(black_box(piece), 4))
    });
    let mut group = c.benchmark_group("connect_four/winning_run dense, no win");
    for side in [10, 100, 1000] {
        let board = connect_four::Board::parse(&connect_four_long_lines(side)).unwrap();
        let centre = Cell::new(side / 2, side / 2);
        let piece = board.check_piece(centre, Player::One).unwrap();
        // A run length just past the longest line means every walk goes to the end
        // and nothing wins: the worst case for the rule.
        group.bench_with_input(BenchmarkId::from_parameter(side), &board, |b, board| {
            b.iter(|| board.winning_run(black_box(piece), side + 1))
        });
    }
    group.finish();
}

fn gomoku(c: &mut Criterion) {
    let board = gomoku::Board::parse(&GOMOKU_BEFORE_FIVE).unwrap();
    c.bench_function("gomoku/check_move 15x15", |b| {
        let five = Cell::new(4, 7);
        b.iter(|| black_box(&board).check_move(black_box(five), Color::Black, 5, false))
    });
    let mut group = c.benchmark_group("gomoku/check_move dense, no win");
    for side in [10, 100, 1000] {
        let board = gomoku::Board::parse(&gomoku_long_lines(side)).unwrap();
        let centre = Cell::new(side / 2, side / 2);
        // As for Connect Four: a run length just past the longest line, so every walk
        // goes to the end and nothing wins.
        group.bench_with_input(BenchmarkId::from_parameter(side), &board, |b, board| {
            b.iter(|| board.check_move(black_box(centre), Color::Black, side + 1, false))
        });
    }
    group.finish();
}

fn tic_tac_toe(c: &mut Criterion) {
    let moves = TIC_TAC_TOE_DRAW.map(|(row, col)| (i64::from(row), i64::from(col)));
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

criterion_group!(benches, othello, connect_four, gomoku, tic_tac_toe);
criterion_main!(benches);
