"""The soak (run by tests/soak/run.sh): every kind of valid load and every fault of
tests/faults/ and tests/abuse/ at once, for --duration seconds (10 minutes by default),
against one release server whose resident memory must stay flat and which must give no
wrong answer.

One release server on 127.0.0.1 port 0 (--binary), with --metrics-listen 127.0.0.1:0 and
short HTTP/2 keepalive settings (--http2-keepalive-interval 2s --http2-keepalive-timeout
2s, so that a silent connection's games are freed long before the clients resume), and
the fault-injecting proxy of tests/faults/proxy.py in front of it. For the whole run, at
once:

1. Live games through the proxy: SLOTS single-game streams (Tic-Tac-Toe, Connect Four,
   Othello, a third each) playing games back to back and MANY PlayMany streams holding
   GAMES_PER_MANY games each: the game clients of tests/faults/faults.py (and
   tests/lib/game_clients.py). A stream that fails is resumed from the game's history
   (a setup holding the moves the server applied) on UNAVAILABLE, on INTERNAL from the
   transport, or after a read or write outlasted --deadline (then on a new connection);
   anything else loses the game.
2. Unary and CheckBatch calls through the proxy (UNARY_WORKERS at once): a seeded pool
   of CheckOthelloMove, ListOthelloMoves, CheckConnectFour and JudgeTicTacToe requests on
   random positions (some malformed, answered INVALID_ARGUMENT) and CheckBatch calls of
   10 to 100 of them, plus the fixed calls of tests/abuse/abuse.py whose answers are
   known. Each request's answer is first taken directly from the server (no proxy) and
   the fixed ones checked against their known answers; every call through the proxy must
   then be answered the same, byte for byte (the reply's bytes; for an error, its code,
   message and BadRequest details). A call is retried on UNAVAILABLE, on INTERNAL from the
   transport, and after --deadline (on a new connection), as a game is resumed.
3. Malformed requests directly to the server (not through the proxy), one every
   --malformed-every seconds, each kind in turn: a JudgeTicTacToe of 166,000 moves off
   the board (about 1 MB), a JudgeTicTacToe whose bytes do not decode, a CheckBatch of
   10,001 checks and a PlayMany message of 10,001 actions (each must end
   INVALID_ARGUMENT), a CheckOthelloMove whose color is 1,040,000 control characters
   (INVALID_ARGUMENT); and the bulk calls whose items are all malformed, which the
   server answers OK with every item `invalid` (each a BadRequest's field violations):
   a CheckBatch of 10,000 checks of 9 moves off the board, a CheckBatch of one
   JudgeTicTacToe of 166,000 moves off the board, a PlayMany message of 10,000 malformed
   Othello setups (its one reply must hold 10,000 states, each `invalid`, in order).
4. The proxy cycling its faults: 3 s clean; in every other cycle (the first, the third,
   ...) a silent connection: every connection black-holed (no byte forwarded, no FIN,
   no RST) for --deadline + 3 s, so that the server frees the silent games by its
   keepalive and the clients resume over new connections after their deadline, then the
   black-holed sockets are reset; 8 s of resets (every connection reset, RST both ways,
   every 0.8 to 1.6 s, with 20 ms +- 10 ms of latency so that chunks are in flight);
   8 s of latency and jitter (40 ms +- 30 ms per chunk, both ways); and again.

Every --replay-every seconds the games finished since are played once more directly
against the server and every reply compared field for field (the first setup's, each
move's, each resuming setup's: tests/lib/game_clients.py `replay`), so that the client's
memory stays flat too; the rest are replayed once the load has stopped. Wrong answers =
replies that differ + unary and batch answers that differ + malformed requests not
answered as above; all must be 0, and no game lost.

The server's resident memory (VmRSS of /proc/PID/status) is read every second from the
start of the load. The first --warmup seconds (60 by default) are its warm-up, in which
every kind of load and the first fault cycle reach their working set. After it, RSS must
stay flat: its maximum at most the warm-up's maximum plus max(10%, 16 MiB) (16 MiB: one
malformed request of about 1 MB is held at up to 8.7 times its bytes beside a reply of
up to 2 MiB, RELIABILITY.md "What a malformed request costs", arriving while the live
games and connections are at their busiest); and the slope of a least-squares line
through the samples after the warm-up below --max-slope MiB per minute (2 by default),
or the tolerance spread over the line's span if that is more (a 60 s run's 40 s after
a 20 s warm-up: 16 MiB in 40 s, 24 MiB/min; a 10-minute run's 9 minutes: 2 MiB/min),
since one malformed request moves RSS by more than 2 MiB/min over 40 s would.

Once the load has stopped (every game finished, the faults cleared, the clients'
channels closed): arbiter_live_games and arbiter_calls_in_flight (summed over their
labels) back to 0 within 10 s, the server still up and its log free of "panicked";
every pool request asked directly once more still gets the answer it got at the start.

Prints a summary table, then the checks, and last "N passed, M failed"; the exit status
is non-zero on any failure (the server's log is kept then).
"""

