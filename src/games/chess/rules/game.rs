//! A game of chess from a position: its moves, its repetitions counted from its first
//! position, how it ends (by the rules, by a claim, or on time), and the draws its side
//! to move may claim.

use std::collections::HashMap;

use super::{Key, Move, MoveError, Player, Position, Termination};
use crate::kit::clock::Turns;

/// The most plies one game takes: a judged game's moves and a setup's history.
pub const MAX_PLIES: usize = 20_000;

/// How a game stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It goes on.
    Pending,
    /// `winner` won.
    Won {
        /// The side that won.
        winner: Player,
        /// How.
        by: Ending,
    },
    /// A draw.
    Drawn {
        /// How.
        by: Ending,
    },
}

impl Outcome {
    /// Whether the game has ended.
    pub fn is_over(self) -> bool {
        self != Self::Pending
    }

    /// How it ended by the rules or by a claim; `None` while it goes on or when it
    /// ended on time.
    pub fn termination(self) -> Option<Termination> {
        match self {
            Self::Won { by, .. } | Self::Drawn { by } => match by {
                Ending::Rules(termination) | Ending::Claim(termination) => Some(termination),
                Ending::Time => None,
            },
            Self::Pending => None,
        }
    }
}

/// How a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// By the rules, on the board.
    Rules(Termination),
    /// By the side to move's claim of a draw.
    Claim(Termination),
    /// A side ran out of time.
    Time,
}

/// Why a claim of a draw does not hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimError {
    /// The game is over.
    Over,
    /// Neither threefold repetition nor the fifty-move rule holds.
    Nothing,
}

impl std::fmt::Display for ClaimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Over => "the game is over",
            Self::Nothing => {
                "no draw can be claimed: the position has not stood three times and the \
                 halfmove clock is under 100"
            }
        })
    }
}

/// A game of chess.
#[derive(Debug, Clone)]
pub struct Game {
    position: Position,
    /// How often each position has stood since the game's first (those since the last
    /// capture or pawn move: no earlier one can stand again).
    seen: HashMap<Key, u32, foldhash::fast::FixedState>,
    /// How often the position now has stood, this time included.
    stood: u32,
    plies: usize,
    outcome: Outcome,
    /// The last move applied, and its SAN and UCI.
    last: Option<(Move, String, String)>,
    /// A live game's replies list the side to move's legal moves (its setup's choice).
    pub(crate) lists_moves: bool,
}

impl Game {
    /// A game from `position` (which may itself end the game).
    pub fn new(position: Position) -> Self {
        let mut seen = HashMap::with_hasher(foldhash::fast::FixedState::default());
        seen.insert(position.key(), 1);
        let outcome = match position.termination() {
            Some(Termination::Checkmate) => Outcome::Won {
                winner: position.to_move().opponent(),
                by: Ending::Rules(Termination::Checkmate),
            },
            Some(termination) => Outcome::Drawn {
                by: Ending::Rules(termination),
            },
            None => Outcome::Pending,
        };
        Self {
            position,
            seen,
            stood: 1,
            plies: 0,
            outcome,
            last: None,
            lists_moves: false,
        }
    }

    /// A game from the standard start.
    pub fn standard() -> Self {
        Self::new(Position::standard())
    }

    /// The position now.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// How the game stands.
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// Plies played since the game's first position.
    pub fn plies(&self) -> usize {
        self.plies
    }

    /// The last move applied, as UCI and SAN.
    pub fn last_move(&self) -> Option<(&str, &str)> {
        self.last
            .as_ref()
            .map(|(_, uci, san)| (uci.as_str(), san.as_str()))
    }

    /// Plays the move `text` names (UCI or SAN): its SAN, or why it was not applied
    /// (malformed, not legal, or the game over).
    pub fn play(&mut self, text: &str) -> Result<&str, MoveError> {
        if self.outcome.is_over() {
            return Err(MoveError::Illegal(format!(
                "{} is not legal: the game is over",
                super::notation::shown(text)
            )));
        }
        let legal = self.position.legal_moves();
        let mv = self.position.parse_move_among(text, &legal)?;
        let after = self.position.play(mv);
        let has_move = after.has_legal_move();
        let san = self.position.san_after(mv, &legal, &after, || has_move);
        let uci = self.position.uci(mv);
        self.apply(mv, after, has_move, uci, san);
        Ok(self.last.as_ref().map_or("", |(_, _, san)| san.as_str()))
    }

    /// Applies the legal move `mv`, which leads to `after` (whose side to move has a
    /// legal move when `has_move`), and whose UCI and SAN are given.
    fn apply(&mut self, mv: Move, after: Position, has_move: bool, uci: String, san: String) {
        self.position = after;
        self.plies += 1;
        if self.position.halfmove_clock() == 0 {
            // A capture or a pawn move: no position before it can stand again, so the
            // count holds at most the 150 plies the seventy-five-move rule allows.
            self.seen.clear();
        }
        let count = self.seen.entry(self.position.key()).or_insert(0);
        *count += 1;
        let count = *count;
        self.stood = count;
        self.last = Some((mv, uci, san));
        let termination = self
            .position
            .termination_with(has_move)
            .or_else(|| (count >= 5).then_some(Termination::FivefoldRepetition));
        self.outcome = match termination {
            Some(Termination::Checkmate) => Outcome::Won {
                winner: self.position.to_move().opponent(),
                by: Ending::Rules(Termination::Checkmate),
            },
            Some(termination) => Outcome::Drawn {
                by: Ending::Rules(termination),
            },
            None => Outcome::Pending,
        };
    }

    /// The draw the side to move may claim now: threefold repetition (when both hold)
    /// or the fifty-move rule; `None` when neither holds or the game is over.
    pub fn draw_claim(&self) -> Option<Termination> {
        if self.outcome.is_over() {
            return None;
        }
        if self.stood >= 3 {
            Some(Termination::ThreefoldRepetition)
        } else if self.position.halfmove_clock() >= 100 {
            Some(Termination::FiftyMoves)
        } else {
            None
        }
    }

    /// The side to move claims a draw: the game ends drawn by it, or why it does not.
    pub fn claim_draw(&mut self) -> Result<Termination, ClaimError> {
        if self.outcome.is_over() {
            return Err(ClaimError::Over);
        }
        let termination = self.draw_claim().ok_or(ClaimError::Nothing)?;
        self.outcome = Outcome::Drawn {
            by: Ending::Claim(termination),
        };
        Ok(termination)
    }
}

impl Turns for Game {
    type Player = Player;

    fn player_to_move(&self) -> Option<Player> {
        (!self.outcome.is_over()).then(|| self.position.to_move())
    }

    /// `loser` ran out of time: the other side wins, unless it could not checkmate by
    /// any series of legal moves, which makes it a draw.
    fn forfeit_player(&mut self, loser: Player) {
        let winner = loser.opponent();
        self.outcome = if self.position.cannot_checkmate(winner) {
            Outcome::Drawn { by: Ending::Time }
        } else {
            Outcome::Won {
                winner,
                by: Ending::Time,
            }
        };
    }
}
