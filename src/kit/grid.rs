//! The rectangular board shared by the grid games, parsed once from rows of ASCII text.

use std::fmt;
use std::num::NonZeroUsize;

use super::rows::{Rows, RowsView};

/// One piece of a [`Text`]: words, or a number (written through `itoa`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Part<'a> {
    /// Words, as they are.
    Words(&'a str),
    /// A count or an index.
    Count(usize),
}

/// Writes `parts` in turn into `out`. Inlined, so that the parts are never an array
/// in memory: as a call, it cost a malformed board a fifth more.
#[inline(always)]
pub(crate) fn write_parts<W: fmt::Write + ?Sized>(out: &mut W, parts: &[Part<'_>]) -> fmt::Result {
    let mut number = itoa::Buffer::new();
    for part in parts {
        out.write_str(match *part {
            Part::Words(words) => words,
            Part::Count(n) => number.format(n),
        })?;
    }
    Ok(())
}

/// An error that writes its text in pieces into any [`fmt::Write`], without
/// `core::fmt`'s formatting of arguments, which costs several times as much: a bulk call
/// of malformed items writes thousands of these texts. Its `Display` says the same.
pub trait Text {
    /// Writes the text into `out`.
    fn write_text<W: fmt::Write + ?Sized>(&self, out: &mut W) -> fmt::Result;
}

/// A cell of a board: `row` 0 is the top row, `col` 0 the leftmost column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cell {
    /// The row, counted from the top.
    pub row: usize,
    /// The column, counted from the left.
    pub col: usize,
}

impl Cell {
    /// The cell at (`row`, `col`).
    pub const fn new(row: usize, col: usize) -> Self {
        Self { row, col }
    }
}

/// The cells at these (row, col) pairs, in order: for the tests' expected answers.
#[cfg(test)]
pub(crate) fn cells(coordinates: &[(usize, usize)]) -> Vec<Cell> {
    coordinates
        .iter()
        .map(|&(row, col)| Cell::new(row, col))
        .collect()
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.row, self.col)
    }
}

/// Coordinates that are not a cell of a board: the one off-board error of every game,
/// for unary checks and live moves alike. Every untrusted coordinate becomes a cell
/// through [`locate`] (or [`locate_column`] for a column alone), which hands this out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffBoard {
    /// The asked row; `None` for a column alone (a Connect Four drop).
    pub row: Option<i64>,
    /// The asked column.
    pub col: i64,
    /// The board's row count.
    pub rows: usize,
    /// The board's column count.
    pub cols: usize,
}

impl OffBoard {
    /// Whether the row is off the board (negative, or past the last row).
    pub fn row_is_off(&self) -> bool {
        self.row
            .is_some_and(|row| usize::try_from(row).map_or(true, |row| row >= self.rows))
    }

    /// Whether the column is off the board (negative, or past the last column).
    pub fn col_is_off(&self) -> bool {
        usize::try_from(self.col).map_or(true, |col| col >= self.cols)
    }
}

impl fmt::Display for OffBoard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_text(f)
    }
}

impl Text for OffBoard {
    // Written call by call: as parts (`write_parts`), its ten pieces cost a bulk call of
    // off-board moves a twentieth more.
    fn write_text<W: fmt::Write + ?Sized>(&self, f: &mut W) -> fmt::Result {
        let (col, cols) = (self.col, self.cols);
        let mut number = itoa::Buffer::new();
        match self.row {
            Some(row) => {
                f.write_str("(")?;
                f.write_str(number.format(row))?;
                f.write_str(", ")?;
                f.write_str(number.format(col))?;
                f.write_str(") is outside the board, which has ")?;
                counted(self.rows, "row").write_text(f)?;
                f.write_str(" and ")?;
                counted(cols, "column").write_text(f)
            }
            None => {
                f.write_str("column ")?;
                f.write_str(number.format(col))?;
                if cols == 1 {
                    f.write_str(" is outside the board, which has 1 column (only 0)")
                } else {
                    f.write_str(" is outside the board, which has ")?;
                    f.write_str(number.format(cols))?;
                    f.write_str(" columns (0 to ")?;
                    f.write_str(number.format(cols.saturating_sub(1)))?;
                    f.write_str(")")
                }
            }
        }
    }
}

