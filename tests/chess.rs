//! Chess over the wire, as a person checks it from the rules: CheckChessMove with UCI
//! and SAN, legal and not; ListChessMoves sorted by UCI; JudgeChessGame to a mate and to
//! a draw one may claim; live games to a claimed draw, a refused claim, a draw on time
//! that the winner could not have won; malformed positions, moves and histories named
//! field by field.

mod common;

use std::time::Duration;

use arbiter::proto::play_chess_request::Action;
use arbiter::proto::{
    CheckChessMoveRequest, CheckChessMoveResponse, ChessMove, ChessSetup, ChessTermination, Ending,
    JudgeChessGameRequest, ListChessMovesRequest, PlayChessRequest, PlayChessResponse, TimeControl,
    Verdict,
};
use common::messages::open_stream;
use common::status::assert_stream_ends;
use common::TestServer;
use tonic::Code;
use tonic_types::StatusExt;

const BEFORE_MATE: &str = "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2";

fn check(fen: &str, mv: &str) -> CheckChessMoveRequest {
    CheckChessMoveRequest {
        fen: fen.to_owned(),
        r#move: mv.to_owned(),
        chess960: false,
    }
}

/// The field violations of an INVALID_ARGUMENT status, as (field, description).
fn violations(status: &tonic::Status) -> Vec<(String, String)> {
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    status
        .get_details_bad_request()
        .expect("a BadRequest")
        .field_violations
        .into_iter()
        .map(|v| (v.field, v.description))
        .collect()
}

#[tokio::test]
async fn a_mate_in_san_is_legal_and_ends_the_game() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let reply = client
        .check_chess_move(check(BEFORE_MATE, "Qh4"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        reply,
        CheckChessMoveResponse {
            legal: true,
            r#move: Some(ChessMove {
                uci: "d8h4".into(),
                san: "Qh4#".into()
            }),
            fen: "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3".into(),
            check: true,
            termination: ChessTermination::Checkmate.into(),
        }
    );
    // The same move in UCI; an illegal one is not legal and says nothing more.
    let uci = client
        .check_chess_move(check(BEFORE_MATE, "d8h4"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(uci, reply);
    let illegal = client
        .check_chess_move(check("", "e2e5"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(illegal, CheckChessMoveResponse::default());
}

#[tokio::test]
async fn a_malformed_position_or_move_names_its_field() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let status = client
        .check_chess_move(check("8/8/8 w - - 0 1", "Nf9"))
        .await
        .unwrap_err();
    let found = violations(&status);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].0, "fen");
    assert!(found[0].1.contains("8 ranks"), "{found:?}");
    assert_eq!(found[1].0, "move");
    assert!(found[1].1.contains("\"Nf9\""), "{found:?}");
    let status = client
        .list_chess_moves(ListChessMovesRequest {
            fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1".into(),
            chess960: false,
        })
        .await
        .unwrap_err();
    let found = violations(&status);
    assert_eq!(found[0].0, "fen");
    assert!(found[0].1.contains("en passant square e3"), "{found:?}");
}

#[tokio::test]
async fn the_start_has_twenty_moves_sorted_by_uci() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let reply = client
        .list_chess_moves(ListChessMovesRequest::default())
        .await
        .unwrap()
        .into_inner();
    let uci: Vec<&str> = reply.moves.iter().map(|m| m.uci.as_str()).collect();
    let mut sorted = uci.clone();
    sorted.sort_unstable();
    assert_eq!(uci.len(), 20);
    assert_eq!(uci, sorted);
    assert_eq!(uci[0], "a2a3");
    assert!(reply
        .moves
        .iter()
        .any(|m| m.uci == "g1f3" && m.san == "Nf3"));
    assert!(!reply.check);
}

