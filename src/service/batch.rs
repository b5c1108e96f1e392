//! CheckBatch: many one-shot checks in one call, each answered by its own game's module
//! exactly as its own RPC answers it, a malformed one in place.
//!
//! The checks are read where they lie in the request ([`CheckRef`]), and the games'
//! boards are parsed, one after the other, into one buffer that each board gives back
//! once its check is answered (a refused check's board does not: the next allocates).

use crate::proto::replies::CheckBatchReply;
use crate::proto::requests::{CheckBatchChecks, CheckRef};
use crate::proto::wire::{fields as wire, Len};
use crate::rules::grid::Cell;
use crate::rules::rows::RowsView;

use super::answer::Answer;
use super::budget::MAX_REPLY_BYTES;
use super::error::{ServiceError, Violation};
use super::fields::{self, InPlace};
use super::{connect_four, othello, tic_tac_toe};

/// The most checks one CheckBatch call may carry.
pub const MAX_CHECKS: usize = 10_000;

/// Answers a CheckBatch request: one result per check, in order. Only a batch of more
/// than [`MAX_CHECKS`] checks fails as a whole; once the reply holds
/// [`MAX_REPLY_BYTES`], the checks left are answered without being run. Each result is
/// written into the reply as soon as it is known.
pub(crate) fn check_batch(request: &CheckBatchChecks) -> Result<CheckBatchReply, ServiceError> {
    let count = request.len();
    fields::at_most("CheckBatchRequest", "checks", count, MAX_CHECKS, "call")?;
    let room = request.iter().map(result_bytes).sum::<usize>();
    let mut reply = CheckBatchReply::with_capacity(room.min(MAX_REPLY_BYTES));
    let mut scratch = Scratch::default();
    let mut bytes = 0;
    for check in request.iter() {
        // Past the reply budget, a check is answered without being run.
        bytes += 4 + if bytes < MAX_REPLY_BYTES {
            answer(check, &mut reply, &mut scratch)
        } else {
            over_budget(&mut reply)
        };
    }
    Ok(reply)
}

/// The room set aside in a reply for a check's result: what a small board's result
/// takes (a larger board's grows the buffer).
fn result_bytes(check: CheckRef<'_>) -> usize {
    match check {
        CheckRef::ListOthelloMoves { .. } => 512,
        CheckRef::JudgeTicTacToe { .. } => 48,
        _ => 32,
    }
}

/// The buffers one check after another uses, each given back by the check that took it
/// once answered (a refused check's are dropped, and the next check allocates).
#[derive(Default)]
struct Scratch {
    /// A board's cells.
    cells: Vec<u8>,
    /// An Othello move's flips.
    flips: Vec<Cell>,
}

/// Writes into `out` the answer to one check, as its own RPC gives it, or its
/// violations; returns the result's length, as [`CheckBatchReply::push`] does. A
/// board is parsed into the scratch cells, an Othello move's flips into its flips.
fn answer(check: CheckRef<'_>, out: &mut CheckBatchReply, scratch: &mut Scratch) -> usize {
    use wire::check_result as result;
    let cells = &mut scratch.cells;
    let result = match check {
        CheckRef::OthelloMove {
            board,
            row,
            col,
            color,
        } => {
            let flips = std::mem::take(&mut scratch.flips);
            othello::check_move_of(in_place(board, cells), (row, col), color, flips).map(
                |(answer, board)| {
                    let len = write(&answer, result::CHECK_OTHELLO_MOVE, out);
                    *cells = board.into_cells();
                    scratch.flips = answer.into_flips();
                    len
                },
            )
        }
        CheckRef::ListOthelloMoves { board, color } => {
            othello::list_moves_of(in_place(board, cells), color).map(|listing| {
                let len = write(&listing, result::LIST_OTHELLO_MOVES, out);
                *cells = listing.into_cells();
                len
            })
        }
        CheckRef::ConnectFour {
            board,
            row,
            col,
            player,
            run_length,
        } => connect_four::check_of(in_place(board, cells), (row, col), player, run_length).map(
            |(answer, board)| {
                let len = write(&answer, result::CHECK_CONNECT_FOUR, out);
                *cells = board.into_cells();
                len
            },
        ),
        CheckRef::JudgeTicTacToe { moves } => tic_tac_toe::judge_moves(moves)
            .map(|judged| write(&judged, result::JUDGE_TIC_TAC_TOE, out)),
        CheckRef::Unset => Err(ServiceError::InvalidRequest {
            message: "Check",
            violations: Violation::new(
                "check",
                "sets no check: set one of check_othello_move, list_othello_moves, \
                 check_connect_four, judge_tic_tac_toe",
            )
            .into(),
        }),
    };
    result.unwrap_or_else(|error| {
        out.push_invalid(|w| error.write_field_violations("check", result::INVALID, w))
    })
}

/// A board read in place, to be parsed into `cells` (taken: the board gives it back).
fn in_place<'a>(rows: Option<RowsView<'a>>, cells: &mut Vec<u8>) -> Option<InPlace<'a>> {
    rows.map(|rows| InPlace {
        rows,
        cells: std::mem::take(cells),
    })
}

/// Writes a check's answer into `out` as the `result` field `field` of a `CheckResult`,
/// and returns its length.
fn write<A: Answer>(answer: &A, field: Len, out: &mut CheckBatchReply) -> usize {
    out.push_result(field, |w| answer.write(w))
}

/// Writes the answer to a check past the reply budget into `out`; returns its length.
fn over_budget(out: &mut CheckBatchReply) -> usize {
    out.push_invalid(|w| {
        w.message(wire::check_result::INVALID, |w| {
            w.string_of(wire::field_violation::FIELD, ["check"]);
            w.string_of(
                wire::field_violation::DESCRIPTION,
                ["not run: the reply is full; send it again in another call"],
            );
        });
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
