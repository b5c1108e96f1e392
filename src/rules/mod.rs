//! The rules of the games Arbiter rules on, as pure Rust with no transport in sight.
//!
//! Each game has its own module; [`grid`] holds the rectangular board they share, and
//! [`rows`] a board's rows as they arrive, before they are checked. `fixtures` (hidden)
//! holds the boards and games the tests and benchmarks share.

pub mod clock;
pub mod connect_four;
#[doc(hidden)]
pub mod fixtures;
pub mod grid;
pub mod othello;
pub mod rows;
pub mod tic_tac_toe;

/// The games Arbiter rules on, as the metrics' `game` label names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameKind {
    /// Tic-Tac-Toe ([`tic_tac_toe`]).
    TicTacToe,
    /// Othello ([`othello`]).
    Othello,
    /// Connect Four ([`connect_four`]).
    ConnectFour,
}

impl GameKind {
    /// Every game, for registering metrics.
    pub const ALL: [Self; 3] = [Self::TicTacToe, Self::Othello, Self::ConnectFour];

    /// Its place in [`GameKind::ALL`], which lists the games in their order here.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The `game` label of the metrics.
    pub const fn label(self) -> &'static str {
        match self {
            Self::TicTacToe => "tic_tac_toe",
            Self::Othello => "othello",
            Self::ConnectFour => "connect_four",
        }
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
        // A game added to the enum and not to `ALL` (nor here) fails: the match names
        // every game, and `ALL` must be as long.
        let games = |game: GameKind| match game {
            GameKind::TicTacToe | GameKind::Othello | GameKind::ConnectFour => 3,
        };
        assert_eq!(GameKind::ALL.len(), games(GameKind::TicTacToe));
    }
}
