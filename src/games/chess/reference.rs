//! A deliberately naive chess: a board of 64 squares, every piece's moves walked square
//! by square, a move legal when it leaves its king unattacked. Slow and plain, it is
//! what the engine (`cozy-chess` and the position around it) is held to on random games
//! (legal moves, SAN both ways, FEN both ways, checks and the end), on Chess960
//! castling among them, and on the perft table.

use super::{Game, Player, Position, Termination};

/// A piece: its kind as FEN's lowercase letter, and whether it is White's.
type Piece = (u8, bool);

/// A position, naively.
#[derive(Clone, Debug)]
struct Naive {
    /// Square `file + 8 * rank`, a1 first.
    squares: [Option<Piece>; 64],
    white: bool,
    /// Castling rights: the rook's file for each of White's and Black's short and long.
    rights: [[Option<usize>; 2]; 2],
    en_passant: Option<usize>,
    chess960: bool,
}

fn square_name(square: usize) -> String {
    format!(
        "{}{}",
        char::from(b'a' + (square % 8) as u8),
        char::from(b'1' + (square / 8) as u8)
    )
}

impl Naive {
    /// A position from a well-formed FEN (castling as KQkq or files).
    fn from_fen(fen: &str, chess960: bool) -> Self {
        let fields: Vec<&str> = fen.split_whitespace().collect();
        let mut squares = [None; 64];
        for (row, text) in fields[0].split('/').enumerate() {
            let rank = 7 - row;
            let mut file = 0;
            for ch in text.bytes() {
                if ch.is_ascii_digit() {
                    file += usize::from(ch - b'0');
                } else {
                    squares[file + 8 * rank] = Some((ch.to_ascii_lowercase(), ch.is_ascii_uppercase()));
                    file += 1;
                }
            }
        }
        let white = fields[1] == "w";
        let mut rights = [[None; 2]; 2];
        for ch in fields[2].bytes().filter(|&ch| ch != b'-') {
            let side = usize::from(ch.is_ascii_lowercase());
            let rank = if side == 0 { 0 } else { 7 };
            let king = (0..8)
                .find(|&f| squares[f + 8 * rank] == Some((b'k', side == 0)))
                .unwrap();
            let rooks: Vec<usize> = (0..8)
                .filter(|&f| squares[f + 8 * rank] == Some((b'r', side == 0)))
                .collect();
            let file = match ch.to_ascii_lowercase() {
                b'k' => *rooks.iter().filter(|&&f| f > king).max().unwrap(),
                b'q' => *rooks.iter().filter(|&&f| f < king).min().unwrap(),
                letter => usize::from(letter - b'a'),
            };
            rights[side][usize::from(file < king)] = Some(file);
        }
        let en_passant = (fields[3] != "-").then(|| {
            let bytes = fields[3].as_bytes();
            usize::from(bytes[0] - b'a') + 8 * usize::from(bytes[1] - b'1')
        });
        Self {
            squares,
            white,
            rights,
            en_passant,
            chess960,
        }
    }

    fn king(&self, white: bool) -> usize {
        (0..64).find(|&s| self.squares[s] == Some((b'k', white))).unwrap()
    }

    /// Whether a piece of `by` (White when true) attacks `target`.
    fn attacked(&self, target: usize, by: bool) -> bool {
        let (tf, tr) = ((target % 8) as i32, (target / 8) as i32);
        let at = |f: i32, r: i32| -> Option<Option<Piece>> {
            ((0..8).contains(&f) && (0..8).contains(&r)).then(|| self.squares[(f + 8 * r) as usize])
        };
        let pawn_rank = if by { tr - 1 } else { tr + 1 };
        for df in [-1, 1] {
            if at(tf + df, pawn_rank) == Some(Some((b'p', by))) {
                return true;
            }
        }
        for (df, dr) in [(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)] {
            if at(tf + df, tr + dr) == Some(Some((b'n', by))) {
                return true;
            }
        }
        for df in -1..=1 {
            for dr in -1..=1 {
                if (df, dr) != (0, 0) && at(tf + df, tr + dr) == Some(Some((b'k', by))) {
                    return true;
                }
            }
        }
        for (df, dr, kinds) in [
            (1, 0, b"rq"),
            (-1, 0, b"rq"),
            (0, 1, b"rq"),
            (0, -1, b"rq"),
            (1, 1, b"bq"),
            (1, -1, b"bq"),
            (-1, 1, b"bq"),
            (-1, -1, b"bq"),
        ] {
            let (mut f, mut r) = (tf + df, tr + dr);
            while let Some(found) = at(f, r) {
                if let Some((kind, white)) = found {
                    if white == by && kinds.contains(&kind) {
                        return true;
                    }
                    break;
                }
                f += df;
                r += dr;
            }
        }
        false
    }

