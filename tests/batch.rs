//! CheckBatch: every check answered exactly as its own RPC answers it, a malformed one in
//! place with the violations its own RPC's BadRequest lists; compared item by item on
//! random mixes of every kind, valid and malformed, 1x1 to 100x100, and each rule of the
//! batch itself by name, over the wire.

mod common;

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::arbiter_service_server::ArbiterService;
use arbiter::proto::check::Check as Kind;
use arbiter::proto::check_result::Result as Answer;
use arbiter::proto::replies::WrittenReply;
use arbiter::proto::requests::CheckBatchChecks;
use arbiter::proto::{
    Board, Check, CheckBatchRequest, CheckConnectFourRequest, CheckOthelloMoveRequest, CheckResult,
    FieldViolation, JudgeTicTacToeRequest, ListOthelloMovesRequest, TicTacToeMove,
};
use arbiter::rules::fixtures::{CONNECT_FOUR_EXAMPLE_2, LC1958_EXAMPLE_1};
use arbiter::Arbiter;
use common::bulk::{answered_within_budget, check_batch};
use common::TestServer;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use prost::Message;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};
use tonic_types::StatusExt;

/// A board of `rows` x `cols` cells drawn from `alphabet`, sometimes spoilt: a foreign
/// character, a short row, an empty row, or no rows at all.
fn board(alphabet: &'static [u8], max_side: usize) -> impl Strategy<Value = Option<Board>> {
    let sides = prop_oneof![6 => 1..=max_side.min(10), 1 => 1..=max_side];
    (sides.clone(), sides, any::<u64>(), 0u8..12).prop_map(move |(rows, cols, seed, spoil)| {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut rows: Vec<Vec<u8>> = (0..rows)
            .map(|_| {
                (0..cols)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect()
            })
            .collect();
        let pick = (next() % rows.len() as u64) as usize;
        match spoil {
            0 => rows[pick][0] = b'?',
            1 => {
                rows[pick].pop();
            }
            2 => rows[pick].clear(),
            3 => rows.clear(),
            4 => return None,
            5 => rows[pick].extend(std::iter::repeat_n(alphabet[0], 101)),
            _ => {}
        }
        Some(Board::from_rows(rows))
    })
}

fn coordinate() -> impl Strategy<Value = i32> {
    prop_oneof![10 => -1i32..12, 1 => 0i32..101, 1 => Just(i32::MIN), 1 => Just(i32::MAX)]
}

fn color() -> impl Strategy<Value = String> {
    prop_oneof![4 => Just("B"), 4 => Just("W"), 1 => Just(""), 1 => Just("black")]
        .prop_map(str::to_owned)
}

/// One check of any kind, or none.
fn check() -> impl Strategy<Value = Check> {
    let othello_move = (board(b".BW", 100), coordinate(), coordinate(), color()).prop_map(
        |(board, row, col, color)| {
            Kind::CheckOthelloMove(CheckOthelloMoveRequest {
                board,
                row,
                col,
                color,
            })
        },
    );
    let othello_list = (board(b".BW", 100), color()).prop_map(|(board, color)| {
        Kind::ListOthelloMoves(ListOthelloMovesRequest { board, color })
    });
    let connect_four = (
        board(b"012", 100),
        coordinate(),
        coordinate(),
        -1i32..4,
        -1i32..7,
    )
        .prop_map(|(board, row, col, player, run_length)| {
            Kind::CheckConnectFour(CheckConnectFourRequest {
                board,
                row,
                col,
                player,
                run_length,
            })
        });
    let tic_tac_toe = prop::collection::vec((-1i32..4, -1i32..4), 0..12).prop_map(|moves| {
        Kind::JudgeTicTacToe(JudgeTicTacToeRequest {
            moves: moves
                .into_iter()
                .map(|(row, col)| TicTacToeMove { row, col })
                .collect(),
        })
    });
    prop::option::weighted(
        0.95,
        prop_oneof![othello_move, othello_list, connect_four, tic_tac_toe],
    )
    .prop_map(|check| Check { check })
}

/// A reply the service wrote, as the client's message.
fn decoded<T: WrittenReply>(reply: T) -> T::Response {
    reply.to_response().expect("a reply that decodes")
}

/// What a check's own RPC answers, through `answer` (its reply read by `read`), as a
/// batch result: its reply, or
/// the field violations of its BadRequest.
async fn own_rpc<T, R>(
    answer: impl std::future::Future<Output = Result<tonic::Response<T>, Status>>,
    read: fn(T) -> R,
    wrap: fn(R) -> Answer,
) -> CheckResult {
    match answer.await {
        Ok(reply) => CheckResult {
            invalid: Vec::new(),
            result: Some(wrap(read(reply.into_inner()))),
        },
        Err(status) => {
            assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
            let details = status.get_details_bad_request().expect("a BadRequest");
            CheckResult {
                invalid: details
                    .field_violations
                    .into_iter()
                    .map(|v| FieldViolation {
                        field: v.field,
                        description: v.description,
                    })
                    .collect(),
                result: None,
            }
        }
    }
}

