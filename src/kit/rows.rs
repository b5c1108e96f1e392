//! Rows of a board's text laid end to end in one buffer: how a one-check request's
//! board arrives, before it is checked against a game's alphabet and becomes a
//! [`Grid`](super::grid::Grid) without being copied again. [`RowsView`] is a board's
//! rows borrowed, from such a buffer or from wherever they lie in a message that holds
//! many boards ([`Span`]), which a grid copies once
//! ([`Grid::parse_rows_into`](super::grid::Grid::parse_rows_into)).

use std::fmt;

/// The rows of a board as given, row 0 first: every row's bytes in one buffer, and
/// where each row ends. Nothing about the bytes is checked yet: not the alphabet, not
/// the shape, not even UTF-8.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Rows {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Rows {
    /// No rows.
    pub const fn new() -> Self {
        Self {
            bytes: Vec::new(),
            ends: Vec::new(),
        }
    }

    /// Room for `rows` rows of `bytes` bytes in all, allocated at once.
    pub fn with_capacity(rows: usize, bytes: usize) -> Self {
        Self {
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(rows),
        }
    }

    /// Room for `rows` more rows of `bytes` more bytes in all.
    pub fn reserve(&mut self, rows: usize, bytes: usize) {
        self.bytes.reserve(bytes);
        self.ends.reserve(rows);
    }

    /// Adds `row` after the last row.
    pub fn push(&mut self, row: &[u8]) {
        self.bytes.extend_from_slice(row);
        self.ends.push(self.bytes.len());
    }

    /// Starts a row after the last row: the bytes appended through the returned
    /// [`RowWriter`] are that row, which ends when the writer is dropped. The writer can
    /// only append, so a row copied straight from where it arrives, with no buffer in
    /// between, cannot change any earlier row.
    pub fn push_row(&mut self) -> RowWriter<'_> {
        RowWriter { rows: self }
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there is no row at all.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Row `index`'s bytes, or `None` past the last row.
    pub fn get(&self, index: usize) -> Option<&[u8]> {
        self.view().get(index)
    }

    /// Every row's bytes, row 0 first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + DoubleEndedIterator + '_ {
        self.view().iter()
    }

    /// Every row's bytes, laid end to end.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The length of each row, in bytes, row 0 first.
    pub fn lengths(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.view().lengths()
    }

    /// Removes every row, keeping the memory for the next ones.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Every row as text, row 0 first; bytes that are not UTF-8 become U+FFFD.
    pub fn to_strings(&self) -> Vec<String> {
        self.iter()
            .map(|row| String::from_utf8_lossy(row).into_owned())
            .collect()
    }

    /// The buffer of every row's bytes, given up without a copy.
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Every row, borrowed.
    pub fn view(&self) -> RowsView<'_> {
        RowsView {
            bytes: &self.bytes,
            layout: Layout::EndToEnd(&self.ends),
        }
    }
}

/// Where a row lies in a buffer (of at most `u32::MAX` bytes): its bytes are
/// `start..end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// The row's first byte.
    pub start: u32,
    /// Just past the row's last byte.
    pub end: u32,
}

impl Span {
    /// The span's bytes of `bytes`; none if the span is not within them.
    fn of(self, bytes: &[u8]) -> &[u8] {
        bytes
            .get(self.start as usize..self.end as usize)
            .unwrap_or_default()
    }
}

/// A board's rows, borrowed, row 0 first: every row of a [`Rows`], or rows that lie
/// apart in a larger buffer (a message's bytes, the rows where they arrived).
#[derive(Clone, Copy)]
pub struct RowsView<'a> {
    /// The buffer the rows are in.
    bytes: &'a [u8],
    /// Where each row is in `bytes`.
    layout: Layout<'a>,
}