    fn in_check(&self) -> bool {
        self.attacked(self.king(self.white), !self.white)
    }

    /// Every legal move: its UCI (castling as the engine writes it), and the position
    /// after it.
    fn legal(&self) -> Vec<(String, Naive)> {
        let mut out = Vec::new();
        let me = self.white;
        for from in 0..64 {
            let Some((kind, white)) = self.squares[from] else { continue };
            if white != me {
                continue;
            }
            let (ff, fr) = ((from % 8) as i32, (from / 8) as i32);
            let mut targets: Vec<(usize, Option<u8>)> = Vec::new();
            let empty = |f: i32, r: i32| {
                (0..8).contains(&f) && (0..8).contains(&r) && self.squares[(f + 8 * r) as usize].is_none()
            };
            let enemy = |f: i32, r: i32| {
                (0..8).contains(&f)
                    && (0..8).contains(&r)
                    && matches!(self.squares[(f + 8 * r) as usize], Some((_, w)) if w != me)
            };
            match kind {
                b'p' => {
                    let dir = if me { 1 } else { -1 };
                    let last = if me { 7 } else { 0 };
                    let start = if me { 1 } else { 6 };
                    let mut push = |to: usize| {
                        if (to / 8) as i32 == last {
                            for p in [b'q', b'r', b'b', b'n'] {
                                targets.push((to, Some(p)));
                            }
                        } else {
                            targets.push((to, None));
                        }
                    };
                    if empty(ff, fr + dir) {
                        push((ff + 8 * (fr + dir)) as usize);
                        if fr == start && empty(ff, fr + 2 * dir) {
                            push((ff + 8 * (fr + 2 * dir)) as usize);
                        }
                    }
                    for df in [-1, 1] {
                        let (f, r) = (ff + df, fr + dir);
                        if enemy(f, r) || ((0..8).contains(&f) && Some((f + 8 * r) as usize) == self.en_passant) {
                            push((f + 8 * r) as usize);
                        }
                    }
                }
                b'n' | b'k' => {
                    let steps: &[(i32, i32)] = if kind == b'n' {
                        &[(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)]
                    } else {
                        &[(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]
                    };
                    for (df, dr) in steps {
                        if empty(ff + df, fr + dr) || enemy(ff + df, fr + dr) {
                            targets.push(((ff + df + 8 * (fr + dr)) as usize, None));
                        }
                    }
                }
                _ => {
                    let dirs: &[(i32, i32)] = match kind {
                        b'r' => &[(1, 0), (-1, 0), (0, 1), (0, -1)],
                        b'b' => &[(1, 1), (1, -1), (-1, 1), (-1, -1)],
                        _ => &[(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)],
                    };
                    for (df, dr) in dirs {
                        let (mut f, mut r) = (ff + df, fr + dr);
                        while empty(f, r) {
                            targets.push(((f + 8 * r) as usize, None));
                            f += df;
                            r += dr;
                        }
                        if enemy(f, r) {
                            targets.push(((f + 8 * r) as usize, None));
                        }
                    }
                }
            }
            for (to, promotion) in targets {
                let after = self.moved(from, to, promotion);
                if !after.attacked(after.king(me), !me) {
                    let mut uci = format!("{}{}", square_name(from), square_name(to));
                    if let Some(p) = promotion {
                        uci.push(char::from(p));
                    }
                    out.push((uci, after));
                }
            }
        }
        // Castling: king and rook to their squares (g/f or c/d), every square between
        // each and its destination empty but for the two, the king's path unattacked.
        let side = usize::from(!me);
        let rank = if me { 0 } else { 7 };
        let king = self.king(me);
        if !self.in_check() {
            for (long, right) in self.rights[side].iter().enumerate() {
                let Some(rook_file) = *right else { continue };
                let rook = rook_file + 8 * rank;
                let (king_to, rook_to) = if long == 1 { (2 + 8 * rank, 3 + 8 * rank) } else { (6 + 8 * rank, 5 + 8 * rank) };
                let span = |a: usize, b: usize| a.min(b)..=a.max(b);
                let clear = span(king, king_to)
                    .chain(span(rook, rook_to))
                    .all(|s| s == king || s == rook || self.squares[s].is_none());
                let safe = span(king, king_to).all(|s| !self.attacked(s, !me));
                if clear && safe {
                    let mut after = self.clone();
                    after.squares[king] = None;
                    after.squares[rook] = None;
                    after.squares[king_to] = Some((b'k', me));
                    after.squares[rook_to] = Some((b'r', me));
                    after.rights[side] = [None, None];
                    after.white = !me;
                    after.en_passant = None;
                    let to = if self.chess960 { rook } else { king_to };
                    out.push((format!("{}{}", square_name(king), square_name(to)), after));
                }
            }
        }
        out
    }

    /// The position after moving `from` to `to` (not castling).
    fn moved(&self, from: usize, to: usize, promotion: Option<u8>) -> Naive {
        let mut after = self.clone();
        let (kind, me) = self.squares[from].unwrap();
        after.squares[from] = None;
        if kind == b'p' && Some(to) == self.en_passant && self.squares[to].is_none() {
            let behind = if me { to - 8 } else { to + 8 };
            after.squares[behind] = None;
        }
        after.squares[to] = Some((promotion.unwrap_or(kind), me));
        after.en_passant = (kind == b'p' && from.abs_diff(to) == 16).then(|| (from + to) / 2);
        let side = usize::from(!me);
        if kind == b'k' {
            after.rights[side] = [None, None];
        }
        for (side, rank) in [(0, 0), (1, 7)] {
            for right in &mut after.rights[side] {
                if let Some(file) = *right {
                    let rook = file + 8 * rank;
                    if rook == from || rook == to {
                        *right = None;
                    }
                }
            }
        }
        after.white = !me;
        after
    }
}

/// The engine's legal moves of `position` as sorted UCI.
fn engine_moves(position: &Position) -> Vec<String> {
    let mut moves: Vec<String> = position
        .legal_moves()
        .into_iter()
        .map(|mv| position.uci(mv))
        .collect();
    moves.sort();
    moves
}

/// The leaves of `position`'s legal move tree at `depth`, through the engine's
/// position (its own play, not `cozy-chess`'s alone).
fn perft(position: &Position, depth: usize) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = position.legal_moves();
    if depth == 1 {
        return moves.len() as u64;
    }
    moves.into_iter().map(|mv| perft(&position.play(mv), depth - 1)).sum()
}