import argparse
import asyncio
import collections
import os
import pathlib
import random
import signal
import sys
import tempfile
import threading
import time

import grpc

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
sys.path.insert(0, str(HERE.parent / "faults"))
# The bad-network test's pieces: the server with its gauges, the clients' connection
# through the proxy, the game clients and how their failures are resumed.
from faults import CHANNEL_OPTIONS, Connection, Games, Phase, Server, loop_lag  # noqa: E402
from game_clients import (  # noqa: E402
    LOCAL_WRITE_FAILURE, OTHELLO_8, Checks, log, log_trouble, pb, replay, start_games)
from proc import rss_kib  # noqa: E402
from proxy import FaultProxy  # noqa: E402

SERVICE = "/arbiter.v1.ArbiterService/"
MIB = 1024  # KiB
RSS_TOLERANCE_FRACTION = 0.10
RSS_TOLERANCE_FLOOR = 16 * MIB  # KiB
GAUGE_LIMIT = 10.0  # seconds for the gauges to come back to 0 once the load has stopped
KEEPALIVE = "2s"


async def rest(stop, seconds):
    """Sleeps `seconds`, or less if `stop` is set meanwhile."""
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except asyncio.TimeoutError:
        pass


# ---------------------------------------------------------------------------------------
# The games: the bad-network test's clients, with more resumes allowed per game (a game
# may meet a silent connection and a reset period in one cycle, for as many cycles as it
# lasts).


class SoakGames(Games):
    resume_attempts = 60


# ---------------------------------------------------------------------------------------
# Unary and CheckBatch calls with known answers.


def random_othello(rng):
    size = rng.choice([8, 8, 6])
    rows = ["".join(rng.choice("....BW") for _ in range(size)) for _ in range(size)]
    return rows, size


def random_connect_four(rng):
    """A 6x7 board with pieces dropped in turn, and the last drop's cell and player."""
    grid = [["0"] * 7 for _ in range(6)]
    heights = [0] * 7
    last = (5, 0, 1)
    for turn in range(rng.randint(1, 30)):
        col = rng.choice([c for c in range(7) if heights[c] < 6])
        row = 5 - heights[col]
        heights[col] += 1
        player = 1 + turn % 2
        grid[row][col] = str(player)
        last = (row, col, player)
    return ["".join(r) for r in grid], last


def random_check(rng):
    """(method, request, Check) of a random one-shot check; about one in ten malformed."""
    kind = rng.randrange(4)
    bad = rng.random() < 0.1
    if kind == 0:
        rows, size = random_othello(rng)
        hi = size if bad else size - 1
        request = pb.CheckOthelloMoveRequest(board=pb.Board(rows=rows), row=rng.randint(0, hi),
                                             col=rng.randint(0, hi), color=rng.choice("BW"))
        return "CheckOthelloMove", request, pb.Check(check_othello_move=request)
    if kind == 1:
        rows, _ = random_othello(rng)
        request = pb.ListOthelloMovesRequest(board=pb.Board(rows=rows),
                                             color="X" if bad else rng.choice("BW"))
        return "ListOthelloMoves", request, pb.Check(list_othello_moves=request)
    if kind == 2:
        rows, (row, col, player) = random_connect_four(rng)
        request = pb.CheckConnectFourRequest(board=pb.Board(rows=rows), row=row,
                                             col=col + 7 if bad else col, player=player,
                                             run_length=rng.choice([0, 0, 3]))
        return "CheckConnectFour", request, pb.Check(check_connect_four=request)
    cells = [(r, c) for r in range(3) for c in range(3)]
    rng.shuffle(cells)
    moves = cells[:rng.randint(0, 9)]
    if bad:
        moves.append(rng.choice([(3, 0), (-1, 2)] + moves[:1]))
    request = pb.JudgeTicTacToeRequest(moves=[pb.TicTacToeMove(row=r, col=c) for r, c in moves])
    return "JudgeTicTacToe", request, pb.Check(judge_tic_tac_toe=request)