/// `n` `thing`s, in the singular for one.
pub fn counted(n: usize, thing: &str) -> Counted<'_> {
    Counted { n, thing }
}

/// `n` `thing`s as text ([`counted`]): written where it is used, never allocated.
#[derive(Debug, Clone, Copy)]
pub struct Counted<'a> {
    n: usize,
    thing: &'a str,
}

impl fmt::Display for Counted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_text(f)
    }
}

impl Text for Counted<'_> {
    fn write_text<W: fmt::Write + ?Sized>(&self, f: &mut W) -> fmt::Result {
        let Self { n, thing } = *self;
        f.write_str(itoa::Buffer::new().format(n))?;
        f.write_str(" ")?;
        f.write_str(thing)?;
        if n == 1 {
            Ok(())
        } else {
            f.write_str("s")
        }
    }
}

impl std::error::Error for OffBoard {}

/// The cell at (`row`, `col`) of a `rows` x `cols` board, or why there is none: the one
/// check of an untrusted coordinate pair, for every game.
pub fn locate(rows: usize, cols: usize, row: i64, col: i64) -> Result<Cell, OffBoard> {
    match (index(row, rows), index(col, cols)) {
        (Some(row), Some(col)) => Ok(Cell { row, col }),
        _ => Err(OffBoard {
            row: Some(row),
            col,
            rows,
            cols,
        }),
    }
}

/// The column `col` of a board of `cols` columns, or why there is none (a drop, which
/// names a column alone).
pub fn locate_column(cols: usize, col: i64) -> Result<usize, OffBoard> {
    index(col, cols).ok_or(OffBoard {
        row: None,
        col,
        rows: 0,
        cols,
    })
}

/// `value` as an index below `len`, if it is one.
fn index(value: i64, len: usize) -> Option<usize> {
    usize::try_from(value).ok().filter(|&i| i < len)
}

/// Why a list of rows is not a board of a game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GridError {
    /// There is not a single row.
    NoRows,
    /// A row holds no cell at all.
    EmptyRow {
        /// The index of the empty row.
        row: usize,
    },
    /// A row is not as long as row 0.
    RaggedRow {
        /// The index of the row.
        row: usize,
        /// The length of row 0.
        expected: usize,
        /// The length of this row.
        found: usize,
    },
    /// A cell holds a character outside the game's alphabet.
    BadCell {
        /// The row of the cell.
        row: usize,
        /// The column of the cell, counted in characters.
        col: usize,
        /// The character found there.
        found: char,
        /// The characters the game allows.
        alphabet: &'static str,
    },
}

impl fmt::Display for GridError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_text(f)
    }
}

impl Text for GridError {
    fn write_text<W: fmt::Write + ?Sized>(&self, f: &mut W) -> fmt::Result {
        use Part::{Count, Words};
        match *self {
            Self::NoRows => f.write_str("the board has no rows"),
            Self::EmptyRow { row } => {
                write_parts(f, &[Words("row "), Count(row), Words(" is empty")])
            }
            Self::RaggedRow {
                row,
                expected,
                found,
            } => write_parts(
                f,
                &[
                    Words("row "),
                    Count(row),
                    Words(" has "),
                    Count(found),
                    Words(" cells but row 0 has "),
                    Count(expected),
                ],
            ),
            Self::BadCell {
                row,
                col,
                found,
                alphabet,
            } => {
                write_parts(
                    f,
                    &[
                        Words("row "),
                        Count(row),
                        Words(", column "),
                        Count(col),
                        Words(": "),
                    ],
                )?;
                // As `{:?}` quotes them: a plain ASCII character or alphabet as it is.
                if found.is_ascii_graphic() && !matches!(found, '\'' | '\\') {
                    write_parts(
                        f,
                        &[
                            Words("'"),
                            Words(found.encode_utf8(&mut [0; 4])),
                            Words("'"),
                        ],
                    )?;
                } else {
                    write!(f, "{found:?}")?;
                }
                f.write_str(" is not one of ")?;
                if alphabet
                    .bytes()
                    .all(|byte| byte.is_ascii_graphic() && !matches!(byte, b'"' | b'\\'))
                {
                    write_parts(f, &[Words("\""), Words(alphabet), Words("\"")])
                } else {
                    write!(f, "{alphabet:?}")
                }
            }
        }
    }
}