/// The naive perft.
fn naive_perft(position: &Naive, depth: usize) -> u64 {
    if depth == 0 {
        return 1;
    }
    position
        .legal()
        .into_iter()
        .map(|(_, after)| naive_perft(&after, depth - 1))
        .sum()
}

/// A small random number generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// The positions random games start from: the perft table's, a Chess960 start, and
/// positions that lead to castling of every kind, en passant and promotion soon.
const STARTS: [(&str, bool); 10] = [
    ("", false),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", false),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", false),
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", false),
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", false),
    ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", true),
    ("rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w KQkq - 0 1", true),
    ("1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w BGbg - 0 1", true),
    ("2r1kr2/8/8/8/8/8/8/2R1KR2 w CFcf - 0 1", true),
    ("4k3/1P6/8/3pP3/8/8/6p1/4K2R w K d6 0 1", false),
];

/// Fails against an engine whose legal moves, checks, SAN, FEN or ends differ from the
/// naive reference's, on random games from positions with every kind of castling
/// (Chess960's, with the king or a rook already on its square, among them), en passant
/// and promotions: each position's legal moves, whether it is in check, each move's
/// SAN read back as the move, its FEN read back as itself, and a position without
/// moves a checkmate exactly when in check.
#[test]
fn the_engine_agrees_with_the_naive_reference_on_random_games() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for game_index in 0..160 {
        let (fen, chess960) = STARTS[game_index % STARTS.len()];
        let mut position = Position::from_fen(fen, chess960).unwrap();
        let mut naive = Naive::from_fen(&position.fen(), chess960);
        for _ply in 0..80 {
            let mut expected: Vec<(String, Naive)> = naive.legal();
            expected.sort_by(|a, b| a.0.cmp(&b.0));
            let names: Vec<String> = expected.iter().map(|(uci, _)| uci.clone()).collect();
            assert_eq!(engine_moves(&position), names, "{}", position.fen());
            assert_eq!(position.in_check(), naive.in_check(), "{}", position.fen());
            let reread = Position::from_fen(&position.fen(), chess960).unwrap();
            assert_eq!(reread.fen(), position.fen());
            let legal = position.legal_moves();
            for &mv in &legal {
                let san = position.san(mv, &legal);
                assert_eq!(position.parse_move(&san), Ok(mv), "{san} in {}", position.fen());
                assert_eq!(position.parse_move(&position.uci(mv)), Ok(mv));
            }
            if legal.is_empty() {
                let expected = if naive.in_check() {
                    Termination::Checkmate
                } else {
                    Termination::Stalemate
                };
                // Insufficient material is named before stalemate.
                assert!(matches!(
                    position.termination(),
                    Some(t) if t == expected || (t == Termination::InsufficientMaterial && expected == Termination::Stalemate)
                ));
                break;
            }
            let pick = rng.below(legal.len());
            let mv = legal[pick];
            let uci = position.uci(mv);
            let (_, after) = expected.into_iter().find(|(name, _)| *name == uci).unwrap();
            position = position.play(mv);
            naive = after;
        }
    }
}

