//! Every registered live game, played alone and in PlayMany, on random games made of
//! its own corpus's messages (`Play::corpus`: a setup, moves applied and rejected, a
//! setup out of turn) and, on the clock, to a loss on time: the same replies, as prost
//! reads them, and every reply, alone and in PlayMany, the bytes prost writes of what it
//! reads from them; and a game of its fixture resumed from its setup and the moves
//! applied (`Fixture::setup`): the same answer to the next message as the game played
//! through. Driven by the
//! registration, so a game registered is a game covered.

use futures_util::StreamExt;
use proptest::prelude::*;

use crate::games::{LiveGame, LiveGameVisitor};
use crate::proto::{GameAction, GameState, PlayManyRequest};
use crate::service::registration::visit_live_games;
use crate::service::Arbiter;

/// A game of `G`'s corpus: its first message, then `picks` of its messages (the first
/// among them now and then: a setup out of turn).
fn messages<G: LiveGame>(picks: &[usize]) -> Vec<G::Request> {
    let corpus = G::corpus();
    let mut messages = vec![corpus[0].clone()];
    messages.extend(
        picks
            .iter()
            .map(|&pick| corpus[pick % corpus.len()].clone()),
    );
    messages
}

/// Plays `messages` alone and in PlayMany (as game 5), on tokio's paused clock (which,
/// once the messages are answered, moves on to any clock's deadline): fails unless
/// every reply of the one, the announcement of a loss on time among them, is the state
/// of the other.
async fn same<G: LiveGame>(messages: Vec<G::Request>) -> Result<(), TestCaseError> {
    use crate::proto::replies::WrittenReply;
    use prost::Message;
    let service = Arbiter::default();
    let written: Vec<_> = service
        .open_written::<G, _>(
            futures_util::stream::iter(messages.clone().into_iter().map(Ok)),
            None,
        )
        .collect()
        .await;
    // Each reply as written is what prost writes of what prost reads from it.
    let mut alone = Vec::new();
    for (index, reply) in written.into_iter().enumerate() {
        let reply = reply.map_err(|status| TestCaseError::fail(format!("{status:?}")))?;
        let response = reply.to_response();
        prop_assert!(response.is_ok(), "reply {}: {:?}", index, response.err());
        let response = response.unwrap();
        prop_assert_eq!(
            &response.encode_to_vec()[..],
            reply.bytes(),
            "reply {}",
            index
        );
        alone.push(response);
    }
    let actions = messages.into_iter().map(|request| {
        Ok(PlayManyRequest {
            actions: vec![GameAction {
                game: 5,
                action: Some(G::action(request)),
            }],
        })
    });
    let many: Vec<_> = service
        .open_many(futures_util::stream::iter(actions))
        .collect()
        .await;
    prop_assert_eq!(alone.len(), many.len());
    for (index, (alone, many)) in alone.into_iter().zip(many).enumerate() {
        let many =
            many.map_err(|status| TestCaseError::fail(format!("reply {index}: {status:?}")))?;
        let bytes = many.as_bytes();
        let many = many
            .to_response()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&many.encode_to_vec()[..], bytes, "reply {}", index);
        let state = GameState {
            game: 5,
            invalid: Vec::new(),
            state: Some(G::state(alone)),
        };
        prop_assert_eq!(&many.states, &vec![state], "reply {}", index);
    }
    Ok(())
}

/// Plays a game of `G`'s fixture (its setup, then its next message for each of
/// `picks`) as a referee plays it, resumes the game from the fixture's setup with the
/// moves applied as its history, and fails unless both answer the next message alike,
/// byte for byte (a game ended by a claim, which no history carries, is not resumed).
fn resumes_alike<G: LiveGame>(picks: &[usize]) -> Result<(), TestCaseError> {
    use crate::glue::answer::Answer;
    use crate::kit::clock::Moment;
    use crate::proto::replies::WrittenReply;
    use crate::proto::Ending;
    use crate::service::play::Handled;
    let now = Moment::from_nanos(0);
    let refused = |what: &str| TestCaseError::fail(format!("{}: {what} refused", G::RPC));
    let decoded = |reply: &dyn Fn() -> Result<G::Response, prost::DecodeError>| {
        reply().map_err(|error| TestCaseError::fail(format!("{}: {error}", G::RPC)))
    };
    let (mut game, _, first) =
        G::open(G::setup(None, None, &[]), now).map_err(|_| refused("the setup"))?;
    let mut last = decoded(&|| first.response.to_response())?;
    let mut applied = Vec::new();
    for &pick in picks {
        let message = G::next(pick as u64, &last);
        let (handled, played) = game.answer(message.clone(), None);
        let written = played.written();
        last = decoded(&|| written.to_response())?;
        if handled == Handled::Applied {
            applied.push(message);
        }
    }
    if G::seen(&last).ending == Ending::Claim {
        return Ok(());
    }
    let (mut resumed, _, _) =
        G::open(G::setup(None, None, &applied), now).map_err(|_| refused("the resumed setup"))?;
    let next = G::next(picks.len() as u64 * 7919, &last);
    let answer = |game: &mut G| {
        let (handled, played) = game.answer(next.clone(), None);
        (handled, played.written().bytes().to_vec())
    };
    prop_assert_eq!(answer(&mut game), answer(&mut resumed), "{}", G::RPC);
    Ok(())
}

/// Runs [`same`] and [`resumes_alike`] for each registered game.
struct Same<'a> {
    picks: &'a [usize],
    clocked: bool,
    failed: &'a std::cell::RefCell<Option<TestCaseError>>,
}

impl LiveGameVisitor for Same<'_> {
    fn visit<G: LiveGame>(&mut self) {
        let mut messages = messages::<G>(self.picks);
        if let Err(error) = resumes_alike::<G>(self.picks) {
            self.failed.borrow_mut().get_or_insert(error);
        }
        if self.clocked {
            let control = crate::proto::TimeControl {
                initial: Some(prost_types::Duration {
                    seconds: 2,
                    nanos: 0,
                }),
                ..Default::default()
            };
            messages[0] = G::setup(Some(control), None, &[]);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a runtime");
        if let Err(error) = runtime.block_on(same::<G>(messages)) {
            let error = TestCaseError::fail(format!("{}: {error}", G::RPC));
            self.failed.borrow_mut().get_or_insert(error);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_game_plays_alike_alone_and_in_play_many(
        picks in prop::collection::vec(any::<usize>(), 0..24),
        clocked in any::<bool>(),
    ) {
        let failed = std::cell::RefCell::new(None);
        visit_live_games(&mut Same { picks: &picks, clocked, failed: &failed });
        if let Some(error) = failed.into_inner() {
            return Err(error);
        }
    }
}