impl std::error::Error for GridError {}

/// A rectangular board of one byte per cell, row-major, every byte from one game's alphabet.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Grid {
    rows: usize,
    cols: usize,
    cells: Vec<u8>,
}

impl Grid {
    /// Parses `rows` (row 0 at the top) into a grid whose every cell is a byte of `alphabet`.
    ///
    /// The first problem found, in row order, is the error.
    pub fn parse<S: AsRef<str>>(rows: &[S], alphabet: &'static str) -> Result<Self, GridError> {
        let rows: Rows = rows.iter().map(|row| row.as_ref().as_bytes()).collect();
        Self::parse_rows(rows, alphabet).map_err(|bad| bad.first)
    }

    /// Parses `rows` as [`Grid::parse`] does, keeping their buffer as the grid's cells:
    /// a board checked in one pass over its bytes and never copied. Rows that are not a
    /// board come back whole in the error, which can name every problem in them.
    pub fn parse_rows(rows: Rows, alphabet: &'static str) -> Result<Self, BadRows> {
        let cols = rows.get(0).map_or(0, <[u8]>::len);
        let rectangular = cols > 0 && rows.lengths().all(|len| len == cols);
        match check_rows(rows.view(), rows.bytes(), rectangular, alphabet) {
            Ok(()) => Ok(Self {
                rows: rows.len(),
                cols,
                cells: rows.into_bytes(),
            }),
            Err(first) => Err(BadRows {
                first,
                rows,
                alphabet,
            }),
        }
    }

    /// Parses borrowed `rows` as [`Grid::parse_rows`] does, copying them into `cells`
    /// (emptied first), a buffer given back by [`Grid::into_cells`] after an earlier
    /// board: many boards read where they lie, one after the other, each copied once,
    /// with one buffer for all. Rows that are not a board come back in the error,
    /// copied, and `cells` with them is dropped.
    ///
    /// Inlined, so that each game's alphabet is a constant in its copy of the check.
    #[inline]
    pub fn parse_rows_into(
        rows: RowsView<'_>,
        alphabet: &'static str,
        mut cells: Vec<u8>,
    ) -> Result<Self, BadRows> {
        // One pass copies the rows and compares their lengths.
        cells.clear();
        let mut each = rows.iter();
        let cols = each.next().map_or(0, |first| {
            cells.extend_from_slice(first);
            first.len()
        });
        let mut rectangular = cols > 0;
        for row in each {
            rectangular &= row.len() == cols;
            cells.extend_from_slice(row);
        }
        match check_rows(rows, &cells, rectangular, alphabet) {
            Ok(()) => Ok(Self {
                rows: rows.len(),
                cols,
                cells,
            }),
            Err(first) => Err(BadRows {
                first,
                rows: rows.to_rows(),
                alphabet,
            }),
        }
    }

    /// The grid's buffer, given up for [`Grid::parse_rows_into`] to fill again.
    pub fn into_cells(self) -> Vec<u8> {
        self.cells
    }

    /// The number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Whether `cell` lies on the board.
    pub fn contains(&self, cell: Cell) -> bool {
        cell.row < self.rows && cell.col < self.cols
    }

    /// The byte at `cell`, or `None` off the board.
    pub fn get(&self, cell: Cell) -> Option<u8> {
        self.contains(cell)
            .then(|| self.cells[cell.row * self.cols + cell.col])
    }