/// Fails against an engine (or a position around it) that miscounts any position of
/// the perft table, to the depths that run in a second or two in a debug build
/// (deeper in `cargo bench --bench rules`).
#[test]
fn perft_matches_the_table() {
    for perft_case in super::fixtures::PERFT.iter().chain([&super::fixtures::PERFT_960]) {
        let chess960 = perft_case.name.starts_with("Chess960");
        let position = Position::from_fen(perft_case.fen, chess960).unwrap();
        for (depth, &count) in perft_case.counts.iter().enumerate().take(4) {
            if count > 500_000 {
                break;
            }
            assert_eq!(perft(&position, depth + 1), count, "{} depth {}", perft_case.name, depth + 1);
        }
    }
}

/// Fails against a naive reference that miscounts the table's positions (so that the
/// random games hold the engine to a reference that is right).
#[test]
fn the_naive_reference_matches_the_table_too() {
    for perft_case in super::fixtures::PERFT.iter().chain([&super::fixtures::PERFT_960]) {
        let chess960 = perft_case.name.starts_with("Chess960");
        let naive = Naive::from_fen(perft_case.fen, chess960);
        for (depth, &count) in perft_case.counts.iter().enumerate().take(3) {
            if count > 20_000 {
                break;
            }
            assert_eq!(naive_perft(&naive, depth + 1), count, "{} depth {}", perft_case.name, depth + 1);
        }
    }
}

