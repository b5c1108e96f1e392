//! Chess, everything about its requests in one place: CheckChessMove, ListChessMoves
//! and JudgeChessGame (parsed, decided by [`crate::games::chess`], answered; alone or in
//! a CheckBatch), and the live game of PlayChess (a setup with its history, then moves
//! and claims).

use crate::proto::play_chess_request::Action;
use crate::proto::replies::{CheckBatchReply, Writer};
use crate::proto::requests::CheckRef;
use crate::proto::wire::{fields as wire, Len};
use crate::proto::{
    self, ChessSetup, ChessTermination, CheckChessMoveRequest, CheckChessMoveResponse,
    Ending as WireEnding, JudgeChessGameRequest, JudgeChessGameResponse,
    ListChessMovesRequest, ListChessMovesResponse, PlayChessRequest, PlayChessResponse,
};

use super::{
    well_formed_move, Ending, Game, Move, MoveError, Outcome, Player, Position, Termination,
    MAX_PLIES,
};
use crate::games::{GameKind, LiveGame};
use crate::glue::answer::Answer;
use crate::glue::batch::{self, BatchCheck, Scratch};
use crate::glue::convert;
use crate::glue::error::{describe, indexed, ServiceError, Violation, Violations};
use crate::glue::fields;
use crate::glue::play::{self, Handled, Opened};
use crate::glue::timing::{self, Timekeeper, Timing, TimingFields};
use crate::kit::clock::{Clock, Moment, Turns};

/// The position `fen` writes, as `chess960` says, or its violation (named `field`).
fn position(fen: &str, chess960: bool, field: &str, violations: &mut Violations) -> Option<Position> {
    Position::from_fen(fen, chess960)
        .map_err(|error| violations.push(Violation::new(field, describe(error))))
        .ok()
}

/// Checks that `text` (field `field`) is a move in UCI or SAN.
fn well_formed(text: &str, field: &str, violations: &mut Violations) {
    if !well_formed_move(text) {
        violations.push(Violation::new(
            field,
            describe(MoveError::Malformed(text.to_owned())),
        ));
    }
}

/// The wire termination of `termination`.
fn termination_code(termination: Option<Termination>) -> i32 {
    let code = match termination {
        None => ChessTermination::Unspecified,
        Some(Termination::Checkmate) => ChessTermination::Checkmate,
        Some(Termination::Stalemate) => ChessTermination::Stalemate,
        Some(Termination::InsufficientMaterial) => ChessTermination::InsufficientMaterial,
        Some(Termination::SeventyFiveMoves) => ChessTermination::SeventyFiveMoves,
        Some(Termination::FivefoldRepetition) => ChessTermination::FivefoldRepetition,
        Some(Termination::ThreefoldRepetition) => ChessTermination::ThreefoldRepetition,
        Some(Termination::FiftyMoves) => ChessTermination::FiftyMoves,
    };
    i32::from(code)
}

/// The wire verdict of `outcome`: A is White, B is Black.
fn verdict(outcome: Outcome) -> i32 {
    let verdict = match outcome {
        Outcome::Pending => proto::Verdict::Pending,
        Outcome::Won { winner, .. } => convert::won(winner == Player::White),
        Outcome::Drawn { .. } => proto::Verdict::Draw,
    };
    i32::from(verdict)
}

/// A count of plies as an `int32`.
fn plies(count: usize) -> i32 {
    i32::try_from(count).unwrap_or(i32::MAX)
}

/// Writes a `ChessMove` of `uci` and `san` as field `field`.
fn write_move(field: Len, uci: &str, san: &str, w: &mut Writer) {
    w.message(field, |w| {
        w.string(wire::chess_move::UCI, uci);
        w.string(wire::chess_move::SAN, san);
    });
}

/// Every legal move of `position` as UCI and SAN, sorted by UCI byte by byte.
fn listed(position: &Position) -> Vec<(String, String)> {
    let legal = position.legal_moves();
    let mut moves: Vec<(String, String)> = legal
        .iter()
        .map(|&mv| (position.uci(mv), position.san(mv, &legal)))
        .collect();
    moves.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    moves
}