    /// The bytes of the cells past `cell` along a line, one step of (`dr`, `dc`) at a
    /// time (each -1, 0 or 1, not both 0), to the board's edge: how the games walk a line
    /// from a cell. The steps that stay on the board are worked out once, so each cell
    /// after is one read. Nothing from a cell off the board.
    pub fn ray(&self, cell: Cell, (dr, dc): (isize, isize)) -> Ray<'_> {
        debug_assert!((dr, dc) != (0, 0) && dr.abs() <= 1 && dc.abs() <= 1);
        // The steps that stay on the board along an axis, and so along the line.
        let room = |at: usize, step: isize, len: usize| match step {
            0 => usize::MAX,
            1.. => len - 1 - at,
            _ => at,
        };
        let left = if self.contains(cell) {
            room(cell.row, dr, self.rows).min(room(cell.col, dc, self.cols))
        } else {
            0
        };
        Ray {
            cells: &self.cells,
            at: cell.row.wrapping_mul(self.cols).wrapping_add(cell.col),
            // The cells of a line, row-major, are one stride apart.
            stride: dr * self.cols as isize + dc,
            left,
        }
    }

    /// Every cell's byte, row-major.
    pub fn cells(&self) -> &[u8] {
        &self.cells
    }

    /// A `rows` x `cols` grid with `byte` in every cell.
    pub fn filled(rows: NonZeroUsize, cols: NonZeroUsize, byte: u8) -> Self {
        let (rows, cols) = (rows.get(), cols.get());
        Self {
            rows,
            cols,
            cells: vec![byte; rows * cols],
        }
    }

    /// The cell at (`row`, `col`) of this grid, or which of them lies off it (see
    /// [`locate`]).
    pub fn locate(&self, row: i64, col: i64) -> Result<Cell, OffBoard> {
        locate(self.rows, self.cols, row, col)
    }

    /// Puts `byte` at the on-board `cell`.
    pub(crate) fn set(&mut self, cell: Cell, byte: u8) {
        debug_assert!(self.contains(cell));
        self.cells[cell.row * self.cols + cell.col] = byte;
    }

    /// How many cells hold `byte`.
    pub fn count(&self, byte: u8) -> usize {
        self.cells.iter().filter(|&&b| b == byte).count()
    }

    /// The board as [`Rows`], row 0 first, as it goes back on the wire.
    pub fn to_row_buffer(&self) -> Rows {
        let mut rows = Rows::with_capacity(self.rows, self.cells.len());
        for row in self.cells.chunks_exact(self.cols) {
            rows.push(row);
        }
        rows
    }
}

/// The bytes of the cells along a line from a cell, to the board's edge ([`Grid::ray`]).
#[derive(Debug, Clone)]
pub struct Ray<'a> {
    /// The grid's cells.
    cells: &'a [u8],
    /// The last cell reached, row-major.
    at: usize,
    /// From one cell of the line to the next, row-major.
    stride: isize,
    /// The steps left before the edge.
    left: usize,
}

impl Iterator for Ray<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.at = self.at.wrapping_add_signed(self.stride);
        self.cells.get(self.at).copied()
    }
}

/// Whether `rows` are a board over `alphabet` (its width is row 0's), or their first
/// problem; `bytes` is every row's bytes end to end, and `rectangular` whether row 0
/// has bytes and every other row as many.
#[inline]
fn check_rows(
    rows: RowsView<'_>,
    bytes: &[u8],
    rectangular: bool,
    alphabet: &'static str,
) -> Result<(), GridError> {
    // One pass over every byte at once; which row is wrong is looked for only then
    // (no rows at all is a problem too, and not rectangular).
    if !(rectangular && all_in(bytes, alphabet.as_bytes())) {
        if let Some(first) = problems(rows, alphabet).next() {
            return Err(first);
        }
    }
    Ok(())
}

/// Whether every byte of `bytes` is one of `alphabet`'s. For a three-byte alphabet
/// (every game's) without a branch or a lookup per byte, so that the compiler runs many
/// bytes at a time: for three consecutive bytes (Connect Four's `012`) a subtraction
/// and a maximum per byte, for three others (Othello's `.BW`) three comparisons; any
/// other alphabet is looked up byte by byte.
#[inline]
fn all_in(bytes: &[u8], alphabet: &[u8]) -> bool {
    // Chunks bound the work done past a bad byte without a branch per byte.
    const CHUNK: usize = 1024;
    match *alphabet {
        [a, b, c] if b == a.wrapping_add(1) && c == b.wrapping_add(1) => {
            // A byte below `a` wraps around to far above 2.
            bytes
                .chunks(CHUNK)
                .all(|chunk| chunk.iter().fold(0, |most, &x| most.max(x.wrapping_sub(a))) <= 2)
        }
        [a, b, c] => bytes.chunks(CHUNK).all(|chunk| {
            chunk
                .iter()
                .fold(true, |ok, &x| ok & ((x == a) | (x == b) | (x == c)))
        }),
        _ => bytes.iter().all(|x| alphabet.contains(x)),
    }
}

/// Rows refused as a board of a game, kept whole: the first problem in them is the
/// error, and every other one can be listed, as can the board's size where the rows
/// show it (coordinates can be checked against it even when a cell is bad).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRows {
    first: GridError,
    rows: Rows,
    alphabet: &'static str,
}

