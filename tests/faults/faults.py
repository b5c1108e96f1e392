"""The bad-network test (run by tests/faults/run.sh): live games survive a network that
delays, resets and black-holes, and the server frees a silent client's games within its
HTTP/2 keepalive.

One release server on 127.0.0.1 port 0, started with short keepalive settings
(--http2-keepalive-interval 1s --http2-keepalive-timeout 1s) and a long idle timeout
(--stream-idle-timeout 10m), so that the idle timeout cannot be what frees a game; the
fault-injecting proxy of proxy.py in front of it. Three phases, one per fault:

- `latency`: every chunk, both ways, delayed 40 ms plus or minus 30 ms (in order).
  Nothing may fail: no stream ends, no keepalive drops a connection that is only slow.
- `reset`: every 0.8 to 1.6 s the proxy resets every connection it carries (RST both
  ways, with 20 ms +- 10 ms of latency so that chunks are in flight), mid-stream.
- `silent`: after 4 s of play the proxy black-holes the connection (nothing forwarded
  either way, no FIN, no RST, both sockets held open). The server's gauges
  (`arbiter_live_games` and `arbiter_calls_in_flight` on --metrics-listen, summed over
  their labels) are polled every 25 ms from that moment: they must fall back to what
  they were before the phase (0 and 0) within interval + timeout + 3 s (tolerance for a
  loaded machine), far before the idle timeout. The clients' own read deadline in this
  phase (6 s) is longer than that bound, so no client has resumed yet when the games
  must be gone: the gauges then count only what the silent connection held.

In every phase SLOTS single-game streams (Tic-Tac-Toe, Othello, Connect Four, a third
each) play games back to back and MANY PlayMany streams hold GAMES_PER_MANY games each,
all through the proxy. A client keeps what the README says a game server keeps (the
moves the server applied, and the setup); when its stream fails it opens a new stream
with a setup whose history is those moves and sends again the move whose reply it had
not had. A stream failure it resumes from: UNAVAILABLE; INTERNAL from the transport
(RST_STREAM, "Stream removed", or grpcio's local "Internal error from Core" when a write
meets a lost connection); a read (or write) that takes longer than the phase's deadline,
after which the client also opens a new connection (a new channel), since its current
one may be silent. Anything else loses the game, and fails the test.

Afterwards every game is played once more, directly against the server (no proxy),
with the same moves, and every reply is compared field for field (protobuf equality):
the reply to the first setup, to each move, and to each resuming setup (which must be
the state after its history: the clean game's reply to its last applied move). After
each phase both gauges must be back at 0 within 5 s (nothing held). The proxy runs on
the clients' event loop; its worst lateness is logged per phase.

The last line is "N passed, M failed"; the exit status is non-zero on any failure.
"""

import argparse
import asyncio
import collections
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import grpc

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
sys.path.insert(0, str(HERE))
from stubs import load_stubs  # noqa: E402
from proxy import FaultProxy  # noqa: E402

pb, pb_grpc = load_stubs()

PENDING = pb.Verdict.Value("VERDICT_PENDING")
RESUME_ATTEMPTS = 20
LOCAL_WRITE_FAILURE = "Internal error from Core"
TOLERANCE = 3.0
IDLE_TIMEOUT = "10m"
CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 64 << 20),
    # Each channel its own subchannels: a new channel must mean a new TCP connection,
    # not the (possibly silent) one another channel to the same address has.
    ("grpc.use_local_subchannel_pool", 1),
]


def log(*parts):
    print(f"[{time.strftime('%H:%M:%S')}]", *parts, flush=True)