#[tokio::test]
async fn a_judged_game_ends_in_mate_or_names_its_bad_move() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let judge = |moves: &[&str]| JudgeChessGameRequest {
        fen: String::new(),
        moves: moves.iter().map(|m| (*m).to_owned()).collect(),
        chess960: false,
    };
    let mate = client
        .judge_chess_game(judge(&["f3", "e5", "g4", "Qh4#"]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(mate.verdict(), Verdict::BWins);
    assert_eq!(mate.termination(), ChessTermination::Checkmate);
    assert_eq!(mate.san, ["f3", "e5", "g4", "Qh4#"]);
    assert_eq!(
        (mate.moves_played, mate.check, mate.draw_claimable),
        (4, true, false)
    );
    // The knights out and back twice: the start stands a third time, a draw to claim.
    let shuffle = client
        .judge_chess_game(judge(&[
            "Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8",
        ]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(shuffle.verdict(), Verdict::Pending);
    assert!(shuffle.draw_claimable);
    // A move after the mate, and an illegal one, are named by their place.
    let status = client
        .judge_chess_game(judge(&["f3", "e5", "g4", "Qh4#", "a3"]))
        .await
        .unwrap_err();
    let found = violations(&status);
    assert_eq!(found[0].0, "moves[4]");
    assert!(found[0].1.contains("over"), "{found:?}");
    let status = client
        .judge_chess_game(judge(&["e4", "e5", "Ke3"]))
        .await
        .unwrap_err();
    assert_eq!(violations(&status)[0].0, "moves[2]");
}

fn setup(setup: ChessSetup) -> PlayChessRequest {
    PlayChessRequest {
        action: Some(Action::Setup(Box::new(setup))),
    }
}

fn play(mv: &str) -> PlayChessRequest {
    PlayChessRequest {
        action: Some(Action::Move(mv.to_owned())),
    }
}

fn claim() -> PlayChessRequest {
    PlayChessRequest {
        action: Some(Action::ClaimDraw(true)),
    }
}

#[tokio::test]
async fn a_live_game_goes_on_past_bad_moves_and_ends_in_a_claimed_draw() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let (moves, mut replies) = open_stream(|stream| client.play_chess(stream)).await;
    moves
        .send(setup(ChessSetup {
            history: ["e4", "e5"].into_iter().collect(),
            ..Default::default()
        }))
        .await
        .unwrap();
    let first = replies.message().await.unwrap().unwrap();
    // The reply to a setup with a history is its last move's.
    assert_eq!(first.r#move.unwrap().san, "e5");
    assert_eq!((first.to_move.as_str(), first.moves_played), ("w", 2));
    let mut last = PlayChessResponse::default();
    for mv in ["Nf3", "Nc6", "Ng1", "Nb8"] {
        moves.send(play(mv)).await.unwrap();
        last = replies.message().await.unwrap().unwrap();
        assert_eq!(last.rejected, "", "{mv}");
    }
    // The position after 1. e4 e5 has stood twice: no claim yet, and the game goes on.
    moves.send(claim()).await.unwrap();
    let refused = replies.message().await.unwrap().unwrap();
    assert!(refused.rejected.contains("no draw"), "{refused:?}");
    assert_eq!(
        (refused.fen.as_str(), refused.verdict()),
        (last.fen.as_str(), Verdict::Pending)
    );
    moves.send(play("e2e5")).await.unwrap();
    let illegal = replies.message().await.unwrap().unwrap();
    assert!(illegal.rejected.contains("not a legal move"), "{illegal:?}");
    moves.send(play("what")).await.unwrap();
    let malformed = replies.message().await.unwrap().unwrap();
    assert!(malformed.rejected.contains("UCI"), "{malformed:?}");
    for mv in ["Nf3", "Nc6", "Ng1", "Nb8"] {
        moves.send(play(mv)).await.unwrap();
        last = replies.message().await.unwrap().unwrap();
    }
    assert!(last.draw_claimable);
    moves.send(claim()).await.unwrap();
    let drawn = replies.message().await.unwrap().unwrap();
    assert_eq!(drawn.verdict(), Verdict::Draw);
    assert_eq!(drawn.termination(), ChessTermination::ThreefoldRepetition);
    assert_eq!(drawn.ending(), Ending::Claim);
    assert_eq!((drawn.to_move.as_str(), drawn.draw_claimable), ("", false));
    moves.send(play("e4")).await.unwrap();
    let after = replies.message().await.unwrap().unwrap();
    assert!(after.rejected.contains("over"), "{after:?}");
}

#[tokio::test]
async fn a_bad_history_or_position_ends_the_stream_naming_the_field() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let (moves, mut replies) = open_stream(|stream| client.play_chess(stream)).await;
    moves
        .send(setup(ChessSetup {
            history: ["e4", "e5", "Nf3", "Nf6??", "Ke3"].into_iter().collect(),
            ..Default::default()
        }))
        .await
        .unwrap();
    let status = assert_stream_ends(&mut replies, Code::InvalidArgument, "").await;
    assert_eq!(violations(&status)[0].0, "setup.history[4]");
    let (moves, mut replies) = open_stream(|stream| client.play_chess(stream)).await;
    moves
        .send(setup(ChessSetup {
            fen: "4k3/8/8/8/8/8/8/4K3 w KQ - 0 1".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
    let status = assert_stream_ends(&mut replies, Code::InvalidArgument, "").await;
    let found = violations(&status);
    assert_eq!(found[0].0, "setup.fen");
    assert!(found[0].1.contains("castling right K"), "{found:?}");
}

#[tokio::test]
async fn running_out_against_a_side_that_cannot_mate_is_a_draw() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let (moves, mut replies) = open_stream(|stream| client.play_chess(stream)).await;
    // Black, to move, has a queen; White only a knight: Black's time runs out, and
    // White could not have mated a king and queen with a knight alone.
    moves
        .send(setup(ChessSetup {
            fen: "4k3/8/8/8/8/8/q7/3NK3 b - - 0 1".into(),
            time_control: Some(TimeControl {
                initial: Some(prost_types::Duration {
                    seconds: 0,
                    nanos: 200_000_000,
                }),
                ..Default::default()
            }),
            ..Default::default()
        }))
        .await
        .unwrap();
    let first = replies.message().await.unwrap().unwrap();
    assert_eq!(first.verdict(), Verdict::Pending);
    let announced = tokio::time::timeout(Duration::from_secs(10), replies.message())
        .await
        .expect("the loss on time is announced")
        .unwrap()
        .unwrap();
    assert!(announced.unprompted);
    assert_eq!(announced.ending(), Ending::Time);
    assert_eq!(announced.verdict(), Verdict::Draw);
    assert_eq!(announced.termination(), ChessTermination::Unspecified);
    drop(moves);
}
