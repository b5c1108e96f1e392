//! Setups with a history. For every registered live game, in process, through its
//! `Fixture`: a setup whose history is the moves a game applied replies as the last of
//! them did, and the game goes on as it did; a history holding a message its stream
//! rejected is refused at exactly that move, with the text the stream put in `rejected`;
//! and a later setup is rejected, the game going on. Against the naive referees (Othello,
//! Connect Four, Tic-Tac-Toe), in process: the reply to a setup is the referee's state
//! after the whole history; a history holding a move its stream would reject is
//! malformed at exactly the first such move, with the text the stream would have put in
//! `rejected`; and the game goes on after a history exactly as it does after the same
//! moves sent one at a time. Over the wire: a history longer than the board, Tic-Tac-Toe's
//! setup rules, and Othello's automatic passes in a history.

mod common;

use common::setups::*;

use std::fmt::Debug;

use arbiter::games::connect_four::reference::NaiveConnectFour;
use arbiter::games::fixture::naive_ending;
use arbiter::games::othello::reference::{naive_othello_flips, NaiveOthello};
use arbiter::games::othello::Color;
use arbiter::games::tic_tac_toe::reference::NaiveReferee;
use arbiter::games::tic_tac_toe::{self, Player};
use arbiter::kit::grid::Cell;
use arbiter::kit::naive::Expected;
use arbiter::proto::{
    Board, Cell as WireCell, PlayConnectFourResponse, PlayOthelloResponse, PlayTicTacToeRequest,
    PlayTicTacToeResponse, Verdict,
};
use arbiter::Arbiter;
use arbiter::{LiveGame, StreamLimits};
use common::games::{for_each_game, GameTest};
use common::live::{self, check, in_history, nexts, picks, setup, state, Live, Next, Pick, Reply};
use common::live::{Played, Wire};
use common::messages::{cells, tic_tac_toe_move};
use common::TestServer;
use futures_util::StreamExt;
use proptest::prelude::*;
use proptest::sample::Index;
use tokio_util::sync::CancellationToken;
use tonic::{Code, Status};
use tonic_types::StatusExt;

fn wire(cell: Cell) -> WireCell {
    WireCell {
        row: cell.row as i32,
        col: cell.col as i32,
    }
}

/// A service as the Play RPCs' handlers run it, in process.
fn arbiter() -> Arbiter {
    Arbiter::new(StreamLimits::default(), CancellationToken::new())
}

/// Runs `requests` through a live game of kind `G` in the service and returns every
/// reply, or the status ending the stream.
async fn replies_of<G: LiveGame>(requests: Vec<G::Request>) -> Vec<Result<G::Response, Status>> {
    let arbiter = arbiter();
    arbiter
        .open_game::<G, _>(futures_util::stream::iter(requests.into_iter().map(Ok)))
        .collect()
        .await
}

/// [`replies_of`], on a runtime of its own.
fn run<G: LiveGame>(requests: Vec<G::Request>) -> Vec<Result<G::Response, Status>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(replies_of::<G>(requests))
}

/// The field violations of a status that must be INVALID_ARGUMENT with a BadRequest.
fn violations(status: &Status) -> Vec<(String, String)> {
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    status
        .get_details_bad_request()
        .unwrap_or_else(|| panic!("no BadRequest in {status:?}"))
        .field_violations
        .into_iter()
        .map(|v| (v.field, v.description))
        .collect()
}

/// One kind of live game as these tests drive it: a naive referee's state, and the
/// game's wire messages.
trait Kind {
    /// The game's messages, and the service's game.
    type Wire: Wire;

    /// The legal moves now; empty once the game is over.
    fn legal(&self) -> Vec<Move<Self>>;
    /// Every move on the board, legal or not.
    fn on_board(&self) -> Vec<Move<Self>>;
    /// The board's cells: the most moves a history may hold.
    fn cells(&self) -> usize;
    /// Moves the game would reject now, one list per reason (a list may be empty).
    fn illegal(&self) -> Vec<Vec<Move<Self>>>;
    /// What the referee says of a move (applying it when legal).
    fn play(&mut self, step: Move<Self>) -> Expected<Response<Self>>;
    /// The state now, as the reply to a message that changed nothing.
    fn now(&self) -> Response<Self>;
}

/// A move of kind `K`, as the wire carries it.
type Move<K> = <<K as Kind>::Wire as Wire>::Move;
type Request<K> = live::Request<<K as Kind>::Wire>;
type Response<K> = live::Response<<K as Kind>::Wire>;
/// The service's game of kind `K`.
type Game<K> = <<K as Kind>::Wire as Wire>::Game;

/// Live Othello, refereed by [`NaiveOthello`].
struct Othello(NaiveOthello);

impl Kind for Othello {
    type Wire = live::Othello;

    fn legal(&self) -> Vec<(i32, i32)> {
        let cells = self.0.legal_cells();
        cells
            .into_iter()
            .map(|c| (c.row as i32, c.col as i32))
            .collect()
    }

    fn on_board(&self) -> Vec<(i32, i32)> {
        let (h, w) = (self.0.rows.len() as i32, self.0.rows[0].len() as i32);
        (0..h).flat_map(|r| (0..w).map(move |c| (r, c))).collect()
    }

