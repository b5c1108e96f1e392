//! Rule-engine answers written as wire messages.

use crate::proto;
use crate::rules::grid::Cell;
use crate::rules::tic_tac_toe::{Game, Player, Verdict};

/// A board cell as a wire `Cell`.
pub(crate) fn cell(cell: Cell) -> proto::Cell {
    // Boards are at most 100x100 (and Tic-Tac-Toe 3x3), so coordinates fit an i32.
    proto::Cell {
        row: cell.row as i32,
        col: cell.col as i32,
    }
}

/// Board cells as wire `Cell`s, in the same order.
pub(crate) fn cells(cells: &[Cell]) -> Vec<proto::Cell> {
    cells.iter().copied().map(cell).collect()
}

/// A Tic-Tac-Toe game's verdict, winning line and board, as wire fields.
pub struct TicTacToeState {
    /// The verdict.
    pub verdict: proto::Verdict,
    /// The winning line's cells; empty unless won.
    pub line: Vec<proto::Cell>,
    /// The board: `X` for A, `O` for B, `.` empty.
    pub board: proto::Board,
    /// Moves applied so far.
    pub moves_played: i32,
}

impl From<&Game> for TicTacToeState {
    fn from(game: &Game) -> Self {
        let (verdict, line) = match game.verdict() {
            Verdict::Pending => (proto::Verdict::Pending, Vec::new()),
            Verdict::Draw => (proto::Verdict::Draw, Vec::new()),
            Verdict::Won { player, line } => (
                match player {
                    Player::A => proto::Verdict::AWins,
                    Player::B => proto::Verdict::BWins,
                },
                cells(&line),
            ),
        };
        Self {
            verdict,
            line,
            board: proto::Board::from_rows(game.row_bytes()),
            // At most nine moves are ever applied.
            moves_played: game.moves_played() as i32,
        }
    }
}

impl From<TicTacToeState> for proto::JudgeTicTacToeResponse {
    fn from(state: TicTacToeState) -> Self {
        Self {
            verdict: state.verdict.into(),
            line: state.line,
            board: Some(state.board),
            moves_played: state.moves_played,
        }
    }
}

impl TicTacToeState {
    /// The reply to one move of a live game; `rejected` is empty when it was applied.
    pub fn into_play_response(self, rejected: String) -> proto::PlayTicTacToeResponse {
        proto::PlayTicTacToeResponse {
            verdict: self.verdict.into(),
            line: self.line,
            board: Some(self.board),
            moves_played: self.moves_played,
            rejected,
        }
    }
}