def known_calls():
    """The fixed calls of tests/abuse/abuse.py's steady load, and what must hold of each
    answer: (method, request bytes, check of the decoded reply)."""
    c4 = pb.CheckConnectFourRequest(
        board=pb.Board(rows=["0000000", "0000000", "0000000", "0000000", "0222000", "0111100"]),
        row=5, col=4, player=1)
    judge = pb.JudgeTicTacToeRequest(moves=[pb.TicTacToeMove(row=r, col=c) for r, c in
                                            [(0, 0), (2, 0), (1, 1), (2, 1), (2, 2)]])
    opening = pb.ListOthelloMovesRequest(board=pb.Board(rows=OTHELLO_8), color="B")
    batch = pb.CheckBatchRequest(checks=[pb.Check(check_connect_four=c4),
                                         pb.Check(judge_tic_tac_toe=judge), pb.Check()])

    def c4_wins(data):
        reply = pb.CheckConnectFourResponse.FromString(data)
        return reply.wins and [(c.row, c.col) for c in reply.run] == [(5, 1), (5, 2), (5, 3), (5, 4)]

    def a_wins(data):
        reply = pb.JudgeTicTacToeResponse.FromString(data)
        return reply.verdict == pb.VERDICT_A_WINS and list(reply.board.rows) == ["X..", ".X.", "OOX"]

    def four_openings(data):
        reply = pb.ListOthelloMovesResponse.FromString(data)
        return sorted((m.cell.row, m.cell.col) for m in reply.moves) == [(2, 3), (3, 2), (4, 5), (5, 4)]

    def batch_ok(data):
        reply = pb.CheckBatchResponse.FromString(data)
        return ([r.WhichOneof("result") for r in reply.results]
                == ["check_connect_four", "judge_tic_tac_toe", None]
                and reply.results[0].check_connect_four.wins and len(reply.results[2].invalid) > 0)

    return [("CheckConnectFour", c4.SerializeToString(), c4_wins),
            ("JudgeTicTacToe", judge.SerializeToString(), a_wins),
            ("ListOthelloMoves", opening.SerializeToString(), four_openings),
            ("CheckBatch", batch.SerializeToString(), batch_ok)]


def request_pool(rng, unary_count, batch_count):
    """[(method, request bytes)]: random one-shot checks, then CheckBatch calls of them."""
    pool = []
    for _ in range(unary_count):
        method, request, _ = random_check(rng)
        pool.append((method, request.SerializeToString()))
    for _ in range(batch_count):
        checks = [random_check(rng)[2] for _ in range(rng.randint(10, 100))]
        pool.append(("CheckBatch", pb.CheckBatchRequest(checks=checks).SerializeToString()))
    return pool


async def answer(channel, method, data, timeout):
    """A unary call's answer as compared: (code, message, BadRequest details, reply bytes)."""
    call = channel.unary_unary(SERVICE + method)
    try:
        reply = await call(data, timeout=timeout)
        return ("OK", "", b"", reply)
    except grpc.aio.AioRpcError as error:
        details = b"".join(v for k, v in (error.trailing_metadata() or ())
                           if k == "grpc-status-details-bin")
        return (error.code().name, error.details() or "", details, b"")


def transport_failure(got):
    """Whether an answer is the network's failure, not the server's: retried."""
    code, message = got[0], got[1]
    return code in ("UNAVAILABLE", "DEADLINE_EXCEEDED") or (code == "INTERNAL" and (
        message == LOCAL_WRITE_FAILURE or "RST_STREAM" in message or "Stream removed" in message))


class UnaryStats:
    def __init__(self):
        self.calls = collections.Counter()    # answered through the proxy, by method
        self.retries = collections.Counter()  # by the code that was retried
        self.wrong = 0
        self.problems = []


async def unary_worker(index, pool, expected, conn, stats, stop, args):
    rng = random.Random(args.seed * 7919 + index)
    while not stop.is_set():
        i = rng.randrange(len(pool))
        method, data = pool[i]
        for _ in range(60):
            channel = conn.channel
            got = await answer(channel, method, data, args.deadline)
            if not transport_failure(got):
                break
            stats.retries[got[0]] += 1
            if got[0] == "DEADLINE_EXCEEDED":
                conn.fresh(channel)
            await asyncio.sleep(0.02)
        stats.calls[method] += 1
        if got != expected[i]:
            stats.wrong += 1
            if len(stats.problems) < 10:
                stats.problems.append(f"{method} (pool {i}): {got[:2]} != {expected[i][:2]}")
        await rest(stop, args.unary_pace * rng.uniform(0.5, 1.5))


# ---------------------------------------------------------------------------------------
# Malformed requests, directly to the server, from a thread of their own (each is about
# 1 MB, and some replies are 2.6 MB to decode).


