//! The hand-written replies against the contract: every field of every message that
//! the server writes itself is written by some reply of a small corpus of calls.
//!
//! The writers name their fields by the constants generated from the contract
//! (`proto::wire::fields`), and each written reply is held byte for byte to the reply
//! prost builds (`play/many.rs`, `tests/batch.rs`). What those cannot see is a field the
//! contract gains that the built reply sets and the writer forgets, while the
//! comparisons never meet a reply where it is set. Here a field that no reply of the
//! corpus writes fails the test by name: write it, and if it is rare, add a call to the
//! corpus that sets it.

use std::collections::{BTreeSet, HashMap};

use futures_util::StreamExt;
use prost::Message;
use prost_types::field_descriptor_proto::Type;

use crate::proto::requests::CheckBatchChecks;
use crate::proto::{
    check, game_action, play_connect_four_request, play_othello_request, Board, Cell, Check,
    CheckBatchRequest, CheckConnectFourRequest, CheckOthelloMoveRequest, ConnectFourSetup,
    GameAction, JudgeTicTacToeRequest, ListOthelloMovesRequest, OthelloSetup,
    PlayConnectFourRequest, PlayManyRequest, PlayOthelloRequest, PlayTicTacToeRequest,
    TicTacToeMove, TicTacToeSetup, TimeControl,
};
use crate::service::registration::Registry;
use crate::service::{batch, Arbiter};

/// A message of `arbiter.v1` as the descriptor set describes it: each field's name, and
/// the message it holds, if it holds one.
type Fields = HashMap<u32, (String, Option<String>)>;

/// Every message of `arbiter.v1`, by its short name.
fn messages() -> HashMap<String, Fields> {
    crate::proto::wire::described_messages()
        .iter()
        .map(|message| {
            let fields = message
                .field
                .iter()
                .map(|field| {
                    let nested = (field.r#type() == Type::Message).then(|| {
                        let name = field.type_name();
                        name.rsplit('.').next().unwrap_or(name).to_owned()
                    });
                    (field.number() as u32, (field.name().to_owned(), nested))
                })
                .collect();
            (message.name().to_owned(), fields)
        })
        .collect()
}

/// Walks `bytes`, an encoded `message`, adding each field it holds (and each field of
/// the messages it holds) to `seen` as `Message.field`; fails on a field the contract
/// does not have.
fn walk(
    messages: &HashMap<String, Fields>,
    message: &str,
    mut bytes: &[u8],
    seen: &mut BTreeSet<String>,
) {
    let fields = &messages[message];
    while !bytes.is_empty() {
        let (tag, wire_type) = prost::encoding::decode_key(&mut bytes).unwrap();
        let Some((name, nested)) = fields.get(&tag) else {
            panic!("{message} has no field {tag}, and a reply wrote one");
        };
        seen.insert(format!("{message}.{name}"));
        match wire_type {
            prost::encoding::WireType::Varint => {
                prost::encoding::decode_varint(&mut bytes).unwrap();
            }
            prost::encoding::WireType::LengthDelimited => {
                let len = prost::encoding::decode_varint(&mut bytes).unwrap() as usize;
                let (value, rest) = bytes.split_at(len);
                if let Some(nested) = nested {
                    walk(messages, nested, value, seen);
                }
                bytes = rest;
            }
            other => panic!("{message}.{name} written as {other:?}"),
        }
    }
}

/// Every field of `root` and of the messages it holds, as `Message.field`.
fn every_field(messages: &HashMap<String, Fields>, root: &str, all: &mut BTreeSet<String>) {
    for (name, nested) in messages[root].values() {
        if all.insert(format!("{root}.{name}")) {
            if let Some(nested) = nested {
                every_field(messages, nested, all);
            }
        }
    }
}

fn board(rows: &[&str]) -> Option<Board> {
    Some(Board::from_rows(rows))
}

fn check(check: check::Check) -> Check {
    Check { check: Some(check) }
}

fn tic_tac_toe_moves(moves: &[(i32, i32)]) -> Vec<TicTacToeMove> {
    moves
        .iter()
        .map(|&(row, col)| TicTacToeMove { row, col })
        .collect()
}