/// Answers a CheckChessMove request: whether its move is legal, and where it leads.
pub(crate) fn check_move(request: CheckChessMoveRequest) -> Result<MoveAnswer, ServiceError> {
    check_move_of(&request.fen, &request.r#move, request.chess960)
}

/// Answers a CheckChessMove request of these fields (decoded on their own or read in
/// place).
fn check_move_of(fen: &str, text: &str, chess960: bool) -> Result<MoveAnswer, ServiceError> {
    let mut violations = Violations::new();
    let position = position(fen, chess960, "fen", &mut violations);
    well_formed(text, "move", &mut violations);
    let Some(position) = position.filter(|_| violations.is_empty()) else {
        return Err(fields::invalid("CheckChessMoveRequest", violations));
    };
    let legal = position.legal_moves();
    Ok(move_answer(&position, &legal, text))
}

/// The last position a CheckBatch's chess checks parsed, and its legal moves: the next
/// check from the same FEN (as a batch that asks about several moves of one position
/// sends them) is answered from it, not parsed again.
#[derive(Default)]
struct LastPosition {
    fen: String,
    chess960: bool,
    parsed: Option<(Position, Vec<Move>)>,
}

/// [`check_move_of`] in a batch, from `memo`'s position when the FEN is the last one's,
/// which it then keeps.
fn check_move_in(
    memo: &mut LastPosition,
    fen: &str,
    text: &str,
    chess960: bool,
) -> Result<MoveAnswer, ServiceError> {
    let same = memo.fen == fen && memo.chess960 == chess960;
    if !same || memo.parsed.is_none() {
        memo.fen.clear();
        memo.fen.push_str(fen);
        memo.chess960 = chess960;
        memo.parsed = Position::from_fen(fen, chess960).ok().map(|position| {
            let legal = position.legal_moves();
            (position, legal)
        });
    }
    match &memo.parsed {
        Some((position, legal)) if well_formed_move(text) => {
            Ok(move_answer(position, legal, text))
        }
        // A malformed FEN or move: named as its own check names them.
        _ => check_move_of(fen, text, chess960),
    }
}

/// Whether `text` is a legal move of `position`, whose moves are `legal`, and where it
/// leads.
fn move_answer(position: &Position, legal: &[Move], text: &str) -> MoveAnswer {
    match position.parse_move_among(text, legal) {
        Ok(mv) => {
            let after = position.play(mv);
            let has_move = after.has_legal_move();
            MoveAnswer::Legal {
                uci: position.uci(mv),
                san: position.san_after(mv, legal, &after, || has_move),
                fen: after.fen(),
                check: after.in_check(),
                termination: after.termination_with(has_move),
            }
        }
        Err(_) => MoveAnswer::Illegal,
    }
}

/// CheckBatch's `check_chess_move`: a CheckChessMove in a batch.
pub(crate) struct CheckMove;

impl BatchCheck for CheckMove {
    const CHECK: Len = wire::check::CHECK_CHESS_MOVE;
    const RESULT: Len = wire::check_result::CHECK_CHESS_MOVE;
    const RESULT_BYTES: usize = 96;

    /// Fool's mate's last move (legal, check, mate), an illegal move and a malformed
    /// one.
    fn corpus() -> Vec<proto::check::Check> {
        let check = |fen: &str, mv: &str| {
            proto::check::Check::CheckChessMove(CheckChessMoveRequest {
                fen: fen.into(),
                r#move: mv.into(),
                chess960: false,
            })
        };
        let before_mate = "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2";
        vec![
            check(before_mate, "Qh4#"),
            check("", "e2e5"),
            check("", "Nf3"),
            check("", "zz9"),
        ]
    }

    fn answer(
        check: CheckRef<'_>,
        scratch: &mut Scratch,
        out: &mut CheckBatchReply,
    ) -> Result<usize, ServiceError> {
        use wire::check_chess_move_request as request;
        let (fen, text) = (check.text(request::FEN), check.text(request::MOVE));
        let chess960 = check.bool(request::CHESS960);
        let answer = match scratch.memo::<LastPosition>() {
            Some(memo) => check_move_in(memo, fen, text, chess960)?,
            None => check_move_of(fen, text, chess960)?,
        };
        Ok(batch::write(&answer, Self::RESULT, out))
    }
}

/// The answer to a CheckChessMove request.
#[derive(Debug)]
pub(crate) enum MoveAnswer {
    /// The move is not legal.
    Illegal,
    /// The move is legal: as UCI and SAN, the position after it, whether it gives
    /// check, and what it ends the game by.
    Legal {
        uci: String,
        san: String,
        fen: String,
        check: bool,
        termination: Option<Termination>,
    },
}

impl Answer for MoveAnswer {
    type Response = CheckChessMoveResponse;

    fn write(&self, w: &mut Writer) {
        use wire::check_chess_move_response as reply;
        if let Self::Legal {
            uci,
            san,
            fen,
            check,
            termination,
        } = self
        {
            w.bool(reply::LEGAL, true);
            write_move(reply::MOVE, uci, san, w);
            w.string(reply::FEN, fen);
            w.bool(reply::CHECK, *check);
            w.int32(reply::TERMINATION, termination_code(*termination));
        }
    }
}

/// Answers a ListChessMoves request: every legal move, sorted by UCI.
pub(crate) fn list_moves(request: ListChessMovesRequest) -> Result<Listing, ServiceError> {
    list_moves_of(&request.fen, request.chess960)
}

fn list_moves_of(fen: &str, chess960: bool) -> Result<Listing, ServiceError> {
    let mut violations = Violations::new();
    let Some(position) = position(fen, chess960, "fen", &mut violations) else {
        return Err(fields::invalid("ListChessMovesRequest", violations));
    };
    Ok(Listing {
        moves: listed(&position),
        check: position.in_check(),
        termination: position.termination(),
    })
}

/// CheckBatch's `list_chess_moves`: a ListChessMoves in a batch.
pub(crate) struct ListMoves;

impl BatchCheck for ListMoves {
    const CHECK: Len = wire::check::LIST_CHESS_MOVES;
    const RESULT: Len = wire::check_result::LIST_CHESS_MOVES;
    const RESULT_BYTES: usize = 512;

    /// A position in check with moves, a stalemate, and a malformed FEN.
    fn corpus() -> Vec<proto::check::Check> {
        let list = |fen: &str| {
            proto::check::Check::ListChessMoves(ListChessMovesRequest {
                fen: fen.into(),
                chess960: false,
            })
        };
        vec![
            list("rnbqkbnr/ppppp1pp/5p2/7Q/4P3/8/PPPP1PPP/RNB1KBNR b KQkq - 1 2"),
            list("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"),
            list("8/8/8 w - - 0 1"),
        ]
    }

    fn answer(
        check: CheckRef<'_>,
        _: &mut Scratch,
        out: &mut CheckBatchReply,
    ) -> Result<usize, ServiceError> {
        use wire::list_chess_moves_request as request;
        let listing = list_moves_of(check.text(request::FEN), check.bool(request::CHESS960))?;
        Ok(batch::write(&listing, Self::RESULT, out))
    }
}

/// The answer to a ListChessMoves request.
#[derive(Debug)]
pub(crate) struct Listing {
    moves: Vec<(String, String)>,
    check: bool,
    termination: Option<Termination>,
}

impl Answer for Listing {
    type Response = ListChessMovesResponse;

    fn write(&self, w: &mut Writer) {
        use wire::list_chess_moves_response as reply;
        for (uci, san) in &self.moves {
            write_move(reply::MOVES, uci, san, w);
        }
        w.bool(reply::CHECK, self.check);
        w.int32(reply::TERMINATION, termination_code(self.termination));
    }
}

/// A move's text as a request holds it: UTF-8 when decoded (the decoding checks it, as
/// prost checks a string); else, built in process, a text that is no move.
fn move_text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or("\u{fffd}")
}

