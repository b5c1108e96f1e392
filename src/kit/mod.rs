//! What the games share, below them, as pure Rust with no transport in sight: no module
//! here names a game.
//!
//! [`grid`] (the rectangular board, its cells, and the one check of untrusted
//! coordinates), [`rows`] (a board's rows as they arrive, before they are checked),
//! [`color`] (black and white) and [`clock`] (a game clock, told the instants things
//! happen at); and, hidden, `naive` (what the games' naive references share, for the
//! tests and fuzz targets). What the games' wire glue shares is in `crate::glue`.

pub mod clock;
pub mod color;
pub mod grid;
#[doc(hidden)]
pub mod naive;
pub mod rows;
