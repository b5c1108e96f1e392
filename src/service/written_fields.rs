//! The hand-written replies against the contract: every field of every message that
//! the server writes itself is written by some reply of a small corpus of calls.
//!
//! The writers name their fields by the constants generated from the contract
//! (`proto::wire::fields`), and each written reply is held byte for byte to the reply
//! prost builds (`play/many.rs`, `tests/batch.rs`). What those cannot see is a field the
//! contract gains that the built reply sets and the writer forgets, while the
//! comparisons never meet a reply where it is set. Here a field that no reply of the
//! corpus writes fails the test by name: write it, and if it is rare, add a call to the
//! corpus that sets it. The corpus is the registration's: each registered check's and
//! live game's own (`BatchCheck::corpus`, `Play::corpus`, and its `Fixture::setup` on a
//! clock), so a game registered is a game covered.

use std::collections::{BTreeSet, HashMap};

use futures_util::StreamExt;
use prost::Message;
use prost_types::field_descriptor_proto::Type;

use crate::proto::requests::CheckBatchChecks;

use crate::proto::{
    game_action, Check, CheckBatchRequest, GameAction, PlayManyRequest, TimeControl,
};
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

/// A CheckBatch of every registered check's corpus: every kind of result, and a
/// malformed check.
fn batch_request() -> CheckBatchRequest {
    let checks = super::registration::check_corpus();
    CheckBatchRequest {
        checks: checks
            .into_iter()
            .map(|check| Check { check: Some(check) })
            .collect(),
    }
}

/// A time control of 1.5 s a side.
fn one_and_a_half_seconds() -> TimeControl {
    TimeControl {
        initial: Some(prost_types::Duration {
            seconds: 1,
            nanos: 500_000_000,
        }),
        increment: Some(prost_types::Duration {
            seconds: 0,
            nanos: 250_000_000,
        }),
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

/// PlayMany messages that give every field of every live reply: for each registered
/// game, its corpus (a game to its end, a rejected move among its messages) and, as
/// another game, a setup on the clock whose time runs out; then a close, and an action
/// that reaches no game. With the numbers of the games on the clock.
fn many_requests() -> (Vec<PlayManyRequest>, Vec<u64>) {
    /// Adds each registered game's messages.
    struct Corpus<'a>(&'a mut (Vec<PlayManyRequest>, Vec<u64>));

    impl crate::games::LiveGameVisitor for Corpus<'_> {
        fn visit<G: crate::games::LiveGame>(&mut self) {
            let (messages, clocked) = &mut *self.0;
            let game = 2 * messages.len() as u64 + 1;
            for request in G::corpus() {
                messages.push(many(game, G::action(request)));
            }
            let setup = G::setup(Some(one_and_a_half_seconds()), None, &[]);
            messages.push(many(game + 1, G::action(setup)));
            clocked.push(game + 1);
        }
    }

    let mut corpus = (Vec::new(), Vec::new());
    super::registration::visit_live_games(&mut Corpus(&mut corpus));
    let (mut messages, clocked) = corpus;
    let first = messages[0].actions[0].game;
    messages.push(many(first, game_action::Action::Close(true)));
    messages.push(many(u64::MAX, game_action::Action::Close(true)));
    (messages, clocked)
}

#[tokio::test(start_paused = true)]
async fn every_field_of_every_written_reply_is_written() {
    let messages = messages();
    let mut seen = BTreeSet::new();

    let batch = CheckBatchChecks::decode(&batch_request().encode_to_vec()[..]).unwrap();
    let reply = batch::check_batch(&batch).unwrap();
    walk(&messages, "CheckBatchResponse", reply.as_bytes(), &mut seen);

    // The games, then a wait past the clocked game's deadline (the clock of tokio's,
    // stopped, moves on at once), so that its loss on time is announced.
    let arbiter = Arbiter::default();
    let (requests, clocked) = many_requests();
    let (sender, received) = tokio::sync::mpsc::channel(requests.len());
    for request in &requests {
        sender.send(Ok(request.clone())).await.unwrap();
    }
    let mut replies = arbiter.open_many(tokio_stream::wrappers::ReceiverStream::new(received));
    // One reply a message, and the announcement: every game on the clock at 1.5 s.
    let mut announced = Vec::new();
    for _ in 0..requests.len() + 1 {
        let reply = replies.next().await.unwrap().unwrap();
        let response = reply.to_response().unwrap();
        if response.unprompted {
            announced.push(response.states.iter().map(|s| s.game).collect::<Vec<_>>());
        }
        walk(&messages, "PlayManyResponse", reply.as_bytes(), &mut seen);
    }
    assert_eq!(announced, [clocked]);
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