/// Repetitions, claims and the repetition and move rules, against a count kept by hand:
/// fails against a game that counts a position it has not seen, forgets the first, or
/// ends the game on the wrong repetition.
#[test]
fn repetitions_are_counted_from_the_first_position() {
    let mut game = Game::standard();
    let shuffle = ["Nf3", "Nf6", "Ng1", "Ng8"];
    for (index, mv) in shuffle.iter().cycle().take(16).enumerate() {
        assert_eq!(game.draw_claim().is_some(), index >= 8, "ply {index}");
        game.play(mv).unwrap();
    }
    // The start has now stood five times.
    assert_eq!(
        game.outcome().termination(),
        Some(Termination::FivefoldRepetition)
    );
    assert_eq!(game.draw_claim(), None);
    assert!(game.play("e4").is_err());
}

/// The ends a position or a game names, each in its order.
#[test]
fn each_end_is_named() {
    let end = |fen: &str| Position::from_fen(fen, false).unwrap().termination();
    assert_eq!(end("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"), Some(Termination::Stalemate));
    assert_eq!(end("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"), Some(Termination::Checkmate));
    assert_eq!(end("7k/8/6K1/8/8/8/8/8 b - - 0 1"), Some(Termination::InsufficientMaterial));
    assert_eq!(end("7k/8/6KN/8/8/8/8/8 b - - 0 1"), Some(Termination::InsufficientMaterial));
    assert_eq!(end("7k/8/5BKB/8/8/8/8/8 b - - 0 1"), Some(Termination::InsufficientMaterial));
    assert_eq!(end("7k/8/6KB/8/8/8/8/5B2 b - - 0 1"), None);
    assert_eq!(end("k7/8/8/8/8/8/8/4KNN1 b - - 0 1"), None);
    assert_eq!(end("7k/8/6K1/8/8/8/8/R7 b - - 149 90"), None);
    assert_eq!(end("7k/8/6K1/8/8/8/8/R7 b - - 150 90"), Some(Termination::SeventyFiveMoves));
    // Checkmate before the seventy-five-move rule.
    assert_eq!(end("7k/6Q1/6K1/8/8/8/8/8 b - - 150 90"), Some(Termination::Checkmate));
    // A draw to claim by the fifty-move rule.
    let mut game = Game::new(Position::from_fen("7k/8/6K1/8/8/8/8/R7 w - - 99 90", false).unwrap());
    assert_eq!(game.draw_claim(), None);
    game.play("Ra2").unwrap();
    assert_eq!(game.draw_claim(), Some(Termination::FiftyMoves));
    assert_eq!(game.claim_draw(), Ok(Termination::FiftyMoves));
    assert!(game.outcome().is_over());
}

/// The side that did not run out of time wins unless it could not checkmate.
#[test]
fn a_loss_on_time_is_a_draw_when_the_winner_cannot_checkmate() {
    use crate::kit::clock::Turns;
    let timeout = |fen: &str, loser: Player| {
        let mut game = Game::new(Position::from_fen(fen, false).unwrap());
        game.forfeit_player(loser);
        game.outcome()
    };
    let draw = |outcome: super::Outcome| matches!(outcome, super::Outcome::Drawn { .. });
    // White has only its king.
    assert!(draw(timeout("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", Player::White)));
    // Black to lose, White with a knight against a king and queens: a draw.
    assert!(draw(timeout("4k3/8/8/8/8/8/q7/3NK3 b - - 0 1", Player::Black)));
    // ... against a rook: White wins.
    assert!(!draw(timeout("4k3/8/8/8/8/8/r7/3NK3 b - - 0 1", Player::Black)));
    // Bishops on one colour, no pawn or knight: a draw; with a pawn: a win.
    assert!(!draw(timeout("4k3/8/8/8/8/8/8/2B1KB2 b - - 0 1", Player::Black)));
    assert!(draw(timeout("4k3/8/8/8/8/5B2/8/3BK3 b - - 0 1", Player::Black)));
    assert!(!draw(timeout("4k3/7p/8/8/8/5B2/8/3BK3 b - - 0 1", Player::Black)));
}

