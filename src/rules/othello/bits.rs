//! Boards of at most 8x8 as bit masks, on which legal moves and flips are computed with
//! shifts, eight directions at once.

use super::Color;
use crate::rules::grid::{Cell, Grid};

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
    /// The bitboards of `grid`, if it fits in 8x8.
    pub(super) fn of(grid: &Grid) -> Option<Self> {
        if grid.rows() > BITS_SIDE || grid.cols() > BITS_SIDE {
            return None;
        }
        let mut bits = Self {
            black: 0,
            white: 0,
            board: 0,
        };
        for (row, cells) in grid.cells().chunks_exact(grid.cols()).enumerate() {
            for (col, &byte) in cells.iter().enumerate() {
                let bit = 1 << (row * BITS_SIDE + col);
                bits.board |= bit;
                bits.black |= bit & (u64::from(byte == b'B')).wrapping_neg();
                bits.white |= bit & (u64::from(byte == b'W')).wrapping_neg();
            }
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
