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
//! setups (for every registered live game, [`arbiter::visit_live_games`]: its `Fixture`'s
//! setup with about 1 MB of messages the game rejects as its history; and Othello's
//! board of bad cells besides), and the bulk RPCs' (PlayMany's setups of every game).
//!
//! One test runs every case in turn, on a runtime of one thread, so that nothing else
//! allocates while a case is measured. `cargo test --test request_cost -- --nocapture`
//! prints the figures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use arbiter::games::othello;
use arbiter::proto::arbiter_service_server::ArbiterService;
use arbiter::proto::requests::{CheckBatchChecks, PlayManyActions};
use arbiter::proto::{
    check, game_action, play_othello_request, Board, Check, CheckBatchRequest,
    CheckConnectFourRequest, CheckOthelloMoveRequest, GameAction, JudgeTicTacToeRequest,
    ListOthelloMovesRequest, OthelloSetup, PlayManyRequest, PlayOthelloRequest, TicTacToeMove,
};
use arbiter::{Arbiter, LiveGame, LiveGameVisitor};
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
        let mut replies = Arbiter::default().open_game::<G, _>(tokio_stream::iter([Ok(first)]));
        let Some(Err(status)) = replies.next().await else {
            panic!("the malformed setup was not refused");
        };
        trailers_of(&status);
    })
}

/// The setup of `G`'s fixture whose history is about 1 MB of the message its game always
/// rejects: how many, and the setup.
fn rejected_history<G: LiveGame>() -> (usize, G::Request) {
    let empty = G::setup(None, None, &[]).encoded_len();
    let thousand = G::setup(None, None, &vec![G::rejected(); 1000]).encoded_len();
    let count = (1_000_000 - empty) * 1000 / (thousand - empty);
    (count, G::setup(None, None, &vec![G::rejected(); count]))
}

/// Every registered live game's malformed setup of about 1 MB (`rejected_history`),
/// measured as `live_status` measures it, named by its RPC.
fn live_setups() -> Vec<(String, Cost)> {
    struct Measure(Vec<(String, Cost)>);
    impl LiveGameVisitor for Measure {
        fn visit<G: LiveGame>(&mut self) {
            let (count, setup) = rejected_history::<G>();
            let name = format!("{}, a setup of {count} rejected moves", G::RPC);
            self.0.push((name, live_status::<G>(setup)));
        }
    }
    let mut measure = Measure(Vec::new());
    arbiter::visit_live_games(&mut measure);
    assert!(!measure.0.is_empty(), "no live game is registered");
    measure.0
}

/// A setup of every registered live game in turn whose history is `bad` messages its
/// game rejects, as PlayMany carries it.
fn setups_of_every_game(bad: usize) -> Vec<game_action::Action> {
    struct Setups(Vec<game_action::Action>, usize);
    impl LiveGameVisitor for Setups {
        fn visit<G: LiveGame>(&mut self) {
            let setup = G::setup(None, None, &vec![G::rejected(); self.1]);
            self.0.push(G::action(setup));
        }
    }
    let mut setups = Setups(Vec::new(), bad);
    arbiter::visit_live_games(&mut setups);
    setups.0
}

/// PlayMany's cost for one message of `actions`: decoded, answered item by item, its
/// reply's bytes.
fn play_many(actions: Vec<GameAction>) -> Cost {
    measure(
        PlayManyRequest { actions }.encode_to_vec(),
        |bytes| async move {
            let actions = PlayManyActions::decode(&bytes[..]).unwrap();
            drop(bytes);
            let message = PlayManyRequest::from(actions);
            let mut replies = Arbiter::default().open_many(tokio_stream::iter([Ok(message)]));
            let reply = replies.next().await.unwrap().unwrap();
            assert!(!reply.as_bytes().is_empty());
        },
    )
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
    let unary_judge = unary_status(judge.clone(), |arbiter, request| async move {
        arbiter.judge_tic_tac_toe(request).await.map(drop)
    });
    let batch_judge = check_batch(CheckBatchRequest {
        checks: vec![one_check(check::Check::JudgeTicTacToe(judge))],
    });
    // A megabyte of moves that are no moves: prost would hold each in a String of its own.
    let chess_judge = arbiter::proto::JudgeChessGameRequest {
        moves: std::iter::repeat_n("z9z9", 166_000).collect(),
        ..Default::default()
    };
    let unary_chess_judge = unary_status(chess_judge.clone(), |arbiter, request| async move {
        arbiter.judge_chess_game(request).await.map(drop)
    });
    let batch_chess_judge = check_batch(CheckBatchRequest {
        checks: vec![one_check(check::Check::JudgeChessGame(chess_judge))],
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
    let many_bad_setups = play_many(
        (0..10_000)
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
    );
    let setups = setups_of_every_game(8);
    let many_bad_setups_of_every_game = play_many(
        (0..10_000)
            .map(|game| GameAction {
                game,
                action: Some(setups[game as usize % setups.len()].clone()),
            })
            .collect(),
    );

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
    let live_setups = live_setups();

    let valid = [
        ("valid CheckBatch, 8x8 Othello", valid_othello),
        ("valid CheckBatch, 100x100 Connect Four", valid_connect_four),
    ];
    let mut malformed = vec![
        (
            "JudgeTicTacToe, 166,000 moves off the board".to_string(),
            unary_judge,
        ),
        (
            "CheckBatch, one JudgeTicTacToe check of 166,000 moves off the board".into(),
            batch_judge,
        ),
        (
            "JudgeChessGame, 166,000 moves that are no moves".into(),
            unary_chess_judge,
        ),
        (
            "CheckBatch, one JudgeChessGame check of 166,000 moves that are no moves".into(),
            batch_chess_judge,
        ),
        (
            "CheckBatch, 10,000 checks of 9 moves off the board".into(),
            batch_of_bad_judges,
        ),
        (
            "PlayMany, one message of 10,000 malformed Othello setups".into(),
            many_bad_setups,
        ),
        (
            "PlayMany, one message of 10,000 setups of 8 rejected moves, of every game in turn"
                .into(),
            many_bad_setups_of_every_game,
        ),
        (
            "CheckOthelloMove, 100 rows of 10,000 bad cells".into(),
            unary_othello_move,
        ),
        (
            "ListOthelloMoves, 100 rows of 10,000 bad cells".into(),
            unary_listing,
        ),
        (
            "CheckConnectFour, 100 rows of 10,000 bad cells".into(),
            unary_connect_four,
        ),
        (
            "PlayOthello, a setup of 100 rows of 10,000 bad cells".into(),
            live_othello_setup,
        ),
    ];
    malformed.extend(live_setups);
    let valid = valid.map(|(name, cost)| (name.to_string(), cost));
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
    for (name, cost) in &malformed {
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
        "PlayMany, one message of 10,000 setups of 8 rejected moves, of every game in turn",
    ];
    for (name, cost) in malformed
        .iter()
        .filter(|(name, _)| !answered_by_item.contains(&name.as_str()))
    {
        assert!(cost.peak_per_byte() <= 4.0, "{name}: {cost:?}");
        assert!(
            cost.allocated_per_byte() <= 2.0 * most_valid,
            "{name}: allocated {:.2} x its bytes, against {most_valid:.2} for a valid CheckBatch",
            cost.allocated_per_byte()
        );
    }
}
