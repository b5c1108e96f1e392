//! Criterion benchmarks of the service's handler path without the network: decoding the
//! request bytes, validation, the rule, building and encoding the reply. What the load
//! benchmark's server CPU per call adds over the empty-handler baseline should be here.
//!
//! Run with `cargo bench --bench service`.

use std::hint::black_box;

use arbiter::games::connect_four;
use arbiter::proto::arbiter_service_server::ArbiterService;
use arbiter::proto::{
    CheckConnectFourRequest, CheckGomokuMoveRequest, CheckOthelloMoveRequest,
    JudgeTicTacToeRequest, ListOthelloMovesRequest,
};
use arbiter::Arbiter;
use criterion::{criterion_group, criterion_main, Criterion};
use prost::Message;
use tonic::Request;

#[path = "support/requests.rs"]
mod requests;

/// The messages as prost generates them (build.rs), rows as `String`s: what the
/// hand-written `Board` decode is measured against.
mod stock {
    #![allow(dead_code, missing_docs, clippy::all, clippy::pedantic)]
    include!(concat!(env!("OUT_DIR"), "/stock/arbiter.v1.rs"));
}
use requests::{check_gomoku_five, check_midgame, dense_connect_four, judge_draw, list_midgame};

/// Benchmarks decode, handle and encode of one request type against decode alone.
macro_rules! bench_rpc {
    ($c:expr, $runtime:expr, $service:expr, $name:literal, $method:ident, $ty:ty, $request:expr) => {{
        let bytes = $request.encode_to_vec();
        $c.bench_function(concat!("service/", $name, " decode only"), |b| {
            b.iter(|| <$ty>::decode(black_box(bytes.as_slice())).map(drop))
        });
        $c.bench_function(concat!("service/", $name), |b| {
            b.iter(|| {
                let request = <$ty>::decode(black_box(bytes.as_slice())).unwrap();
                let reply = $runtime
                    .block_on($service.$method(Request::new(request)))
                    .unwrap();
                reply.into_inner().encode_to_vec()
            })
        });
    }};
}

fn service(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let service = Arbiter::default();
    bench_rpc!(
        c,
        runtime,
        service,
        "CheckOthelloMove 8x8",
        check_othello_move,
        CheckOthelloMoveRequest,
        check_midgame()
    );
    bench_rpc!(
        c,
        runtime,
        service,
        "ListOthelloMoves 8x8",
        list_othello_moves,
        ListOthelloMovesRequest,
        list_midgame()
    );
    bench_rpc!(
        c,
        runtime,
        service,
        "CheckConnectFour 100x100",
        check_connect_four,
        CheckConnectFourRequest,
        dense_connect_four(100)
    );
    bench_rpc!(
        c,
        runtime,
        service,
        "JudgeTicTacToe 9 moves",
        judge_tic_tac_toe,
        JudgeTicTacToeRequest,
        judge_draw()
    );
    bench_rpc!(
        c,
        runtime,
        service,
        "CheckGomokuMove 15x15",
        check_gomoku_move,
        CheckGomokuMoveRequest,
        check_gomoku_five()
    );

    // Side by side: a 10 KB board decoded by prost's generated code (a `String` per
    // row, each checked as UTF-8) and by Arbiter's (one buffer), then parsed as the
    // handler does (from the rows' buffer, or from the strings with a copy).
    let bytes = dense_connect_four(100).encode_to_vec();
    c.bench_function(
        "service/CheckConnectFour 100x100 decode, stock prost",
        |b| {
            b.iter(|| stock::CheckConnectFourRequest::decode(black_box(bytes.as_slice())).map(drop))
        },
    );
    c.bench_function(
        "service/CheckConnectFour 100x100 decode and parse, stock prost",
        |b| {
            b.iter(|| {
                let request =
                    stock::CheckConnectFourRequest::decode(black_box(bytes.as_slice())).unwrap();
                connect_four::Board::parse(&request.board.unwrap().rows).map(drop)
            })
        },
    );
    c.bench_function(
        "service/CheckConnectFour 100x100 decode and parse, Arbiter",
        |b| {
            b.iter(|| {
                let request = CheckConnectFourRequest::decode(black_box(bytes.as_slice())).unwrap();
                connect_four::Board::parse_rows(request.board.unwrap().rows).map(drop)
            })
        },
    );
}

criterion_group!(benches, service);
criterion_main!(benches);