/// The one violation a check with no kind gets.
fn no_kind() -> CheckResult {
    CheckResult {
        invalid: vec![FieldViolation {
            field: "check".into(),
            description: "sets no check: set one of check_othello_move, list_othello_moves, \
                          check_connect_four, judge_tic_tac_toe"
                .into(),
        }],
        result: None,
    }
}

/// The answer to `$check` from its own RPC, called on `$rpcs`: the service in process
/// (its replies `$read` by `decoded`), or a client over the wire (`identity`). One line
/// a kind, as a table.
#[rustfmt::skip]
macro_rules! own_rpcs {
    ($rpcs:expr, $read:expr, $check:expr) => {
        match $check.check {
            Some(Kind::CheckOthelloMove(r)) => own_rpc($rpcs.check_othello_move(Request::new(r)), $read, Answer::CheckOthelloMove).await,
            Some(Kind::ListOthelloMoves(r)) => own_rpc($rpcs.list_othello_moves(Request::new(r)), $read, Answer::ListOthelloMoves).await,
            Some(Kind::CheckConnectFour(r)) => own_rpc($rpcs.check_connect_four(Request::new(r)), $read, Answer::CheckConnectFour).await,
            Some(Kind::JudgeTicTacToe(r)) => own_rpc($rpcs.judge_tic_tac_toe(Request::new(r)), $read, Answer::JudgeTicTacToe).await,
            None => no_kind(),
        }
    };
}

/// Each check's answer from its own RPC, called on the service in process.
async fn unary_in_process(service: &Arbiter, check: Check) -> CheckResult {
    own_rpcs!(service, decoded, check)
}

/// Each check's answer from its own RPC, called over the wire.
async fn unary_over_the_wire(
    client: &mut ArbiterServiceClient<Channel>,
    check: Check,
) -> CheckResult {
    own_rpcs!(client, std::convert::identity, check)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Fails against a batch that answers any check otherwise than its own RPC: a
    /// different reply, other violations, a lost or reordered item; whether the batch
    /// was read from its bytes as the server reads it (every check read in place) or
    /// its checks were decoded by prost's generated code.
    #[test]
    fn every_check_is_answered_as_its_own_rpc_answers_it(
        checks in prop::collection::vec(check(), 0..24)
    ) {
        runtime().block_on(async {
            let service = Arbiter::default();
            let request = CheckBatchRequest { checks: checks.clone() };
            let read = CheckBatchChecks::decode(&request.encode_to_vec()[..]).unwrap();
            prop_assert_eq!(read.read_in_place(), checks.len());
            for request in [read, request.into()] {
                let batch = service
                    .check_batch(Request::new(request))
                    .await
                    .unwrap()
                    .into_inner()
                    .to_response()
                    .unwrap();
                prop_assert_eq!(batch.results.len(), checks.len());
                for (index, (check, got)) in checks.iter().zip(batch.results).enumerate() {
                    let expected = unary_in_process(&service, check.clone()).await;
                    prop_assert_eq!(got, expected, "check {} of the batch: {:?}", index, check);
                }
            }
            Ok(())
        })?;
    }
}

/// The same comparison over the wire, a real client and server, on one large random
/// batch of every kind. Fails against a server whose CheckBatch answers differ from its
/// unary RPCs' on the wire.
#[tokio::test]
async fn over_the_wire_a_batch_equals_its_checks_called_one_by_one() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let checks: Vec<Check> = (0..300)
        .map(|_| check().new_tree(&mut runner).unwrap().current())
        .collect();
    let batch = check_batch(&mut client, checks.clone()).await;
    assert_eq!(batch.results.len(), checks.len());
    let mut malformed = 0;
    for (index, (check, got)) in checks.into_iter().zip(batch.results).enumerate() {
        let expected = unary_over_the_wire(&mut client, check).await;
        malformed += usize::from(!expected.invalid.is_empty());
        assert_eq!(got, expected, "check {index}");
    }
    // The mix holds both kinds of answer, so the comparison tested both.
    assert!(
        malformed > 30 && malformed < 270,
        "{malformed} malformed of 300"
    );
}

fn othello_check(rows: &[&str], row: i32, col: i32, color: &str) -> Check {
    Check {
        check: Some(Kind::CheckOthelloMove(CheckOthelloMoveRequest {
            board: Some(Board::from_rows(rows)),
            row,
            col,
            color: color.into(),
        })),
    }
}

