//! CheckBatch: many one-shot checks in one call, each answered by its own game's module
//! exactly as its own RPC answers it, a malformed one in place.

use crate::proto::check::Check as Kind;
use crate::proto::replies::CheckBatchReply;
use crate::proto::{Check, CheckBatchRequest, CheckResult};

use super::error::{ServiceError, Violation};
use super::{connect_four, fields, othello, tic_tac_toe, Checked, MAX_REPLY_BYTES};

/// The most checks one CheckBatch call may carry.
pub const MAX_CHECKS: usize = 10_000;

/// Answers a CheckBatch request: one result per check, in order. Only a batch of more
/// than [`MAX_CHECKS`] checks fails as a whole; once the reply holds
/// [`MAX_REPLY_BYTES`], the checks left are answered without being run. Each result is
/// written into the reply as soon as it is known.
pub(crate) fn check_batch(request: CheckBatchRequest) -> Result<CheckBatchReply, ServiceError> {
    let count = request.checks.len();
    fields::at_most("CheckBatchRequest", "checks", count, MAX_CHECKS, "call")?;
    let room = request.checks.iter().map(result_bytes).sum::<usize>();
    let mut reply = CheckBatchReply::with_capacity(room.min(MAX_REPLY_BYTES));
    let mut bytes = 0;
    for check in request.checks {
        // Past the reply budget, a check is answered without being run.
        bytes += 4 + if bytes < MAX_REPLY_BYTES {
            answer(check, &mut reply)
        } else {
            reply.push(&over_budget())
        };
    }
    Ok(reply)
}

/// The room set aside in a reply for a check's result: what a small board's result
/// takes (a larger board's grows the buffer).
fn result_bytes(check: &Check) -> usize {
    match check.check {
        Some(Kind::ListOthelloMoves(_)) => 512,
        Some(Kind::JudgeTicTacToe(_)) => 48,
        _ => 32,
    }
}

/// Writes into `out` the answer to one check, as its own RPC gives it, or its
/// violations; returns the result's length, as [`CheckBatchReply::push`] does.
fn answer(check: Check, out: &mut CheckBatchReply) -> usize {
    // The `result` field of each kind's answer in `CheckResult`.
    let result = match check.check {
        Some(Kind::CheckOthelloMove(request)) => written(othello::check_move(request), 2, out),
        Some(Kind::ListOthelloMoves(request)) => written(othello::list_moves(request), 3, out),
        Some(Kind::CheckConnectFour(request)) => written(connect_four::check(request), 4, out),
        Some(Kind::JudgeTicTacToe(request)) => written(tic_tac_toe::judge(&request), 5, out),
        None => Err(CheckResult {
            invalid: ServiceError::InvalidRequest {
                message: "Check",
                violations: vec![Violation::new(
                    "check",
                    "sets no check: set one of check_othello_move, list_othello_moves, \
                     check_connect_four, judge_tic_tac_toe",
                )],
            }
            .into_field_violations("check"),
            result: None,
        }),
    };
    result.unwrap_or_else(|refused| out.push(&refused))
}

/// Writes a check's answer into `out` as the `result` field `tag` of a `CheckResult`,
/// and returns its length; or the check's violations, unwritten.
fn written<C: Checked>(
    answer: Result<C, ServiceError>,
    tag: u32,
    out: &mut CheckBatchReply,
) -> Result<usize, CheckResult> {
    match answer {
        Ok(answer) => Ok(out.push_result(tag, |w| answer.write(w))),
        Err(error) => Err(CheckResult {
            invalid: error.into_field_violations("check"),
            result: None,
        }),
    }
}

/// The answer to a check past the reply budget.
fn over_budget() -> CheckResult {
    CheckResult {
        invalid: vec![crate::proto::FieldViolation {
            field: "check".to_owned(),
            description: "not run: the reply is full; send it again in another call".to_owned(),
        }],
        result: None,
    }
}
