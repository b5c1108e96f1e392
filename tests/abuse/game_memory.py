#!/usr/bin/env python3
"""What one open game costs the server, by kind and board size: for each case a fresh
server process (the release binary, on 127.0.0.1 port 0) gets PlayMany streams (at most
1,000 games each, the default --max-games-per-stream) whose messages start N games of
that case, 20 per message, so that what one message costs in passing (its decoded
request, its reply, their buffers) stays small beside the games. The server's resident
memory (/proc/PID/status VmRSS, read after a second's rest, so that the allocator has
returned what it frees) is read before, while the N games are open, and after the
streams have ended and the games are freed. Prints a Markdown table (RELIABILITY.md
records it).

    python3 tests/abuse/game_memory.py --binary target/release/arbiter

Environment variables given to this script (MIMALLOC_PURGE_DELAY, say) reach the servers.
"""

import argparse
import os
import pathlib
import subprocess
import sys
import queue
import tempfile
import time

import grpc
from google.protobuf import duration_pb2

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "lib"))
from proc import rss_kib  # noqa: E402
from stubs import load_stubs  # noqa: E402

pb, pb_grpc = load_stubs()


def othello_opening(side):
    rows = [["."] * side for _ in range(side)]
    m = side // 2
    rows[m - 1][m - 1], rows[m][m] = "W", "W"
    rows[m - 1][m], rows[m][m - 1] = "B", "B"
    return ["".join(r) for r in rows]


def othello_crowded(side):
    """A third of the cells legal for Black ('.' then 'W' then 'B' along each row): the
    most expensive Othello game (tests/abuse/hold.py)."""
    return [(".WB" * side)[:side]] * side


HOUR = duration_pb2.Duration(seconds=3600)

CASES = [
    # name, games, the action starting game number g
    ("Tic-Tac-Toe (3x3)", 10_000,
     lambda g: pb.GameAction(game=g, tic_tac_toe=pb.PlayTicTacToeRequest(setup=pb.TicTacToeSetup()))),
    ("Othello 8x8 (opening)", 10_000,
     lambda g: pb.GameAction(game=g, othello=pb.PlayOthelloRequest(setup=pb.OthelloSetup(
         board=pb.Board(rows=othello_opening(8)), to_move="B")))),
    ("Othello 100x100 (opening)", 1_000,
     lambda g: pb.GameAction(game=g, othello=pb.PlayOthelloRequest(setup=pb.OthelloSetup(
         board=pb.Board(rows=othello_opening(100)), to_move="B")))),
    ("Othello 100x100 (3,333 legal moves)", 1_000,
     lambda g: pb.GameAction(game=g, othello=pb.PlayOthelloRequest(setup=pb.OthelloSetup(
         board=pb.Board(rows=othello_crowded(100)), to_move="B")))),
    ("Connect Four 6x7", 10_000,
     lambda g: pb.GameAction(game=g, connect_four=pb.PlayConnectFourRequest(setup=pb.ConnectFourSetup()))),
    ("Connect Four 6x7 on the clock (an hour each)", 10_000,
     lambda g: pb.GameAction(game=g, connect_four=pb.PlayConnectFourRequest(setup=pb.ConnectFourSetup(
         time_control=pb.TimeControl(initial=HOUR))))),
    ("Connect Four 8x8", 10_000,
     lambda g: pb.GameAction(game=g, connect_four=pb.PlayConnectFourRequest(setup=pb.ConnectFourSetup(
         rows=8, cols=8)))),
    ("Connect Four 100x100", 1_000,
     lambda g: pb.GameAction(game=g, connect_four=pb.PlayConnectFourRequest(setup=pb.ConnectFourSetup(
         rows=100, cols=100)))),
]

PER_STREAM = 1000
PER_MESSAGE = 20


def binary_argument(doc):
    """The release server's path, from the command line (`--binary PATH`); the first
    line of `doc` says what the script does in its --help."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--binary", required=True)
    return parser.parse_args().binary


class Server:
    def __init__(self, binary):
        self.log = tempfile.NamedTemporaryFile("w+", prefix="arbiter-memory-", suffix=".log")
        self.process = subprocess.Popen([binary, "--listen", "127.0.0.1:0"], stdout=self.log,
                                        stderr=subprocess.STDOUT,
                                        env={**os.environ, "RUST_LOG": "warn,arbiter=info"})
        self.address = None
        for _ in range(300):
            text = pathlib.Path(self.log.name).read_text()
            if "arbiter listening on " in text:
                self.address = text.split("arbiter listening on ", 1)[1].split()[0]
                break
            time.sleep(0.05)
        if self.address is None:
            raise RuntimeError("the server logged no address")

    def rss(self):
        time.sleep(1.0)
        return rss_kib(self.process.pid)

    def stop(self):
        self.process.kill()
        self.process.wait()
        self.log.close()


class Stream:
    """A PlayMany stream fed one message at a time; its games live until close()."""

    def __init__(self, stub, clocked=False):
        self.clocked = clocked
        self.queue = queue.Queue()
        self.replies = stub.PlayMany(iter(self.queue.get, None))

    def exchange(self, actions):
        self.queue.put(pb.PlayManyRequest(actions=actions))
        reply = next(self.replies)
        if len(reply.states) != len(actions) or not all(s.WhichOneof("state") for s in reply.states):
            raise RuntimeError(f"not every game started: {reply.states[0]}")

    def close(self):
        """Ends the stream: half-closes it, or, for games on a running clock (whose
        stream stays open until the clocks run out), cancels it."""
        self.queue.put(None)
        if self.clocked:
            self.replies.cancel()
        else:
            list(self.replies)


def warmed_up(server, start, clocked):
    """A channel to `server` and its stub, warmed up: the connection, a stream and a game
    (`start(0)`, closed again), so that what is measured next is games."""
    channel = grpc.insecure_channel(server.address,
                                    options=[("grpc.max_receive_message_length", 256 << 20)])
    stub = pb_grpc.ArbiterServiceStub(channel)
    warm = Stream(stub, clocked)
    warm.exchange([start(0)])
    warm.close()
    return channel, stub


def measure(binary, games, start, clocked):
    server = Server(binary)
    try:
        channel, stub = warmed_up(server, start, clocked)
        before = server.rss()
        streams = []
        for first in range(0, games, PER_STREAM):
            stream = Stream(stub, clocked)
            streams.append(stream)
            last = min(first + PER_STREAM, games)
            for g in range(first, last, PER_MESSAGE):
                stream.exchange([start(n) for n in range(g, min(g + PER_MESSAGE, last))])
        during = server.rss()
        for stream in streams:
            stream.close()
        after = server.rss()
        channel.close()
    finally:
        server.stop()
    return before, during, after


def main():
    binary = binary_argument(__doc__)
    print("| game | games | RSS before | with the games open | per game | after the stream ended |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, games, start in CASES:
        before, during, after = measure(binary, games, start, "on the clock" in name)
        per_game = (during - before) * 1024 / games
        print(f"| {name} | {games:,} | {before:,} KiB | {during:,} KiB | "
              f"{per_game / 1024:,.1f} KiB | {after:,} KiB |", flush=True)


if __name__ == "__main__":
    main()