def malformed_requests():
    """[(name, method, request bytes, check of (code, reply messages))]."""
    off = pb.TicTacToeMove(row=5, col=5)
    far = pb.TicTacToeMove(row=1_000_000, col=1_000_000)
    one_move = pb.Check(judge_tic_tac_toe=pb.JudgeTicTacToeRequest(moves=[pb.TicTacToeMove(row=1, col=1)]))
    bad_setup = pb.OthelloSetup(board=pb.Board(rows=["XXXXXXXX"] * 8), to_move="B")

    def refused(code, messages):
        return code == grpc.StatusCode.INVALID_ARGUMENT

    def every_check_invalid(count):
        def check(code, messages):
            if code != grpc.StatusCode.OK or len(messages) != 1:
                return False
            results = pb.CheckBatchResponse.FromString(messages[0]).results
            return len(results) == count and all(
                r.invalid and r.WhichOneof("result") is None for r in results)
        return check

    def every_setup_invalid(code, messages):
        if code != grpc.StatusCode.OK or len(messages) != 1:
            return False
        states = pb.PlayManyResponse.FromString(messages[0]).states
        return len(states) == 10_000 and all(
            s.game == g and s.invalid and s.WhichOneof("state") is None
            for g, s in enumerate(states))

    return [
        ("JudgeTicTacToe, 166,000 moves off the board", "JudgeTicTacToe",
         pb.JudgeTicTacToeRequest(moves=[off] * 166_000).SerializeToString(), refused),
        ("CheckBatch, 10,000 checks of 9 moves off the board: each invalid", "CheckBatch",
         pb.CheckBatchRequest(checks=[pb.Check(judge_tic_tac_toe=pb.JudgeTicTacToeRequest(
             moves=[far] * 9))] * 10_000).SerializeToString(), every_check_invalid(10_000)),
        ("PlayMany, 10,000 malformed Othello setups: each invalid", "PlayMany",
         pb.PlayManyRequest(actions=[pb.GameAction(game=g, othello=pb.PlayOthelloRequest(setup=bad_setup))
                                     for g in range(10_000)]).SerializeToString(), every_setup_invalid),
        ("JudgeTicTacToe, bytes that do not decode", "JudgeTicTacToe", b"\xff" * 64, refused),
        ("CheckBatch of 10,001 checks", "CheckBatch",
         pb.CheckBatchRequest(checks=[one_move] * 10_001).SerializeToString(), refused),
        ("CheckBatch, one JudgeTicTacToe of 166,000 moves off the board: invalid", "CheckBatch",
         pb.CheckBatchRequest(checks=[pb.Check(judge_tic_tac_toe=pb.JudgeTicTacToeRequest(
             moves=[off] * 166_000))]).SerializeToString(), every_check_invalid(1)),
        ("PlayMany message of 10,001 actions", "PlayMany",
         pb.PlayManyRequest(actions=[pb.GameAction(game=1, close=True)] * 10_001).SerializeToString(),
         refused),
        ("CheckOthelloMove, color of 1,040,000 control characters", "CheckOthelloMove",
         pb.CheckOthelloMoveRequest(board=pb.Board(rows=OTHELLO_8), row=2, col=3,
                                    color="\x01" * 1_040_000).SerializeToString(), refused),
    ]


class Malformed(threading.Thread):
    """Sends the malformed requests in turn, one every `every` seconds, until stopped."""

    def __init__(self, address, every, requests):
        super().__init__(daemon=True)
        self.address, self.every, self.requests = address, every, requests
        self.stop = threading.Event()
        self.sent = collections.Counter()
        self.wrong = collections.Counter()
        self.problems = []
        self.bytes = 0

    def send(self, channel, method, data):
        """(status code, reply messages) of one call; a PlayMany request is one message."""
        try:
            if method == "PlayMany":
                call = channel.stream_stream(SERVICE + method)(iter([data]), timeout=60)
                messages = list(call)
                return call.code(), messages
            return grpc.StatusCode.OK, [channel.unary_unary(SERVICE + method)(data, timeout=60)]
        except grpc.RpcError as error:
            return error.code(), [error.details()]

    def run(self):
        channel = grpc.insecure_channel(self.address, options=[
            ("grpc.max_receive_message_length", 64 << 20)])
        turn = 0
        while not self.stop.is_set():
            name, method, data, check = self.requests[turn % len(self.requests)]
            turn += 1
            code, messages = self.send(channel, method, data)
            self.sent[name] += 1
            self.bytes += len(data)
            try:
                ok = check(code, messages)
            except Exception as error:  # noqa: BLE001 - an undecodable reply is a wrong one
                ok, messages = False, [repr(error)]
            if not ok:
                self.wrong[name] += 1
                if len(self.problems) < 10:
                    self.problems.append(f"{name}: {code.name} {str(messages[:1])[:300]}")
            self.stop.wait(self.every)
        channel.close()


