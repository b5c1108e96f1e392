//! PlayMany: many live games of any kind in one stream, each numbered by the client.
//!
//! Every game is played by the same [`Referee`] as its kind's own stream, so its
//! replies are field for field the ones that stream would send; what would end a
//! single-game stream ends only that game, answered in place with `invalid`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use foldhash::fast::RandomState;

use crate::glue::budget::MAX_REPLY_BYTES;
use crate::glue::error::{write_violation, ServiceError};
use crate::glue::fields;
use crate::kit::clock::Moment;
use crate::proto::replies::{PlayManyReply, WrittenReply};
use crate::proto::wire::fields as wire;
use crate::proto::{GameAction, PlayManyRequest};

use super::{GameHolder, Games, LiveGames, OpenGame, Referee, StreamLimits, WrittenReplyOf};
use crate::glue::answer::Answer;
use crate::service::registration::{play_action, AnyGame, Registered, NO_ACTION};

/// The most actions one PlayMany message may carry.
pub const MAX_ACTIONS: usize = 10_000;

/// The room set aside per action for a stream's first reply: a small game's state.
const STATE_BYTES: usize = 64;

/// The games of one PlayMany stream, of any registered kind, by the client's numbers.
pub(crate) struct ManyGames {
    /// foldhash, seeded per process, instead of std's SipHash: the numbers are the
    /// client's, but a stream holds at most `max_games_per_stream` of them, so even
    /// numbers chosen to collide cost a bounded probe.
    games: HashMap<u64, Entry, RandomState>,
    limits: StreamLimits,
    live_games: LiveGames,
    /// Whose shares its games count in (none for a stream played in process).
    holder: Option<GameHolder>,
    /// The bytes of the last reply per action it answered, to size the next reply's
    /// buffer at once: a stream's messages tend to carry games of the same kinds.
    bytes_per_action: usize,
    /// When each game on a running clock runs out: the stream's one timer.
    deadlines: Deadlines,
    /// The announcements of games found out of time, as a message begins or while it
    /// is played (set up with no time left earlier in it), sent before its reply.
    late: PlayManyReply,
}

/// When the games of a PlayMany stream on a running clock run out, soonest first, in a
/// binary heap that a move most often leaves alone. Each such game has one entry in it,
/// its *queued* time, no later than its own deadline: a move that puts the deadline
/// later (as most do) changes only the game's own, and when the queued time comes up the
/// game's entry goes back in at its deadline, unless the game has run out. Only a
/// deadline brought earlier is pushed at once, the entry it replaces left stale (no
/// longer its game's queued time), skipped when it comes up, and dropped with the others
/// when they outnumber the games three to one ([`ManyGames::tidy_deadlines`]). So a
/// clocked move costs a comparison, not a removal and an insertion in an ordered set,
/// nor a push.
#[derive(Default)]
struct Deadlines {
    heap: BinaryHeap<Reverse<(Moment, u64)>>,
    /// The latest deadline set: no running clock runs past it.
    latest: Option<Moment>,
    /// The games whose clock runs (whose own deadline is set): with none, the stale
    /// entries wait for nothing.
    running: usize,
}

impl Deadlines {
    /// Brings game number `game`'s deadline up to date with its clock (`entry`).
    // Inlined: a call of its own cost a clocked move a tenth of what its clock costs.
    #[inline(always)]
    fn refresh(&mut self, game: u64, entry: &mut Entry) {
        let deadline = entry.game.deadline();
        if deadline == entry.deadline {
            return;
        }
        match (entry.deadline, deadline) {
            (None, Some(_)) => self.running += 1,
            (Some(_), None) => self.forget(entry),
            _ => {}
        }
        entry.deadline = deadline;
        if let Some(new) = deadline {
            if self.latest < Some(new) {
                self.latest = Some(new);
            }
            if entry.queued.is_none_or(|queued| new < queued) {
                self.heap.push(Reverse((new, game)));
                entry.queued = Some(new);
            }
        }
    }

