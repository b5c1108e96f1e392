#!/usr/bin/env python3
"""What many live games on one connection cost the server, beside the same games spread
over many connections: the measurement behind the `--max-concurrent-streams` default.

For each count of games, it starts the release server afresh (with
`--max-concurrent-streams` high enough not to queue any), opens that many PlayTicTacToe
streams at once over CONNECTIONS grpcio channels (one HTTP/2 connection each), plays
one move in each, then plays MOVES more rounds of one move in every game, and prints:
the server's resident memory per open game, its CPU time (user + system, from
/proc/PID/stat) per opened game and per move, and the slowest wait for a game's first
reply. Then it closes the games and stops the server.

    python3 benches/streams_per_connection.py --binary target/release/arbiter \
        --games 100,400,1000 --connections 1,10

Needs grpcio and grpcio-tools (tests/interop/requirements.txt installs them into
.tools/venv).
"""

import argparse
import asyncio
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "lib"))
from proc import rss_kib  # noqa: E402
from stubs import load_stubs  # noqa: E402

import grpc  # noqa: E402

pb, pb_grpc = load_stubs()
TICKS = os.sysconf("SC_CLK_TCK")
# The squares each game plays in turn: no game ends within them.
SQUARES = [(1, 1), (0, 0), (0, 1), (0, 2), (2, 0), (1, 0)]


def cpu_seconds(pid):
    """The process's user and system CPU time so far, in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start_server(binary, streams):
    log = tempfile.NamedTemporaryFile(prefix="arbiter-streams-", suffix=".log", delete=False)
    server = subprocess.Popen(
        [binary, "--listen", "127.0.0.1:0", "--max-concurrent-streams", str(streams)],
        stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        text = pathlib.Path(log.name).read_text()
        found = re.search(r"arbiter listening on ([0-9.]+:[0-9]+)", text)
        if found:
            return server, found.group(1)
        if server.poll() is not None:
            raise SystemExit(f"the server exited: {text}")
        time.sleep(0.1)
    raise SystemExit("the server logged no address")


class Game:
    def __init__(self, stub):
        self.queue = asyncio.Queue()
        self.call = stub.PlayTicTacToe(self._requests())

    async def _requests(self):
        while True:
            square = await self.queue.get()
            if square is None:
                return
            row, col = square
            yield pb.PlayTicTacToeRequest(row=row, col=col)

    async def move(self, square):
        await self.queue.put(square)
        reply = await self.call.read()
        if reply.rejected:
            raise SystemExit(f"rejected: {reply.rejected}")

    async def close(self):
        await self.queue.put(None)
        while await self.call.read() is not grpc.aio.EOF:
            pass


async def measure(address, pid, games, connections, moves):
    channels = [grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
                for _ in range(connections)]
    for channel in channels:
        await channel.channel_ready()
    stubs = [pb_grpc.ArbiterServiceStub(channel) for channel in channels]
    rss_before, cpu_before = rss_kib(pid), cpu_seconds(pid)
    opened = [Game(stubs[i % connections]) for i in range(games)]

    async def first(game):
        started = time.monotonic()
        await game.move(SQUARES[0])
        return time.monotonic() - started

    waits = await asyncio.gather(*(first(game) for game in opened))
    rss_open, cpu_open = rss_kib(pid), cpu_seconds(pid)
    for square in SQUARES[1:1 + moves]:
        await asyncio.gather(*(game.move(square) for game in opened))
    cpu_moved = cpu_seconds(pid)
    played = games * min(moves, len(SQUARES) - 1)
    await asyncio.gather(*(game.close() for game in opened))
    for channel in channels:
        await channel.close()
    return {
        "games": games,
        "connections": connections,
        "KiB/game": (rss_open - rss_before) / games,
        "CPU ms/opened game": 1000 * (cpu_open - cpu_before) / games,
        "CPU us/move": 1e6 * (cpu_moved - cpu_open) / max(played, 1),
        "slowest first reply ms": 1000 * max(waits),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default="target/release/arbiter")
    parser.add_argument("--games", default="100,400,1000")
    parser.add_argument("--connections", default="1,10")
    parser.add_argument("--moves", type=int, default=5)
    args = parser.parse_args()
    rows = []
    for games in map(int, args.games.split(",")):
        for connections in map(int, args.connections.split(",")):
            server, address = start_server(args.binary, max(games, 1) + 16)
            try:
                rows.append(asyncio.run(measure(address, server.pid, games, connections,
                                                args.moves)))
            finally:
                server.terminate()
                server.wait()
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + " ---: |" * len(keys))
    for row in rows:
        print("| " + " | ".join(f"{row[k]:,.1f}" if isinstance(row[k], float) else f"{row[k]:,}"
                                for k in keys) + " |")


if __name__ == "__main__":
    main()