    fn cells(&self) -> usize {
        self.0.rows.len() * self.0.rows[0].len()
    }

    fn illegal(&self) -> Vec<Vec<(i32, i32)>> {
        let rows = &self.0.rows;
        let (h, w) = (rows.len() as i32, rows[0].len() as i32);
        let outside = vec![
            (-1, 0),
            (0, -1),
            (h, 0),
            (0, w),
            (i32::MIN, 0),
            (0, i32::MAX),
        ];
        let (mut taken, mut dead) = (Vec::new(), Vec::new());
        for (r, c) in self.on_board() {
            if rows[r as usize].as_bytes()[c as usize] != b'.' {
                taken.push((r, c));
            } else if let Some(color) = self.0.to_move {
                let target = Cell::new(r as usize, c as usize);
                if naive_othello_flips(rows, target, color).is_empty() {
                    dead.push((r, c));
                }
            }
        }
        let over = if self.0.to_move.is_none() {
            self.on_board()
        } else {
            Vec::new()
        };
        vec![outside, taken, dead, over]
    }

    fn play(&mut self, (row, col): (i32, i32)) -> Expected<PlayOthelloResponse> {
        self.0.play(i64::from(row), i64::from(col))
    }

    fn now(&self) -> PlayOthelloResponse {
        self.0.reply(Vec::new(), false)
    }
}

/// Live Connect Four, refereed by [`NaiveConnectFour`].
struct ConnectFour(NaiveConnectFour);

impl Kind for ConnectFour {
    type Wire = live::ConnectFour;

    fn legal(&self) -> Vec<i32> {
        if self.0.over.is_some() {
            return Vec::new();
        }
        self.on_board()
            .into_iter()
            .filter(|&c| self.0.rows[0][c as usize] == b'0')
            .collect()
    }

    fn on_board(&self) -> Vec<i32> {
        (0..self.0.rows[0].len() as i32).collect()
    }

    fn cells(&self) -> usize {
        self.0.rows.len() * self.0.rows[0].len()
    }

    fn illegal(&self) -> Vec<Vec<i32>> {
        let w = self.0.rows[0].len() as i32;
        let outside = vec![-1, w, w + 7, i32::MIN, i32::MAX];
        let full = self
            .on_board()
            .into_iter()
            .filter(|&c| self.0.rows[0][c as usize] != b'0')
            .collect();
        let over = if self.0.over.is_some() {
            self.on_board()
        } else {
            Vec::new()
        };
        vec![outside, full, over]
    }

    fn play(&mut self, col: i32) -> Expected<PlayConnectFourResponse> {
        self.0.drop_piece(i64::from(col))
    }

    fn now(&self) -> PlayConnectFourResponse {
        self.0.reply(None, Vec::new())
    }
}

/// Live Tic-Tac-Toe, refereed by [`NaiveReferee`] and the verdict it last gave.
struct TicTacToe {
    referee: NaiveReferee,
    verdict: tic_tac_toe::Outcome,
}

impl TicTacToe {
    fn new() -> Self {
        Self {
            referee: NaiveReferee::default(),
            verdict: tic_tac_toe::Outcome::Pending,
        }
    }
}

/// A PlayTicTacToe setup of `history`; its `row` and `col` are set to the centre, which
/// a setup must not play.
fn centre_setup(history: &[(i32, i32)]) -> PlayTicTacToeRequest {
    tic_tac_toe_setup(history, (1, 1))
}

impl Kind for TicTacToe {
    type Wire = live::TicTacToe;

    fn legal(&self) -> Vec<(i32, i32)> {
        if self.referee.over {
            return Vec::new();
        }
        self.on_board()
            .into_iter()
            .filter(|&(r, c)| self.referee.squares[r as usize][c as usize] == 0)
            .collect()
    }

    fn on_board(&self) -> Vec<(i32, i32)> {
        (0..3).flat_map(|r| (0..3).map(move |c| (r, c))).collect()
    }

    fn cells(&self) -> usize {
        9
    }

    fn illegal(&self) -> Vec<Vec<(i32, i32)>> {
        let outside = vec![(-1, 0), (0, 3), (3, 1), (i32::MIN, 0), (0, i32::MAX)];
        let taken = self
            .on_board()
            .into_iter()
            .filter(|&(r, c)| self.referee.squares[r as usize][c as usize] != 0)
            .collect();
        let over = if self.referee.over {
            self.on_board()
        } else {
            Vec::new()
        };
        vec![outside, taken, over]
    }

    fn play(&mut self, (row, col): (i32, i32)) -> Expected<PlayTicTacToeResponse> {
        match self.referee.play(i64::from(row), i64::from(col)) {
            Ok(verdict) => {
                self.verdict = verdict;
                Expected {
                    reply: self.now(),
                    rejected: None,
                }
            }
            Err(word) => Expected {
                reply: self.now(),
                rejected: Some(word),
            },
        }
    }