/// Where a [`RowsView`]'s rows are in its buffer.
#[derive(Clone, Copy)]
enum Layout<'a> {
    /// End to end from the buffer's start, each row ending where the next begins.
    EndToEnd(&'a [usize]),
    /// Each row where its span says.
    Spans(&'a [Span]),
}

impl<'a> RowsView<'a> {
    /// The rows of `bytes` that `spans` mark, in that order.
    ///
    /// The spans are the caller's own, found in `bytes`; a span that is not within
    /// `bytes` (or is reversed) reads as an empty row.
    pub fn spans(bytes: &'a [u8], spans: &'a [Span]) -> Self {
        Self {
            bytes,
            layout: Layout::Spans(spans),
        }
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        match self.layout {
            Layout::EndToEnd(ends) => ends.len(),
            Layout::Spans(spans) => spans.len(),
        }
    }

    /// Whether there is no row at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `index`'s bytes, or `None` past the last row.
    pub fn get(&self, index: usize) -> Option<&'a [u8]> {
        (index < self.len()).then(|| self.row(index))
    }

    /// Every row's bytes, row 0 first.
    pub fn iter(&self) -> ViewRows<'a> {
        match self.layout {
            Layout::EndToEnd(ends) => ViewRows::EndToEnd {
                bytes: self.bytes,
                ends: ends.iter(),
                start: 0,
            },
            Layout::Spans(spans) => ViewRows::Spans {
                bytes: self.bytes,
                spans: spans.iter(),
            },
        }
    }

    /// The length of each row, in bytes, row 0 first.
    pub fn lengths(&self) -> impl ExactSizeIterator<Item = usize> + DoubleEndedIterator + 'a {
        self.iter().map(<[u8]>::len)
    }

    /// The rows, copied into a buffer of their own.
    pub fn to_rows(&self) -> Rows {
        let mut rows = Rows::with_capacity(self.len(), self.lengths().sum());
        for row in self.iter() {
            rows.push(row);
        }
        rows
    }

    /// Row `index`, which must be a row.
    fn row(&self, index: usize) -> &'a [u8] {
        match self.layout {
            Layout::EndToEnd(ends) => {
                let start = index.checked_sub(1).map_or(0, |before| ends[before]);
                &self.bytes[start..ends[index]]
            }
            Layout::Spans(spans) => spans[index].of(self.bytes),
        }
    }
}

/// The rows of a [`RowsView`], row 0 first.
pub enum ViewRows<'a> {
    /// Rows end to end: each from where the last ended.
    EndToEnd {
        /// The buffer.
        bytes: &'a [u8],
        /// Where each row left ends.
        ends: std::slice::Iter<'a, usize>,
        /// Where the next row starts.
        start: usize,
    },
    /// Rows apart: each where its span says.
    Spans {
        /// The buffer.
        bytes: &'a [u8],
        /// Each row left's span.
        spans: std::slice::Iter<'a, Span>,
    },
}

impl<'a> Iterator for ViewRows<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        match self {
            Self::EndToEnd { bytes, ends, start } => ends.next().map(|&end| {
                let row = &bytes[*start..end];
                *start = end;
                row
            }),
            Self::Spans { bytes, spans } => spans.next().map(|span| span.of(bytes)),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = match self {
            Self::EndToEnd { ends, .. } => ends.len(),
            Self::Spans { spans, .. } => spans.len(),
        };
        (left, Some(left))
    }
}

impl<'a> DoubleEndedIterator for ViewRows<'a> {
    fn next_back(&mut self) -> Option<&'a [u8]> {
        match self {
            Self::EndToEnd { bytes, ends, start } => {
                let end = *ends.next_back()?;
                // The row before it, if any is left, ends where this one starts.
                let from = ends.as_slice().last().copied().unwrap_or(*start);
                Some(&bytes[from..end])
            }
            Self::Spans { bytes, spans } => spans.next_back().map(|span| span.of(bytes)),
        }
    }
}

impl ExactSizeIterator for ViewRows<'_> {}

/// The rows as text, the way a list of strings prints.
impl fmt::Debug for RowsView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(String::from_utf8_lossy))
            .finish()
    }
}

/// The row being added by [`Rows::push_row`]: bytes can only be appended to it, and
/// the row ends where they end when the writer is dropped.
pub struct RowWriter<'a> {
    rows: &'a mut Rows,
}