impl BadRows {
    /// The first problem, in row order: what [`Grid::parse`] returns.
    pub fn first(&self) -> &GridError {
        &self.first
    }

    /// Every problem, in row order: at most one per row (its first), and at least one.
    pub fn problems(&self) -> impl Iterator<Item = GridError> + '_ {
        problems(self.rows.view(), self.alphabet)
    }

    /// The number of rows given (zero for [`GridError::NoRows`]).
    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    /// The number of cells in every row, when every row has as many and there is at
    /// least one row (cells counted in characters, a byte that is not UTF-8 as one);
    /// `None` for ragged or missing rows.
    pub fn col_count(&self) -> Option<usize> {
        common_width(self.rows.view())
    }
}

impl fmt::Display for BadRows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.first.fmt(f)
    }
}

impl std::error::Error for BadRows {}

/// The number of cells in every row of `rows`, when every row has as many and there is
/// at least one row and one cell (see [`cell_count`]).
pub fn common_width(rows: RowsView<'_>) -> Option<usize> {
    let mut counts = rows.iter().map(cell_count);
    let first = counts.next().filter(|&cols| cols > 0)?;
    counts.all(|cols| cols == first).then_some(first)
}

/// How many cells `row` holds: its characters, each byte that is not UTF-8 counted as
/// one, without a copy.
pub fn cell_count(row: &[u8]) -> usize {
    if row.is_ascii() {
        return row.len();
    }
    row.utf8_chunks()
        .map(|chunk| chunk.valid().chars().count() + chunk.invalid().len())
        .sum()
}

/// The problems of `rows` as a board over `alphabet`, in row order, one per bad row at
/// most (the first in it): a bad character, else an empty row, else a length other
/// than row 0's (counted in cells; not checked when row 0 is empty).
/// [`GridError::NoRows`] alone for no rows; nothing for a valid grid.
fn problems<'a>(
    rows: RowsView<'a>,
    alphabet: &'static str,
) -> impl Iterator<Item = GridError> + 'a {
    let cols = rows.get(0).map(cell_count);
    let no_rows = cols.is_none().then_some(GridError::NoRows);
    let bad_rows = rows.iter().enumerate().filter_map(move |(index, row)| {
        if let Some(at) = row.iter().position(|b| !alphabet.as_bytes().contains(b)) {
            return Some(bad_cell(index, row, at, alphabet));
        }
        // Every byte is ASCII from here on, so the byte length is the cell count.
        let expected = cols.unwrap_or_default();
        if row.is_empty() {
            Some(GridError::EmptyRow { row: index })
        } else if expected > 0 && row.len() != expected {
            Some(GridError::RaggedRow {
                row: index,
                expected,
                found: row.len(),
            })
        } else {
            None
        }
    });
    no_rows.into_iter().chain(bad_rows)
}

