"""Live-game clients for the scripted tests that interrupt games and check that nothing
is lost (tests/rolling/rolling.py, tests/faults/faults.py).

A game client keeps what the README says a game server must keep: the moves the server
applied (and, for Othello, the starting board and side). When its stream fails in a
way the test resumes from, it opens a new stream with a setup whose history is those
moves, and sends again the move whose reply it had not received. Afterwards `replay`
plays every game once more, uninterrupted, with the same moves, and compares every
reply field for field (protobuf equality).

What differs from test to test (where a stream goes, how long a read may take, which
failures are resumed and what is counted) is a `Client`; `slot`, `Many` and `replay`
are the rest. Also here: the server process started on 127.0.0.1 port 0 whose
addresses are read from its log (`ServerProcess`), and the run's checks (`Checks`).
"""

import asyncio
import collections
import os
import pathlib
import random
import shutil
import subprocess
import time

import grpc

from stubs import load_stubs

pb, pb_grpc = load_stubs()

PENDING = pb.Verdict.Value("VERDICT_PENDING")

# What grpcio's asyncio API raises when a write meets a stream whose connection has
# just been lost: it marks the call INTERNAL itself (set_internal_error) and the
# transport's own status is never seen. A server's INTERNAL carries other details.
LOCAL_WRITE_FAILURE = "Internal error from Core"

LISTENING = "arbiter listening on "
METRICS = "metrics on http://"


def log(*parts):
    print(f"[{time.strftime('%H:%M:%S')}]", *parts, flush=True)


