//! Live games resumed on another server from their history, over the wire, for every
//! registered live game: many games of each, played from the game's test start with
//! random messages (mostly legal moves, some rejected ones, later setups, empty messages)
//! on one server, are cut at a random point; the client opens a stream on a second
//! server with the setup of that start whose history is every move applied so far, and
//! sends the rest. The setup's reply is the state after the last applied move, and every
//! later reply is, field for field, the one the same game played without a cut on the
//! first server gave. Othello's games are also cut right after a pass.

mod common;

use arbiter::games::othello;
use arbiter::LiveGame;
use common::games::{for_each_game, GameTest};
use common::live::{check, picks, setup, state, Live, Pick, Played};
use common::TestServer;
use proptest::prelude::*;
use proptest::sample::Index;
use tonic::transport::Channel;

/// Games per kind.
const GAMES: u32 = 40;

/// What one resumed game came to.
struct Resumed<G: LiveGame> {
    /// It was cut before its last message.
    before_the_end: bool,
    /// Moves applied before the cut: the resumed setup's history.
    moves: usize,
    /// Replies of the resumed stream compared.
    compared: usize,
    /// The resumed setup's reply.
    first: G::Response,
}

/// The whole test of one game of `G`: played on `one` with `picks` after the setup of
/// its test start, played again on `one` and cut after the number of messages `cut`
/// chooses (at least the setup, at most what a history can stand for), and resumed on
/// `two`.
async fn resume_game<G: LiveGame>(
    one: &Channel,
    two: &Channel,
    picks: &[Pick],
    cut: impl FnOnce(&Played<G>) -> usize,
) -> Result<Resumed<G>, TestCaseError> {
    // The uninterrupted game, its messages made as it goes.
    let whole = Live::<G, _>::over(one)
        .await?
        .play(setup::<G>(&[]), picks)
        .await?;
    let cut = cut(&whole);
    prop_assert!((1..=whole.resumable()).contains(&cut), "cut after {}", cut);

    // The same game on the same server, cut after `cut` messages: what the client saw.
    let mut stream = Live::<G, _>::over(one).await?;
    for (i, message) in whole.messages[..cut].iter().enumerate() {
        let reply = stream.send(message.clone()).await?;
        prop_assert_eq!(
            state::<G>(&reply),
            state::<G>(&whole.replies[i]),
            "the same game"
        );
    }
    // A cut, not a half-close: dropped, the stream is reset.
    drop(stream);

    // Resumed on the second server.
    let moves = whole.moves(cut);
    let last = moves.last().copied().unwrap_or(0);
    let mut stream = Live::<G, _>::over(two).await?;
    let first = stream.send(setup::<G>(&whole.messages_at(&moves))).await?;
    prop_assert_eq!(
        state::<G>(&first),
        state::<G>(&whole.replies[last]),
        "the resumed setup's reply is the reply to message {}, the last applied",
        last
    );
    for i in cut..whole.messages.len() {
        let reply = stream.send(whole.messages[i].clone()).await?;
        prop_assert_eq!(
            state::<G>(&reply),
            state::<G>(&whole.replies[i]),
            "reply to message {}",
            i
        );
    }
    Ok(Resumed {
        before_the_end: cut < whole.messages.len(),
        moves: moves.len(),
        compared: 1 + whole.messages.len() - cut,
        first,
    })
}

/// What one kind's games added up to.
#[derive(Debug, Default)]
struct Tally {
    games: usize,
    cut_before_the_end: usize,
    resumed_moves: usize,
    compared: usize,
}

impl Tally {
    fn of<G: LiveGame>(resumed: &[Resumed<G>]) -> Self {
        let mut tally = Tally::default();
        for game in resumed {
            tally.games += 1;
            tally.cut_before_the_end += usize::from(game.before_the_end);
            tally.resumed_moves += game.moves;
            tally.compared += game.compared;
        }
        tally
    }

    /// Fails unless some game was cut before its end, with moves to resume.
    fn assert_covers(&self, game: &str) {
        println!("{game}: {self:?}");
        assert!(self.games >= GAMES as usize, "{game}: {self:?}");
        assert!(
            self.cut_before_the_end > 0,
            "{game}: no game cut before its end"
        );
        assert!(self.resumed_moves > 0, "{game}: no move resumed");
    }
}

/// Two servers, the first to play the games on and the second to resume them on.
struct Servers {
    one: TestServer,
    two: TestServer,
}

impl Servers {
    async fn start() -> Self {
        let (one, two) = (TestServer::start().await, TestServer::start().await);
        Self { one, two }
    }

    /// Every cut stream, and every finished one, freed its game on both servers.
    async fn all_freed(&self) {
        self.one.wait_for_live_games(0).await;
        self.two.wait_for_live_games(0).await;
    }
}

impl GameTest for Servers {
    async fn run<G: LiveGame>(&self) {
        let (one, two) = (&self.one.channel().await, &self.two.channel().await);
        let resumed = check(
            GAMES,
            (picks(60), any::<Index>()),
            |(picks, cut)| async move {
                resume_game::<G>(one, two, &picks, |whole| 1 + cut.index(whole.resumable())).await
            },
        );
        Tally::of(&resumed).assert_covers(G::RPC);
        self.all_freed().await;
    }
}

/// Every registered live game, from its test start, cut at random.
///
/// Broken servers this fails: one whose history replay differs from live play (another
/// start, another side first, `moves_played` not counting the history, the setup's reply
/// not saying the history's last move as the move's own reply did: Othello's flips and
/// pass, Connect Four's and Gomoku's placed piece and run, chess's last move and draw
/// claim), that rejects a history of moves it applied itself or applies one it rejected,
/// that replies differently to the same message on another stream, or that keeps a cut
/// stream's game live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_game_resumes_on_another_server() {
    for_each_game(&Servers::start().await).await;
}

/// Othello from its test start, cut right after the first reply that says a side passed
/// (at random in a game without a pass): the resumed setup's history ends with the move
/// that made the other side pass.
///
/// Broken servers this fails: one whose history replay does not pass automatically after
/// its last move, or reports `passed` of the setup rather than of that move, or gives
/// the move after the pass to the side that passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn othello_games_cut_right_after_a_pass_resume_on_another_server() {
    let servers = Servers::start().await;
    let (one, two) = (&servers.one.channel().await, &servers.two.channel().await);
    let resumed = check(
        GAMES,
        (picks(60), any::<Index>()),
        |(picks, cut)| async move {
            resume_game::<othello::Game>(one, two, &picks, |whole| {
                let limit = whole.resumable();
                match whole.replies[..limit].iter().position(|reply| reply.passed) {
                    Some(pass) => pass + 1,
                    None => 1 + cut.index(limit),
                }
            })
            .await
        },
    );
    let after_a_pass = resumed.iter().filter(|game| game.first.passed).count();
    println!("{after_a_pass} games resumed right after a pass");
    Tally::of(&resumed).assert_covers("Othello");
    assert!(after_a_pass > 0, "no game resumed right after a pass");
    servers.all_freed().await;
}
