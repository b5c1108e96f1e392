//! CheckBatch: every check answered exactly as its own RPC answers it, a malformed one in
//! place with the violations its own RPC's BadRequest lists; compared item by item on
//! random mixes of every kind the contract has (read from its descriptor set, so a new
//! game's checks are among them), valid and malformed, 1x1 to 100x100, and each rule of
//! the batch itself by name, over the wire.

mod common;

use std::sync::OnceLock;

use arbiter::games::connect_four::fixtures::CONNECT_FOUR_EXAMPLE_2;
use arbiter::games::othello::fixtures::LC1958_EXAMPLE_1;
use arbiter::proto::arbiter_service_server::ArbiterService;
use arbiter::proto::check::Check as Kind;
use arbiter::proto::check_result::Result as Answer;
use arbiter::proto::requests::CheckBatchChecks;
use arbiter::proto::{
    Board, Check, CheckBatchRequest, CheckConnectFourRequest, CheckOthelloMoveRequest, CheckResult,
    FieldViolation, JudgeTicTacToeRequest, ListOthelloMovesRequest,
};
use arbiter::Arbiter;
use common::bulk::{answered_within_budget, check_batch};
use common::contract::{self, CheckKind};
use common::TestServer;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use prost::Message;
use tonic::transport::Channel;
use tonic::{Code, Request};
use tonic_types::StatusExt;

/// The contract's kinds of check (every game's, read from its descriptor set).
fn kinds() -> &'static [CheckKind] {
    static KINDS: OnceLock<Vec<CheckKind>> = OnceLock::new();
    KINDS.get_or_init(contract::check_kinds)
}

/// One check of any kind the contract has (its fields by its request's shape, valid or
/// not), or none: one in twenty.
fn check() -> impl Strategy<Value = Check> {
    (0..20u32, 0..kinds().len(), any::<u64>()).prop_map(|(none, kind, seed)| {
        if none == 0 {
            return Check { check: None };
        }
        let kind = &kinds()[kind];
        let request = contract::request(kind, seed);
        Check::decode(&contract::wrapped(kind.number, &request)[..]).unwrap()
    })
}

/// What `check`'s own RPC answers over `channel`, as a batch result: its reply, or the
/// field violations of its BadRequest.
async fn own_rpc(channel: &Channel, check: &Check) -> CheckResult {
    let Some(oneof) = &check.check else {
        return no_kind();
    };
    let mut encoded = Vec::new();
    oneof.encode(&mut encoded);
    let mut rest = &encoded[..];
    let (number, _) = prost::encoding::decode_key(&mut rest).unwrap();
    prost::encoding::decode_varint(&mut rest).unwrap();
    let kind = kinds().iter().find(|kind| kind.number == number).unwrap();
    match contract::call(channel, &kind.path, rest.to_vec()).await {
        Ok(reply) => CheckResult::decode(&contract::wrapped(kind.result, &reply)[..]).unwrap(),
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
    let names: Vec<&str> = kinds().iter().map(|kind| kind.name.as_str()).collect();
    CheckResult {
        invalid: vec![FieldViolation {
            field: "check".into(),
            description: format!("sets no check: set one of {}", names.join(", ")),
        }],
        result: None,
    }
}

/// Fails against a batch that answers any check otherwise than its own RPC: a different
/// reply, other violations, a lost or reordered item; whether the batch was read from
/// its bytes as the server reads it (every check read in place) or its checks were
/// decoded by prost's generated code. Random mixes of every kind the contract has,
/// valid and malformed, 1x1 to 100x100; each check's own RPC called over the wire.
#[test]
fn every_check_is_answered_as_its_own_rpc_answers_it() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (server, channel) = runtime.block_on(async {
        let server = TestServer::start().await;
        let channel = server.channel().await;
        (server, channel)
    });
    let service = Arbiter::default();
    let mut runner = TestRunner::new(ProptestConfig::with_cases(200));
    let result = runner.run(&prop::collection::vec(check(), 0..24), |checks| {
        runtime.block_on(async {
            let request = CheckBatchRequest {
                checks: checks.clone(),
            };
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
                    let expected = own_rpc(&channel, check).await;
                    prop_assert_eq!(got, expected, "check {} of the batch: {:?}", index, check);
                }
            }
            Ok(())
        })
    });
    drop(server);
    result.unwrap();
}

/// The same comparison over the wire, a real client and server, on one large random
/// batch of every kind. Fails against a server whose CheckBatch answers differ from its
/// unary RPCs' on the wire.
#[tokio::test]
async fn over_the_wire_a_batch_equals_its_checks_called_one_by_one() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let channel = server.channel().await;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    // Two checks in three the first of a few drawn that its own RPC answers (random
    // fields of a game it does not know are most often malformed), the rest as drawn.
    let mut checks = Vec::new();
    let mut expected = Vec::new();
    for slot in 0..300 {
        let mut tries = 0;
        loop {
            let check = check().new_tree(&mut runner).unwrap().current();
            let answer = own_rpc(&channel, &check).await;
            tries += 1;
            if slot % 3 == 0 || answer.invalid.is_empty() || tries == 8 {
                checks.push(check);
                expected.push(answer);
                break;
            }
        }
    }
    let batch = check_batch(&mut client, checks.clone()).await;
    assert_eq!(batch.results.len(), checks.len());
    let mut malformed = 0;
    let mut kinds_answered = std::collections::HashSet::new();
    for (index, ((check, got), expected)) in checks
        .into_iter()
        .zip(batch.results)
        .zip(expected)
        .enumerate()
    {
        assert_eq!(
            expected,
            own_rpc(&channel, &check).await,
            "check {index}, twice"
        );
        malformed += usize::from(!expected.invalid.is_empty());
        if let Some(result) = &expected.result {
            kinds_answered.insert(std::mem::discriminant(result));
        }
        assert_eq!(got, expected, "check {index}");
    }
    // The mix holds both kinds of answer, so the comparison tested both, and an answer
    // of every kind.
    assert!(
        malformed > 30 && malformed < 270,
        "{malformed} malformed of 300"
    );
    assert_eq!(kinds_answered.len(), kinds().len());
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