/// The error for the first byte of `row` (at byte offset `at`) outside `alphabet`.
fn bad_cell(row_index: usize, row: &[u8], at: usize, alphabet: &'static str) -> GridError {
    // All bytes before `at` are ASCII, so `at` is both a character boundary and the column.
    // The character there, whatever follows it; U+FFFD if its bytes are not UTF-8.
    // (A character is at most four bytes: the rest of the row is not looked at.)
    let found = row[at..row.len().min(at + 4)]
        .utf8_chunks()
        .next()
        .and_then(|chunk| chunk.valid().chars().next())
        .unwrap_or(char::REPLACEMENT_CHARACTER);
    GridError::BadCell {
        row: row_index,
        col: at,
        found,
        alphabet,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rows_row_major() {
        let grid = Grid::parse(&["ab", "ba", "aa"], "ab").unwrap();
        assert_eq!((grid.rows(), grid.cols()), (3, 2));
        assert_eq!(grid.get(Cell::new(1, 0)), Some(b'b'));
        assert_eq!(grid.get(Cell::new(3, 0)), None);
        assert_eq!(grid.to_row_buffer().to_strings()[2], "aa");
    }

    #[test]
    fn names_the_first_problem() {
        let none: [&str; 0] = [];
        assert_eq!(Grid::parse(&none, "ab"), Err(GridError::NoRows));
        assert_eq!(
            Grid::parse(&["", ""], "ab"),
            Err(GridError::EmptyRow { row: 0 })
        );
        assert_eq!(
            Grid::parse(&["ab", "a"], "ab"),
            Err(GridError::RaggedRow {
                row: 1,
                expected: 2,
                found: 1
            })
        );
        assert_eq!(
            Grid::parse(&["ab", "aé"], "ab"),
            Err(GridError::BadCell {
                row: 1,
                col: 1,
                found: 'é',
                alphabet: "ab"
            })
        );
        // The bad character is named even when bytes after it are not UTF-8.
        let rows: Rows = [&b"ab"[..], &[b'a', 0xc3, 0xa9, 0xff][..]]
            .into_iter()
            .collect();
        assert_eq!(
            Grid::parse_rows(rows, "ab").unwrap_err().first(),
            &GridError::BadCell {
                row: 1,
                col: 1,
                found: 'é',
                alphabet: "ab"
            }
        );
        let rows: Rows = [&[0xff, b'a'][..]].into_iter().collect();
        assert!(matches!(
            Grid::parse_rows(rows, "ab").map_err(|bad| bad.first().clone()),
            Err(GridError::BadCell {
                row: 0,
                col: 0,
                found: char::REPLACEMENT_CHARACTER,
                ..
            })
        ));
    }

    fn refused(rows: &[&str]) -> BadRows {
        Grid::parse_rows(rows.iter().map(|row| row.as_bytes()).collect(), "ab").unwrap_err()
    }

    #[test]
    fn names_every_bad_row_once() {
        let bad = refused(&["aaa", "aa", "aaaa", "aaa", "xa", "", "axx"]);
        assert_eq!(bad.first(), &bad.problems().next().unwrap());
        let rows: Vec<usize> = bad
            .problems()
            .map(|problem| match problem {
                GridError::EmptyRow { row }
                | GridError::RaggedRow { row, .. }
                | GridError::BadCell { row, .. } => row,
                GridError::NoRows => usize::MAX,
            })
            .collect();
        assert_eq!(rows, [1, 2, 4, 5, 6]);
        assert_eq!((bad.row_count(), bad.col_count()), (7, None));
        // Row 0's length is counted in cells when a cell of it is wide.
        let bad = refused(&["aé", "ab", "aba"]);
        assert_eq!(
            bad.problems().collect::<Vec<_>>()[1],
            GridError::RaggedRow {
                row: 2,
                expected: 2,
                found: 3
            }
        );
        // No length to hold the other rows to when row 0 is empty.
        assert_eq!(refused(&["", "ab"]).problems().count(), 1);
        assert_eq!(
            refused(&[]).problems().collect::<Vec<_>>(),
            [GridError::NoRows]
        );
    }

    #[test]
    fn knows_the_shape_of_a_board_with_bad_cells() {
        let bad = refused(&["aé", "xb", "a\u{fffd}"]);
        assert_eq!((bad.row_count(), bad.col_count()), (3, Some(2)));
        let rows: Rows = [&[b'a', 0xff][..], &b"ab"[..]].into_iter().collect();
        let bad = Grid::parse_rows(rows, "ab").unwrap_err();
        assert_eq!(bad.col_count(), Some(2));
        assert_eq!(
            (refused(&[]).row_count(), refused(&[]).col_count()),
            (0, None)
        );
    }

    #[test]
    fn locates_only_cells_on_the_board() {
        let grid = Grid::parse(&["aaa", "aaa"], "a").unwrap();
        assert_eq!(grid.locate(1, 2), Ok(Cell::new(1, 2)));
        let off = grid.locate(2, -1).unwrap_err();
        assert!(off.row_is_off() && off.col_is_off());
        let off = grid.locate(i64::from(i32::MAX), 0).unwrap_err();
        assert!(off.row_is_off() && !off.col_is_off());
        assert_eq!(
            off.to_string(),
            "(2147483647, 0) is outside the board, which has 2 rows and 3 columns"
        );
    }

    #[test]
    fn rays_stay_on_the_board() {
        let grid = Grid::parse(&["abc", "def", "ghi"], "abcdefghi").unwrap();
        let ray = |row, col, direction| {
            String::from_utf8(grid.ray(Cell::new(row, col), direction).collect()).unwrap()
        };
        assert_eq!(ray(0, 0, (-1, 0)), "");
        assert_eq!(ray(0, 0, (1, 1)), "ei");
        assert_eq!(ray(1, 1, (0, 1)), "f");
        assert_eq!(ray(1, 1, (0, -1)), "d");
        assert_eq!(ray(2, 0, (-1, 1)), "ec");
        assert_eq!(ray(0, 2, (1, -1)), "eg");
        assert_eq!(ray(0, 1, (1, 0)), "eh");
        assert_eq!(ray(2, 2, (-1, -1)), "ea");
        // Not past a row's end into the next row, nor from a cell off the board.
        assert_eq!(ray(0, 2, (0, 1)), "");
        assert_eq!(ray(1, 2, (1, 1)), "");
        assert_eq!(ray(3, 0, (0, 1)), "");
        assert_eq!(ray(0, 3, (1, 0)), "");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// The branch-free alphabet test says what a byte-by-byte lookup says, for
        /// alphabets of consecutive bytes (Connect Four's `012`, some at the ends of the
        /// byte range) and others, on bytes mostly from the alphabet, past a chunk's
        /// length.
        #[test]
        fn all_in_is_a_lookup(
            which in 0..8usize,
            picks in proptest::collection::vec(0..3usize, 0..2100),
            strays in proptest::collection::vec((proptest::num::usize::ANY, -4..6i16), 0..3),
        ) {
            // Consecutive, wrapping past 255, almost consecutive, out of order, others.
            let alphabets: [&[u8]; 8] = [
                b"012", &[254, 255, 0], &[253, 254, 255], b"013", b"021", b".BW", b"ab", &[0, 1, 2],
            ];
            let alphabet = alphabets[which];
            let mut bytes: Vec<u8> = picks.iter().map(|&pick| alphabet[pick % alphabet.len()]).collect();
            // A stray byte is near the alphabet's first, where a wrong bound would show.
            for (at, near) in strays {
                if !bytes.is_empty() {
                    let len = bytes.len();
                    bytes[at % len] = alphabet[0].wrapping_add_signed(near as i8);
                }
            }
            proptest::prop_assert_eq!(
                all_in(&bytes, alphabet),
                bytes.iter().all(|x| alphabet.contains(x))
            );
        }
    }

    proptest::proptest! {
        /// The errors' texts, written in pieces, say what `format!` would: the text
        /// each had when it was written with `write!`, quoting included.
        #[test]
        fn error_texts_are_as_format_writes_them(
            row in proptest::prelude::any::<i64>(),
            col in proptest::prelude::any::<i64>(),
            rows in 0..200usize,
            cols in 0..200usize,
            index in 0..200usize,
            found in proptest::prelude::any::<char>(),
            alphabet in proptest::sample::select(vec![".BW", ".XO", "01", "a'b", "q\"\\r"]),
        ) {
            let off = OffBoard { row: Some(row), col, rows, cols };
            let rows_text = if rows == 1 { "1 row".to_owned() } else { format!("{rows} rows") };
            let cols_text = if cols == 1 { "1 column".to_owned() } else { format!("{cols} columns") };
            proptest::prop_assert_eq!(
                off.to_string(),
                format!("({row}, {col}) is outside the board, which has {rows_text} and {cols_text}")
            );
            let column = OffBoard { row: None, col, rows, cols };
            let expected = if cols == 1 {
                format!("column {col} is outside the board, which has 1 column (only 0)")
            } else {
                format!(
                    "column {col} is outside the board, which has {cols} columns (0 to {})",
                    cols.saturating_sub(1)
                )
            };
            proptest::prop_assert_eq!(column.to_string(), expected);
            let bad = GridError::BadCell { row: index, col: cols, found, alphabet };
            proptest::prop_assert_eq!(
                bad.to_string(),
                format!("row {index}, column {cols}: {found:?} is not one of {alphabet:?}")
            );
            let ragged = GridError::RaggedRow { row: index, expected: rows, found: cols };
            proptest::prop_assert_eq!(
                ragged.to_string(),
                format!("row {index} has {cols} cells but row 0 has {rows}")
            );
            proptest::prop_assert_eq!(
                GridError::EmptyRow { row: index }.to_string(),
                format!("row {index} is empty")
            );
        }
    }
}