def seconds(duration):
    """'1s', '500ms', '2m' as seconds."""
    for suffix, factor in (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if duration.endswith(suffix) and duration[: -len(suffix)].replace(".", "").isdigit():
            return float(duration[: -len(suffix)]) * factor
    raise ValueError(f"not a duration: {duration}")


# ---------------------------------------------------------------------------------------
# The server, started and stopped by its own pid.


class Server:
    def __init__(self, binary, workdir, extra):
        self.log_path = pathlib.Path(workdir) / "server.log"
        self.log_file = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", *extra],
            stdout=self.log_file, stderr=subprocess.STDOUT,
            env={**os.environ, "RUST_LOG": "warn,arbiter=info"})
        self.address = None
        self.metrics = None

    async def started(self):
        for _ in range(600):
            text = self.log_path.read_text()
            if "arbiter listening on " in text and "metrics on http://" in text:
                self.address = text.split("arbiter listening on ", 1)[1].split()[0]
                self.metrics = text.split("metrics on http://", 1)[1].split("/")[0]
                return self
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited before listening:\n{text}")
            await asyncio.sleep(0.05)
        raise RuntimeError("the server logged no addresses in 30 s")

    def gauges_now(self):
        """(arbiter_live_games, arbiter_calls_in_flight), each summed over its labels."""
        text = urllib.request.urlopen(f"http://{self.metrics}/metrics", timeout=5).read().decode()
        sums = {"arbiter_live_games": 0.0, "arbiter_calls_in_flight": 0.0}
        for line in text.splitlines():
            name = line.split("{", 1)[0].split(" ", 1)[0]
            if name in sums:
                sums[name] += float(line.rsplit(" ", 1)[1])
        return int(sums["arbiter_live_games"]), int(sums["arbiter_calls_in_flight"])

    async def gauges(self):
        return await asyncio.to_thread(self.gauges_now)

    async def live_games(self):
        return (await self.gauges())[0]

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def alive(self):
        return self.process.poll() is None

    def panicked(self):
        return "panicked" in self.log_path.read_text()


class Connection:
    """The clients' channel through the proxy. A client whose read (or write) passed its
    deadline asks for a fresh one: the first to ask replaces the channel (a new TCP
    connection), the others get that one. Old channels stay open until the end, so that
    no stream on them is cut by us."""

    def __init__(self, address):
        self.address = address
        self.channels = []
        self.channel = self._new()

    def _new(self):
        channel = grpc.aio.insecure_channel(self.address, options=CHANNEL_OPTIONS)
        self.channels.append(channel)
        return channel

    def fresh(self, failed):
        if failed is self.channel:
            self.channel = self._new()
        return self.channel

    async def close(self):
        for channel in self.channels:
            await channel.close()


# ---------------------------------------------------------------------------------------
# Games (after tests/rolling/rolling.py): what a client keeps, and how it picks moves.


OTHELLO_8 = ["........", "........", "........", "...WB...", "...BW...",
             "........", "........", "........"]
OTHELLO_6 = ["......", "......", "..WB..", "..BW..", "......", "......"]


class Game:
    def __init__(self, kind, rng, number):
        self.kind = kind
        self.number = number
        self.rng = random.Random(rng.getrandbits(64))
        if kind == "c4":
            self.rows, self.cols, self.run = self.rng.choice([(6, 7, 4), (6, 7, 4), (9, 11, 5)])
        elif kind == "othello":
            self.board, self.first = self.rng.choice([(OTHELLO_8, "B"), (OTHELLO_8, "B"),
                                                      (OTHELLO_6, "W")])
        self.applied = []        # the moves the server applied, in order
        self.moves = []          # every move answered, once each
        self.replies = []        # the reply to each of them
        self.setup_reply = None  # the reply to the first setup
        self.resumes = []        # (moves answered before it, the resuming setup's reply)
        self.pending = None      # the move sent whose reply has not come
        self.last = None
        self.finished = False
        self.lost = None
        self.extra = 1           # moves sent after the game is over (each must be rejected)

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
        the game is done: mostly good moves, some the server must reject, one more after
        the end."""
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
# Streams: how a failure is told apart, and resumed.


class Phase:
    def __init__(self, name, deadline):
        self.name = name
        self.deadline = deadline   # the clients' read/write deadline, seconds
        self.games = []
        self.manys = []
        self.resumes = collections.Counter()        # why single-game streams were resumed
        self.many_resumes = collections.Counter()   # why PlayMany streams were resumed
        self.ended_after_last_reply = collections.Counter()
        self.first_resume_at = None
        self.messages = 0
        self.loop_lag = 0.0   # the worst lateness of the event loop (client and proxy)
        self.statuses = collections.Counter()  # (code, details) of the streams resumed


class Deadline(Exception):
    """A read or write on a stream took longer than the phase's deadline."""


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