class Checks:
    """A run's checks, each logged PASS or FAIL as it is made: `checks(name, ok, detail)`."""

    def __init__(self):
        self.results = []

    def __call__(self, name, ok, detail=""):
        self.results.append((name, ok))
        log(("PASS " if ok else "FAIL ") + name + (f": {detail}" if detail else ""))

    def report(self, started, workdir, kept):
        """Logs how long the run took (`started`: its time.monotonic()); on a failure (or
        no check at all) keeps `workdir`, saying that `kept` is kept there, else removes
        it. Prints the last line, "N passed, M failed", and returns the exit status."""
        failed = sum(1 for _, ok in self.results if not ok)
        if failed or not self.results:
            log(f"done in {time.monotonic() - started:.0f} s; {kept} kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
            log(f"done in {time.monotonic() - started:.0f} s")
        print(f"{len(self.results) - failed} passed, {failed} failed", flush=True)
        return 1 if failed or not self.results else 0


def log_trouble(lost, problems, manys):
    """Logs the first games lost, replies that differ and PlayMany replies out of shape."""
    for g in lost[:10]:
        log(f"  lost {g.kind} {g.number}: {g.lost}")
    for p in problems[:10]:
        log("  " + p)
    for m in manys:
        for p in m.problems[:5]:
            log(f"  PlayMany {m.index}: {p}")


# ---------------------------------------------------------------------------------------
# The server: one process started by us and stopped by its own pid.


class ServerProcess:
    """One arbiter process on 127.0.0.1 port 0 (or on `listen`), logging to `log_path`
    at `log_filter` (RUST_LOG); the address it bound is read from its log (and its
    metrics address, when `extra` has `--metrics-listen`). `name` is what errors call
    it."""

    def __init__(self, binary, log_path, name, extra, listen="127.0.0.1:0",
                 log_filter="warn,arbiter=info"):
        self.name = name
        self.log_path = pathlib.Path(log_path)
        self.log_file = open(self.log_path, "w")
        self.with_metrics = "--metrics-listen" in extra
        self.process = subprocess.Popen(
            [binary, "--listen", listen, *extra],
            stdout=self.log_file, stderr=subprocess.STDOUT,
            env={**os.environ, "RUST_LOG": log_filter})
        self.address = None
        self.metrics = None

    async def started(self):
        """Returns once the process has logged the addresses it bound (at most 30 s)."""
        for _ in range(600):
            text = self.log_path.read_text()
            if LISTENING in text and (METRICS in text or not self.with_metrics):
                self.address = text.split(LISTENING, 1)[1].split()[0]
                if self.with_metrics:
                    self.metrics = text.split(METRICS, 1)[1].split("/")[0]
                return self
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited before listening:\n{text}")
            await asyncio.sleep(0.05)
        raise RuntimeError(f"{self.name} logged no address in 30 s")

    def alive(self):
        return self.process.poll() is None

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def panicked(self):
        return "panicked" in self.log_path.read_text()


# ---------------------------------------------------------------------------------------
# Games: what a client keeps, and how it picks its moves.


OTHELLO_8 = ["........", "........", "........", "...WB...", "...BW...",
             "........", "........", "........"]
OTHELLO_6 = ["......", "......", "..WB..", "..BW..", "......", "......"]


class Game:
    """One game as its client sees it: its setup, the moves the server applied, and
    every message sent with the reply it got."""

    def __init__(self, kind, rng, number):
        self.kind = kind
        self.number = number
        self.rng = random.Random(rng.getrandbits(64))
        if kind == "c4":
            self.rows, self.cols, self.run = self.rng.choice([(6, 7, 4), (6, 7, 4), (9, 11, 5)])
        elif kind == "othello":
            self.board, self.first = self.rng.choice([(OTHELLO_8, "B"), (OTHELLO_8, "B"),
                                                      (OTHELLO_6, "W")])
        self.applied = []       # the moves the server applied, in order
        self.moves = []         # every move answered, once each
        self.replies = []       # the reply to each of them
        self.setup_reply = None  # the reply to the first setup
        self.resumes = []       # (moves answered before it, the resuming setup's reply)
        self.pending = None     # the move sent whose reply has not come
        self.last = None        # the last reply
        self.finished = False   # no move left to send
        self.lost = None        # why the game was lost, if it was
        self.extra = 1          # moves sent after the game is over (each must be rejected)

    # The setup, from the start (no history) or the history of applied moves.
    def setup(self, history):
        if self.kind == "ttt":
            return pb.PlayTicTacToeRequest(setup=pb.TicTacToeSetup(
                history=[pb.TicTacToeMove(row=r, col=c) for r, c in history]))
        if self.kind == "c4":
            return pb.PlayConnectFourRequest(setup=pb.ConnectFourSetup(
                rows=self.rows, cols=self.cols, run_length=self.run, history=history))
        return pb.PlayOthelloRequest(setup=pb.OthelloSetup(
            board=pb.Board(rows=self.board), to_move=self.first,
            history=[pb.Cell(row=r, col=c) for r, c in history]))

    def request(self, move):
        if self.kind == "ttt":
            return pb.PlayTicTacToeRequest(row=move[0], col=move[1])
        if self.kind == "c4":
            return pb.PlayConnectFourRequest(drop=move)
        return pb.PlayOthelloRequest(move=pb.Cell(row=move[0], col=move[1]))

    def next_move(self):
        """The move to send now (the unanswered one again after a resume), or None when
        the game is done: mostly good moves, some the server must reject, and one more
        after the end."""
        if self.pending is not None:
            return self.pending
        if self.finished:
            return None
        over = self.last.verdict != PENDING
        if over:
            if self.extra == 0:
                self.finished = True
                return None
            self.extra -= 1
        rng = self.rng
        rows = list(self.last.board.rows)
        if self.kind == "ttt":
            empty = [(r, c) for r in range(3) for c in range(3) if rows[r][c] == "."]
            if empty and not over and rng.random() < 0.85:
                move = rng.choice(empty)
            else:
                move = (rng.randint(-1, 3), rng.randint(-1, 3))
        elif self.kind == "c4":
            open_cols = [c for c in range(self.cols) if rows[0][c] == "0"]
            if open_cols and not over and rng.random() < 0.9:
                move = rng.choice(open_cols)
            else:
                move = rng.randint(-1, self.cols)
        else:
            legal = [(cell.row, cell.col) for cell in self.last.legal_moves]
            size = len(self.board)
            if legal and rng.random() < 0.9:
                move = rng.choice(legal)
            else:
                move = (rng.randint(-1, size), rng.randint(-1, size))
        self.pending = move
        return move

    def answered(self, reply):
        move, self.pending = self.pending, None
        self.moves.append(move)
        self.replies.append(reply)
        if not reply.rejected:
            self.applied.append(move)
        self.last = reply

    def set_up(self, reply):
        if self.setup_reply is None:
            self.setup_reply = reply
        else:
            self.resumes.append((len(self.replies), reply))
        self.last = reply


# ---------------------------------------------------------------------------------------
# Streams.


class Deadline(Exception):
    """A read or write on a stream took longer than its deadline."""


async def timed(awaitable, deadline):
    try:
        return await asyncio.wait_for(awaitable, deadline)
    except asyncio.TimeoutError:
        raise Deadline() from None


async def read(call, deadline):
    reply = await timed(call.read(), deadline)
    if reply is grpc.aio.EOF:
        raise EOFError("the stream ended without a reply")
    return reply


async def pause(stop, seconds, rng):
    """Waits about `seconds` (0.5 to 1.5 times, drawn from `rng`) before a stream's next
    message, unless the run is stopping."""
    if not stop.is_set():
        await asyncio.sleep(seconds * rng.uniform(0.5, 1.5))


def stream_method(stub, kind):
    return {"ttt": stub.PlayTicTacToe, "c4": stub.PlayConnectFour,
            "othello": stub.PlayOthello}[kind]


KIND_OF_STATE = {"ttt": "tic_tac_toe", "c4": "connect_four", "othello": "othello"}


def action(game, request):
    return pb.GameAction(game=game.number, **{KIND_OF_STATE[game.kind]: request})


def state_reply(game, state, problems):
    """The kind's reply in `state`, or None (and a problem noted) if it is not there."""
    field = KIND_OF_STATE[game.kind]
    if state.game != game.number or state.invalid or state.WhichOneof("state") != field:
        problems.append(f"game {game.number}: unexpected state {state}")
        return None
    return getattr(state, field)


class Client:
    """What a test's game clients do its own way. `stats` takes the games (`games`,
    `manys`) and counts the messages answered (`messages`). A subclass sets the pace of
    play and of resuming (the class attributes) and defines the methods that raise
    NotImplementedError here."""

    resume_attempts = None  # streams opened for one game (or PlayMany stream) at most
    retry_pause = None      # seconds before a resume
    paces = None            # seconds between a single-game stream's moves, by kind
    stagger = None          # seconds between the starts of two slots
    many_pace = None        # seconds between a PlayMany stream's messages

    def __init__(self, stats):
        self.stats = stats

    def channel(self):
        """The channel a new stream opens on."""
        raise NotImplementedError

    async def write(self, call, request):
        raise NotImplementedError

    async def read(self, call):
        raise NotImplementedError

    async def finish(self, call):
        """Half-closes a stream whose every message was answered, and waits for its end."""
        raise NotImplementedError

    async def failed(self, call, error, many=None):
        """Cancels a stream that raised `error` (a PlayMany stream when `many` is its
        Many) and counts how it ended: (whether the client resumes from it, how it
        ended, whether the resume needs a new connection)."""
        raise NotImplementedError

    def resuming(self, how, many):
        """A failed stream (`how`: as failed() said) is about to be resumed."""

    def reconnect(self, channel):
        """The stream that failed on `channel` asked for a new connection."""

    async def before_resume(self, how, reconnect, channel, many):
        """Counts a resume (resuming), makes a new connection if the failure asked for
        one, and waits `retry_pause` seconds."""
        self.resuming(how, many)
        if reconnect:
            self.reconnect(channel)
        await asyncio.sleep(self.retry_pause)

    def resumed(self, seconds, many):
        """A resumed stream's setup was answered, `seconds` after its first failure."""


async def play_single(game, client, stop, pace):
    """Plays one game on a single-game stream to its end, resuming as `client` says."""
    failed_at = None
    for _ in range(client.resume_attempts):
        channel = client.channel()
        call = stream_method(pb_grpc.ArbiterServiceStub(channel), game.kind)()
        try:
            await client.write(call, game.setup(game.applied))
            game.set_up(await client.read(call))
            if failed_at is not None:
                client.resumed(time.monotonic() - failed_at, None)
                failed_at = None
            while (move := game.next_move()) is not None:
                await client.write(call, game.request(move))
                game.answered(await client.read(call))
                client.stats.messages += 1
                await pause(stop, pace, game.rng)
            await client.finish(call)
            return
        except Exception as error:  # noqa: BLE001 - every failure is either resumed or counted
            resume, how, reconnect = await client.failed(call, error)
            if not resume:
                game.lost = how
                return
            failed_at = failed_at or time.monotonic()
            await client.before_resume(how, reconnect, channel, None)
    game.lost = f"not resumed in {client.resume_attempts} attempts"


async def slot(index, kind, client, stop, seed):
    """One single-game stream after another, until `stop`."""
    rng = random.Random(seed)
    number = 0
    pace = client.paces[kind]
    # The slots start over a while, as a game server's matches would, not all at once.
    await asyncio.sleep(index * client.stagger)
    while not stop.is_set():
        game = Game(kind, rng, (index, number))
        number += 1
        client.stats.games.append(game)
        await play_single(game, client, stop, pace)


class Many:
    """A PlayMany stream holding `size` games at once; a finished game is closed and a
    new one (a new number) takes its place until `stop`. A failed stream is resumed with
    one message that sets up every live game from its history."""

    def __init__(self, index, size, seed):
        self.index = index
        self.rng = random.Random(seed)
        self.size = size
        self.next_number = (index << 32) | 1
        self.live = []
        self.problems = []

    def new_game(self, stats):
        kind = self.rng.choice(["ttt", "c4", "othello"])
        game = Game(kind, self.rng, self.next_number)
        self.next_number += 1
        stats.games.append(game)
        return game

    async def run(self, client, stop):
        stats = client.stats
        fresh = [self.new_game(stats) for _ in range(self.size)]
        failed_at = None
        attempts = 0
        while True:
            channel = client.channel()
            call = pb_grpc.ArbiterServiceStub(channel).PlayMany()
            try:
                # The first message sets every game up: new games from the start, the
                # others (after a lost stream) from their history.
                games = self.live + fresh
                await client.write(call, pb.PlayManyRequest(
                    actions=[action(g, g.setup(g.applied)) for g in games]))
                reply = await client.read(call)
                if len(reply.states) != len(games):
                    raise AssertionError(f"{len(reply.states)} states for {len(games)} setups")
                for g, state in zip(games, reply.states):
                    got = state_reply(g, state, self.problems)
                    if got is not None:
                        g.set_up(got)
                self.live, fresh = games, []
                if failed_at is not None:
                    client.resumed(time.monotonic() - failed_at, self)
                    failed_at, attempts = None, 0
                while self.live:
                    # Moves, then closes of the games that are done, then new games.
                    playing, closing = [], []
                    for g in self.live:
                        (closing if g.next_move() is None else playing).append(g)
                    starting = [] if stop.is_set() else [self.new_game(stats) for _ in closing]
                    actions = ([action(g, g.request(g.next_move())) for g in playing]
                               + [pb.GameAction(game=g.number, close=True) for g in closing]
                               + [action(g, g.setup([])) for g in starting])
                    # Closes are sent once: a finished game is not resumed.
                    self.live, fresh = playing, starting
                    await client.write(call, pb.PlayManyRequest(actions=actions))
                    reply = await client.read(call)
                    stats.messages += 1
                    if len(reply.states) != len(actions):
                        raise AssertionError(f"{len(reply.states)} states for {len(actions)} actions")
                    states = iter(reply.states)
                    for g in playing:
                        got = state_reply(g, next(states), self.problems)
                        if got is not None:
                            g.answered(got)
                    for g in closing:
                        state = next(states)
                        if state.invalid or state.WhichOneof("state") is not None:
                            self.problems.append(f"close of game {g.number}: {state}")
                    for g in starting:
                        got = state_reply(g, next(states), self.problems)
                        if got is not None:
                            g.set_up(got)
                    self.live, fresh = playing + starting, []
                    await pause(stop, client.many_pace, self.rng)
                await client.finish(call)
                return
            except Exception as error:  # noqa: BLE001 - every failure is either resumed or counted
                resume, how, reconnect = await client.failed(call, error, self)
                attempts += 1
                if not resume or attempts >= client.resume_attempts:
                    for g in self.live + fresh:
                        g.lost = f"PlayMany {self.index}: {how} (attempt {attempts})"
                    return
                failed_at = failed_at or time.monotonic()
                await client.before_resume(how, reconnect, channel, self)


def start_games(client, args, seed, stop):
    """Starts `args.slots` single-game slots (Tic-Tac-Toe, Connect Four and Othello in
    turn) and `args.many` PlayMany streams of `args.games_per_many` games, which play
    until `stop`; returns their tasks. The Many objects go to `client.stats.manys`."""
    kinds = ["ttt", "c4", "othello"]
    tasks = [asyncio.create_task(slot(i, kinds[i % 3], client, stop, seed * 100_000 + i))
             for i in range(args.slots)]
    manys = [Many(j + 1, args.games_per_many, seed * 1000 + j) for j in range(args.many)]
    client.stats.manys = manys
    tasks += [asyncio.create_task(m.run(client, stop)) for m in manys]
    return tasks


# ---------------------------------------------------------------------------------------
# Every game again, uninterrupted.


async def replay(games, address, options, problems, concurrency, deadline, limit=None,
                 most=None):
    """Plays every game not lost once more, uninterrupted, on a new channel to
    `address` (at most `concurrency` at once, each read within `deadline` seconds, all
    within `limit` seconds if given), with the same moves, and compares each reply: to
    the first setup, to each move, and to each resuming setup (which must be the state
    after its history: the uninterrupted game's reply to its last applied move).
    Returns (replies compared, Counter of those that differ); what differs goes to
    `problems` (for moves and resumes, only while it holds fewer than `most`, if given)."""
    channel = grpc.aio.insecure_channel(address, options=options)
    stub = pb_grpc.ArbiterServiceStub(channel)
    differ = collections.Counter()
    compared = 0
    semaphore = asyncio.Semaphore(concurrency)

    def note(problem):
        if most is None or len(problems) < most:
            problems.append(problem)

    async def again(game):
        nonlocal compared
        async with semaphore:
            call = stream_method(stub, game.kind)()
            await call.write(game.setup([]))
            first = await read(call, deadline)
            compared += 1
            if first != game.setup_reply:
                differ["first setup"] += 1
                problems.append(f"{game.kind} {game.number}: setup reply {game.setup_reply} != {first}")
            replies = []
            for move, got in zip(game.moves, game.replies):
                await call.write(game.request(move))
                want = await read(call, deadline)
                replies.append(want)
                compared += 1
                if want != got:
                    differ["move"] += 1
                    note(f"{game.kind} {game.number} move {move}: {got} != {want}")
            await call.done_writing()
            if await call.code() != grpc.StatusCode.OK:
                differ["reference stream"] += 1
            # A resuming setup answers the state after its history: the uninterrupted
            # game's reply to its last applied move (or to the setup, if none was).
            for answered, got in game.resumes:
                applied = [r for r in replies[:answered] if not r.rejected]
                want = applied[-1] if applied else first
                compared += 1
                if want != got:
                    differ["resume"] += 1
                    note(f"{game.kind} {game.number} resume after {answered}: {got} != {want}")

    gathered = asyncio.gather(*(again(g) for g in games if g.lost is None))
    await (gathered if limit is None else asyncio.wait_for(gathered, limit))
    await channel.close()
    return compared, differ
