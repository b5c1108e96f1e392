//! The rules of the games Arbiter rules on, as pure Rust with no transport in sight.
//!
//! Each game has its own module; [`grid`] holds the rectangular board they share.

pub mod connect_four;
pub mod grid;
pub mod othello;
pub mod tic_tac_toe;