async def failure(call, error, phase):
    """Cancels a stream that raised `error`; returns (why, resumable, new connection)."""
    if isinstance(error, Deadline):
        call.cancel()
        return "read or write deadline", True, True
    try:
        code = await asyncio.wait_for(call.code(), 5)
        details = await call.details()
    except asyncio.TimeoutError:
        call.cancel()
        return f"no status 5 s after {type(error).__name__}: {error}", True, True
    call.cancel()
    phase.statuses[(code.name, details)] += 1
    if code == grpc.StatusCode.UNAVAILABLE:
        return "UNAVAILABLE", True, False
    if code == grpc.StatusCode.INTERNAL and (
            details == LOCAL_WRITE_FAILURE or "RST_STREAM" in details
            or "Stream removed" in details):
        return "INTERNAL (transport)", True, False
    return f"{code.name}: {details} ({type(error).__name__}: {error})", False, False


async def finish(call, phase):
    """Half-closes a stream whose every message was answered and waits for its status; a
    transport failure then loses nothing (counted, not resumed)."""
    try:
        await timed(call.done_writing(), phase.deadline)
        code = await timed(call.code(), phase.deadline)
    except Exception:  # noqa: BLE001 - nothing left to lose
        call.cancel()
        phase.ended_after_last_reply["no status"] += 1
        return
    if code != grpc.StatusCode.OK:
        phase.ended_after_last_reply[code.name] += 1


async def pause(stop, seconds_, rng):
    if not stop.is_set():
        await asyncio.sleep(seconds_ * rng.uniform(0.5, 1.5))


def stream_method(stub, kind):
    return {"ttt": stub.PlayTicTacToe, "c4": stub.PlayConnectFour,
            "othello": stub.PlayOthello}[kind]


async def play_single(game, conn, phase, stop, pace):
    channel = conn.channel
    for _ in range(RESUME_ATTEMPTS):
        call = stream_method(pb_grpc.ArbiterServiceStub(channel), game.kind)()
        try:
            await timed(call.write(game.setup(game.applied)), phase.deadline)
            game.set_up(await read(call, phase.deadline))
            while (move := game.next_move()) is not None:
                await timed(call.write(game.request(move)), phase.deadline)
                game.answered(await read(call, phase.deadline))
                phase.messages += 1
                await pause(stop, pace, game.rng)
            await finish(call, phase)
            return
        except Exception as error:  # noqa: BLE001 - every failure is resumed or counted
            why, resumable, reconnect = await failure(call, error, phase)
            if not resumable:
                game.lost = why
                return
            phase.resumes[why] += 1
            phase.first_resume_at = phase.first_resume_at or time.monotonic()
            channel = conn.fresh(channel) if reconnect else conn.channel
            await asyncio.sleep(0.02)
    game.lost = f"not resumed in {RESUME_ATTEMPTS} attempts"


async def slot(index, kind, conn, phase, stop, seed):
    rng = random.Random(seed)
    number = 0
    pace = {"ttt": 0.3, "c4": 0.15, "othello": 0.12}[kind]
    await asyncio.sleep(index * 0.01)
    while not stop.is_set():
        game = Game(kind, rng, (index, number))
        number += 1
        phase.games.append(game)
        await play_single(game, conn, phase, stop, pace)


