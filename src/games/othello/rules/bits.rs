//! Boards of at most 8x8 as bit masks, on which legal moves and flips are computed with
//! shifts, eight directions at once.

use super::Color;
use crate::kit::grid::{Cell, Grid};

/// The side of the largest board held as bitboards.
const BITS_SIDE: usize = 8;

/// A board of at most 8x8 as bit masks: bit `row * 8 + col` stands for cell (row, col).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Bits {
    black: u64,
    white: u64,
    /// The cells of the board (the rest of the 8x8 frame is off it).
    board: u64,
}

/// Every bit but those of column 0, and every bit but those of column 7.
const NOT_COL_0: u64 = !0x0101_0101_0101_0101;
const NOT_COL_7: u64 = !0x8080_8080_8080_8080;

/// The eight directions as bit shifts (positive: towards higher bits) and the mask that
/// keeps a shifted disc from wrapping into the other edge's column.
const SHIFTS: [(i32, u64); 8] = [
    (-9, NOT_COL_7), // up-left
    (-8, !0),        // up
    (-7, NOT_COL_0), // up-right
    (-1, NOT_COL_7), // left
    (1, NOT_COL_0),  // right
    (7, NOT_COL_7),  // down-left
    (8, !0),         // down
    (9, NOT_COL_0),  // down-right
];

impl Bits {
    /// The bitboards of `grid`, if it fits in 8x8: each row's eight cells compared at
    /// once, as the bytes of one word.
    pub(super) fn of(grid: &Grid) -> Option<Self> {
        let cols = grid.cols();
        if grid.rows() > BITS_SIDE || cols > BITS_SIDE {
            return None;
        }
        let row_cells = (1u64 << cols) - 1;
        let mut bits = Self {
            black: 0,
            white: 0,
            board: 0,
        };
        for (row, cells) in grid.cells().chunks_exact(cols).enumerate() {
            // A full row is one load; a shorter one is copied into a word first.
            let word = match <[u8; BITS_SIDE]>::try_from(cells) {
                Ok(full) => u64::from_le_bytes(full),
                Err(_) => {
                    let mut word = [0; BITS_SIDE];
                    word[..cols].copy_from_slice(cells);
                    u64::from_le_bytes(word)
                }
            };
            let at = row * BITS_SIDE;
            bits.board |= row_cells << at;
            bits.black |= bytes_equal(word, b'B') << at;
            bits.white |= bytes_equal(word, b'W') << at;
        }
        Some(bits)
    }

    /// `color`'s discs and the other colour's.
    fn sides(&self, color: Color) -> (u64, u64) {
        match color {
            Color::Black => (self.black, self.white),
            Color::White => (self.white, self.black),
        }
    }

    /// `x` moved one step along the direction `(shift, mask)`, kept on the board.
    fn step(&self, x: u64, (shift, mask): (i32, u64)) -> u64 {
        let moved = if shift > 0 { x << shift } else { x >> -shift };
        moved & mask & self.board
    }

    /// The empty cells where `color` may play: in each direction, runs of the other
    /// colour's discs that start next to one of `color`'s are grown a step at a time
    /// (at most six discs fit between two on an 8-cell line), and the empty cell just
    /// past a run is a legal move.
    pub(super) fn legal(&self, color: Color) -> u64 {
        let (own, other) = self.sides(color);
        let empty = self.board & !(own | other);
        let mut legal = 0;
        for direction in SHIFTS {
            let mut run = self.step(own, direction) & other;
            for _ in 0..5 {
                run |= self.step(run, direction) & other;
            }
            legal |= self.step(run, direction) & empty;
        }
        legal
    }

    /// The discs a `color` disc at `cell` turns over: in each direction, the run of the
    /// other colour's discs closed by one of `color`'s. None unless `cell` is empty.
    pub(super) fn flips(&self, cell: Cell, color: Color) -> u64 {
        let (own, other) = self.sides(color);
        let Some(at) = bit_of(cell).filter(|bit| bit & self.board & !(own | other) != 0) else {
            return 0;
        };
        let mut flips = 0;
        for direction in SHIFTS {
            let mut run = 0;
            let mut next = self.step(at, direction);
            while next & other != 0 {
                run |= next;
                next = self.step(next, direction);
            }
            if next & own != 0 {
                flips |= run;
            }
        }
        flips
    }

