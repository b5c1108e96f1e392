//! The rules of the games Arbiter rules on, as pure Rust with no transport in sight.
//!
//! Each game has its own module; [`grid`] holds the rectangular board they share, and
//! [`rows`] a board's rows as they arrive, before they are checked. `fixtures` (hidden)
//! holds the boards and games the tests and benchmarks share.

pub mod connect_four;
#[doc(hidden)]
pub mod fixtures;
pub mod grid;
pub mod othello;
pub mod rows;
pub mod tic_tac_toe;