KIND_OF_STATE = {"ttt": "tic_tac_toe", "c4": "connect_four", "othello": "othello"}


def action(game, request):
    return pb.GameAction(game=game.number, **{KIND_OF_STATE[game.kind]: request})


def state_reply(game, state, problems):
    field = KIND_OF_STATE[game.kind]
    if state.game != game.number or state.invalid or state.WhichOneof("state") != field:
        problems.append(f"game {game.number}: unexpected state {state}")
        return None
    return getattr(state, field)


class Many:
    """A PlayMany stream holding `size` games; a finished game is closed and a new one
    takes its place until `stop`. A failed stream is resumed with one message that sets
    up every live game from its history."""

    def __init__(self, index, size, seed):
        self.index = index
        self.size = size
        self.rng = random.Random(seed)
        self.next_number = (index << 32) | 1
        self.live = []
        self.problems = []

    def new_game(self, phase):
        game = Game(self.rng.choice(["ttt", "c4", "othello"]), self.rng, self.next_number)
        self.next_number += 1
        phase.games.append(game)
        return game

    async def run(self, conn, phase, stop):
        fresh = [self.new_game(phase) for _ in range(self.size)]
        channel = conn.channel
        attempts = 0
        while True:
            call = pb_grpc.ArbiterServiceStub(channel).PlayMany()
            try:
                games = self.live + fresh
                await timed(call.write(pb.PlayManyRequest(
                    actions=[action(g, g.setup(g.applied)) for g in games])), phase.deadline)
                reply = await read(call, phase.deadline)
                if len(reply.states) != len(games):
                    raise AssertionError(f"{len(reply.states)} states for {len(games)} setups")
                for g, state in zip(games, reply.states):
                    got = state_reply(g, state, self.problems)
                    if got is not None:
                        g.set_up(got)
                self.live, fresh, attempts = games, [], 0
                while self.live:
                    playing, closing = [], []
                    for g in self.live:
                        (closing if g.next_move() is None else playing).append(g)
                    starting = [] if stop.is_set() else [self.new_game(phase) for _ in closing]
                    actions = ([action(g, g.request(g.next_move())) for g in playing]
                               + [pb.GameAction(game=g.number, close=True) for g in closing]
                               + [action(g, g.setup([])) for g in starting])
                    # A finished game is closed once, never resumed.
                    self.live, fresh = playing, starting
                    await timed(call.write(pb.PlayManyRequest(actions=actions)), phase.deadline)
                    reply = await read(call, phase.deadline)
                    phase.messages += 1
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
                    await pause(stop, 0.15, self.rng)
                await finish(call, phase)
                return
            except AssertionError as error:
                call.cancel()
                self.problems.append(str(error))
                for g in self.live + fresh:
                    g.lost = f"PlayMany {self.index}: {error}"
                return
            except Exception as error:  # noqa: BLE001 - every failure is resumed or counted
                why, resumable, reconnect = await failure(call, error, phase)
                attempts += 1
                if not resumable or attempts >= RESUME_ATTEMPTS:
                    for g in self.live + fresh:
                        g.lost = f"PlayMany {self.index}: {why} (attempt {attempts})"
                    return
                phase.many_resumes[why] += 1
                phase.first_resume_at = phase.first_resume_at or time.monotonic()
                channel = conn.fresh(channel) if reconnect else conn.channel
                await asyncio.sleep(0.02)


# ---------------------------------------------------------------------------------------
# The phases.


async def play(phase, conn, args, seed, fault):
    """Starts the clients, runs `fault(stop)` (which returns when the phase should
    stop), then lets every game finish."""
    stop = asyncio.Event()
    kinds = ["ttt", "c4", "othello"]
    tasks = [asyncio.create_task(slot(i, kinds[i % 3], conn, phase, stop, seed * 100_000 + i))
             for i in range(args.slots)]
    manys = [Many(j + 1, args.games_per_many, seed * 1000 + j) for j in range(args.many)]
    phase.manys = manys
    tasks += [asyncio.create_task(m.run(conn, phase, stop)) for m in manys]
    lag = asyncio.create_task(loop_lag(phase, stop))
    try:
        result = await fault()
    finally:
        stop.set()
    await asyncio.wait_for(asyncio.gather(*tasks, lag), 60)
    return result


