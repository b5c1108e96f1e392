//! What one request costs the server in memory, malformed or not: each of about 1 MB,
//! decoded from its bytes as the transport hands them over, answered by the service in
//! process, and its reply (or its error's trailers) encoded, under a counting allocator.
//!
//! A malformed request may hold no more at once than four times its own bytes beside
//! its reply (which its budget, `MAX_REPLY_BYTES`, bounds for any request); one whose
//! problems are a hundred thousand moves off the board allocates no more per byte than
//! a valid CheckBatch does, twice over: it is answered with ten of its problems and the
//! count of the rest, and the rest are only counted (`Violations::push_with`).
//!
//! Every RPC has its case: the unary checks' malformed boards, the live games' malformed
//! setups, and the bulk RPCs'.
//!
//! One test runs every case in turn, on a runtime of one thread, so that nothing else
//! allocates while a case is measured. `cargo test --test request_cost -- --nocapture`
//! prints the figures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use arbiter::games::{connect_four, othello, tic_tac_toe};
use arbiter::proto::arbiter_service_server::ArbiterService;
use arbiter::proto::requests::{CheckBatchChecks, PlayManyActions};
use arbiter::proto::{
    check, game_action, play_connect_four_request, play_othello_request, Board, Check,
    CheckBatchRequest, CheckConnectFourRequest, CheckOthelloMoveRequest, ConnectFourSetup,
    GameAction, JudgeTicTacToeRequest, ListOthelloMovesRequest, OthelloSetup,
    PlayConnectFourRequest, PlayManyRequest, PlayOthelloRequest, PlayTicTacToeRequest,
    TicTacToeMove, TicTacToeSetup,
};
use arbiter::{Arbiter, LiveGame};
use futures_util::StreamExt;
use prost::Message;
use tonic::Request;

/// The system allocator, counting what is allocated and what is held.
struct Counting;

/// Bytes held now.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The most bytes held at once since the last reset.
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Allocations (and reallocations) since the last reset.
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
/// Bytes allocated since the last reset.
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

impl Counting {
    fn grew(size: usize) {
        let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
        PEAK.fetch_max(live, Ordering::Relaxed);
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED.fetch_add(size, Ordering::Relaxed);
    }
}

// SAFETY: every call is passed on to the system allocator unchanged; the counters only
// watch.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            Self::grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            Self::grew(new_size);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What one request cost.
#[derive(Debug)]
struct Cost {
    /// The request's bytes.
    bytes: usize,
    /// The most bytes held at once above what was held before it.
    peak: usize,
    /// Allocations made.
    allocations: usize,
    /// Bytes allocated, in all.
    allocated: usize,
}

impl Cost {
    fn allocations_per_kb(&self) -> f64 {
        self.allocations as f64 * 1024.0 / self.bytes as f64
    }
    fn allocated_per_byte(&self) -> f64 {
        self.allocated as f64 / self.bytes as f64
    }
    fn peak_per_byte(&self) -> f64 {
        self.peak as f64 / self.bytes as f64
    }
}

/// Runs `answer` on the request `bytes` on a runtime of one thread and measures it.
fn measure<F, Fut>(bytes: Vec<u8>, answer: F) -> Cost
where
    F: FnOnce(Vec<u8>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let size = bytes.len();
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    ALLOCATIONS.store(0, Ordering::Relaxed);
    ALLOCATED.store(0, Ordering::Relaxed);
    runtime.block_on(answer(bytes));
    Cost {
        bytes: size,
        peak: PEAK.load(Ordering::Relaxed) - before,
        allocations: ALLOCATIONS.load(Ordering::Relaxed),
        allocated: ALLOCATED.load(Ordering::Relaxed),
    }
}

/// A CheckBatch's cost: decoded as the server reads it, answered, its reply's bytes.
fn check_batch(request: CheckBatchRequest) -> Cost {
    measure(request.encode_to_vec(), |bytes| async move {
        let checks = CheckBatchChecks::decode(&bytes[..]).unwrap();
        drop(bytes);
        let reply = Arbiter::default()
            .check_batch(Request::new(checks))
            .await
            .unwrap()
            .into_inner();
        assert!(!reply.as_bytes().is_empty());
    })
}

fn off_board_moves(count: usize) -> Vec<TicTacToeMove> {
    vec![TicTacToeMove { row: 5, col: 5 }; count]
}

fn one_check(check: check::Check) -> Check {
    Check { check: Some(check) }
}

