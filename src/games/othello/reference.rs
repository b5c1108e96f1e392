//! A deliberately naive Othello (hidden, for the project's own tests and fuzz targets):
//! the discs a move flips found by trying every other cell of the board as the closing
//! disc, and a live referee that rescans the whole board after every message and writes
//! its replies as the wire's, so that they can be compared field by field. It calls
//! none of the rules it checks.

use std::collections::BTreeSet;

use crate::kit::color::Color;
use crate::kit::grid::Cell;
use crate::kit::naive::{at, width, Expected};
use crate::games::fixture::naive_ending;
use crate::proto::{Board, Cell as WireCell, PlayOthelloResponse, Verdict};

/// The discs `color` would flip by playing the empty cell `target`, found without
/// walking: every `color` disc on the board aligned with `target` (same row, column,
/// r - c or r + c) closes a line when every cell strictly between them holds the
/// opponent, and those cells are flipped. Empty when `target` is occupied or off the
/// board.
pub fn naive_othello_flips(rows: &[String], target: Cell, color: Color) -> BTreeSet<Cell> {
    let (h, w) = (rows.len(), width(rows));
    let own = color.byte();
    let other = color.opponent().byte();
    let mut flips = BTreeSet::new();
    if at(rows, target.row, target.col) != b'.' {
        return flips;
    }
    // Try every other cell as the closing disc and check the cells strictly between.
    for r in 0..h {
        for c in 0..w {
            let (dr, dc) = (r as i64 - target.row as i64, c as i64 - target.col as i64);
            let aligned = (dr != 0 || dc != 0) && (dr == 0 || dc == 0 || dr.abs() == dc.abs());
            if !aligned || at(rows, r, c) != own {
                continue;
            }
            let steps = dr.abs().max(dc.abs());
            if steps < 2 {
                continue;
            }
            let between: Vec<Cell> = (1..steps)
                .map(|i| {
                    Cell::new(
                        (target.row as i64 + dr.signum() * i) as usize,
                        (target.col as i64 + dc.signum() * i) as usize,
                    )
                })
                .collect();
            if between
                .iter()
                .all(|cell| at(rows, cell.row, cell.col) == other)
            {
                flips.extend(between);
            }
        }
    }
    flips
}

fn wire(cell: Cell) -> WireCell {
    WireCell {
        row: cell.row as i32,
        col: cell.col as i32,
    }
}


/// A naive live Othello referee: the whole board rescanned after every message.
#[derive(Debug, Clone)]
pub struct NaiveOthello {
    /// The board, as rows of `.`, `B` and `W`.
    pub rows: Vec<String>,
    /// The side to move; `None` once the game is over.
    pub to_move: Option<Color>,
    /// Moves applied so far.
    pub moves: usize,
}

impl NaiveOthello {
    /// The game from `rows` with `to_move` due, and whether it passed at once.
    pub fn new(rows: Vec<String>, to_move: Color) -> (Self, bool) {
        let mut game = Self {
            rows,
            to_move: None,
            moves: 0,
        };
        let passed = game.resolve(to_move);
        (game, passed)
    }

    fn legal(&self, color: Color) -> Vec<Cell> {
        let mut cells = Vec::new();
        for r in 0..self.rows.len() {
            for c in 0..width(&self.rows) {
                if !naive_othello_flips(&self.rows, Cell::new(r, c), color).is_empty() {
                    cells.push(Cell::new(r, c));
                }
            }
        }
        cells
    }

    fn resolve(&mut self, due: Color) -> bool {
        if !self.legal(due).is_empty() {
            self.to_move = Some(due);
            false
        } else if !self.legal(due.opponent()).is_empty() {
            self.to_move = Some(due.opponent());
            true
        } else {
            self.to_move = None;
            false
        }
    }

    /// Where the side to move may play (empty once the game is over).
    pub fn legal_cells(&self) -> Vec<Cell> {
        self.to_move.map(|c| self.legal(c)).unwrap_or_default()
    }

    fn count(&self, byte: u8) -> i32 {
        self.rows
            .iter()
            .map(|r| r.bytes().filter(|&b| b == byte).count() as i32)
            .sum()
    }

    /// The reply after a message: `flips` those of the move it applied (if any), and
    /// whether the side due passed after it.
    pub fn reply(&self, flips: Vec<Cell>, passed: bool) -> PlayOthelloResponse {
        let (black, white) = (self.count(b'B'), self.count(b'W'));
        let verdict = match (self.to_move, black.cmp(&white)) {
            (Some(_), _) => Verdict::Pending,
            (None, std::cmp::Ordering::Greater) => Verdict::AWins,
            (None, std::cmp::Ordering::Less) => Verdict::BWins,
            (None, std::cmp::Ordering::Equal) => Verdict::Draw,
        };
        PlayOthelloResponse {
            verdict: verdict.into(),
            board: Some(Board::from_rows(self.rows.clone())),
            flips: flips.into_iter().map(wire).collect(),
            to_move: self
                .to_move
                .map(|c| char::from(c.byte()).to_string())
                .unwrap_or_default(),
            passed,
            legal_moves: self.legal_cells().into_iter().map(wire).collect(),
            black_discs: black,
            white_discs: white,
            moves_played: self.moves as i32,
            rejected: String::new(),
            ending: naive_ending(verdict),
            ..Default::default()
        }
    }

    /// A move at (row, col): what the game says of it, applied when legal.
    pub fn play(&mut self, row: i64, col: i64) -> Expected<PlayOthelloResponse> {
        let (h, w) = (self.rows.len() as i64, width(&self.rows) as i64);
        let why = if row < 0 || col < 0 || row >= h || col >= w {
            Some("outside")
        } else if self.to_move.is_none() {
            Some("over")
        } else if at(&self.rows, row as usize, col as usize) != b'.' {
            Some("taken")
        } else {
            None
        };
        let color = match (why, self.to_move) {
            (None, Some(color)) => color,
            _ => {
                return Expected {
                    reply: self.reply(Vec::new(), false),
                    rejected: why,
                }
            }
        };
        let target = Cell::new(row as usize, col as usize);
        let flips: Vec<Cell> = naive_othello_flips(&self.rows, target, color)
            .into_iter()
            .collect();
        if flips.is_empty() {
            return Expected {
                reply: self.reply(Vec::new(), false),
                rejected: Some("turns over no disc"),
            };
        }
        let mut grid: Vec<Vec<u8>> = self.rows.iter().map(|r| r.as_bytes().to_vec()).collect();
        for cell in flips.iter().chain(std::iter::once(&target)) {
            if let Some(byte) = grid.get_mut(cell.row).and_then(|r| r.get_mut(cell.col)) {
                *byte = color.byte();
            }
        }
        // ASCII bytes put in place of ASCII bytes: every row is still UTF-8 as it was.
        self.rows = grid
            .iter()
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect();
        self.moves += 1;
        let passed = self.resolve(color.opponent());
        Expected {
            reply: self.reply(flips, passed),
            rejected: None,
        }
    }
}
