//! Criterion benchmarks of the service's handler path without the network: decoding the
//! request bytes, validation, the rule, building and encoding the reply. What the load
//! benchmark's server CPU per call adds over the empty-handler baseline should be here.
//!
//! Run with `cargo bench --bench service`.

use std::hint::black_box;

use arbiter::proto::arbiter_service_server::ArbiterService;
use arbiter::proto::{
    CheckConnectFourRequest, CheckOthelloMoveRequest, JudgeTicTacToeRequest,
    ListOthelloMovesRequest, TicTacToeMove,
};
use arbiter::service::Arbiter;
use criterion::{criterion_group, criterion_main, Criterion};
use prost::Message;
use tonic::Request;

#[path = "support/requests.rs"]
#[allow(dead_code)] // the load generators use the rest
mod requests;
use requests::{board, dense_connect_four, OTHELLO_MIDGAME as MIDGAME};

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
        CheckOthelloMoveRequest {
            board: board(&MIDGAME),
            row: 1,
            col: 1,
            color: "B".into(),
        }
    );
    bench_rpc!(
        c,
        runtime,
        service,
        "ListOthelloMoves 8x8",
        list_othello_moves,
        ListOthelloMovesRequest,
        ListOthelloMovesRequest {
            board: board(&MIDGAME),
            color: "B".into(),
        }
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
        JudgeTicTacToeRequest {
            moves: [
                (0, 0),
                (1, 1),
                (2, 0),
                (1, 0),
                (1, 2),
                (2, 1),
                (0, 1),
                (0, 2),
                (2, 2)
            ]
            .iter()
            .map(|&(row, col)| TicTacToeMove { row, col })
            .collect(),
        }
    );
}

criterion_group!(benches, service);
criterion_main!(benches);
