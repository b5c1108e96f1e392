//! Every registered live game, played alone and in PlayMany, on random games made of
//! its own corpus's messages (`Play::corpus`: a setup, moves applied and rejected, a
//! setup out of turn) and, on the clock, to a loss on time: the same replies, as prost
//! reads them, and every reply, alone and in PlayMany, the bytes prost writes of what it
//! reads from them; and resumed from its setup and the moves applied (`Play::resumed`): the
//! same answer to the next message as the game played through. Driven by the
//! registration, so a game registered is a game covered.

use futures_util::StreamExt;
use proptest::prelude::*;

use crate::proto::{GameAction, GameState, PlayManyRequest};
use crate::{visit_live_games, LiveGame, LiveGameVisitor};
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
        .open_written::<G, _>(futures_util::stream::iter(
            messages.clone().into_iter().map(Ok),
        ))
        .map_err(|status| TestCaseError::fail(format!("{status:?}")))?
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

/// Plays `messages` (a setup first) as a referee plays them, resumes the game from its
/// setup and the moves applied, and fails unless both answer `next` alike, byte for
/// byte, or the game cannot be resumed though it goes on.
fn resumes_alike<G: LiveGame>(
    messages: &[G::Request],
    next: &G::Request,
) -> Result<(), TestCaseError> {
    use crate::glue::answer::Answer;
    use crate::kit::clock::Moment;
    use crate::proto::replies::WrittenReply;
    use crate::service::play::Handled;
    let now = Moment::from_nanos(0);
    let refused = |what: &str| TestCaseError::fail(format!("{}: {what} refused", G::RPC));
    let (mut game, _, _) = G::open(messages[0].clone(), now).map_err(|_| refused("the setup"))?;
    let mut applied = Vec::new();
    for message in &messages[1..] {
        if game.answer(message.clone(), None).0 == Handled::Applied {
            applied.push(message.clone());
        }
    }
    let resume = match G::resumed(&messages[0], &applied) {
        Some(resume) => resume,
        // Only a game that has ended may hold a message a setup's history cannot carry
        // (a claim that ended it): nothing is resumed.
        None if game.side_to_move().is_none() => return Ok(()),
        None => return Err(refused("the resume")),
    };
    let (mut resumed, _, _) = G::open(resume, now).map_err(|_| refused("the resumed setup"))?;
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
        let corpus = G::corpus();
        let next = &corpus[self.picks.len() % corpus.len()];
        if let Err(error) = resumes_alike::<G>(&messages, next) {
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
            messages[0] = G::clocked(control);
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