# ---------------------------------------------------------------------------------------
# The faults, in a cycle.


class FaultLog:
    def __init__(self):
        self.cycles = 0
        self.latency_periods = 0
        self.reset_periods = 0
        self.resets = 0            # connections reset mid-stream
        self.silent_periods = 0
        self.blackholed = 0        # connections black-holed
        self.silent_games = []     # (live games when black-holed, fewest before the deadline)


async def cycle_faults(proxy, server, args, stop, faults):
    rng = random.Random(args.seed + 1)
    while not stop.is_set():
        faults.cycles += 1
        await rest(stop, 3.0)
        if stop.is_set():
            break
        if faults.cycles % 2 == 1:
            await silence(proxy, server, args, stop, faults)
        if stop.is_set():
            break
        # Connections reset mid-stream.
        faults.reset_periods += 1
        proxy.set_latency(0.020, 0.010)
        until = time.monotonic() + 8.0
        while time.monotonic() < until and not stop.is_set():
            await rest(stop, rng.uniform(0.8, 1.6))
            if not stop.is_set():
                faults.resets += proxy.reset_all()
        proxy.set_latency(0, 0)
        if stop.is_set():
            break
        # Latency and jitter.
        faults.latency_periods += 1
        proxy.set_latency(0.040, 0.030)
        await rest(stop, 8.0)
        proxy.set_latency(0, 0)
    proxy.set_latency(0, 0)
    proxy.release_silent()


async def silence(proxy, server, args, stop, faults):
    """Every connection black-holed until the clients have given up on it (their
    deadline) and resumed over new ones; then the silent sockets are reset."""
    before = await server.live_games()
    faults.blackholed += proxy.blackhole_all()
    faults.silent_periods += 1
    fewest, until = before, time.monotonic() + args.deadline - 0.5
    while time.monotonic() < until and not stop.is_set():
        await asyncio.sleep(0.25)
        fewest = min(fewest, await server.live_games())
    faults.silent_games.append((before, fewest))
    await rest(stop, 3.5)
    proxy.release_silent()


# ---------------------------------------------------------------------------------------
# Replays, in rounds.


class Replays:
    def __init__(self):
        self.compared = 0
        self.differ = collections.Counter()
        self.problems = []
        self.lost = []
        self.games = 0
        self.rounds = 0
        self.failed_rounds = []

    def take_done(self, phase, everything=False):
        """Takes the finished (and lost) games out of `phase.games`: the games to replay."""
        done, keep = [], []
        for g in phase.games:
            (done if everything or g.finished or g.lost is not None else keep).append(g)
        phase.games[:] = keep
        self.lost += [g for g in done if g.lost is not None]
        return [g for g in done if g.lost is None]

    async def round(self, games, address, concurrency):
        if not games:
            return
        self.rounds += 1
        problems = []
        try:
            compared, differ = await replay(games, address, CHANNEL_OPTIONS, problems,
                                            concurrency=concurrency, deadline=60, most=10)
        except Exception as error:  # noqa: BLE001 - reported as a failed check
            self.failed_rounds.append(f"{len(games)} games: {type(error).__name__}: {error}")
            return
        self.compared += compared
        self.differ.update(differ)
        self.games += len(games)
        self.problems += problems[:max(0, 10 - len(self.problems))]


async def replay_rounds(phase, replays, address, args, stop):
    while not stop.is_set():
        await rest(stop, args.replay_every)
        if not stop.is_set():
            await replays.round(replays.take_done(phase), address, concurrency=8)


# ---------------------------------------------------------------------------------------
# Resident memory.


async def sample_rss(pid, t0, samples, stop):
    while not stop.is_set():
        samples.append((time.monotonic() - t0, rss_kib(pid)))
        await rest(stop, 1.0)


def slope_mib_per_minute(points):
    """The slope of the least-squares line through (seconds, KiB) points and its
    standard error, in MiB/min."""
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    sxx = sum((t - mx) ** 2 for t, _ in points)
    sxy = sum((t - mx) * (v - my) for t, v in points)
    slope = sxy / sxx
    residuals = sum((v - my - slope * (t - mx)) ** 2 for t, v in points)
    error = (residuals / (n - 2) / sxx) ** 0.5
    return slope * 60 / MIB, error * 60 / MIB


