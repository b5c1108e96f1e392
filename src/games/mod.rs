//! The games Arbiter rules on, one folder each, listed once in `games!` below.
//!
//! A game's folder holds all of it: its rules (pure Rust with no transport in sight,
//! re-exported at the game's module), its wire glue (`wire`: its requests parsed,
//! decided by the rules and answered, unary, in a CheckBatch and live), the boards its
//! tests and benchmarks share (`fixtures`, hidden), and the deliberately naive
//! reference its rules are held to (`reference`: hidden, for the tests and fuzz
//! targets; chess's is compiled for its unit tests only). What the games share is in
//! [`crate::kit`], below them (their references' shared naive helpers in `kit::naive`);
//! the RPC handlers and the registration are above them.

/// Lists the games: for each, its module and its [`GameKind`], whose `label` names it
/// in the metrics. A game is added by its line here.
macro_rules! games {
    ($($variant:ident: $module:ident, $label:literal;)*) => {
        $(pub mod $module;)*

        /// The games Arbiter rules on, as the metrics' `game` label names them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum GameKind {
            $(
                #[doc = concat!("[`", stringify!($module), "`].")]
                $variant,
            )*
        }

        impl GameKind {
            /// Every game, in its order here, for registering metrics.
            pub const ALL: [Self; [$(Self::$variant,)*].len()] = [$(Self::$variant,)*];

            /// The `game` label of the metrics.
            pub const fn label(self) -> &'static str {
                match self {
                    $(Self::$variant => $label,)*
                }
            }
        }
    };
}

#[doc(hidden)]
pub mod fixture;

#[doc(hidden)]
pub use self::fixture::{Fixture, Seen};

games! {
    TicTacToe: tic_tac_toe, "tic_tac_toe";
    Othello: othello, "othello";
    ConnectFour: connect_four, "connect_four";
    Gomoku: gomoku, "gomoku";
    Chess: chess, "chess";
}

/// One kind of live game, as the stream machinery drives it: the translation between
/// its wire messages and its rules. Implemented by each game's `Game` (as
/// `games::othello::Game`) in its `wire` module, and sealed: name it to open a game in
/// process with [`crate::Arbiter::open_game`]. Its [`Fixture`] (in the game's
/// `fixtures`) is how the tests that hold for every game play it.
pub trait LiveGame: crate::glue::play::sealed::Play + Fixture {
    /// Which game this is.
    const KIND: GameKind;
}

/// Something to do with each kind of live game the server plays
/// ([`crate::visit_live_games`] hands it every registered one): for the fuzz targets and
/// the tests outside the crate, which then cover every game with no line of their own.
pub trait LiveGameVisitor {
    /// Does it with the game `G`.
    fn visit<G: LiveGame>(&mut self);
}

impl GameKind {
    /// Its place in [`GameKind::ALL`], which lists the games in their order here.
    pub const fn index(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests {
    use super::GameKind;

    /// `ALL` lists every game in its order of declaration, which `index` counts on.
    #[test]
    fn every_game_is_in_all_at_its_index() {
        for (index, game) in GameKind::ALL.into_iter().enumerate() {
            assert_eq!(game.index(), index, "{game:?}");
        }
        // Every label is a game's own.
        let mut labels: Vec<&str> = GameKind::ALL.iter().map(|game| game.label()).collect();
        labels.sort_unstable();
        labels.dedup();
        assert_eq!(labels.len(), GameKind::ALL.len());
    }
}