/// A CheckBatch that gives every kind of result, and a malformed check.
fn batch_request() -> CheckBatchRequest {
    let othello = [
        "........", "........", "........", "...WB...", "...BW...", "........", "........",
        "........",
    ];
    let connect_four = [
        "0000000", "0000000", "0000000", "1000000", "1000000", "1222200",
    ];
    CheckBatchRequest {
        checks: vec![
            check(check::Check::CheckOthelloMove(CheckOthelloMoveRequest {
                board: board(&othello),
                row: 2,
                col: 3,
                color: "B".into(),
            })),
            check(check::Check::ListOthelloMoves(ListOthelloMovesRequest {
                board: board(&othello),
                color: "W".into(),
            })),
            check(check::Check::CheckConnectFour(CheckConnectFourRequest {
                board: board(&connect_four),
                row: 5,
                col: 4,
                player: 2,
                run_length: 0,
            })),
            check(check::Check::JudgeTicTacToe(JudgeTicTacToeRequest {
                moves: tic_tac_toe_moves(&[(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]),
            })),
            check(check::Check::CheckOthelloMove(CheckOthelloMoveRequest {
                board: board(&othello),
                row: 2,
                col: 3,
                color: "G".into(),
            })),
        ],
    }
}

/// A time control of 1.5 s a side.
fn one_and_a_half_seconds() -> TimeControl {
    TimeControl {
        initial: Some(prost_types::Duration {
            seconds: 1,
            nanos: 500_000_000,
        }),
        increment: None,
        move_limit: None,
    }
}

/// A PlayMany message of one action.
fn many(game: u64, action: game_action::Action) -> PlayManyRequest {
    PlayManyRequest {
        actions: vec![GameAction {
            game,
            action: Some(action),
        }],
    }
}

/// PlayMany messages that give every field of every live reply: an Othello game on a
/// board where White must pass, to its end; a Connect Four game won; a Tic-Tac-Toe game
/// won; a rejected move of each; a close, and an action that reaches no game.
fn many_requests() -> Vec<PlayManyRequest> {
    use game_action::Action;
    let othello = |action| {
        Action::Othello(PlayOthelloRequest {
            action: Some(action),
        })
    };
    let drop = |col| {
        Action::ConnectFour(PlayConnectFourRequest {
            action: Some(play_connect_four_request::Action::Drop(col)),
        })
    };
    let mark = |row, col| {
        Action::TicTacToe(PlayTicTacToeRequest {
            row,
            col,
            setup: None,
        })
    };
    let mut messages = vec![many(
        1,
        othello(play_othello_request::Action::Setup(Box::new(
            OthelloSetup {
                // Black at (0, 2) flips (0, 1); then White has no move and passes, and
                // Black's move at (0, 4) ends the game.
                board: board(&["BW.W.", "....."]),
                to_move: "B".into(),
                history: Vec::new(),
                ..Default::default()
            },
        ))),
    )];
    for (row, col) in [(9, 9), (0, 2), (0, 4)] {
        messages.push(many(
            1,
            othello(play_othello_request::Action::Move(Cell { row, col })),
        ));
    }
    messages.push(many(
        2,
        Action::ConnectFour(PlayConnectFourRequest {
            action: Some(play_connect_four_request::Action::Setup(Box::new(
                ConnectFourSetup {
                    rows: 6,
                    cols: 7,
                    run_length: 4,
                    history: Vec::new(),
                    ..Default::default()
                },
            ))),
        }),
    ));
    for col in [0, 1, 0, 1, 0, 1, 9, 0] {
        messages.push(many(2, drop(col)));
    }
    for (row, col) in [(0, 0), (1, 0), (1, 0), (0, 1), (1, 1), (0, 2)] {
        messages.push(many(3, mark(row, col)));
    }
    messages.push(many(3, Action::Close(true)));
    messages.push(many(4, Action::Close(true)));
    // A game on the clock: 1.5 s each, 0.25 s more a move; two drops, then its time
    // runs out (the test waits).
    messages.push(many(
        5,
        Action::ConnectFour(PlayConnectFourRequest {
            action: Some(play_connect_four_request::Action::Setup(Box::new(
                ConnectFourSetup {
                    time_control: Some(TimeControl {
                        increment: Some(prost_types::Duration {
                            seconds: 0,
                            nanos: 250_000_000,
                        }),
                        ..one_and_a_half_seconds()
                    }),
                    ..Default::default()
                },
            ))),
        }),
    ));
    messages.push(many(5, drop(3)));
    messages.push(many(5, drop(3)));
    // And one of each other kind, whose times run out together, before game 5's.
    messages.push(many(
        6,
        othello(play_othello_request::Action::Setup(Box::new(
            OthelloSetup {
                board: board(&["BW..", "...."]),
                to_move: "B".into(),
                time_control: Some(one_and_a_half_seconds()),
                ..Default::default()
            },
        ))),
    ));
    messages.push(many(
        7,
        Action::TicTacToe(PlayTicTacToeRequest {
            setup: Some(Box::new(TicTacToeSetup {
                time_control: Some(one_and_a_half_seconds()),
                ..Default::default()
            })),
            ..Default::default()
        }),
    ));
    messages
}

#[tokio::test(start_paused = true)]
async fn every_field_of_every_written_reply_is_written() {
    let messages = messages();
    let mut seen = BTreeSet::new();

    let batch = CheckBatchChecks::decode(&batch_request().encode_to_vec()[..]).unwrap();
    let reply = batch::check_batch::<Registry>(&batch).unwrap();
    walk(&messages, "CheckBatchResponse", reply.as_bytes(), &mut seen);

    // The games, then a wait past the clocked game's deadline (the clock of tokio's,
    // stopped, moves on at once), so that its loss on time is announced.
    let arbiter = Arbiter::default();
    let (sender, requests) = tokio::sync::mpsc::channel(64);
    for request in many_requests() {
        sender.send(Ok(request)).await.unwrap();
    }
    let mut replies = arbiter.open_many(tokio_stream::wrappers::ReceiverStream::new(requests));
    // One reply a message, and the announcements: games 6 and 7 together at 1.5 s,
    // game 5 alone at 1.75 s.
    let mut announced = Vec::new();
    for _ in 0..many_requests().len() + 2 {
        let reply = replies.next().await.unwrap().unwrap();
        let response = reply.to_response().unwrap();
        if response.unprompted {
            announced.push(response.states.iter().map(|s| s.game).collect::<Vec<_>>());
        }
        walk(&messages, "PlayManyResponse", reply.as_bytes(), &mut seen);
    }
    assert_eq!(announced, [vec![6, 7], vec![5]]);
    drop(sender);
    assert!(replies.next().await.is_none());

    let mut all = BTreeSet::new();
    every_field(&messages, "CheckBatchResponse", &mut all);
    every_field(&messages, "PlayManyResponse", &mut all);
    let never: Vec<&String> = all.difference(&seen).collect();
    assert!(
        never.is_empty(),
        "fields the server never wrote in this corpus: {never:?}"
    );
}