def by_minute(samples):
    """'minute: median / max' of the RSS samples of each minute of load."""
    minutes = collections.defaultdict(list)
    for t, kib in samples:
        minutes[int(t // 60)].append(kib)
    return "; ".join(f"{m + 1}: {sorted(v)[len(v) // 2] / MIB:.0f}/{max(v) / MIB:.0f}"
                     for m, v in sorted(minutes.items()))


def mib(kib):
    return f"{kib / MIB:.1f} MiB"


# ---------------------------------------------------------------------------------------


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--duration", type=float, default=600.0, help="seconds of load")
    parser.add_argument("--warmup", type=float, default=60.0,
                        help="seconds of load whose RSS is the baseline")
    parser.add_argument("--slots", type=int, default=60,
                        help="single-game streams live at once (a third of each kind)")
    parser.add_argument("--many", type=int, default=2, help="PlayMany streams")
    parser.add_argument("--games-per-many", type=int, default=50)
    parser.add_argument("--unary-workers", type=int, default=4)
    parser.add_argument("--unary-pace", type=float, default=0.1,
                        help="seconds between a unary worker's calls (0.5 to 1.5 times)")
    parser.add_argument("--malformed-every", type=float, default=0.5,
                        help="seconds between two malformed requests")
    parser.add_argument("--deadline", type=float, default=8.0,
                        help="the clients' read/write deadline through the proxy, seconds")
    parser.add_argument("--replay-every", type=float, default=30.0)
    parser.add_argument("--max-slope", type=float, default=2.0,
                        help="RSS growth after the warm-up, MiB per minute, at most")
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--rss-out", help="write the RSS samples here (seconds, KiB a line)")
    args = parser.parse_args()
    if args.duration < args.warmup + 20:
        parser.error("--duration must be at least --warmup + 20 s (samples after the warm-up)")

    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="arbiter-soak-")
    server = Server(args.binary, workdir, ["--http2-keepalive-interval", KEEPALIVE,
                                           "--http2-keepalive-timeout", KEEPALIVE])
    # Stopped by run.sh's `timeout`: the server is stopped too, by its own pid.
    signal.signal(signal.SIGTERM, lambda *_: (
        server.kill(), print(f"killed (SIGTERM); the server's log is kept in {workdir}", flush=True),
        os._exit(124)))
    proxy = None
    check = Checks()
    phase = Phase("soak", deadline=args.deadline)
    unary = UnaryStats()
    faults = FaultLog()
    replays = Replays()
    malformed = None
    samples = []
    conns = []
    try:
        await server.started()
        pid = server.process.pid
        host, port = server.address.rsplit(":", 1)
        proxy = await FaultProxy(host, int(port), seed=args.seed).start()
        log(f"server {pid} on {server.address} (metrics {server.metrics}), keepalive "
            f"{KEEPALIVE}/{KEEPALIVE}; proxy on {proxy.address}; {args.duration:.0f} s of load, "
            f"warm-up {args.warmup:.0f} s")

        # The pool's answers, taken directly; the known ones checked.
        rng = random.Random(args.seed)
        known = known_calls()
        pool = [(m, d) for m, d, _ in known] + request_pool(rng, 200, 50)
        direct = grpc.aio.insecure_channel(server.address, options=CHANNEL_OPTIONS)
        expected = [await answer(direct, m, d, 30) for m, d in pool]
        known_right = sum(1 for (_, _, holds), got in zip(known, expected)
                          if got[0] == "OK" and holds(got[3]))
        check(f"the known calls answered right directly: {known_right} of {len(known)}",
              known_right == len(known))
        codes = collections.Counter(got[0] for got in expected)
        log(f"request pool: {len(pool)} requests ({dict(codes)} directly)")
        requests = malformed_requests()
        rss_start = rss_kib(pid)

        # The load, all at once.
        stop = asyncio.Event()
        t0 = time.monotonic()
        games_conn, unary_conn = Connection(proxy.address), Connection(proxy.address)
        conns = [games_conn, unary_conn]
        tasks = start_games(SoakGames(games_conn, phase), args, args.seed, stop)
        workers = [asyncio.create_task(unary_worker(i, pool, expected, unary_conn, unary, stop, args))
                   for i in range(args.unary_workers)]
        background = [asyncio.create_task(sample_rss(pid, t0, samples, stop)),
                      asyncio.create_task(cycle_faults(proxy, server, args, stop, faults)),
                      asyncio.create_task(replay_rounds(phase, replays, server.address, args, stop)),
                      asyncio.create_task(loop_lag(phase, stop))]
        malformed = Malformed(server.address, args.malformed_every, requests)
        malformed.start()
        next_report = 60.0
        while time.monotonic() - t0 < args.duration:
            await asyncio.sleep(1.0)
            if time.monotonic() - t0 >= next_report:
                next_report += 60.0
                log(f"{time.monotonic() - t0:.0f} s: RSS {mib(samples[-1][1])}; "
                    f"{phase.messages} game messages answered; {sum(unary.calls.values())} unary "
                    f"calls; {sum(malformed.sent.values())} malformed; {faults.resets} resets, "
                    f"{faults.blackholed} black-holed; {replays.compared} replies compared, "
                    f"{sum(replays.differ.values())} differ")

        # Stop: no new game, no new call; the faults cleared; every game played to its end.
        stop.set()
        malformed.stop.set()
        load_seconds = time.monotonic() - t0
        log(f"load stopped after {load_seconds:.0f} s; letting every game finish")
        await asyncio.wait_for(asyncio.gather(*background), 120)
        proxy.set_latency(0, 0)
        proxy.release_silent()
        await asyncio.wait_for(asyncio.gather(*tasks, *workers), 120)
        await asyncio.to_thread(malformed.join, 120)
        for conn in conns:
            await conn.close()
        await asyncio.sleep(0.5)
        leftover = proxy.reset_all()
        if leftover:
            log(f"{leftover} idle connection(s) left open by the clients, reset")
        t_gauges = time.monotonic()
        value = await server.gauges()
        while value != (0, 0) and time.monotonic() - t_gauges < GAUGE_LIMIT:
            await asyncio.sleep(0.1)
            value = await server.gauges()
        gauges_took = time.monotonic() - t_gauges

        # The games not replayed yet, and the pool once more.
        t_replay = time.monotonic()
        await replays.round(replays.take_done(phase, everything=True), server.address, concurrency=32)
        replay_seconds = time.monotonic() - t_replay
        again = [await answer(direct, m, d, 30) for m, d in pool]
        await direct.close()
        drifted = sum(1 for a, b in zip(again, expected) if a != b)

        # The figures.
        warm = [kib for t, kib in samples if t < args.warmup]
        after = [(t, kib) for t, kib in samples if t >= args.warmup]
        warm_max = max(warm)
        after_max = max(kib for _, kib in after)
        tolerance = max(RSS_TOLERANCE_FRACTION * warm_max, RSS_TOLERANCE_FLOOR)
        slope, slope_error = slope_mib_per_minute(after)
        # No finer than the tolerance spread over the fit's span: over a short run's 40 s,
        # 2 MiB/min is 1.3 MiB, far inside what one malformed request moves RSS by.
        slope_bound = max(args.max_slope, tolerance / MIB / ((after[-1][0] - after[0][0]) / 60))
        played = len(replays.lost) + replays.games
        differ = sum(replays.differ.values())
        many_problems = sum(len(m.problems) for m in phase.manys)
        resumes = sum(phase.resumes.values()) + sum(phase.many_resumes.values())
        malformed_wrong = sum(malformed.wrong.values())
        wrong = differ + unary.wrong + malformed_wrong + drifted
        rows = [
            ("load", f"{load_seconds:.0f} s (warm-up {args.warmup:.0f} s); {args.slots} "
                     f"single-game streams, {args.many} PlayMany streams of {args.games_per_many} "
                     f"games, {args.unary_workers} unary callers; worst event-loop lag "
                     f"{phase.loop_lag * 1000:.0f} ms"),
            ("games played (through the proxy)", f"{played:,} ({len(replays.lost)} lost); "
                                                 f"{phase.messages:,} game messages answered"),
            ("replies compared / differing", f"{replays.compared:,} / {differ} "
                                             f"({replays.rounds} replay rounds; the last "
                                             f"{replay_seconds:.0f} s)"),
            ("unary + CheckBatch calls (through the proxy) / wrong",
             f"{sum(unary.calls.values()):,} ({unary.calls['CheckBatch']:,} CheckBatch) / "
             f"{unary.wrong}; retried {dict(unary.retries)}"),
            ("pool answers changed by the end (direct)", f"{drifted} of {len(pool)}"),
            ("malformed requests (direct) / not answered as expected",
             f"{sum(malformed.sent.values()):,} ({malformed.bytes / 1e9:.2f} GB) / {malformed_wrong}"),
            ("wrong answers in all", f"{wrong}"),
            ("faults: latency periods; reset periods, connections reset",
             f"{faults.latency_periods}; {faults.reset_periods}, {faults.resets}"),
            ("faults: silent periods, connections black-holed",
             f"{faults.silent_periods}, {faults.blackholed}; live games at black-holing -> "
             f"fewest before the clients' deadline: "
             + ", ".join(f"{a}->{b}" for a, b in faults.silent_games[:6])
             + (" ..." if len(faults.silent_games) > 6 else "")),
            ("stream resumes: single-game; PlayMany",
             f"{dict(phase.resumes)}; {dict(phase.many_resumes)}"),
            ("server RSS: before the load; warm-up max; final; max after warm-up",
             f"{mib(rss_start)}; {mib(warm_max)}; {mib(samples[-1][1])}; {mib(after_max)} "
             f"(allowed {mib(warm_max + tolerance)})"),
            ("server RSS slope after warm-up", f"{slope:+.2f} +- {slope_error:.2f} MiB/min over "
                                               f"{len(after)} samples (bound {slope_bound:.2f})"),
            ("server RSS by minute, median/max MiB", by_minute(samples)),
            ("gauges once the load stopped", f"{value} after {gauges_took:.1f} s"),
            ("client RSS (this process)", mib(rss_kib(os.getpid()))),
        ]
        print("| figure | value |\n| --- | --- |", flush=True)
        for name, text in rows:
            print(f"| {name} | {text} |", flush=True)
        for (code, details), count in phase.statuses.most_common(5):
            log(f"streams ended {code} x{count}: {details!r}")
        if phase.ended_after_last_reply:
            log(f"streams that failed after their last reply (nothing to resume): "
                f"{dict(phase.ended_after_last_reply)}")
        log_trouble(replays.lost, replays.problems, phase.manys)
        for p in unary.problems + malformed.problems + replays.failed_rounds:
            log("  " + p)
        for name in malformed.sent:
            log(f"malformed '{name}': {malformed.sent[name]} sent, {malformed.wrong[name]} wrong")

        check(f"games lost: {len(replays.lost)}", not replays.lost)
        check(f"replies that differ: {differ} of {replays.compared}",
              differ == 0 and replays.compared > 0, str(dict(replays.differ)) if differ else "")
        check(f"every replay round completed: {len(replays.failed_rounds)} failed",
              not replays.failed_rounds)
        check(f"PlayMany replies out of shape: {many_problems}", many_problems == 0)
        check(f"unary and CheckBatch answers through the proxy that differ: {unary.wrong} of "
              f"{sum(unary.calls.values())}", unary.wrong == 0 and unary.calls["CheckBatch"] > 0
              and sum(unary.calls.values()) > unary.calls["CheckBatch"])
        check(f"the pool's answers unchanged at the end: {drifted} changed", drifted == 0)
        check(f"malformed requests not answered as expected: {malformed_wrong} of "
              f"{sum(malformed.sent.values())}", malformed_wrong == 0
              and all(malformed.sent[name] > 0 for name, *_ in requests))
        check(f"every fault injected: {faults.latency_periods} latency periods, "
              f"{faults.resets} connections reset, {faults.blackholed} black-holed",
              faults.latency_periods > 0 and faults.resets > 0 and faults.blackholed > 0)
        check(f"the faults interrupted games: {resumes} streams resumed", resumes > 0)
        check(f"RSS after the warm-up at most the warm-up's max + max(10%, 16 MiB): "
              f"{mib(after_max)} <= {mib(warm_max + tolerance)}", after_max <= warm_max + tolerance)
        check(f"RSS slope after the warm-up below max({args.max_slope:.1f} MiB/min, the tolerance "
              f"over the fit's span) = {slope_bound:.2f}: {slope:+.2f} (+- {slope_error:.2f})",
              slope < slope_bound)
        check(f"live games and calls in flight back to 0 within {GAUGE_LIMIT:.0f} s once the "
              f"load stopped: {value} after {gauges_took:.1f} s", value == (0, 0))
        check("the server did not panic and is still up", server.alive() and not server.panicked())
        check(f"wrong answers: {wrong}", wrong == 0)
    except Exception as error:  # noqa: BLE001 - reported as a failed check
        check("the run completed", False, f"{type(error).__name__}: {error}")
    finally:
        if malformed is not None:
            malformed.stop.set()
        if proxy is not None:
            await proxy.close()
        server.kill()
        if samples:
            text = "".join(f"{t:.1f}\t{kib}\n" for t, kib in samples)
            (pathlib.Path(workdir) / "rss.tsv").write_text(text)
            if args.rss_out:
                pathlib.Path(args.rss_out).write_text(text)
    return check.report(started, workdir, "the server's log (and rss.tsv) is")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