    /// Notes that `entry`'s clock no longer runs: run out, stopped, or its game gone.
    fn forget(&mut self, entry: &Entry) {
        if entry.deadline.is_some() {
            self.running = self.running.saturating_sub(1);
        }
    }

    /// When the next clock runs out, if one runs: the soonest queued time, perhaps
    /// earlier than its game's deadline.
    fn next(&self) -> Option<Moment> {
        let Reverse((deadline, _)) = self.heap.peek().filter(|_| self.running > 0)?;
        Some(*deadline)
    }
}

impl ManyGames {
    /// A stream holding no game yet, whose games obey `limits` and count in
    /// `live_games` and, for a call that came over a connection, in its `holder`'s
    /// shares.
    pub(crate) fn new(
        limits: StreamLimits,
        live_games: LiveGames,
        holder: Option<GameHolder>,
    ) -> Self {
        Self {
            games: HashMap::default(),
            limits,
            live_games,
            holder,
            bytes_per_action: STATE_BYTES,
            deadlines: Deadlines::default(),
            late: PlayManyReply::default(),
        }
    }
}

/// One game of a PlayMany stream, and its place in the live-game count.
struct Entry {
    game: AnyGame,
    /// When its side to move runs out, while its clock runs (as of its last message).
    deadline: Option<Moment>,
    /// Its entry in the stream's deadlines, if it has one: no later than `deadline`.
    queued: Option<Moment>,
    /// It is on the clock (else its deadlines need no looking after).
    clocked: bool,
    _open: OpenGame,
}

impl Games for ManyGames {
    type Request = PlayManyRequest;
    type Response = PlayManyReply;

    /// The announcements of games whose time ran out by `now`, then one state per
    /// action, in order, each written into the reply as it is known; a message of more
    /// than [`MAX_ACTIONS`] actions ends the stream.
    fn handle(
        &mut self,
        request: PlayManyRequest,
        now: Moment,
        announced: &mut VecDeque<PlayManyReply>,
    ) -> Result<PlayManyReply, ServiceError> {
        let count = request.actions.len();
        fields::at_most("PlayManyRequest", "actions", count, MAX_ACTIONS, "message")?;
        self.run_out_due(now);
        let room = count.saturating_mul(self.bytes_per_action);
        let mut reply = PlayManyReply::with_capacity(room.min(MAX_REPLY_BYTES));
        let mut bytes = 0;
        for action in request.actions {
            // Past the reply budget, an action is answered without being applied.
            bytes += 4 + if bytes < MAX_REPLY_BYTES {
                self.act(action, now, &mut reply)
            } else {
                invalid(&mut reply, action.game, "action", over_budget())
            };
        }
        if count > 0 {
            self.bytes_per_action = reply.as_bytes().len().div_ceil(count);
        }
        self.tidy_deadlines();
        self.announce(announced);
        Ok(reply)
    }

    fn deadline(&self) -> Option<Moment> {
        self.deadlines.next()
    }

    fn clocks_run_until(&self) -> Option<Moment> {
        self.deadlines.latest.filter(|_| self.deadlines.running > 0)
    }

    /// One reply, `unprompted`, of every game whose time ran out by `now`.
    fn expire(&mut self, now: Moment, announced: &mut VecDeque<PlayManyReply>) {
        self.run_out_due(now);
        self.announce(announced);
    }
}

impl ManyGames {
    /// Ends on time every game whose deadline is past by `now`, their announcements
    /// into `late`.
    fn run_out_due(&mut self, now: Moment) {
        while let Some(&Reverse((queued, game))) = self.deadlines.heap.peek() {
            if queued > now {
                break;
            }
            self.deadlines.heap.pop();
            let Some(entry) = self.games.get_mut(&game) else {
                continue; // A game closed.
            };
            if entry.queued != Some(queued) {
                continue; // Replaced by an earlier deadline.
            }
            entry.queued = None;
            match entry.deadline {
                Some(deadline) if deadline <= now => {
                    end_on_time(&mut self.deadlines, game, entry, now, &mut self.late);
                }
                // Its clock moved on: back in at its deadline.
                Some(deadline) => {
                    self.deadlines.heap.push(Reverse((deadline, game)));
                    entry.queued = Some(deadline);
                }
                None => {}
            }
        }
        self.tidy_deadlines();
    }

