//! The rule engines against deliberately naive references, on many random boards.
//!
//! Each reference walks the board cell by cell and builds the lines explicitly; any
//! disagreement with the engine fails the test.

use std::collections::BTreeSet;

use arbiter::rules::connect_four::{self, ConnectFourError};
use arbiter::rules::grid::{Cell, GridError};
use arbiter::rules::othello::{self, Color};
use arbiter::rules::tic_tac_toe::{self, Game, MoveError, Player, Verdict};
use proptest::prelude::*;

/// A random rectangular board of `alphabet`'s characters: the first character (empty) is
/// drawn with probability `empty_percent`, the others evenly.
fn board(max_side: usize, alphabet: &'static [u8; 3]) -> impl Strategy<Value = Vec<String>> {
    (1..=max_side, 1..=max_side, 0u8..=100).prop_flat_map(move |(rows, cols, empty_percent)| {
        prop::collection::vec(0u8..200, rows * cols).prop_map(move |draws| {
            draws
                .chunks(cols)
                .map(|row| {
                    row.iter()
                        .map(|&d| {
                            let ch = if d / 2 < empty_percent {
                                alphabet[0]
                            } else {
                                alphabet[1 + usize::from(d % 2)]
                            };
                            char::from(ch)
                        })
                        .collect()
                })
                .collect()
        })
    })
}

fn at(rows: &[String], r: usize, c: usize) -> u8 {
    rows[r].as_bytes()[c]
}