/// A malformed check is answered in place; the checks around it are still answered.
/// Fails against a batch that fails whole on one bad check, or shifts the results.
#[tokio::test]
async fn a_malformed_check_is_answered_in_place() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let checks = vec![
        othello_check(&LC1958_EXAMPLE_1, 4, 3, "B"),
        othello_check(&LC1958_EXAMPLE_1, 4, 3, "purple"),
        Check { check: None },
        Check {
            check: Some(Kind::CheckConnectFour(CheckConnectFourRequest {
                board: Some(Board::from_rows(CONNECT_FOUR_EXAMPLE_2)),
                row: 2,
                col: 3,
                player: 2,
                run_length: 0,
            })),
        },
    ];
    let results = check_batch(&mut client, checks).await.results;
    assert_eq!(results.len(), 4);
    match &results[0].result {
        Some(Answer::CheckOthelloMove(reply)) => assert!(reply.legal),
        other => panic!("{other:?}"),
    }
    assert!(results[0].invalid.is_empty());
    assert_eq!(results[1].result, None);
    assert_eq!(
        results[1].invalid,
        [FieldViolation {
            field: "color".into(),
            description: "must be \"B\" or \"W\", got \"purple\"".into()
        }]
    );
    assert_eq!(results[2], no_kind());
    match &results[3].result {
        Some(Answer::CheckConnectFour(reply)) => assert!(reply.wins),
        other => panic!("{other:?}"),
    }
}

/// An empty batch has no results. Fails against a server that refuses it or invents one.
#[tokio::test]
async fn an_empty_batch_has_no_results() {
    let server = TestServer::start().await;
    let reply = check_batch(&mut server.client().await, Vec::new()).await;
    assert!(reply.results.is_empty());
}

/// 10,000 checks are answered; 10,001 fail the call with a BadRequest on `checks`.
/// Fails against a server without the cap, or with another one.
#[tokio::test]
async fn more_than_ten_thousand_checks_fail_the_call() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let tiny = Check {
        check: Some(Kind::JudgeTicTacToe(JudgeTicTacToeRequest::default())),
    };
    let reply = check_batch(&mut client, vec![tiny.clone(); 10_000]).await;
    assert_eq!(reply.results.len(), 10_000);
    let status = client
        .check_batch(CheckBatchRequest {
            checks: vec![tiny; 10_001],
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let violations = status.get_details_bad_request().unwrap().field_violations;
    assert_eq!(violations.len(), 1);
    assert_eq!(violations[0].field, "checks");
    assert!(
        violations[0].description.contains("10001"),
        "{:?}",
        violations[0]
    );
}

/// A batch whose every check is malformed, each in many ways, is still an OK call, and
/// each check lists at most 10 violations and one counting the rest, cut as an error
/// reply's are. Fails against a batch that lists every violation.
#[tokio::test]
async fn every_malformed_check_lists_a_bounded_number_of_violations() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    // 100 rows of 150 cells: each row is a violation.
    let wide: Vec<String> = vec!["é".repeat(150); 100];
    let check = Check {
        check: Some(Kind::ListOthelloMoves(ListOthelloMovesRequest {
            board: Some(Board::from_rows(&wide)),
            color: "\u{1F600}".repeat(1000),
        })),
    };
    let reply = check_batch(&mut client, vec![check; 20]).await;
    assert_eq!(reply.results.len(), 20);
    for result in &reply.results {
        assert_eq!(result.result, None);
        assert_eq!(result.invalid.len(), 11, "{:?}", result.invalid);
        assert!(result.invalid[10]
            .description
            .starts_with("... and 91 more violations not listed"));
        assert!(result
            .invalid
            .iter()
            .all(|v| v.field.len() <= 64 && v.description.len() <= 200));
    }
}

/// A batch whose answers would pass MAX_REPLY_BYTES is answered in full up to it, the
/// checks past it with `invalid` on `check`, unrun. Fails against a server whose reply
/// grows without bound with the checks' answers.
#[tokio::test]
async fn a_reply_holds_at_most_its_byte_budget() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    // 100x100 boards of rows B, W, ., W, ...: every empty cell is a legal move for
    // black turning over up to six discs, about 110 KB of listing from a 10 KB check.
    let rows: Vec<String> = (0..100)
        .map(|r| ["B", "W", ".", "W"][r % 4].repeat(100))
        .collect();
    let check = Check {
        check: Some(Kind::ListOthelloMoves(ListOthelloMovesRequest {
            board: Some(Board::from_rows(&rows)),
            color: "B".into(),
        })),
    };
    let reply = check_batch(&mut client, vec![check; 90]).await;
    assert_eq!(reply.results.len(), 90);
    let answered = answered_within_budget(&reply, &reply.results, |r| r.result.is_some());
    assert!(answered > 10 && answered < 90, "{answered} answered");
    for result in &reply.results[answered..] {
        assert_eq!(result.invalid.len(), 1);
        assert_eq!(result.invalid[0].field, "check");
        assert!(result.invalid[0].description.starts_with("not run"));
    }
}