    /// Puts a `color` disc at `cell` and turns `flips` over.
    pub(super) fn place(&mut self, cell: Cell, color: Color, flips: &[Cell]) {
        let changed = flips
            .iter()
            .chain(std::iter::once(&cell))
            .filter_map(|&c| bit_of(c))
            .fold(0, |all, bit| all | bit);
        let (own, other) = match color {
            Color::Black => (&mut self.black, &mut self.white),
            Color::White => (&mut self.white, &mut self.black),
        };
        *own |= changed;
        *other &= !changed;
    }
}

/// Bit `i` set for each byte `i` of `word` (little-endian) that is `byte`: the eight
/// comparisons of a row at once, without a branch.
fn bytes_equal(word: u64, byte: u8) -> u64 {
    const LOW_7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let x = word ^ (u64::from(byte) * 0x0101_0101_0101_0101);
    // The high bit of each byte of `x` that is zero (adding 0x7f to its low bits carries
    // into the high bit of every other byte, and no carry crosses a byte).
    let zero = !(((x & LOW_7) + LOW_7) | x) & HIGH;
    // Bits 7, 15, ..., 63 gathered into bits 56..=63, in order, then down to 0..=7.
    ((zero >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// The bit of `cell` in an 8x8 frame, if it lies in the frame.
fn bit_of(cell: Cell) -> Option<u64> {
    (cell.row < BITS_SIDE && cell.col < BITS_SIDE).then(|| 1 << (cell.row * BITS_SIDE + cell.col))
}

/// The cells of the set bits of `mask`, row-major.
pub(super) fn cells_of(mask: u64) -> BitCells {
    BitCells(mask)
}

/// The cells of a bit mask's set bits, lowest bit (row-major first) first; its exact
/// length lets a `collect` allocate once.
pub(super) struct BitCells(u64);

impl Iterator for BitCells {
    type Item = Cell;

    fn next(&mut self) -> Option<Cell> {
        (self.0 != 0).then(|| {
            let at = self.0.trailing_zeros() as usize;
            self.0 &= self.0 - 1;
            Cell::new(at / BITS_SIDE, at % BITS_SIDE)
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.0.count_ones() as usize;
        (len, Some(len))
    }
}

impl ExactSizeIterator for BitCells {}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The eight comparisons at once are the eight comparisons one by one, on any
        /// bytes (the alphabet's, and the ones next to them, and any other).
        #[test]
        fn bytes_equal_compares_each_byte(
            picks in proptest::array::uniform8(0..8usize),
            noise in any::<[u8; 8]>(),
            byte in prop::sample::select(vec![b'B', b'W', b'.', 0, 0x80, 0xff, b'A', b'C']),
        ) {
            let pool = [b'B', b'W', b'.', b'C', b'V', 0, 0xc2, 0xff];
            for word in [picks.map(|i| pool[i]), noise] {
                let expected = word
                    .iter()
                    .enumerate()
                    .fold(0u64, |mask, (i, &b)| mask | (u64::from(b == byte) << i));
                prop_assert_eq!(bytes_equal(u64::from_le_bytes(word), byte), expected);
            }
        }
    }

    /// The bitboards of every cell of a few boards, against the cell-by-cell rule.
    #[test]
    fn bits_of_a_grid_mark_each_cell() {
        for rows in [
            &["B"][..],
            &["BW.", "W.B"],
            &[
                "........", "...WB...", "...BW...", "BBBBBBBB", "WWWWWWWW", ".W.B.W.B", "B......W",
                "W......B",
            ],
            &["BW.BW.B", ".......", "WWWWWWW"],
        ] {
            let grid = Grid::parse(rows, ".BW").unwrap();
            let bits = Bits::of(&grid).unwrap();
            for (r, row) in rows.iter().enumerate() {
                for (c, byte) in row.bytes().enumerate() {
                    let bit = 1u64 << (r * BITS_SIDE + c);
                    assert_ne!(bits.board & bit, 0, "{rows:?} ({r}, {c})");
                    assert_eq!(bits.black & bit != 0, byte == b'B', "{rows:?} ({r}, {c})");
                    assert_eq!(bits.white & bit != 0, byte == b'W', "{rows:?} ({r}, {c})");
                }
            }
            let cells = rows.len() * rows[0].len();
            assert_eq!(bits.board.count_ones() as usize, cells, "{rows:?}");
            // No disc off the board (a row read past its end would put one there).
            assert_eq!((bits.black | bits.white) & !bits.board, 0, "{rows:?}");
        }
        let nine = Grid::parse(&["........."], ".BW").unwrap();
        assert_eq!(Bits::of(&nine), None);
        let nine_rows = Grid::parse(&["B"; 9], ".BW").unwrap();
        assert_eq!(Bits::of(&nine_rows), None);
    }
}
