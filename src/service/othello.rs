//! Othello, everything about its requests in one place: CheckOthelloMove and
//! ListOthelloMoves (parsed, decided by [`crate::rules::othello`], answered), and the
//! live game of PlayOthello (a setup with its history, then moves).

use crate::proto::play_othello_request::Action;
use crate::proto::{
    self, CheckOthelloMoveRequest, CheckOthelloMoveResponse, ListOthelloMovesRequest,
    ListOthelloMovesResponse, OthelloMove, PlayOthelloRequest, PlayOthelloResponse,
};
use crate::rules::grid::Cell;
use crate::rules::othello::{Board, Color, Game, Outcome};

use super::convert::{self, Standing};
use super::error::ServiceError;
use super::fields;
use super::play::{self, GameKind, Opened, Reply};

/// Answers a CheckOthelloMove request.
pub(crate) fn check_move(
    request: CheckOthelloMoveRequest,
) -> Result<CheckOthelloMoveResponse, ServiceError> {
    let mut violations = Vec::new();
    let at = (request.row, request.col);
    let (board, cell) = fields::board_and_cell::<Board>(request.board, at, &mut violations);
    let color = fields::color("color", &request.color, &mut violations);
    let (Some(board), Some(cell), Some(color)) = (board, cell, color) else {
        return Err(fields::invalid("CheckOthelloMoveRequest", violations));
    };
    let answer = board.check_move(cell, color);
    Ok(CheckOthelloMoveResponse {
        legal: answer.legal,
        flips: convert::cells(&answer.flips),
    })
}

/// Answers a ListOthelloMoves request.
pub(crate) fn list_moves(
    request: ListOthelloMovesRequest,
) -> Result<ListOthelloMovesResponse, ServiceError> {
    let mut violations = Vec::new();
    let board = fields::board::<Board>("board", request.board, &mut violations);
    let color = fields::color("color", &request.color, &mut violations);
    let (Some(board), Some(color)) = (board, color) else {
        return Err(fields::invalid("ListOthelloMovesRequest", violations));
    };
    let mut moves = Vec::with_capacity(board.known_legal_move_count(color).unwrap_or_default());
    board.visit_legal_moves(color, |cell, flips| {
        moves.push(OthelloMove {
            cell: Some(convert::cell(cell)),
            flips: convert::cells(flips),
        });
    });
    Ok(ListOthelloMovesResponse { moves })
}

impl play::sealed::Game for Game {
    type Request = PlayOthelloRequest;
    type Response = PlayOthelloResponse;
    const KIND: GameKind = GameKind::Othello;

    fn open(first: PlayOthelloRequest) -> Opened<Self> {
        let action = match first.action {
            Some(Action::Setup(setup)) => {
                let (game, last) = set_up(setup)?;
                let flips = convert::cells(&last.flips);
                let reply = Reply::setup(state(&game, flips, last.passed, String::new()));
                return Ok((game, reply));
            }
            action => action,
        };
        play::first_move(Game::standard(), PlayOthelloRequest { action })
    }

    fn reply(&mut self, request: PlayOthelloRequest) -> Reply<PlayOthelloResponse> {
        let played = match request.action {
            Some(Action::Move(cell)) => self
                .play(i64::from(cell.row), i64::from(cell.col))
                .map_err(|error| error.to_string()),
            Some(Action::Setup(_)) => Err(play::SETUP_NOT_FIRST.to_owned()),
            None => Err("the message sets no action: send `move` (or `setup` first)".to_owned()),
        };
        match played {
            Ok(turn) => {
                let flips = convert::cells(&turn.flips);
                Reply::to_move(state(self, flips, turn.passed, String::new()), false)
            }
            Err(rejected) => Reply::to_move(state(self, Vec::new(), false, rejected), true),
        }
    }
}

/// What the last move of a setup's history did (nothing, without a history, but
/// perhaps a pass at once).
struct LastMove {
    flips: Vec<Cell>,
    passed: bool,
}

/// The game a PlayOthello setup starts: its board with `to_move` due, and its history
/// replayed by the game's own rules. Fields are named under `setup.`.
fn set_up(setup: proto::OthelloSetup) -> Result<(Game, LastMove), ServiceError> {
    const MESSAGE: &str = "PlayOthelloRequest";
    let mut violations = Vec::new();
    let board = fields::board::<Board>("setup.board", setup.board, &mut violations);
    let to_move = fields::color("setup.to_move", &setup.to_move, &mut violations);
    let (Some(board), Some(to_move)) = (board, to_move) else {
        return Err(fields::invalid(MESSAGE, violations));
    };
    let cells = board.grid().cells().len();
    let (mut game, passed) = Game::from_position(board, to_move);
    let last = fields::replay_history(MESSAGE, &setup.history, cells, |cell| {
        game.play(i64::from(cell.row), i64::from(cell.col))
    })?;
    let last = match last {
        Some(turn) => LastMove {
            flips: turn.flips,
            passed: turn.passed,
        },
        None => LastMove {
            flips: Vec::new(),
            passed,
        },
    };
    Ok((game, last))
}

/// The whole state of `game` as a reply.
fn state(
    game: &Game,
    flips: Vec<proto::Cell>,
    passed: bool,
    rejected: String,
) -> PlayOthelloResponse {
    let standing = match game.outcome() {
        Outcome::Pending => Standing::Pending,
        Outcome::Won(Color::Black) => Standing::FirstWon,
        Outcome::Won(Color::White) => Standing::SecondWon,
        Outcome::Draw => Standing::Draw,
    };
    let (black, white) = game.discs();
    PlayOthelloResponse {
        verdict: convert::verdict(standing),
        board: Some(proto::Board {
            rows: game.board().grid().to_row_buffer(),
        }),
        flips,
        to_move: game
            .to_move()
            .map(|color| char::from(color.byte()).to_string())
            .unwrap_or_default(),
        passed,
        legal_moves: convert::cells(game.legal_cells()),
        // A board holds at most 100x100 cells, so every count fits an i32.
        black_discs: black as i32,
        white_discs: white as i32,
        moves_played: game.moves_played() as i32,
        rejected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::error::fields;

    /// The grid decides which coordinate is off; each is named, and negative ones are
    /// named even without a valid board.
    #[test]
    fn each_coordinate_off_the_board_is_named() {
        let mut request = proto::CheckOthelloMoveRequest {
            board: Some(proto::Board::from_rows(["..."])),
            row: 1,
            col: 2,
            color: "B".into(),
        };
        assert_eq!(fields(check_move(request.clone()).unwrap_err()), ["row"]);
        request.col = 3;
        assert_eq!(
            fields(check_move(request.clone()).unwrap_err()),
            ["row", "col"]
        );
        request.board = None;
        request.row = -1;
        assert_eq!(fields(check_move(request).unwrap_err()), ["board", "row"]);
    }
}
