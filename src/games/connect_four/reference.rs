//! A deliberately naive Connect Four (hidden, for the project's own tests and fuzz
//! targets): the winning run through a piece found on the whole board lines through it,
//! built cell by cell, and a live referee that rescans those lines after every drop and
//! writes its replies as the wire's, so that they can be compared field by field. It
//! calls none of the rules it checks.

use crate::kit::grid::Cell;
use crate::kit::naive::{naive_run, Expected};
use crate::games::fixture::naive_ending;
use crate::proto::{Board, Cell as WireCell, PlayConnectFourResponse, Verdict};

/// The winning run a piece `player` at `target` makes (the cell counted as `player`'s
/// whatever it holds): the whole run of `player` through it on the first of the four
/// lines (horizontal, vertical, down-right, down-left) at least `run_length` long.
/// `None` when there is none, or when `target` is off the board.
pub fn naive_connect_four(
    rows: &[String],
    target: Cell,
    player: u8,
    run_length: usize,
) -> Option<Vec<Cell>> {
    (0..4)
        .filter_map(|line| naive_run(rows, target, player, line))
        .find(|run| run.len() >= run_length)
}

fn wire(cell: Cell) -> WireCell {
    WireCell {
        row: cell.row as i32,
        col: cell.col as i32,
    }
}


/// A naive live Connect Four referee: every line through a dropped piece rebuilt on the
/// whole board.
#[derive(Debug, Clone)]
pub struct NaiveConnectFour {
    /// The board, as rows of `0` (empty), `1` and `2`, row 0 the top.
    pub rows: Vec<Vec<u8>>,
    /// The pieces in a row that win.
    pub run_length: usize,
    /// The player to move, as its board byte (`1` or `2`).
    pub to_move: u8,
    /// Moves applied so far.
    pub moves: usize,
    /// How the game ended; `None` while it goes on.
    pub over: Option<Verdict>,
}

impl NaiveConnectFour {
    /// An empty board of `h` rows and `w` columns, `run_length` to win, player 1 first.
    pub fn new(h: usize, w: usize, run_length: usize) -> Self {
        Self {
            rows: vec![vec![b'0'; w]; h],
            run_length,
            to_move: b'1',
            moves: 0,
            over: None,
        }
    }

    fn text(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|r| r.iter().map(|&b| char::from(b)).collect())
            .collect()
    }

    /// The reply after a message; `placed` and `run` only for an applied drop.
    pub fn reply(&self, placed: Option<Cell>, run: Vec<Cell>) -> PlayConnectFourResponse {
        PlayConnectFourResponse {
            ending: naive_ending(self.over.unwrap_or(Verdict::Pending)),
            verdict: self.over.unwrap_or(Verdict::Pending).into(),
            board: Some(Board::from_rows(self.text())),
            placed: placed.map(wire),
            run: run.into_iter().map(wire).collect(),
            to_move: if self.over.is_some() {
                0
            } else {
                i32::from(self.to_move - b'0')
            },
            moves_played: self.moves as i32,
            rejected: String::new(),
            ..Default::default()
        }
    }

    /// A drop into column `col`: what the game says of it, applied when legal.
    pub fn drop_piece(&mut self, col: i64) -> Expected<PlayConnectFourResponse> {
        let (h, w) = (self.rows.len(), self.rows.first().map_or(0, Vec::len));
        let rejected = |game: &Self, word| Expected {
            reply: game.reply(None, Vec::new()),
            rejected: Some(word),
        };
        if col < 0 || col >= w as i64 {
            return rejected(self, "outside");
        }
        if self.over.is_some() {
            return rejected(self, "over");
        }
        let c = col as usize;
        let empty = |r: usize| self.rows.get(r).and_then(|row| row.get(c)) == Some(&b'0');
        let Some(r) = (0..h).rev().find(|&r| empty(r)) else {
            return rejected(self, "full");
        };
        let player = self.to_move;
        if let Some(cell) = self.rows.get_mut(r).and_then(|row| row.get_mut(c)) {
            *cell = player;
        }
        self.moves += 1;
        let target = Cell::new(r, c);
        // Every line through the target, whole board, in the engine's order.
        let run = naive_connect_four(&self.text(), target, player, self.run_length)
            .unwrap_or_default();
        if !run.is_empty() {
            self.over = Some(if player == b'1' {
                Verdict::AWins
            } else {
                Verdict::BWins
            });
        } else if self.rows.iter().all(|r| r.iter().all(|&b| b != b'0')) {
            self.over = Some(Verdict::Draw);
        } else {
            self.to_move = if player == b'1' { b'2' } else { b'1' };
        }
        Expected {
            reply: self.reply(Some(target), run),
            rejected: None,
        }
    }
}