/// A unary call's cost: `request` decoded from its bytes, refused by `call`, and the
/// error's trailers written.
fn unary_status<M, F, Fut>(request: M, call: F) -> Cost
where
    M: Message + Default + 'static,
    F: FnOnce(Arbiter, Request<M>) -> Fut + 'static,
    Fut: std::future::Future<Output = Result<(), tonic::Status>>,
{
    measure(request.encode_to_vec(), |bytes| async move {
        let request = M::decode(&bytes[..]).unwrap();
        drop(bytes);
        let status = call(Arbiter::default(), Request::new(request))
            .await
            .unwrap_err();
        trailers_of(&status);
    })
}

/// A live game's cost, opened with `first` (a malformed setup): decoded, refused, and
/// the error that ends the stream written as trailers.
fn live_status<G: LiveGame>(first: G::Request) -> Cost
where
    G::Request: Message + Default,
{
    measure(first.encode_to_vec(), |bytes| async move {
        let first = G::Request::decode(&bytes[..]).unwrap();
        drop(bytes);
        let mut replies = Arbiter::default()
            .open_game::<G, _>(tokio_stream::iter([Ok(first)]))
            .unwrap();
        let Some(Err(status)) = replies.next().await else {
            panic!("the malformed setup was not refused");
        };
        trailers_of(&status);
    })
}

/// Writes `status` as the trailers it is sent as, and checks it is a refusal.
fn trailers_of(status: &tonic::Status) {
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    let mut trailers = tonic::codegen::http::HeaderMap::new();
    status.add_header(&mut trailers).unwrap();
    assert!(trailers.len() >= 2);
}

