//! The rules of the games Arbiter rules on, as pure Rust with no transport in sight.
//!
//! Each game has its own module; [`grid`] holds the rectangular board they share, and
//! [`rows`] a board's rows as they arrive, before they are checked.

pub mod connect_four;
pub mod grid;
pub mod othello;
pub mod rows;
pub mod tic_tac_toe;

/// The games and boards the tests share (`tests/common/games.rs`), for the unit tests
/// here too.
#[cfg(test)]
#[path = "../../tests/common/games.rs"]
#[allow(unreachable_pub)]
mod shared_games;