/// Every cell on the same line as `target` along one of the 8 Othello directions, as
/// whole board lines: cells (r, c) that share the row, the column, r - c or r + c.
fn naive_othello_flips(rows: &[String], target: Cell, color: Color) -> BTreeSet<Cell> {
    let (h, w) = (rows.len(), rows[0].len());
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

/// The cells of the whole board line through `target` of kind `line` (0 horizontal,
/// 1 vertical, 2 down-right, 3 down-left), ordered along the engine's direction.
fn naive_line(h: usize, w: usize, target: Cell, line: usize) -> Vec<Cell> {
    let (tr, tc) = (target.row as i64, target.col as i64);
    let mut cells: Vec<Cell> = (0..h)
        .flat_map(|r| (0..w).map(move |c| Cell::new(r, c)))
        .filter(|cell| {
            let (r, c) = (cell.row as i64, cell.col as i64);
            match line {
                0 => r == tr,
                1 => c == tc,
                2 => r - c == tr - tc,
                _ => r + c == tr + tc,
            }
        })
        .collect();
    // Row-major order already runs left to right, top to bottom and down-right; the
    // down-left diagonal also runs top to bottom, which is its direction.
    cells.sort();
    cells
}

fn naive_connect_four(
    rows: &[String],
    target: Cell,
    player: u8,
    run_length: usize,
) -> Option<Vec<Cell>> {
    let (h, w) = (rows.len(), rows[0].len());
    for line in 0..4 {
        let cells = naive_line(h, w, target, line);
        let pos = cells.iter().position(|&c| c == target).unwrap();
        let owned = |i: usize| at(rows, cells[i].row, cells[i].col) == player;
        let mut start = pos;
        while start > 0 && owned(start - 1) {
            start -= 1;
        }
        let mut end = pos;
        while end + 1 < cells.len() && owned(end + 1) {
            end += 1;
        }
        if end - start + 1 >= run_length {
            return Some(cells[start..=end].to_vec());
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn othello_check_matches_reference(
        rows in board(100, b".BW"),
        pick in any::<(prop::sample::Index, prop::sample::Index)>(),
        black in any::<bool>(),
    ) {
        let board = othello::Board::parse(&rows).unwrap();
        let target = Cell::new(pick.0.index(rows.len()), pick.1.index(rows[0].len()));
        let color = if black { Color::Black } else { Color::White };
        let check = board.check_move(target, color).unwrap();
        let expected = naive_othello_flips(&rows, target, color);
        prop_assert_eq!(check.legal, !expected.is_empty());
        prop_assert_eq!(check.flips, expected.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn connect_four_matches_reference(
        rows in board(100, b"012"),
        pick in any::<(prop::sample::Index, prop::sample::Index)>(),
        run_length in 1usize..=8,
    ) {
        let board = connect_four::Board::parse(&rows).unwrap();
        let target = Cell::new(pick.0.index(rows.len()), pick.1.index(rows[0].len()));
        let found = at(&rows, target.row, target.col);
        for player in [connect_four::Player::One, connect_four::Player::Two] {
            let answer = board.winning_run(target, player, run_length);
            if found == player.byte() {
                let expected = naive_connect_four(&rows, target, found, run_length);
                prop_assert_eq!(answer, Ok(expected));
            } else {
                let is_not_players_piece =
                    matches!(answer, Err(ConnectFourError::NotPlayersPiece { .. }));
                prop_assert!(is_not_players_piece);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn othello_listing_matches_reference(rows in board(24, b".BW"), black in any::<bool>()) {
        let board = othello::Board::parse(&rows).unwrap();
        let color = if black { Color::Black } else { Color::White };
        let mut expected = Vec::new();
        for r in 0..rows.len() {
            for c in 0..rows[0].len() {
                let flips = naive_othello_flips(&rows, Cell::new(r, c), color);
                if !flips.is_empty() {
                    expected.push((Cell::new(r, c), flips.into_iter().collect::<Vec<_>>()));
                }
            }
        }
        let listed: Vec<(Cell, Vec<Cell>)> = board
            .legal_moves(color)
            .into_iter()
            .map(|m| (m.cell, m.flips))
            .collect();
        prop_assert_eq!(listed, expected);
    }
}

/// A naive Tic-Tac-Toe referee: a full board, rescanned line by line after every move.
#[derive(Default)]
struct NaiveReferee {
    squares: [[u8; 3]; 3],
    moves: usize,
    over: bool,
}

impl NaiveReferee {
    /// Applies a move, or says why not (as the engine's error kind) and changes nothing.
    fn play(&mut self, row: i64, col: i64) -> Result<Option<(u8, [Cell; 3])>, &'static str> {
        if self.over {
            return Err("over");
        }
        if !(0..3).contains(&row) || !(0..3).contains(&col) {
            return Err("outside");
        }
        let (r, c) = (row as usize, col as usize);
        if self.squares[r][c] != 0 {
            return Err("taken");
        }
        let mark = if self.moves.is_multiple_of(2) {
            b'X'
        } else {
            b'O'
        };
        self.squares[r][c] = mark;
        self.moves += 1;
        let mut lines: Vec<[Cell; 3]> = Vec::new();
        for i in 0..3 {
            lines.push([Cell::new(i, 0), Cell::new(i, 1), Cell::new(i, 2)]);
        }
        for i in 0..3 {
            lines.push([Cell::new(0, i), Cell::new(1, i), Cell::new(2, i)]);
        }
        lines.push([Cell::new(0, 0), Cell::new(1, 1), Cell::new(2, 2)]);
        lines.push([Cell::new(0, 2), Cell::new(1, 1), Cell::new(2, 0)]);
        for line in lines {
            if line
                .iter()
                .all(|cell| self.squares[cell.row][cell.col] == mark)
            {
                self.over = true;
                return Ok(Some((mark, line)));
            }
        }
        if self.moves == 9 {
            self.over = true;
        }
        Ok(None)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn tic_tac_toe_matches_reference(
        moves in prop::collection::vec((-1i64..=3, -1i64..=3), 0..=14),
        extremes in any::<bool>(),
    ) {
        let mut game = Game::new();
        let mut referee = NaiveReferee::default();
        for (i, &(mut row, col)) in moves.iter().enumerate() {
            if extremes && i == 3 {
                row = i64::from(i32::MIN);
            }
            let before = game.clone();
            match (game.play(row, col), referee.play(row, col)) {
                (Ok(verdict), Ok(won)) => {
                    let expected = match won {
                        Some((mark, line)) => Verdict::Won {
                            player: if mark == b'X' { Player::A } else { Player::B },
                            line,
                        },
                        None if referee.moves == 9 => Verdict::Draw,
                        None => Verdict::Pending,
                    };
                    prop_assert_eq!(verdict, expected);
                }
                (Err(err), Err(kind)) => {
                    let same_kind = matches!(
                        (err, kind),
                        (MoveError::GameOver { .. }, "over")
                            | (MoveError::OutOfBoard { .. }, "outside")
                            | (MoveError::Occupied { .. }, "taken")
                    );
                    prop_assert!(same_kind, "engine {:?}, reference {}", err, kind);
                    prop_assert_eq!(&game, &before);
                }
                (engine, reference) => {
                    prop_assert!(false, "engine {:?}, reference {:?}", engine, reference);
                }
            }
            let rendered: Vec<String> = referee
                .squares
                .iter()
                .map(|row| row.iter().map(|&m| if m == 0 { '.' } else { char::from(m) }).collect())
                .collect();
            prop_assert_eq!(game.rows().to_vec(), rendered);
            prop_assert_eq!(game.moves_played(), referee.moves);
        }
        // Judging the whole list agrees with the move-by-move game up to the first refusal.
        match tic_tac_toe::judge(moves.iter().copied().enumerate().map(|(i, (r, c))| {
            if extremes && i == 3 { (i64::from(i32::MIN), c) } else { (r, c) }
        })) {
            Ok(judged) => prop_assert_eq!(judged.verdict(), game.verdict()),
            Err(err) => prop_assert!(err.index < moves.len()),
        }
    }

    #[test]
    fn grid_errors_name_the_row(
        rows in prop::collection::vec("[.BWx]{0,5}", 0..6),
    ) {
        let parsed = othello::Board::parse(&rows);
        let expected = naive_grid_problem(&rows, ".BW");
        prop_assert_eq!(parsed.err(), expected);
    }
}

fn naive_grid_problem(rows: &[String], alphabet: &'static str) -> Option<GridError> {
    if rows.is_empty() {
        return Some(GridError::NoRows);
    }
    for (r, row) in rows.iter().enumerate() {
        for (c, ch) in row.chars().enumerate() {
            if !alphabet.contains(ch) {
                return Some(GridError::BadCell {
                    row: r,
                    col: c,
                    found: ch,
                    alphabet,
                });
            }
        }
        if row.is_empty() {
            return Some(GridError::EmptyRow { row: r });
        }
        if row.chars().count() != rows[0].chars().count() {
            return Some(GridError::RaggedRow {
                row: r,
                expected: rows[0].chars().count(),
                found: row.chars().count(),
            });
        }
    }
    None
}
