//! Random boards for the property tests against the naive references (each game's
//! `reference` module, in `src/games/`): proptest strategies, so kept with the tests,
//! where proptest is (the fuzz targets draw boards from their own bytes). Included by
//! `rules_reference.rs` and `live_reference.rs` with `#[path]`.

use proptest::prelude::*;

/// A random rectangular board of `alphabet`'s characters: the first character (empty) is
/// drawn with probability `empty_percent`, the others evenly.
pub fn board(max_side: usize, alphabet: &'static [u8; 3]) -> impl Strategy<Value = Vec<String>> {
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