    /// Sends the announcements in `late`, if any, as one `unprompted` reply.
    fn announce(&mut self, announced: &mut VecDeque<PlayManyReply>) {
        if self.late.len() > 0 {
            let mut late = std::mem::take(&mut self.late);
            late.set_unprompted();
            announced.push_back(late);
        }
    }

    /// Drops the stale deadlines once they outnumber the games' own three to one (so
    /// each costs a few instructions, once). A stale one left at the top only wakes
    /// the stream's timer early, to find that nothing ran out.
    fn tidy_deadlines(&mut self) {
        if self.deadlines.running == 0 {
            if !self.deadlines.heap.is_empty() {
                self.deadlines.heap.clear();
                for entry in self.games.values_mut() {
                    entry.queued = None;
                }
            }
            self.deadlines.latest = None;
        } else if self.deadlines.heap.len() > 4 * self.games.len() + 64 {
            // Built again from the games' own deadlines, in the same allocation: a pass
            // over the games, rather than a lookup of each entry.
            let mut live = std::mem::take(&mut self.deadlines.heap).into_vec();
            live.clear();
            for (&game, entry) in &mut self.games {
                entry.queued = entry.deadline;
                live.extend(entry.deadline.map(|deadline| Reverse((deadline, game))));
            }
            // Only live deadlines are left: the latest of them, not of those dropped.
            self.deadlines.latest = live.iter().map(|&Reverse((deadline, _))| deadline).max();
            self.deadlines.heap = BinaryHeap::from(live);
        }
    }

    /// Applies one action to its game, and writes the game's state into `out`; returns
    /// the state's length, as [`PlayManyReply::push`] does.
    fn act(&mut self, action: GameAction, now: Moment, out: &mut PlayManyReply) -> usize {
        let game = action.game;
        match play_action!(self, action.action, game, now, out) {
            Ok(len) => len,
            Err(Some(true)) => match self.games.remove(&game) {
                Some(entry) => {
                    self.deadlines.forget(&entry);
                    out.push_invalid(game, |_| {})
                }
                None => invalid(
                    out,
                    game,
                    "game",
                    &format!("game {game} holds no game to close"),
                ),
            },
            Err(Some(false)) => invalid(
                out,
                game,
                "action",
                "close is false: set it true to end the game, or send a move",
            ),
            Err(None) => invalid(out, game, "action", NO_ACTION),
        }
    }

    /// Plays `request` in game number `game`, of kind `G`, starting that game if the
    /// number holds none, and writes the game's state into `out`; returns its length.
    #[inline(always)]
    fn play<G: Registered>(
        &mut self,
        game: u64,
        request: G::Request,
        now: Moment,
        out: &mut PlayManyReply,
    ) -> usize {
        let max_unapplied = self.limits.max_unapplied;
        let Some(entry) = self.games.get_mut(&game) else {
            let len = self.start::<G>(game, request, now, out);
            if let Some(entry) = self.games.get_mut(&game).filter(|entry| entry.clocked) {
                self.deadlines.refresh(game, entry);
            }
            return len;
        };
        // A clock out of time though the message began in time (a game set up earlier
        // in it with no time left): its announcement goes first, as a single-game
        // stream sends it, and this message is answered as after the end.
        if entry.deadline.is_some_and(|deadline| deadline <= now) {
            end_on_time(&mut self.deadlines, game, entry, now, &mut self.late);
        }
        let Some(referee) = G::referee(&mut entry.game) else {
            let kind = entry.game.kind().label();
            return invalid(
                out,
                game,
                "action",
                &format!(
                    "game {game} is a {kind} game; `{}` is for a {} game",
                    G::ACTION,
                    G::KIND.label()
                ),
            );
        };
        // The state is written straight from the game; taken back if the message turns
        // out to be one unapplied message too many, which ends the game instead.
        let mark = out.len();
        let written = referee.play(request, max_unapplied, now, |answer| {
            out.push_state(game, G::STATE_FIELD, |w| answer.write(w))
        });
        match written {
            Ok(len) => {
                if entry.clocked {
                    self.deadlines.refresh(game, entry);
                }
                len
            }
            Err(_) => {
                out.truncate(mark);
                if let Some(entry) = self.games.remove(&game) {
                    self.deadlines.forget(&entry);
                }
                invalid(out, game, "game", &too_many_unapplied(game, max_unapplied))
            }
        }
    }