    fn now(&self) -> PlayTicTacToeResponse {
        let (verdict, line) = match self.verdict {
            tic_tac_toe::Outcome::Pending => (Verdict::Pending, Vec::new()),
            tic_tac_toe::Outcome::Draw => (Verdict::Draw, Vec::new()),
            tic_tac_toe::Outcome::Won { player, line } => (
                match player {
                    Player::A => Verdict::AWins,
                    Player::B => Verdict::BWins,
                },
                line.iter().copied().map(wire).collect(),
            ),
            tic_tac_toe::Outcome::Forfeited { .. } => unreachable!("no clock in these games"),
        };
        let rows: Vec<String> = self
            .referee
            .squares
            .iter()
            .map(|row| {
                row.iter()
                    .map(|&m| if m == 0 { '.' } else { char::from(m) })
                    .collect()
            })
            .collect();
        PlayTicTacToeResponse {
            verdict: verdict.into(),
            ending: naive_ending(verdict),
            line,
            board: Some(Board::from_rows(rows)),
            moves_played: self.referee.moves as i32,
            rejected: String::new(),
            ..Default::default()
        }
    }
}

/// One illegal move to insert into a history: before which legal pick (wrapped to the
/// history's length; past the end of the game, after it), which kind of illegal move,
/// and which of that kind.
#[derive(Debug, Clone)]
struct Insert {
    at: Index,
    kind: Index,
    pick: Index,
}

/// A history as drawn, before any game: picks among the legal moves at each point (the
/// n-th, wrapped; the history stops where the game does, or, with `stop_at_pass`, after
/// the first move that makes the other side pass), and the illegal moves put in.
#[derive(Debug, Clone)]
struct Draw {
    legal: Vec<Index>,
    illegal: Vec<Insert>,
    stop_at_pass: bool,
}

fn draw(max_legal: usize) -> impl Strategy<Value = Draw> {
    let insert = (any::<Index>(), any::<Index>(), any::<Index>())
        .prop_map(|(at, kind, pick)| Insert { at, kind, pick });
    (
        prop::collection::vec(any::<Index>(), 0..max_legal),
        prop_oneof![
            3 => Just(Vec::new()),
            2 => prop::collection::vec(insert, 1..=2),
        ],
        any::<bool>(),
    )
        .prop_map(|(legal, illegal, stop_at_pass)| Draw {
            legal,
            illegal,
            stop_at_pass,
        })
}