/// Answers a JudgeChessGame request: the game its moves make from its position.
pub(crate) fn judge(request: JudgeChessGameRequest) -> Result<Judged, ServiceError> {
    judge_of(
        &request.fen,
        request.moves.len(),
        request.moves.iter().map(move_text),
        request.chess960,
    )
}

/// Judges the game of `count` moves `moves` from `fen`: the first move that cannot be
/// played is named (`moves[i]`), and every later one that is not a move at all.
fn judge_of<'a>(
    fen: &str,
    count: usize,
    moves: impl Iterator<Item = &'a str>,
    chess960: bool,
) -> Result<Judged, ServiceError> {
    const MESSAGE: &str = "JudgeChessGameRequest";
    let mut violations = Violations::new();
    let start = position(fen, chess960, "fen", &mut violations);
    if count > MAX_PLIES {
        violations.push(Violation::new(
            "moves",
            format!("has {count} moves, more than {MAX_PLIES}"),
        ));
        return Err(fields::invalid(MESSAGE, violations));
    }
    let mut game = start.map(Game::new);
    let mut sans = Vec::with_capacity(count.min(MAX_PLIES));
    for (index, text) in moves.enumerate() {
        let result = match &mut game {
            Some(game) => game.play(text).map(|san| sans.push(san.to_owned())),
            None if well_formed_move(text) => Ok(()),
            None => Err(MoveError::Malformed(text.to_owned())),
        };
        if let Err(error) = result {
            violations.push_with("moves", || Violation::new(indexed(&["moves"], index), describe(error)));
            game = None;
        }
    }
    match game {
        Some(game) if violations.is_empty() => Ok(Judged { game, sans }),
        _ => Err(fields::invalid(MESSAGE, violations)),
    }
}