async def loop_lag(phase, stop):
    """How late the event loop (the clients' and the proxy's) wakes a task that sleeps
    50 ms: a starved process shows here, not as a fault of the server."""
    while not stop.is_set():
        t0 = time.monotonic()
        await asyncio.sleep(0.05)
        phase.loop_lag = max(phase.loop_lag, time.monotonic() - t0 - 0.05)


async def wait_for_gauges(server, wanted, limit):
    """Polls the server's gauges every 25 ms until they are `wanted` (live games, calls
    in flight), for at most `limit` seconds: (seconds, gauges)."""
    t0 = time.monotonic()
    value = await server.gauges()
    while value != wanted and time.monotonic() - t0 < limit:
        await asyncio.sleep(0.025)
        value = await server.gauges()
    return time.monotonic() - t0, value


async def reference(games, address, problems):
    """Plays every game again, cleanly and directly against the server, and compares
    each reply: (replies compared, Counter of those that differ)."""
    channel = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
    stub = pb_grpc.ArbiterServiceStub(channel)
    differ = collections.Counter()
    compared = 0
    semaphore = asyncio.Semaphore(32)

    async def again(game):
        nonlocal compared
        async with semaphore:
            call = stream_method(stub, game.kind)()
            await call.write(game.setup([]))
            first = await read(call, 10)
            compared += 1
            if first != game.setup_reply:
                differ["first setup"] += 1
                problems.append(f"{game.kind} {game.number}: setup {game.setup_reply} != {first}")
            replies = []
            for move, got in zip(game.moves, game.replies):
                await call.write(game.request(move))
                want = await read(call, 10)
                replies.append(want)
                compared += 1
                if want != got:
                    differ["move"] += 1
                    problems.append(f"{game.kind} {game.number} move {move}: {got} != {want}")
            await call.done_writing()
            if await call.code() != grpc.StatusCode.OK:
                differ["reference stream"] += 1
            for answered, got in game.resumes:
                applied = [r for r in replies[:answered] if not r.rejected]
                want = applied[-1] if applied else first
                compared += 1
                if want != got:
                    differ["resume"] += 1
                    problems.append(f"{game.kind} {game.number} resume after {answered}: "
                                    f"{got} != {want}")

    await asyncio.wait_for(asyncio.gather(*(again(g) for g in games if g.lost is None)), 90)
    await channel.close()
    return compared, differ


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--slots", type=int, default=60,
                        help="single-game streams live at once (a third of each kind)")
    parser.add_argument("--many", type=int, default=2, help="PlayMany streams")
    parser.add_argument("--games-per-many", type=int, default=50)
    parser.add_argument("--phase-seconds", type=float, default=12.0,
                        help="play under latency, and under resets")
    parser.add_argument("--interval", default="1s", help="--http2-keepalive-interval")
    parser.add_argument("--timeout", default="1s", help="--http2-keepalive-timeout")
    parser.add_argument("--seed", type=int, default=38)
    args = parser.parse_args()

    bound = seconds(args.interval) + seconds(args.timeout)
    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="arbiter-faults-")
    server = Server(args.binary, workdir, [
        "--http2-keepalive-interval", args.interval, "--http2-keepalive-timeout", args.timeout,
        "--stream-idle-timeout", IDLE_TIMEOUT])
    proxy = None
    checks = []

    def check(name, ok, detail=""):
        checks.append((name, ok))
        log(("PASS " if ok else "FAIL ") + name + (f": {detail}" if detail else ""))

    rng = random.Random(args.seed)
    phases = []
    try:
        await server.started()
        host, port = server.address.rsplit(":", 1)
        proxy = await FaultProxy(host, int(port), seed=args.seed).start()
        log(f"server on {server.address} (metrics {server.metrics}), keepalive interval "
            f"{args.interval} timeout {args.timeout}, idle timeout {IDLE_TIMEOUT}; "
            f"proxy on {proxy.address}")

        async def settle(phase, conn):
            """Closes the phase's channels; resets any connection the client left open
            (grpcio may keep an idle one after closing a channel whose connection was
            reset and made anew), so that phases do not share connections; then nothing
            may be held."""
            await conn.close()
            await asyncio.sleep(0.5)
            leftover = proxy.reset_all()
            if leftover:
                log(f"{phase.name}: {leftover} idle connection(s) left open by the client, reset")
            took, value = await wait_for_gauges(server, (0, 0), 5)
            check(f"{phase.name}: live games and calls in flight back to 0 after play",
                  value == (0, 0), f"{value} after {took:.1f} s")

        # 1. Latency and jitter.
        phase = Phase("latency", deadline=10.0)
        phases.append(phase)
        conn = Connection(proxy.address)

        async def latency():
            proxy.set_latency(0.040, 0.030)
            await asyncio.sleep(args.phase_seconds)

        t0 = time.monotonic()
        await play(phase, conn, args, args.seed + 1, latency)
        proxy.set_latency(0, 0)
        phase.seconds = time.monotonic() - t0
        log(f"latency: {phase.seconds:.1f} s, {proxy.connections} connection(s) so far")
        await settle(phase, conn)

        # 2. Connections reset mid-stream.
        phase = Phase("reset", deadline=10.0)
        phases.append(phase)
        conn = Connection(proxy.address)
        phase.reset_count = 0

        async def resets():
            proxy.set_latency(0.020, 0.010)
            until = time.monotonic() + args.phase_seconds
            await asyncio.sleep(1.0)
            while time.monotonic() < until:
                phase.reset_count += proxy.reset_all()
                await asyncio.sleep(rng.uniform(0.8, 1.6))

        t0 = time.monotonic()
        await play(phase, conn, args, args.seed + 2, resets)
        proxy.set_latency(0, 0)
        phase.seconds = time.monotonic() - t0
        log(f"reset: {phase.seconds:.1f} s, {phase.reset_count} connections reset mid-stream")
        await settle(phase, conn)

        # 3. A silent connection.
        phase = Phase("silent", deadline=bound + TOLERANCE + 1.0)
        phases.append(phase)
        conn = Connection(proxy.address)
        before = await server.gauges()
        phase.silence = {}

        async def silence():
            await asyncio.sleep(4.0)
            t_black = time.monotonic()
            count = proxy.blackhole_all()
            held = await server.gauges()
            took, value = await wait_for_gauges(server, before, bound + TOLERANCE + 5)
            resumed_before = (phase.first_resume_at is not None
                              and phase.first_resume_at - t_black < took)
            phase.silence = dict(held=held, connections=count, took=took, value=value,
                                 resumed_before=resumed_before)
            # Play on, resumed on a new connection, for a few seconds.
            await asyncio.sleep(max(0.0, phase.deadline - took) + 3.0)

        t0 = time.monotonic()
        await play(phase, conn, args, args.seed + 3, silence)
        proxy.release_silent()
        phase.seconds = time.monotonic() - t0
        s = phase.silence
        log(f"silent: {s['connections']} connection(s) black-holed holding {s['held'][0]} live "
            f"games in {s['held'][1]} calls (before the phase: {before[0]} and {before[1]}); "
            f"back to {s['value'][0]} and {s['value'][1]} {s['took']:.2f} s later; "
            f"interval + timeout = {bound:.1f} s")
        check(f"silent: one connection black-holed, holding games: {s['connections']}, "
              f"{s['held'][0]}", s["connections"] == 1 and s["held"][0] > before[0])
        check(f"silent: its games and calls freed within interval + timeout + {TOLERANCE:.0f} s "
              f"({s['took']:.2f} s <= {bound + TOLERANCE:.1f} s; idle timeout {IDLE_TIMEOUT})",
              s["value"] == before and s["took"] <= bound + TOLERANCE,
              f"gauges {s['value']}, wanted {before}")
        check("silent: no client had resumed before the games were freed",
              not s["resumed_before"])
        await settle(phase, conn)

        # Every game again, cleanly, directly against the server.
        log(f"replaying every game directly against {server.address}")
        totals = collections.Counter()
        for phase in phases:
            problems = []
            t0 = time.monotonic()
            compared, differ = await reference(phase.games, server.address, problems)
            lost = [g for g in phase.games if g.lost is not None]
            for g in lost[:10]:
                log(f"  lost {g.kind} {g.number}: {g.lost}")
            for p in problems[:10]:
                log("  " + p)
            for m in phase.manys:
                for p in m.problems[:5]:
                    log(f"  PlayMany {m.index}: {p}")
            singles = sum(1 for g in phase.games if isinstance(g.number, tuple))
            resumed_games = sum(1 for g in phase.games if g.resumes)
            log(f"{phase.name}: {phase.seconds:.1f} s, {singles} single-stream games and "
                f"{len(phase.games) - singles} PlayMany games, {phase.messages} messages answered; "
                f"{compared} replies compared in {time.monotonic() - t0:.1f} s; "
                f"{resumed_games} games resumed; worst event-loop lag "
                f"{phase.loop_lag * 1000:.0f} ms")
            log(f"{phase.name}: single-stream resumes {sum(phase.resumes.values())} "
                f"{dict(phase.resumes)}; PlayMany stream resumes {sum(phase.many_resumes.values())} "
                f"{dict(phase.many_resumes)}")
            for (code, details), count in phase.statuses.most_common(4):
                log(f"{phase.name}: streams ended {code} x{count}: {details!r}")
            if phase.ended_after_last_reply:
                log(f"{phase.name}: streams that failed after their last reply (nothing to "
                    f"resume): {dict(phase.ended_after_last_reply)}")
            check(f"{phase.name}: games lost: {len(lost)}", not lost)
            check(f"{phase.name}: replies that differ: {sum(differ.values())} of {compared}",
                  not differ and compared > 0, str(dict(differ)) if differ else "")
            many_problems = sum(len(m.problems) for m in phase.manys)
            check(f"{phase.name}: PlayMany replies out of shape: {many_problems}", many_problems == 0)
            failed_streams = sum(phase.resumes.values()) + sum(phase.many_resumes.values())
            if phase.name == "latency":
                check(f"latency: streams that failed: {failed_streams} (a slow network is not a "
                      "dead one)", failed_streams == 0)
            else:
                check(f"{phase.name}: streams resumed: {failed_streams} (the fault must "
                      "interrupt games)", failed_streams > 0 and resumed_games > 0)
            totals["compared"] += compared
            totals["differ"] += sum(differ.values())
        log(f"all phases: {totals['compared']} replies compared, {totals['differ']} differ")
        check("the server did not panic and is still up", server.alive() and not server.panicked())
    except Exception as error:  # noqa: BLE001 - reported as a failed check
        check("the run completed", False, f"{type(error).__name__}: {error}")
    finally:
        if proxy is not None:
            await proxy.close()
        server.stop()
    failed = sum(1 for _, ok in checks if not ok)
    if failed or not checks:
        log(f"done in {time.monotonic() - started:.0f} s; the server's log is kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
        log(f"done in {time.monotonic() - started:.0f} s")
    print(f"{len(checks) - failed} passed, {failed} failed", flush=True)
    return 1 if failed or not checks else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