/// FEN as the contract asks: X-FEN castling, en passant only when a capture is legal.
#[test]
fn fen_is_written_as_the_contract_asks() {
    let fen = |text: &str, chess960: bool| Position::from_fen(text, chess960).unwrap().fen();
    assert_eq!(fen("", false), super::STANDARD_START);
    assert_eq!(
        fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1", false),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    );
    assert_eq!(
        fen("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", false),
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"
    );
    // Shredder-FEN read, X-FEN written: KQkq for the outermost rooks, files for the rest.
    assert_eq!(
        fen("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", true),
        "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w KQkq - 2 9"
    );
    assert_eq!(
        fen("4k3/8/8/8/8/8/8/R1R1K3 w C - 0 1", true),
        "4k3/8/8/8/8/8/8/R1R1K3 w C - 0 1"
    );
    assert_eq!(
        fen("4k3/8/8/8/8/8/8/R1R1K3 w Q - 0 1", true),
        "4k3/8/8/8/8/8/8/R1R1K3 w Q - 0 1"
    );
    // The last two fields left out together.
    assert_eq!(fen("4k3/8/8/8/8/8/8/4K3 w - -", false), "4k3/8/8/8/8/8/8/4K3 w - - 0 1");
}

/// Every malformed FEN named by its problem.
#[test]
fn a_malformed_fen_says_what_is_wrong() {
    let wrong = |text: &str, chess960: bool| Position::from_fen(text, chess960).unwrap_err().to_string();
    assert!(wrong("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0", false).contains("fields"));
    assert!(wrong("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", false).contains("rank 6"));
    assert!(wrong("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", false).contains("side to move"));
    assert!(wrong("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQQBNR w KQkq - 0 1", false).contains("white kings"));
    assert!(wrong("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1", false).contains("castling right K"));
    assert!(wrong("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKkq - 0 1", false).contains("twice"));
    assert!(wrong("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1", false).contains("en passant"));
    assert!(wrong("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0", false).contains("at least 1"));
    assert!(wrong("Pnbqkbnr/pppppppp/8/8/8/8/PPPPPPP1/RNBQKBNR w KQkq - 0 1", false).contains("pawn on a8"));
    assert!(wrong("rnb1kbnr/pppppppp/8/8/8/8/PPPPqPPP/RNBQKBNR b KQkq - 0 1", false).contains("in check"));
    assert!(wrong("4k3/8/8/8/8/8/8/4K2R w HA - 0 1", false).contains("castling must be"));
}

/// UCI castling as the contract reads it, SAN in every form it allows.
#[test]
fn moves_are_read_in_every_form_the_contract_allows() {
    let position = Position::from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", false).unwrap();
    let castle = position.parse_move("e1g1").unwrap();
    assert_eq!(position.parse_move("e1h1"), Ok(castle));
    assert_eq!(position.parse_move("O-O"), Ok(castle));
    assert_eq!(position.parse_move("0-0+!?"), Ok(castle));
    assert_eq!(position.uci(castle), "e1g1");
    let chess960 = Position::from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", true).unwrap();
    let castle = chess960.parse_move("e1h1").unwrap();
    assert_eq!(chess960.uci(castle), "e1h1");
    assert!(chess960.parse_move("e1g1").is_err());
    let promotion = Position::from_fen("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", false).unwrap();
    let queen = promotion.parse_move("b7b8q").unwrap();
    assert_eq!(promotion.parse_move("b8=Q+"), Ok(queen));
    assert_eq!(promotion.parse_move("b8Q"), Ok(queen));
    assert!(matches!(promotion.parse_move("b8"), Err(super::MoveError::Illegal(why)) if why.contains("promote")));
    assert!(matches!(promotion.parse_move("b7b8"), Err(super::MoveError::Illegal(_))));
    assert!(matches!(promotion.parse_move("hello"), Err(super::MoveError::Malformed(_))));
    let knights = Position::from_fen("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1", false).unwrap();
    assert!(matches!(knights.parse_move("Nd2"), Err(super::MoveError::Illegal(why)) if why.contains("2 legal moves")));
    let legal = knights.legal_moves();
    let nbd2 = knights.parse_move("Nbd2").unwrap();
    assert_eq!(knights.san(nbd2, &legal), "Nbd2");
}