#[test]
fn no_request_costs_more_than_its_size_allows() {
    let othello = [
        "........", "........", "........", "...WB...", "...BW...", "........", "........",
        "........",
    ];
    let valid_othello = check_batch(CheckBatchRequest {
        checks: (0..10_000)
            .map(|_| {
                one_check(check::Check::CheckOthelloMove(CheckOthelloMoveRequest {
                    board: Some(Board::from_rows(othello)),
                    row: 2,
                    col: 3,
                    color: "B".into(),
                }))
            })
            .collect(),
    });
    let wide: Vec<String> = (0..100).map(|_| "0".repeat(100)).collect();
    let valid_connect_four = check_batch(CheckBatchRequest {
        checks: (0..100)
            .map(|_| {
                one_check(check::Check::CheckConnectFour(CheckConnectFourRequest {
                    board: Some(Board::from_rows(&wide)),
                    row: 99,
                    col: 0,
                    player: 0,
                    run_length: 0,
                }))
            })
            .collect(),
    });

    let judge = JudgeTicTacToeRequest {
        moves: off_board_moves(166_000),
    };
    let unary_judge = measure(judge.encode_to_vec(), |bytes| async move {
        let request = JudgeTicTacToeRequest::decode(&bytes[..]).unwrap();
        drop(bytes);
        let status = Arbiter::default()
            .judge_tic_tac_toe(Request::new(request))
            .await
            .unwrap_err();
        let mut trailers = tonic::codegen::http::HeaderMap::new();
        status.add_header(&mut trailers).unwrap();
        assert!(trailers.len() >= 2);
    });
    let batch_judge = check_batch(CheckBatchRequest {
        checks: vec![one_check(check::Check::JudgeTicTacToe(judge))],
    });
    let batch_of_bad_judges = check_batch(CheckBatchRequest {
        checks: (0..10_000)
            .map(|_| {
                one_check(check::Check::JudgeTicTacToe(JudgeTicTacToeRequest {
                    moves: off_board_moves(9),
                }))
            })
            .collect(),
    });
    let bad_setups = PlayManyRequest {
        actions: (0..10_000)
            .map(|game| GameAction {
                game,
                action: Some(game_action::Action::Othello(PlayOthelloRequest {
                    action: Some(play_othello_request::Action::Setup(Box::new(
                        OthelloSetup {
                            board: Some(Board::from_rows(["XXXXXXXX"; 8])),
                            to_move: "B".into(),
                            history: Vec::new(),
                            ..Default::default()
                        },
                    ))),
                })),
            })
            .collect(),
    };
    let many_bad_setups = measure(bad_setups.encode_to_vec(), |bytes| async move {
        let actions = PlayManyActions::decode(&bytes[..]).unwrap();
        drop(bytes);
        let message = PlayManyRequest::from(actions);
        let mut replies = Arbiter::default().open_many(tokio_stream::iter([Ok(message)]));
        let reply = replies.next().await.unwrap().unwrap();
        assert!(!reply.as_bytes().is_empty());
    });

    // A board of 100 rows of 10,000 bad characters: about 1 MB, a violation a row.
    let bad_rows = || Some(Board::from_rows(vec!["X".repeat(10_000); 100]));
    let unary_othello_move = unary_status(
        CheckOthelloMoveRequest {
            board: bad_rows(),
            row: 0,
            col: 0,
            color: "B".into(),
        },
        |arbiter, request| async move { arbiter.check_othello_move(request).await.map(drop) },
    );
    let unary_listing = unary_status(
        ListOthelloMovesRequest {
            board: bad_rows(),
            color: "B".into(),
        },
        |arbiter, request| async move { arbiter.list_othello_moves(request).await.map(drop) },
    );
    let unary_connect_four = unary_status(
        CheckConnectFourRequest {
            board: bad_rows(),
            row: 0,
            col: 0,
            player: 0,
            run_length: 0,
        },
        |arbiter, request| async move { arbiter.check_connect_four(request).await.map(drop) },
    );
    let live_othello_setup = live_status::<othello::Game>(PlayOthelloRequest {
        action: Some(play_othello_request::Action::Setup(Box::new(
            OthelloSetup {
                board: bad_rows(),
                to_move: "B".into(),
                ..Default::default()
            },
        ))),
    });
    let live_connect_four_setup = live_status::<connect_four::Game>(PlayConnectFourRequest {
        action: Some(play_connect_four_request::Action::Setup(Box::new(
            ConnectFourSetup {
                rows: 100,
                cols: 100,
                // Every drop off the board: 1 MB of history.
                history: vec![1_000_000; 250_000],
                ..Default::default()
            },
        ))),
    });
    let live_tic_tac_toe_setup = live_status::<tic_tac_toe::Game>(PlayTicTacToeRequest {
        row: 0,
        col: 0,
        setup: Some(Box::new(TicTacToeSetup {
            history: off_board_moves(166_000),
            ..Default::default()
        })),
    });

    let valid = [
        ("valid CheckBatch, 8x8 Othello", &valid_othello),
        (
            "valid CheckBatch, 100x100 Connect Four",
            &valid_connect_four,
        ),
    ];
    let malformed = [
        ("JudgeTicTacToe, 166,000 moves off the board", &unary_judge),
        (
            "CheckBatch, one JudgeTicTacToe check of 166,000 moves off the board",
            &batch_judge,
        ),
        (
            "CheckBatch, 10,000 checks of 9 moves off the board",
            &batch_of_bad_judges,
        ),
        (
            "PlayMany, one message of 10,000 malformed Othello setups",
            &many_bad_setups,
        ),
        (
            "CheckOthelloMove, 100 rows of 10,000 bad cells",
            &unary_othello_move,
        ),
        (
            "ListOthelloMoves, 100 rows of 10,000 bad cells",
            &unary_listing,
        ),
        (
            "CheckConnectFour, 100 rows of 10,000 bad cells",
            &unary_connect_four,
        ),
        (
            "PlayOthello, a setup of 100 rows of 10,000 bad cells",
            &live_othello_setup,
        ),
        (
            "PlayConnectFour, a setup of 250,000 drops off the board",
            &live_connect_four_setup,
        ),
        (
            "PlayTicTacToe, a setup of 166,000 moves off the board",
            &live_tic_tac_toe_setup,
        ),
    ];
    for (name, cost) in valid.iter().chain(&malformed) {
        println!(
            "{name}: {} bytes; held at most {:.2} x its bytes; allocated {:.2} x its bytes in {:.1} allocations per KiB",
            cost.bytes,
            cost.peak_per_byte(),
            cost.allocated_per_byte(),
            cost.allocations_per_kb()
        );
    }
    // A reply may take up to its budget (and the short answers past it) whatever the
    // request: an allowance of twice the budget, for the buffer it grows into.
    let reply_allowance = 2 * arbiter::MAX_REPLY_BYTES;
    for (name, cost) in malformed {
        assert!(
            cost.peak <= 4 * cost.bytes + reply_allowance,
            "{name}: held {} bytes at once for a request of {}: {cost:?}",
            cost.peak,
            cost.bytes
        );
    }
    // The requests answered with an error (all but the two bulk ones answered item by
    // item) hold no more than four times their bytes, whatever their problems, and
    // allocate no more per byte than the valid batches do, twice over: past the ten
    // listed, problems are counted, not written out.
    let most_valid = valid
        .iter()
        .map(|(_, cost)| cost.allocated_per_byte())
        .fold(0.0, f64::max);
    let answered_by_item = [
        "CheckBatch, 10,000 checks of 9 moves off the board",
        "PlayMany, one message of 10,000 malformed Othello setups",
    ];
    for (name, cost) in malformed
        .iter()
        .filter(|(name, _)| !answered_by_item.contains(name))
    {
        assert!(cost.peak_per_byte() <= 4.0, "{name}: {cost:?}");
        assert!(
            cost.allocated_per_byte() <= 2.0 * most_valid,
            "{name}: allocated {:.2} x its bytes, against {most_valid:.2} for a valid CheckBatch",
            cost.allocated_per_byte()
        );
    }
}
