//! Naive referees of live Othello and Connect Four games: whole-board rescans after
//! every message, written as wire replies so that they can be compared field by field.

use arbiter::games::othello::Color;
use arbiter::kit::grid::Cell;
use arbiter::proto::{
    Board, Cell as WireCell, Ending, PlayConnectFourResponse, PlayOthelloResponse, Verdict,
};

use super::{naive_line, naive_othello_flips};

fn wire(cell: Cell) -> WireCell {
    WireCell {
        row: cell.row as i32,
        col: cell.col as i32,
    }
}

/// What a naive referee says of one message: the expected reply, and the word its
/// `rejected` text must contain (`None` when the message is applied).
pub struct Expected<R> {
    pub reply: R,
    pub rejected: Option<&'static str>,
}

/// A naive live Othello referee.
pub struct NaiveOthello {
    pub rows: Vec<String>,
    pub to_move: Option<Color>,
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
            for c in 0..self.rows[0].len() {
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

    /// The reply after a message.
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
            ending: ending(verdict),
            ..Default::default()
        }
    }

    /// A move at (row, col).
    pub fn play(&mut self, row: i64, col: i64) -> Expected<PlayOthelloResponse> {
        let (h, w) = (self.rows.len() as i64, self.rows[0].len() as i64);
        let reject = |word| Some(word);
        let why = if row < 0 || col < 0 || row >= h || col >= w {
            reject("outside")
        } else if self.to_move.is_none() {
            reject("over")
        } else if self.rows[row as usize].as_bytes()[col as usize] != b'.' {
            reject("taken")
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
            grid[cell.row][cell.col] = color.byte();
        }
        self.rows = grid
            .into_iter()
            .map(|r| String::from_utf8(r).unwrap())
            .collect();
        self.moves += 1;
        let passed = self.resolve(color.opponent());
        Expected {
            reply: self.reply(flips, passed),
            rejected: None,
        }
    }
}

/// A naive live Connect Four referee.
pub struct NaiveConnectFour {
    pub rows: Vec<Vec<u8>>,
    pub run_length: usize,
    pub to_move: u8,
    pub moves: usize,
    pub over: Option<Verdict>,
}

impl NaiveConnectFour {
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
            .map(|r| String::from_utf8(r.clone()).unwrap())
            .collect()
    }

    /// The reply after a message; `placed` and `run` only for an applied drop.
    pub fn reply(&self, placed: Option<Cell>, run: Vec<Cell>) -> PlayConnectFourResponse {
        PlayConnectFourResponse {
            ending: ending(self.over.unwrap_or(Verdict::Pending)),
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

    /// A drop into column `col`.
    pub fn drop_piece(&mut self, col: i64) -> Expected<PlayConnectFourResponse> {
        let (h, w) = (self.rows.len(), self.rows[0].len());
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
        let Some(r) = (0..h).rev().find(|&r| self.rows[r][c] == b'0') else {
            return rejected(self, "full");
        };
        let player = self.to_move;
        self.rows[r][c] = player;
        self.moves += 1;
        let target = Cell::new(r, c);
        // Every line through the target, whole board, in the engine's order.
        let text = self.text();
        let mut run = Vec::new();
        for line in 0..4 {
            let cells = naive_line(h, w, target, line);
            let pos = cells.iter().position(|&x| x == target).unwrap();
            let owned = |i: usize| text[cells[i].row].as_bytes()[cells[i].col] == player;
            let (mut start, mut end) = (pos, pos);
            while start > 0 && owned(start - 1) {
                start -= 1;
            }
            while end + 1 < cells.len() && owned(end + 1) {
                end += 1;
            }
            if end - start + 1 >= self.run_length {
                run = cells[start..=end].to_vec();
                break;
            }
        }
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

/// The `ending` of a reply whose verdict is `verdict`, in a game without a clock: the
/// board decided it once it is not pending.
pub fn ending(verdict: Verdict) -> i32 {
    match verdict {
        Verdict::Pending | Verdict::Unspecified => Ending::Unspecified,
        _ => Ending::Board,
    }
    .into()
}
