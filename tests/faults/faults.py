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
import pathlib
import random
import sys
import tempfile
import time
import urllib.request

import grpc

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
sys.path.insert(0, str(HERE))
from game_clients import (  # noqa: E402
    LOCAL_WRITE_FAILURE, Checks, Client, Deadline, ServerProcess, log, log_trouble, read,
    replay, start_games, timed)
from proxy import FaultProxy  # noqa: E402

RESUME_ATTEMPTS = 20
TOLERANCE = 3.0
IDLE_TIMEOUT = "10m"
CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 64 << 20),
    # Each channel its own subchannels: a new channel must mean a new TCP connection,
    # not the (possibly silent) one another channel to the same address has.
    ("grpc.use_local_subchannel_pool", 1),
]


def seconds(duration):
    """'1s', '500ms', '2m' as seconds."""
    for suffix, factor in (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if duration.endswith(suffix) and duration[: -len(suffix)].replace(".", "").isdigit():
            return float(duration[: -len(suffix)]) * factor
    raise ValueError(f"not a duration: {duration}")


# ---------------------------------------------------------------------------------------
# The server, started and stopped by its own pid.


class Server(ServerProcess):
    def __init__(self, binary, workdir, extra):
        super().__init__(binary, pathlib.Path(workdir) / "server.log", "the server",
                         ["--metrics-listen", "127.0.0.1:0", *extra])

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
# Streams (the game clients: tests/lib/game_clients.py): how a failure is told apart, and
# resumed.


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


async def failure(call, error, phase):
    """Cancels a stream that raised `error`; returns (resumable, why, new connection)."""
    if isinstance(error, Deadline):
        call.cancel()
        return True, "read or write deadline", True
    try:
        code = await asyncio.wait_for(call.code(), 5)
        details = await call.details()
    except asyncio.TimeoutError:
        call.cancel()
        return True, f"no status 5 s after {type(error).__name__}: {error}", True
    call.cancel()
    phase.statuses[(code.name, details)] += 1
    if code == grpc.StatusCode.UNAVAILABLE:
        return True, "UNAVAILABLE", False
    if code == grpc.StatusCode.INTERNAL and (
            details == LOCAL_WRITE_FAILURE or "RST_STREAM" in details
            or "Stream removed" in details):
        return True, "INTERNAL (transport)", False
    return False, f"{code.name}: {details} ({type(error).__name__}: {error})", False


class Games(Client):
    """The game clients of a phase: their streams go through `conn`; a read or write
    must be done within the phase's deadline; a failed stream is resumed as failure()
    says, on a new connection when it asks for one."""

    resume_attempts = RESUME_ATTEMPTS
    retry_pause = 0.02
    paces = {"ttt": 0.3, "c4": 0.15, "othello": 0.12}
    stagger = 0.01
    many_pace = 0.15

    def __init__(self, conn, phase):
        super().__init__(phase)
        self.conn = conn

    def channel(self):
        return self.conn.channel

    async def write(self, call, request):
        await timed(call.write(request), self.stats.deadline)

    async def read(self, call):
        return await read(call, self.stats.deadline)

    async def finish(self, call):
        """A transport failure once every message was answered loses nothing (counted,
        not resumed)."""
        phase = self.stats
        try:
            await timed(call.done_writing(), phase.deadline)
            code = await timed(call.code(), phase.deadline)
        except Exception:  # noqa: BLE001 - nothing left to lose
            call.cancel()
            phase.ended_after_last_reply["no status"] += 1
            return
        if code != grpc.StatusCode.OK:
            phase.ended_after_last_reply[code.name] += 1

    async def failed(self, call, error, many=None):
        if isinstance(error, AssertionError):
            # A PlayMany reply out of shape: its games are lost, not resumed.
            call.cancel()
            many.problems.append(str(error))
            return False, str(error), False
        return await failure(call, error, self.stats)

    def resuming(self, how, many):
        (self.stats.many_resumes if many else self.stats.resumes)[how] += 1
        self.stats.first_resume_at = self.stats.first_resume_at or time.monotonic()

    def reconnect(self, channel):
        self.conn.fresh(channel)


# ---------------------------------------------------------------------------------------
# The phases.


async def play(phase, conn, args, seed, fault):
    """Starts the clients, runs `fault(stop)` (which returns when the phase should
    stop), then lets every game finish."""
    stop = asyncio.Event()
    tasks = start_games(Games(conn, phase), args, seed, stop)
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
    check = Checks()

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

        async def run(phase, seed, fault, clear):
            """Plays `phase` under `fault` on a new connection through the proxy, then
            `clear`s the fault; returns the connection, for settle()."""
            phases.append(phase)
            conn = Connection(proxy.address)
            t0 = time.monotonic()
            await play(phase, conn, args, seed, fault)
            clear()
            phase.seconds = time.monotonic() - t0
            return conn

        # 1. Latency and jitter.
        phase = Phase("latency", deadline=10.0)

        async def latency():
            proxy.set_latency(0.040, 0.030)
            await asyncio.sleep(args.phase_seconds)

        conn = await run(phase, args.seed + 1, latency, lambda: proxy.set_latency(0, 0))
        log(f"latency: {phase.seconds:.1f} s, {proxy.connections} connection(s) so far")
        await settle(phase, conn)

        # 2. Connections reset mid-stream.
        phase = Phase("reset", deadline=10.0)
        phase.reset_count = 0

        async def resets():
            proxy.set_latency(0.020, 0.010)
            until = time.monotonic() + args.phase_seconds
            await asyncio.sleep(1.0)
            while time.monotonic() < until:
                phase.reset_count += proxy.reset_all()
                await asyncio.sleep(rng.uniform(0.8, 1.6))

        conn = await run(phase, args.seed + 2, resets, lambda: proxy.set_latency(0, 0))
        log(f"reset: {phase.seconds:.1f} s, {phase.reset_count} connections reset mid-stream")
        await settle(phase, conn)

        # 3. A silent connection.
        phase = Phase("silent", deadline=bound + TOLERANCE + 1.0)
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

        conn = await run(phase, args.seed + 3, silence, proxy.release_silent)
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
            compared, differ = await replay(phase.games, server.address, CHANNEL_OPTIONS,
                                            problems, concurrency=32, deadline=10, limit=90)
            lost = [g for g in phase.games if g.lost is not None]
            log_trouble(lost, problems, phase.manys)
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
        server.kill()
    return check.report(started, workdir, "the server's log is")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
