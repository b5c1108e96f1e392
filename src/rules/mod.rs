//! The rules of the games Arbiter rules on, as pure Rust with no transport in sight.
//!
//! Each game has its own module; [`grid`] holds the rectangular board they share, and
//! [`rows`] a board's rows as they arrive, before they are checked. `fixtures` (hidden)
//! holds the boards and games the tests and benchmarks share.

pub mod clock;
#[doc(hidden)]
pub mod fixtures;
pub mod grid;
pub mod rows;

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

games! {
    TicTacToe: tic_tac_toe, "tic_tac_toe";
    Othello: othello, "othello";
    ConnectFour: connect_four, "connect_four";
    Gomoku: gomoku, "gomoku";
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