/// CheckBatch's `judge_chess_game`: a JudgeChessGame in a batch.
pub(crate) struct JudgeGame;

impl BatchCheck for JudgeGame {
    const CHECK: Len = wire::check::JUDGE_CHESS_GAME;
    const RESULT: Len = wire::check_result::JUDGE_CHESS_GAME;
    const RESULT_BYTES: usize = 128;

    /// Fool's mate, the knights out and back twice (a draw to claim), and a game with
    /// an illegal move.
    fn corpus() -> Vec<proto::check::Check> {
        let judge = |moves: &[&str]| {
            proto::check::Check::JudgeChessGame(JudgeChessGameRequest {
                fen: String::new(),
                moves: moves.iter().map(|mv| (*mv).to_owned()).collect(),
                chess960: false,
            })
        };
        vec![
            judge(&super::fixtures::FOOLS_MATE),
            judge(&super::fixtures::KNIGHTS_SHUFFLE),
            judge(&["e4", "e5", "Ke3"]),
        ]
    }

    fn answer(
        check: CheckRef<'_>,
        _: &mut Scratch,
        out: &mut CheckBatchReply,
    ) -> Result<usize, ServiceError> {
        use wire::judge_chess_game_request as request;
        let count = check.texts(request::MOVES).count();
        let judged = judge_of(
            check.text(request::FEN),
            count,
            check.texts(request::MOVES),
            check.bool(request::CHESS960),
        )?;
        Ok(batch::write(&judged, Self::RESULT, out))
    }
}

/// The answer to a JudgeChessGame request: the game its moves make, and their SAN.
#[derive(Debug)]
pub(crate) struct Judged {
    game: Game,
    sans: Vec<String>,
}

impl Answer for Judged {
    type Response = JudgeChessGameResponse;

    fn write(&self, w: &mut Writer) {
        use wire::judge_chess_game_response as reply;
        let outcome = self.game.outcome();
        let position = self.game.position();
        w.int32(reply::VERDICT, verdict(outcome));
        w.int32(reply::TERMINATION, termination_code(outcome.termination()));
        w.string(reply::FEN, &position.fen());
        for san in &self.sans {
            w.string(reply::SAN, san);
        }
        w.int32(reply::MOVES_PLAYED, plies(self.game.plies()));
        w.bool(reply::DRAW_CLAIMABLE, self.game.draw_claim().is_some());
        w.bool(reply::CHECK, position.in_check());
    }
}

impl LiveGame for Game {
    const KIND: GameKind = GameKind::Chess;
}

impl play::sealed::Play for Game {
    type Request = PlayChessRequest;
    type Response = PlayChessResponse;
    const RPC: &'static str = "PlayChess";
    const TIMING: TimingFields = timing::timing_fields!(play_chess_response);
    type Played<'a> = Played<'a>;

    fn open(first: PlayChessRequest, now: Moment) -> Opened<Self> {
        if let Some(Action::Setup(setup)) = &first.action {
            let (game, clock) = set_up(setup)?;
            let moved = !setup.history.is_empty();
            return play::set_up(game, clock, now, |game, timing| Played {
                game,
                moved,
                rejected: String::new(),
                timing,
            });
        }
        play::first_move(Game::standard(), first)
    }

    /// A game from a setup listing the legal moves: the rook checks and the kings
    /// step back and forth until the position has stood three times, a move is
    /// rejected, and the draw is claimed.
    #[cfg(test)]
    fn corpus() -> Vec<PlayChessRequest> {
        let setup = PlayChessRequest {
            action: Some(Action::Setup(Box::new(ChessSetup {
                fen: "4k3/8/8/8/8/8/8/R3K3 w - - 0 1".into(),
                legal_moves: true,
                ..Default::default()
            }))),
        };
        let moves = ["Ra8+", "Kd7", "Ra1", "Ke8", "e2e4", "Ra8+", "Kd7", "Ra1", "Ke8"];
        let moves = moves.into_iter().map(|mv| PlayChessRequest {
            action: Some(Action::Move(mv.into())),
        });
        let claim = PlayChessRequest {
            action: Some(Action::ClaimDraw(true)),
        };
        std::iter::once(setup).chain(moves).chain([claim]).collect()
    }



    fn standing<'a>(&'a self, timing: &'a Timing) -> Played<'a> {
        Played {
            game: self,
            moved: false,
            rejected: String::new(),
            timing: Some(timing),
        }
    }

