//! One kind of CheckBatch check ([`BatchCheck`]), as its game's `wire` module reads,
//! validates and answers it, and the buffers one check after another uses ([`Scratch`]).

use crate::kit::grid::Cell;
use crate::kit::rows::RowsView;
use crate::proto::replies::CheckBatchReply;
use crate::proto::requests::CheckRef;
use crate::proto::wire::Len;

use super::answer::Answer;
use super::error::ServiceError;
use super::fields::InPlace;

/// One kind of CheckBatch check, as its game's module reads, validates and answers it:
/// its fields taken from the [`CheckRef`] by its request's field constants, and the
/// answer its own RPC gives written into the reply.
pub(crate) trait BatchCheck {
    /// Its field in `Check`'s oneof.
    const CHECK: Len;
    /// Its answer's field in `CheckResult`'s oneof.
    const RESULT: Len;
    /// The room to set aside in a reply for its result: what a small board's result
    /// takes (a larger board's grows the buffer).
    const RESULT_BYTES: usize;

    /// Writes into `out` the answer to `check` (a check of this kind), as its own RPC
    /// gives it, taking buffers from `scratch` and giving them back; returns the
    /// result's length ([`write`]). A check its RPC refuses is its error.
    fn answer(
        check: CheckRef<'_>,
        scratch: &mut Scratch,
        out: &mut CheckBatchReply,
    ) -> Result<usize, ServiceError>;

    /// Checks of this kind that, between them, write every field of its answer, and a
    /// malformed one (for `every_field_of_every_written_reply_is_written`, and the
    /// tests outside the crate through `arbiter::check_corpus`).
    fn corpus() -> Vec<crate::proto::check::Check>;
}

/// The buffers one check after another of a CheckBatch uses, each given back by the
/// check that took it once answered (a refused check's are dropped, and the next check
/// allocates).
#[derive(Default)]
pub(crate) struct Scratch {
    /// A board's cells.
    pub(crate) cells: Vec<u8>,
    /// A list of cells of an answer (an Othello move's flips).
    pub(crate) marks: Vec<Cell>,
    /// What a game keeps of its last check for the next (a chess position parsed, for
    /// the next check from the same FEN), which only that game's module reads.
    memo: Option<Box<dyn std::any::Any + Send>>,
}

impl Scratch {
    /// The game's memo of type `T`, begun empty if the batch's last memo was of another
    /// type (another game's, or none); `None` only if it cannot be had, when the game
    /// does without.
    pub(crate) fn memo<T: Default + Send + 'static>(&mut self) -> Option<&mut T> {
        if !self.memo.as_ref().is_some_and(|memo| memo.is::<T>()) {
            self.memo = Some(Box::<T>::default());
        }
        self.memo.as_mut()?.downcast_mut()
    }

    /// `rows`, a board read in place, to be parsed into the scratch cells (taken: the
    /// board gives them back).
    pub(crate) fn board<'a>(&mut self, rows: Option<RowsView<'a>>) -> Option<InPlace<'a>> {
        rows.map(|rows| InPlace {
            rows,
            cells: std::mem::take(&mut self.cells),
        })
    }
}

/// Writes a check's answer into `out` as the `result` field `field` of a `CheckResult`,
/// and returns its length.
pub(crate) fn write<A: Answer>(answer: &A, field: Len, out: &mut CheckBatchReply) -> usize {
    out.push_result(field, |w| answer.write(w))
}