/// A history made by `draw` on `game`, which it leaves after the history's legal moves:
/// the moves, and either the referee's reply after them (`start` with no move) or the
/// first illegal move's index and the word its rejection must hold.
#[allow(clippy::type_complexity)]
fn history<K: Kind>(
    game: &mut K,
    start: Response<K>,
    draw: &Draw,
) -> Result<(Vec<Move<K>>, Result<Response<K>, (usize, &'static str)>), TestCaseError> {
    let n = draw.legal.len();
    let mut inserts: Vec<(usize, &Insert)> = draw
        .illegal
        .iter()
        .map(|insert| (insert.at.index(n + 1), insert))
        .collect();
    inserts.sort_by_key(|&(at, _)| at);
    let mut inserts = inserts.into_iter().peekable();
    let (mut steps, mut last, mut first_illegal) = (Vec::new(), start, None);
    let (mut j, mut stopped) = (0, false);
    loop {
        let legal = game.legal();
        let ending = j == n || legal.is_empty() || stopped;
        while let Some(&(at, insert)) = inserts.peek() {
            if at != j && !ending {
                break;
            }
            inserts.next();
            let kinds: Vec<Vec<Move<K>>> = game
                .illegal()
                .into_iter()
                .filter(|kind| !kind.is_empty())
                .collect();
            let kind = &kinds[insert.kind.index(kinds.len())];
            let step = kind[insert.pick.index(kind.len())];
            let Some(word) = game.play(step).rejected else {
                return Err(TestCaseError::fail(format!(
                    "the referee applied {step:?}, drawn as illegal"
                )));
            };
            first_illegal.get_or_insert((steps.len(), word));
            steps.push(step);
        }
        if ending {
            break;
        }
        let step = legal[draw.legal[j].index(legal.len())];
        let played = game.play(step);
        prop_assert!(played.rejected.is_none(), "{:?} was legal", step);
        stopped = draw.stop_at_pass && played.reply.passed();
        last = played.reply;
        steps.push(step);
        j += 1;
    }
    Ok((steps, first_illegal.map_or(Ok(last), Err)))
}

/// The messages `next` makes on `game`, and what the referee says of each.
fn continuation<K: Kind>(
    game: &mut K,
    next: &[Next],
) -> (Vec<Request<K>>, Vec<Expected<Response<K>>>) {
    let (mut requests, mut expected) = (Vec::new(), Vec::new());
    for message in next {
        let (request, outcome) = match message {
            Next::Legal(pick) => {
                let legal = game.legal();
                let choices = if legal.is_empty() {
                    game.on_board()
                } else {
                    legal
                };
                let step = choices[pick.index(choices.len())];
                (K::Wire::request(step), game.play(step))
            }
            Next::Anywhere(r, c) => {
                let step = K::Wire::anywhere(*r, *c);
                (K::Wire::request(step), game.play(step))
            }
            Next::Setup => (
                K::Wire::later_setup(),
                Expected {
                    reply: game.now(),
                    rejected: Some("setup"),
                },
            ),
            Next::Empty => match K::Wire::empty() {
                Some(request) => (
                    request,
                    Expected {
                        reply: game.now(),
                        rejected: Some("no action"),
                    },
                ),
                None => continue,
            },
        };
        requests.push(request);
        expected.push(outcome);
    }
    (requests, expected)
}

fn reply<R>(replies: &[Result<R, Status>], index: usize) -> Result<&R, TestCaseError> {
    match replies.get(index) {
        Some(Ok(reply)) => Ok(reply),
        Some(Err(status)) => Err(TestCaseError::fail(format!(
            "reply {index} is the status {status:?}"
        ))),
        None => Err(TestCaseError::fail(format!(
            "no reply {index} of {}",
            replies.len()
        ))),
    }
}

/// The whole test of one history on one game, given the referee at the start and the
/// reply it gives there.
///
/// Broken servers this fails: one that replays a history from another position (the
/// standard board, the wrong side first), counts it not in `moves_played`, reports the
/// setup's own state rather than the last move's flips, placed, run, line or pass,
/// applies a history move its stream would reject (or rejects a legal one, or names the
/// wrong index, or with other words than its stream's), checks the history's length
/// against too few cells, treats a Tic-Tac-Toe setup's row and col as a move, or leaves
/// a game after a history that goes on differently from the same game played move by
/// move.
fn check_history<K: Kind>(
    mut game: K,
    start: Response<K>,
    draw: &Draw,
    next: &[Next],
    setup: impl Fn(&[Move<K>]) -> Request<K>,
    bare_default: bool,
) -> Result<(), TestCaseError> {
    let (steps, outcome) = history(&mut game, start, draw)?;
    if steps.len() > game.cells() {
        // Illegal moves put in after the end can make a history longer than the board:
        // refused as a whole, before any move is looked at.
        let resumed = run::<Game<K>>(vec![setup(&steps)]);
        prop_assert_eq!(resumed.len(), 1);
        let Err(status) = &resumed[0] else {
            return Err(TestCaseError::fail(
                "a history longer than the board accepted",
            ));
        };
        let violations = violations(status);
        prop_assert_eq!(violations.len(), 1, "{:?}", violations);
        prop_assert_eq!(&violations[0].0, "setup.history");
        return Ok(());
    }
    // The same game without a history: its plain setup, or none at all for the default
    // start when the history holds a move to open the stream with.
    let plain = (!bare_default || steps.is_empty()).then(|| setup(&[]));
    let offset = usize::from(plain.is_some());
    let mut one_by_one: Vec<Request<K>> = plain.into_iter().collect();
    one_by_one.extend(steps.iter().map(|&step| K::Wire::request(step)));
    let (more, expected) = match &outcome {
        Ok(_) => continuation(&mut game, next),
        Err(_) => (Vec::new(), Vec::new()),
    };
    one_by_one.extend(more.iter().cloned());
    let mut with_history = vec![setup(&steps)];
    with_history.extend(more);

    let resumed = run::<Game<K>>(with_history);
    let played = run::<Game<K>>(one_by_one);
    match outcome {
        Err((index, word)) => {
            prop_assert_eq!(resumed.len(), 1, "a malformed setup ends the stream");
            let Err(status) = &resumed[0] else {
                return Err(TestCaseError::fail(format!(
                    "history {steps:?} accepted, but move {index} should be rejected"
                )));
            };
            let violations = violations(status);
            prop_assert_eq!(violations.len(), 1, "{:?}", violations);
            let (field, description) = &violations[0];
            prop_assert_eq!(field, &format!("setup.history[{index}]"));
            prop_assert!(
                description.contains(word),
                "{:?} should mention {:?}",
                description,
                word
            );
            for before in 0..index {
                prop_assert_eq!(reply(&played, offset + before)?.rejected(), "");
            }
            // The stream, given the same move, rejects it with the same text.
            prop_assert_eq!(reply(&played, offset + index)?.rejected(), description);
        }
        Ok(after) => {
            prop_assert_eq!(resumed.len(), 1 + expected.len());
            prop_assert_eq!(played.len(), offset + steps.len() + expected.len());
            let first = reply(&resumed, 0)?;
            prop_assert_eq!(
                first,
                &after,
                "the setup's reply is the state after the history"
            );
            for i in 0..steps.len() {
                prop_assert_eq!(reply(&played, offset + i)?.rejected(), "");
            }
            if offset + steps.len() > 0 {
                prop_assert_eq!(reply(&played, offset + steps.len() - 1)?, first);
            }
            for (k, want) in expected.iter().enumerate() {
                let got = reply(&resumed, 1 + k)?;
                prop_assert_eq!(got, reply(&played, offset + steps.len() + k)?);
                match want.rejected {
                    None => prop_assert_eq!(got.rejected(), ""),
                    Some(word) => prop_assert!(
                        got.rejected().contains(word),
                        "rejection {:?} should mention {:?}",
                        got.rejected(),
                        word
                    ),
                }
                // The referee writes no texts: only their gist is compared, above.
                let mut got = got.clone();
                got.clear_rejected();
                prop_assert_eq!(&got, &want.reply);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random boards up to 12x12 and the standard start, either side to move. Fails the
    /// broken servers [`check_history`] names, and one that replays an Othello history
    /// without its automatic passes.
    #[test]
    fn othello_histories_match_the_naive_referee(
        board in prop::option::weighted(
            0.7,
            prop_oneof![4 => othello_board(12), 1 => pass_board()],
        ),
        black in any::<bool>(),
        draw in draw(60),
        next in nexts(30, 14, 4),
        bare in any::<bool>(),
    ) {
        let color = if black { Color::Black } else { Color::White };
        let rows = board.clone().unwrap_or_else(standard);
        let (referee, passed) = NaiveOthello::new(rows.clone(), color);
        let start = referee.reply(Vec::new(), passed);
        check_history(
            Othello(referee),
            start,
            &draw,
            &next,
            |history| othello_setup(&rows, color, history),
            bare && black && board.is_none(),
        )?;
    }

    /// Random sizes 1 to 10 and run lengths 1 to 6, each sometimes the default (0). Fails
    /// the broken servers [`check_history`] names, and one that replays a Connect Four
    /// history on another size or run length than the setup's (or the defaults for 0).
    #[test]
    fn connect_four_histories_match_the_naive_referee(
        shape in (side(10), side(10), side(6)),
        draw in draw(80),
        next in nexts(30, 12, 4),
        bare in any::<bool>(),
    ) {
        let (rows, cols, run) = shape;
        let or = |value: i32, default: usize| if value == 0 { default } else { value as usize };
        let referee = NaiveConnectFour::new(or(rows, 6), or(cols, 7), or(run, 4));
        let start = referee.reply(None, Vec::new());
        check_history(
            ConnectFour(referee),
            start,
            &draw,
            &next,
            |history| connect_four_setup(shape, history),
            bare && shape == (0, 0, 0),
        )?;
    }

    /// Histories from the empty board, A first. Fails the broken servers
    /// [`check_history`] names, and one that plays a Tic-Tac-Toe setup's row and col.
    #[test]
    fn tic_tac_toe_histories_match_the_naive_referee(
        draw in draw(12),
        next in nexts(12, 4, 4),
        bare in any::<bool>(),
    ) {
        let game = TicTacToe::new();
        let start = game.now();
        check_history(game, start, &draw, &next, centre_setup, bare)?;
    }
}

/// Random games of each registered live game, in process: each played from the game's
/// test start with up to this many random messages.
const MESSAGES: usize = 60;

/// Games per kind in each generic test.
const GAMES: u32 = 100;

/// Games per kind replayed: fewer, each being replayed once per move it applied.
const REPLAYED_GAMES: u32 = 40;

/// A random game of `G` from its test start, played in process with `picks`.
async fn played<G: LiveGame>(picks: &[Pick]) -> Result<Played<G>, TestCaseError> {
    let arbiter = arbiter();
    let live = Live::<G, _>::within(&arbiter)?;
    live.play(setup::<G>(&[]), picks).await
}

/// What one kind's games added up to, in a generic test: counts by name.
#[derive(Debug, Default)]
struct Tally(Vec<(&'static str, usize)>);

impl Tally {
    /// The tally of every game's counts, added up name by name.
    fn of(games: Vec<Vec<(&'static str, usize)>>) -> Self {
        let mut tally = Tally::default();
        for (name, count) in games.into_iter().flatten() {
            match tally.0.iter_mut().find(|(seen, _)| *seen == name) {
                Some((_, total)) => *total += count,
                None => tally.0.push((name, count)),
            }
        }
        tally
    }

    /// Prints the tally, and fails if any of `names` counted nothing.
    fn assert_counted(&self, game: &str, names: &[&str]) {
        println!("{game}: {:?}", self.0);
        for name in names {
            let count = self.0.iter().find(|(seen, _)| seen == name).map(|c| c.1);
            assert!(count.unwrap_or(0) > 0, "{game}: no {name}");
        }
    }
}

/// A random game, then, for each number of its applied moves from none to all, the
/// setup of the game's start with those moves as its history, followed by every message
/// the game was sent after the last of them: the setup's reply is the reply that move
/// got (the first setup's reply, with no move), and every later reply is the game's own.
async fn replay<G: LiveGame>(picks: &[Pick]) -> Result<Vec<(&'static str, usize)>, TestCaseError> {
    let game = played::<G>(picks).await?;
    let moves = game.moves(game.resumable());
    let (mut replayed, mut ended) = (0, 0);
    for count in 0..=moves.len() {
        let last = if count == 0 { 0 } else { moves[count - 1] };
        let mut messages = vec![setup::<G>(&game.messages_at(&moves[..count]))];
        messages.extend(game.messages[last + 1..].iter().cloned());
        let replies = replies_of::<G>(messages).await;
        prop_assert_eq!(
            replies.len(),
            game.messages.len() - last,
            "the stream goes on"
        );
        let first = reply(&replies, 0)?;
        prop_assert_eq!(
            state::<G>(first),
            state::<G>(&game.replies[last]),
            "the setup's reply is the reply to its history's last move, message {}",
            last
        );
        for i in last + 1..game.messages.len() {
            let got = reply(&replies, i - last)?;
            prop_assert_eq!(
                state::<G>(got),
                state::<G>(&game.replies[i]),
                "message {}",
                i
            );
        }
        replayed += count;
        ended += usize::from(count > 0 && G::seen(first).verdict != Verdict::Pending);
    }
    Ok(vec![
        ("history", moves.len() + 1),
        ("move replayed", replayed),
        ("history that ends its game", ended),
    ])
}

/// Histories of every registered live game replay as the same moves played live.
///
/// Broken servers this fails: one that replays a history from another position or with
/// the other side first, counts it not in `moves_played`, reports the setup's own state
/// rather than the last move's (Othello's flips and pass, Connect Four's and Gomoku's
/// placed piece and run, Tic-Tac-Toe's line, chess's last move and draw claim), refuses a
/// move its stream applied (or a history as long as the board, checked against too few
/// cells), leaves open a game its history ended, or leaves a game that goes on
/// differently from the same game played move by move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_game_replays_a_history_as_its_moves_played_live() {
    struct Replay;
    impl GameTest for Replay {
        async fn run<G: LiveGame>(&self) {
            let games = check(REPLAYED_GAMES, picks(MESSAGES), |picks| async move {
                replay::<G>(&picks).await
            });
            let names = ["move replayed", "history that ends its game"];
            Tally::of(games).assert_counted(G::RPC, &names);
        }
    }
    for_each_game(&Replay).await;
}

/// A random game with the message the game always rejects put in somewhere; then, for
/// each message the game rejected while it went on that a history holds, the setup of
/// the game's start whose history is the moves applied before it, that message, and the
/// moves applied after it but the last (no longer than the game's own): refused, ending
/// the stream with INVALID_ARGUMENT naming `setup.history[i]`, `i` that message's place,
/// with the text the stream rejected it with (chess adds the move to it).
async fn refuse<G: LiveGame>(
    (mut picks, at): (Vec<Pick>, Index),
) -> Result<Vec<(&'static str, usize)>, TestCaseError> {
    picks.insert(at.index(picks.len() + 1), Pick::Rejected);
    let game = played::<G>(&picks).await?;
    let limit = game.resumable();
    let mut refused = 0;
    for i in 1..limit {
        let seen = G::seen(&game.replies[i]);
        let message = &game.messages[i];
        // Past the end of a game, a history may be longer than the board.
        if seen.rejected.is_empty() || seen.verdict != Verdict::Pending || !in_history::<G>(message)
        {
            continue;
        }
        let (before, mut after) = (game.moves(i), game.moves(limit));
        after.retain(|&j| j > i);
        after.pop();
        let mut history = game.messages_at(&before);
        history.push(message.clone());
        history.extend(game.messages_at(&after));
        let replies = replies_of::<G>(vec![setup::<G>(&history)]).await;
        prop_assert_eq!(replies.len(), 1, "a malformed setup ends the stream");
        let Err(status) = &replies[0] else {
            return Err(TestCaseError::fail(format!(
                "a history with message {i}, rejected, accepted"
            )));
        };
        let violations = violations(status);
        prop_assert_eq!(violations.len(), 1, "{:?}", violations);
        let (field, description) = &violations[0];
        prop_assert_eq!(field, &format!("setup.history[{}]", before.len()));
        prop_assert!(
            description.starts_with(seen.rejected),
            "{:?} should say what the stream said, {:?}",
            description,
            seen.rejected
        );
        refused += 1;
    }
    Ok(vec![("history refused", refused)])
}

/// A history holding a message its stream rejected is refused at that message, for
/// every registered live game.
///
/// Broken servers this fails: one that applies a history move its stream would reject
/// (or rejects one it would apply before it), names another place than that move's or
/// the whole history, refuses it with other words than its stream's, or answers the
/// setup rather than ending the stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_game_refuses_a_history_at_a_move_its_stream_rejects() {
    struct Refuse;
    impl GameTest for Refuse {
        async fn run<G: LiveGame>(&self) {
            let strategy = (picks(MESSAGES), any::<Index>());
            let games = check(
                GAMES,
                strategy,
                |drawn| async move { refuse::<G>(drawn).await },
            );
            Tally::of(games).assert_counted(G::RPC, &["history refused"]);
        }
    }
    for_each_game(&Refuse).await;
}

/// `reply` as it prints, its `rejected` text left out: what the replies to two messages
/// rejected at the same point both say.
fn unrejected<G: LiveGame>(reply: &G::Response) -> Result<String, TestCaseError> {
    let rejected = format!("rejected: {:?}", G::seen(reply).rejected);
    let printed = format!("{:?}", state::<G>(reply));
    prop_assert!(printed.contains(&rejected), "{} in {}", rejected, printed);
    Ok(printed.replacen(&rejected, "rejected: \"\"", 1))
}

/// A random game with a later setup (of the game's start) put in somewhere, and the same
/// messages with each later setup replaced by the message the game always rejects, in
/// another stream: every reply is the same, but for the later setups' own, which are
/// rejected and otherwise say what the other message's rejection says.
async fn later_setups<G: LiveGame>(
    (mut picks, at): (Vec<Pick>, Index),
) -> Result<Vec<(&'static str, usize)>, TestCaseError> {
    picks.insert(at.index(picks.len() + 1), Pick::Setup);
    let game = played::<G>(&picks).await?;
    let later = |i: usize| i > 0 && matches!(picks[i - 1], Pick::Setup);
    let twin: Vec<G::Request> = (0..game.messages.len())
        .map(|i| match later(i) {
            true => G::rejected(),
            false => game.messages[i].clone(),
        })
        .collect();
    let replies = replies_of::<G>(twin).await;
    prop_assert_eq!(replies.len(), game.messages.len(), "the streams go on");
    let (mut setups, mut after_moves) = (0, 0);
    for (i, want) in game.replies.iter().enumerate() {
        let got = reply(&replies, i)?;
        if !later(i) {
            prop_assert_eq!(state::<G>(want), state::<G>(got), "message {}", i);
            continue;
        }
        let seen = G::seen(want);
        prop_assert!(
            !seen.rejected.is_empty(),
            "message {}, a later setup, applied",
            i
        );
        prop_assert!(!G::seen(got).rejected.is_empty(), "message {} applied", i);
        prop_assert_eq!(
            unrejected::<G>(want)?,
            unrejected::<G>(got)?,
            "message {}",
            i
        );
        setups += 1;
        after_moves += usize::from(seen.moves_played > 0);
    }
    Ok(vec![
        ("later setup", setups),
        ("later setup after a move", after_moves),
    ])
}

/// A setup is only the first message: later, for every registered live game, it is
/// rejected, the game unchanged, and the game goes on.
///
/// Broken servers this fails: one that applies a later setup (the game starting over),
/// plays Tic-Tac-Toe's row and col of it as a move, ends the stream on it, or answers it
/// with another state than any rejected message gets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_game_rejects_a_later_setup_and_goes_on() {
    struct LaterSetups;
    impl GameTest for LaterSetups {
        async fn run<G: LiveGame>(&self) {
            let strategy = (picks(MESSAGES), any::<Index>());
            let games = check(GAMES, strategy, |drawn| async move {
                later_setups::<G>(drawn).await
            });
            let names = ["later setup", "later setup after a move"];
            Tally::of(games).assert_counted(G::RPC, &names);
        }
    }
    for_each_game(&LaterSetups).await;
}

/// The violations a Play stream's refusal of its first message carries: the stream must
/// end with INVALID_ARGUMENT before any reply.
async fn refused<Resp: Debug>(
    opened: Result<tonic::Response<tonic::Streaming<Resp>>, Status>,
) -> Vec<(String, String)> {
    let status = match opened {
        Err(status) => status,
        Ok(replies) => match replies.into_inner().message().await {
            Err(status) => status,
            Ok(reply) => panic!("the setup was answered with {reply:?}"),
        },
    };
    violations(&status)
}

/// Every reply of a Play stream that must stay OK to its end.
async fn replies<Resp>(
    opened: Result<tonic::Response<tonic::Streaming<Resp>>, Status>,
) -> Vec<Resp> {
    let mut replies = opened.expect("the stream opens").into_inner();
    let mut all = Vec::new();
    while let Some(reply) = replies.message().await.expect("no error") {
        all.push(reply);
    }
    all
}

/// The description of the one violation of a setup refused for its history as a whole:
/// on `setup.history`.
fn on_history(violations: Vec<(String, String)>) -> String {
    assert_eq!(violations.len(), 1, "{violations:?}");
    let (field, description) = violations.into_iter().next().unwrap();
    assert_eq!(field, "setup.history");
    description
}

/// A history longer than the board has cells is refused as a whole, on `setup.history`,
/// for each game. A server that only checks each move would name `setup.history[4]`
/// (Connect Four: the game is over), `setup.history[1]` (Tic-Tac-Toe: taken) or
/// `setup.history[0]` (Othello: turns over no disc); one that does not check would
/// apply the setup.
#[tokio::test]
async fn a_history_longer_than_the_board_is_refused_on_setup_history() {
    let server = TestServer::start().await;
    let mut client = server.client().await;

    let too_long = connect_four_setup((2, 2, 0), &[0, 0, 1, 1, 0]);
    let why =
        on_history(refused(client.play_connect_four(tokio_stream::once(too_long)).await).await);
    assert!(why.contains('5') && why.contains('4'), "{why}");

    let too_long = centre_setup(&[(0, 0); 10]);
    let why =
        on_history(refused(client.play_tic_tac_toe(tokio_stream::once(too_long)).await).await);
    assert!(why.contains("10") && why.contains('9'), "{why}");

    let too_long = othello_setup(&[".".to_owned()], Color::Black, &[(0, 0), (0, 0)]);
    on_history(refused(client.play_othello(tokio_stream::once(too_long)).await).await);

    // As long as the board, and legal: accepted, and the game is over.
    let full = connect_four_setup((2, 2, 0), &[0, 0, 1, 1]);
    let got = replies(client.play_connect_four(tokio_stream::iter([full])).await).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].verdict, i32::from(Verdict::Draw));
    assert_eq!(got[0].moves_played, 4);
}

/// Every reply of a PlayTicTacToe stream sent `messages`, on a server of its own.
async fn tic_tac_toe_game(messages: Vec<PlayTicTacToeRequest>) -> Vec<PlayTicTacToeResponse> {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    replies(client.play_tic_tac_toe(tokio_stream::iter(messages)).await).await
}

/// A Tic-Tac-Toe setup with no history opens the fresh game, A to move: pending, empty,
/// no move played, whatever its row and col say. A server that plays the setup message's
/// row and col as a move, or refuses an empty history, fails it.
#[tokio::test]
async fn a_tic_tac_toe_setup_with_no_history_is_a_fresh_game() {
    let got = tic_tac_toe_game(vec![centre_setup(&[]), tic_tac_toe_move(0, 0)]).await;
    assert_eq!(got.len(), 2);
    assert_eq!(got[0], pending_tic_tac_toe(["...", "...", "..."], 0));
    let after = pending_tic_tac_toe(["X..", "...", "..."], 1);
    assert_eq!(got[1], after, "A moves first after an empty history");
}

/// A later Tic-Tac-Toe setup plays neither its history nor its row and col, which only
/// a Tic-Tac-Toe setup has: rejected with the game unchanged, after a bare first move as
/// after a setup, its square free, and the game goes on, B to move; each state written
/// out (the generic test, [`every_game_rejects_a_later_setup_and_goes_on`], opens with a
/// setup and compares the server with itself). A server that applies a later setup,
/// plays it as a move at its row and col, or ends the stream on it fails it.
#[tokio::test]
async fn a_later_tic_tac_toe_setup_plays_neither_its_history_nor_its_square() {
    let later = tic_tac_toe_setup(&[(2, 2), (0, 1)], (0, 0));
    for opening in [tic_tac_toe_move(1, 1), centre_setup(&[(1, 1)])] {
        let got =
            tic_tac_toe_game(vec![opening.clone(), later.clone(), tic_tac_toe_move(0, 0)]).await;
        assert_eq!(got.len(), 3, "{opening:?}");
        let centre = pending_tic_tac_toe(["...", ".X.", "..."], 1);
        assert_eq!(got[0], centre, "{opening:?}");
        assert!(got[1].rejected.contains("setup"), "{:?}", got[1]);
        let mut unchanged = got[1].clone();
        unchanged.rejected.clear();
        assert_eq!(unchanged, centre, "a later setup changes nothing");
        let on = pending_tic_tac_toe(["O..", ".X.", "..."], 2);
        assert_eq!(got[2], on, "the game goes on, B to move");
    }
}

/// Othello's automatic passes in a history: a side with no move at the setup passes
/// before the history's first move, which is then the other side's, and a history whose
/// last move leaves the other side without a move says so in `passed`. A server that
/// replays a history without the pass at the start (playing the first move for the
/// wrong side), or that reports `passed` of the setup rather than of the last move,
/// fails it.
#[tokio::test]
async fn othello_histories_pass_automatically() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let board = |row: &str| vec![row.to_owned()];
    let setups = [
        // Black cannot move on "WB.": White passes into it, and plays (0, 2).
        othello_setup(&board("WB."), Color::Black, &[]),
        othello_setup(&board("WB."), Color::Black, &[(0, 2)]),
        // Black's (0, 2) leaves White with no move: Black moves again.
        othello_setup(&board(".W.WB"), Color::Black, &[(0, 2)]),
    ];
    // Every field a state below does not name is zero or empty.
    let state = |verdict: Verdict, row: &str| PlayOthelloResponse {
        verdict: verdict.into(),
        ending: naive_ending(verdict),
        board: Some(Board::from_rows([row])),
        ..PlayOthelloResponse::default()
    };
    let expected = [
        PlayOthelloResponse {
            to_move: "W".into(),
            passed: true,
            legal_moves: cells(&[(0, 2)]),
            black_discs: 1,
            white_discs: 1,
            ..state(Verdict::Pending, "WB.")
        },
        PlayOthelloResponse {
            flips: cells(&[(0, 1)]),
            white_discs: 3,
            moves_played: 1,
            ..state(Verdict::BWins, "WWW")
        },
        PlayOthelloResponse {
            flips: cells(&[(0, 3)]),
            to_move: "B".into(),
            passed: true,
            legal_moves: cells(&[(0, 0)]),
            black_discs: 3,
            white_discs: 1,
            moves_played: 1,
            ..state(Verdict::Pending, ".WBBB")
        },
    ];
    for (setup, want) in setups.into_iter().zip(expected) {
        let got = replies(
            client
                .play_othello(tokio_stream::iter([setup.clone()]))
                .await,
        )
        .await;
        assert_eq!(got, [want], "{setup:?}");
    }
}
