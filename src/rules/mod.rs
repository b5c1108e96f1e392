//! The rules of the games Arbiter rules on, as pure Rust with no transport in sight.
//!
//! Each game has its own module; [`grid`] holds the rectangular board they share.

pub mod connect_four;
pub mod grid;
pub mod othello;
pub mod tic_tac_toe;

/// The games and boards the tests share (`tests/common/games.rs`), for the unit tests
/// here too.
#[cfg(test)]
#[path = "../../tests/common/games.rs"]
#[allow(unreachable_pub)]
mod shared_games;