impl RowWriter<'_> {
    /// Makes room for `additional` more bytes in this row at once.
    pub fn reserve(&mut self, additional: usize) {
        self.rows.bytes.reserve(additional);
    }

    /// Appends `bytes` to this row.
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.rows.bytes.extend_from_slice(bytes);
    }
}

/// Ends the row where its bytes end.
impl Drop for RowWriter<'_> {
    fn drop(&mut self) {
        self.rows.ends.push(self.rows.bytes.len());
    }
}

impl<S: AsRef<[u8]>> FromIterator<S> for Rows {
    fn from_iter<I: IntoIterator<Item = S>>(rows: I) -> Self {
        let rows = rows.into_iter();
        let mut all = Self::with_capacity(rows.size_hint().0, 0);
        for row in rows {
            all.push(row.as_ref());
        }
        all
    }
}

/// The rows as text, the way a list of strings prints.
impl fmt::Debug for Rows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(String::from_utf8_lossy))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_each_row_apart() {
        let rows: Rows = ["ab", "", "cde"].into_iter().collect();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows.get(0), Some(&b"ab"[..]));
        assert_eq!(rows.get(1), Some(&b""[..]));
        assert_eq!(rows.get(2), Some(&b"cde"[..]));
        assert_eq!(rows.get(3), None);
        assert_eq!(rows.lengths().collect::<Vec<_>>(), [2, 0, 3]);
        assert_eq!(rows.bytes(), b"abcde");
        assert_eq!(rows.to_strings(), ["ab", "", "cde"]);
        assert_eq!(format!("{rows:?}"), r#"["ab", "", "cde"]"#);
    }

    #[test]
    fn rows_pushed_in_place_end_where_their_bytes_end() {
        let mut rows = Rows::new();
        {
            let mut row = rows.push_row();
            row.reserve(2);
            row.extend_from_slice(b"x");
            row.extend_from_slice(b"y");
        }
        drop(rows.push_row());
        rows.push(b"z");
        assert_eq!(rows.iter().collect::<Vec<_>>(), [&b"xy"[..], b"", b"z"]);
        rows.clear();
        assert!(rows.is_empty());
        assert_eq!(rows, Rows::new());
    }

    #[test]
    fn a_view_holds_its_rows_alone() {
        let rows: Rows = ["ab", "", "cde", "f"].into_iter().collect();
        let view = rows.view();
        assert_eq!(view.to_rows(), rows);
        assert_eq!(view.lengths().collect::<Vec<_>>(), [2, 0, 3, 1]);
        // Rows apart in a message, with other bytes between them and out of order.
        let message = b"..cde..ab.f";
        let span = |start, end| Span { start, end };
        let spans = [span(7, 9), span(2, 2), span(2, 5), span(10, 11)];
        let apart = RowsView::spans(message, &spans);
        assert_eq!(apart.len(), 4);
        assert_eq!(apart.get(0), Some(&b"ab"[..]));
        assert_eq!(apart.get(1), Some(&b""[..]));
        assert_eq!(apart.get(4), None);
        assert_eq!(
            apart.iter().collect::<Vec<_>>(),
            view.iter().collect::<Vec<_>>()
        );
        assert_eq!(apart.to_rows(), rows);
        assert_eq!(format!("{apart:?}"), r#"["ab", "", "cde", "f"]"#);
        // Backwards, and from both ends at once, as forwards.
        for view in [view, apart] {
            let back: Vec<_> = view.iter().rev().collect();
            assert_eq!(back, [&b"f"[..], b"cde", b"", b"ab"]);
            let mut both = view.iter();
            assert_eq!(
                (both.next(), both.next_back()),
                (Some(&b"ab"[..]), Some(&b"f"[..]))
            );
            assert_eq!((both.next_back(), both.len()), (Some(&b"cde"[..]), 1));
            assert_eq!(
                (both.next(), both.next(), both.next_back()),
                (Some(&b""[..]), None, None)
            );
        }
        let none = RowsView::spans(message, &[]);
        assert!(none.is_empty());
        assert_eq!(none.to_rows(), Rows::new());
        assert!(Rows::new().view().is_empty());
    }
}
