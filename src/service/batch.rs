//! CheckBatch: many one-shot checks in one call, each answered by its own game's module
//! exactly as its own RPC answers it (a [`BatchCheck`](crate::glue::batch::BatchCheck)),
//! a malformed one in place (which
//! module answers which check is registered in `registration.rs`).
//!
//! The checks are read where they lie in the request
//! ([`CheckRef`](crate::proto::requests::CheckRef)), and the games'
//! boards are parsed, one after the other, into one buffer that each board gives back
//! once its check is answered (a refused check's board does not: the next allocates).

use crate::glue::batch::Scratch;
use crate::glue::budget::MAX_REPLY_BYTES;
use crate::glue::error::{write_violation, ServiceError};
use crate::glue::fields;
use crate::proto::replies::CheckBatchReply;
use crate::proto::requests::CheckBatchChecks;
use crate::proto::wire::fields as wire;
use crate::service::registration;

/// The most checks one CheckBatch call may carry.
pub const MAX_CHECKS: usize = 10_000;

/// Answers a CheckBatch request: one result per check, in order. Only a batch of more
/// than [`MAX_CHECKS`] checks fails as a whole; once the reply holds
/// [`MAX_REPLY_BYTES`], the checks left are answered without being run. Each result is
/// written into the reply as soon as it is known.
pub(crate) fn check_batch(request: &CheckBatchChecks) -> Result<CheckBatchReply, ServiceError> {
    let count = request.len();
    fields::at_most("CheckBatchRequest", "checks", count, MAX_CHECKS, "call")?;
    let room = request
        .iter()
        .map(registration::result_bytes)
        .sum::<usize>();
    let mut reply = CheckBatchReply::with_capacity(room.min(MAX_REPLY_BYTES));
    let mut scratch = Scratch::default();
    let mut bytes = 0;
    for check in request.iter() {
        // Past the reply budget, a check is answered without being run.
        bytes += 4 + if bytes < MAX_REPLY_BYTES {
            registration::answer(check, &mut reply, &mut scratch)
        } else {
            over_budget(&mut reply)
        };
    }
    Ok(reply)
}

/// Writes the answer to a check past the reply budget into `out`; returns its length.
fn over_budget(out: &mut CheckBatchReply) -> usize {
    out.push_invalid(|w| {
        write_violation(
            wire::check_result::INVALID,
            "check",
            "not run: the reply is full; send it again in another call",
            w,
        );
    })
}

#[cfg(test)]
mod limits {
    /// The request reader sizes a bulk list for at most one more item than the service
    /// takes: a CheckBatch or PlayMany message with every item allowed never grows it,
    /// and no message makes the server reserve room for more.
    #[test]
    fn bulk_lists_reserve_room_for_every_item_allowed() {
        let most = super::MAX_CHECKS.max(crate::service::play::many::MAX_ACTIONS);
        assert_eq!(crate::proto::requests::MAX_RESERVED, most + 1);
    }
}