    /// Starts game number `game` of kind `G` with `first` as its first message, unless
    /// a limit or a malformed setup stops it, and writes its state into `out`; returns
    /// the state's length.
    fn start<G: Registered>(
        &mut self,
        game: u64,
        first: G::Request,
        now: Moment,
        out: &mut PlayManyReply,
    ) -> usize {
        match self.open::<G>(game, first, now) {
            Ok(reply) => out.push_state(game, G::STATE_FIELD, |w| w.fields_written(reply.bytes())),
            Err(Refusal::Error(error)) => out.push_invalid(game, |w| {
                error.write_field_violations("game", wire::game_state::INVALID, w);
            }),
            Err(Refusal::Said(description)) => invalid(out, game, "game", &description),
        }
    }

    /// Opens game number `game` of kind `G` with `first` as its first message: its reply
    /// to it, or why the game was not started.
    fn open<G: Registered>(
        &mut self,
        game: u64,
        first: G::Request,
        now: Moment,
    ) -> Result<WrittenReplyOf<G>, Refusal> {
        let limit = self.limits.max_games_per_stream;
        if self.games.len() >= limit {
            return Err(Refusal::Said(format!(
                "this stream already holds its limit of {limit} games \
                 (--max-games-per-stream); close one to start another"
            )));
        }
        let open = self
            .live_games
            .try_open(&self.limits, G::KIND, self.holder.as_ref())
            .map_err(Refusal::Error)?;
        match Referee::<G>::open(first, self.limits.max_unapplied, now) {
            Ok((referee, response)) => {
                self.games.insert(
                    game,
                    Entry {
                        clocked: referee.is_clocked(),
                        game: G::hold(referee),
                        deadline: None,
                        queued: None,
                        _open: open,
                    },
                );
                Ok(response)
            }
            Err(error @ ServiceError::InvalidRequest { .. }) => Err(Refusal::Error(error)),
            Err(_) => Err(Refusal::Said(too_many_unapplied(
                game,
                self.limits.max_unapplied,
            ))),
        }
    }
}

/// Ends game number `game` (`entry`) on time at `now`, its announcement into `late`.
fn end_on_time(
    deadlines: &mut Deadlines,
    game: u64,
    entry: &mut Entry,
    now: Moment,
    late: &mut PlayManyReply,
) {
    deadlines.forget(entry);
    entry.deadline = None;
    entry.game.run_out(game, now, late);
}

/// Why an action past the reply budget was not applied.
fn over_budget() -> &'static str {
    "not applied: the reply is full; send it again in a later message"
}

/// The description of a game ended for its unapplied messages.
fn too_many_unapplied(game: u64, limit: usize) -> String {
    format!(
        "game {game} was sent more than {limit} messages that were not applied moves \
         (rejected moves and the setup): it is ended and its number is free"
    )
}

/// Writes into `out` the state of game number `game` for an action that reached no
/// game: one violation, `description` of `field`; returns its length.
fn invalid(out: &mut PlayManyReply, game: u64, field: &str, description: &str) -> usize {
    out.push_invalid(game, |w| {
        write_violation(wire::game_state::INVALID, field, description, w);
    })
}

/// Why a PlayMany action started no game.
enum Refusal {
    /// The setup was malformed, or a limit of the server's stopped it.
    Error(ServiceError),
    /// A limit of the stream's stopped it, or its messages did.
    Said(String),
}
