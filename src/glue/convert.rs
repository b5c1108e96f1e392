//! Rule-engine answers written as wire fields, for every game's replies.

use crate::proto;

/// The wire verdict of a game won by the side that moved first (A: X, Black, player 1),
/// or else by the other (B).
pub(crate) fn won(by_first: bool) -> proto::Verdict {
    if by_first {
        proto::Verdict::AWins
    } else {
        proto::Verdict::BWins
    }
}