    fn answer<'a>(
        &'a mut self,
        request: PlayChessRequest,
        keeper: Option<&'a mut Timekeeper>,
    ) -> (Handled, Played<'a>) {
        let result = match request.action {
            Some(Action::Move(text)) => self.play(&text).map(drop).map_err(describe),
            Some(Action::ClaimDraw(true)) => self.claim_draw().map(drop).map_err(describe),
            Some(Action::ClaimDraw(false)) => {
                Err("claim_draw is false, which is no action: send true to claim".to_owned())
            }
            Some(Action::Setup(_)) => Err(play::SETUP_NOT_FIRST.to_owned()),
            None => Err(
                "the message sets no action: send `move` or `claim_draw` (or `setup` first)"
                    .to_owned(),
            ),
        };
        let (handled, rejected) = match result {
            Ok(()) => (Handled::Applied, String::new()),
            Err(rejected) => (Handled::Rejected, rejected),
        };
        let claimed = matches!(
            self.outcome(),
            Outcome::Drawn {
                by: Ending::Claim(_)
            }
        );
        let moved = handled == Handled::Applied && !claimed;
        let to_move = self.side_to_move();
        let timing = keeper.map(|keeper| {
            if claimed {
                keeper.ended(WireEnding::Claim)
            } else {
                keeper.after(handled == Handled::Applied, to_move)
            }
        });
        let answer = Played {
            game: self,
            moved,
            rejected,
            timing,
        };
        (handled, answer)
    }
}

/// The answer to a PlayChess message, before it is a reply: the game after the message,
/// whether it applied a move, and why it was not applied (empty when it was). It is
/// written as a `PlayChessResponse`, alone or in a PlayMany reply.
pub struct Played<'a> {
    game: &'a Game,
    /// The message applied a move (the game's last).
    moved: bool,
    /// Why the message was not applied; empty when it was.
    rejected: String,
    /// The clock and the end as of the message, for a game on the clock.
    timing: Option<&'a Timing>,
}

impl Answer for Played<'_> {
    type Response = PlayChessResponse;

    fn write(&self, w: &mut Writer) {
        use wire::play_chess_response as reply;
        let game = self.game;
        let position = game.position();
        let outcome = game.outcome();
        let over = outcome.is_over();
        w.int32(reply::VERDICT, verdict(outcome));
        w.string(reply::FEN, &position.fen());
        if let Some((uci, san)) = game.last_move().filter(|_| self.moved) {
            write_move(reply::MOVE, uci, san, w);
        }
        w.bool(reply::CHECK, position.in_check());
        w.string(reply::TO_MOVE, if over { "" } else { position.to_move().letter() });
        w.int32(reply::MOVES_PLAYED, plies(game.plies()));
        w.int32(reply::TERMINATION, termination_code(outcome.termination()));
        w.bool(reply::DRAW_CLAIMABLE, game.draw_claim().is_some());
        if game.lists_moves && !over {
            for (uci, san) in listed(position) {
                write_move(reply::LEGAL_MOVES, &uci, &san, w);
            }
        }
        w.string(reply::REJECTED, &self.rejected);
        let ending = match outcome {
            Outcome::Pending => WireEnding::Unspecified,
            Outcome::Won { by, .. } | Outcome::Drawn { by } => match by {
                Ending::Rules(_) => WireEnding::Board,
                Ending::Claim(_) => WireEnding::Claim,
                Ending::Time => WireEnding::Time,
            },
        };
        timing::write_ending(self.timing, ending, <Game as play::sealed::Play>::TIMING, w);
    }
}

/// The game a PlayChess setup starts: its history replayed from its position. Fields
/// are named under `setup.`.
fn set_up(setup: &ChessSetup) -> Result<(Game, Option<Clock>), ServiceError> {
    const MESSAGE: &str = "PlayChessRequest";
    let mut violations = Violations::new();
    let start = position(&setup.fen, setup.chess960, "setup.fen", &mut violations);
    let clock = timing::set_up(
        setup.time_control.as_ref(),
        setup.clock.as_ref(),
        &mut violations,
    );
    if setup.history.len() > MAX_PLIES {
        violations.push(Violation::new(
            "setup.history",
            format!("has {} moves, more than {MAX_PLIES}", setup.history.len()),
        ));
    }
    let (Some(start), true) = (start, violations.is_empty()) else {
        return Err(fields::invalid(MESSAGE, violations));
    };
    let mut game = Game::new(start);
    for (index, text) in setup.history.iter().enumerate() {
        if let Err(error) = game.play(move_text(text)) {
            let field = format!("setup.history[{index}]");
            return Err(fields::invalid(
                MESSAGE,
                Violation::new(field, describe(&error)).into(),
            ));
        }
    }
    game.lists_moves = setup.legal_moves;
    Ok((game, clock))
}
