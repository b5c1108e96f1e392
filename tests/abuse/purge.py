#!/usr/bin/env python3
"""Does the server's memory come back after a burst of big games? For each allocator
setting, a fresh server (the release binary, on 127.0.0.1 port 0) opens 256 of the most
expensive games (100x100 Othello, 3,333 legal moves; one PlayMany stream, 16 setups a
message), the stream ends and the games are freed; the server's resident memory
(/proc/PID/status VmRSS) is read before, with the games open, 1 s and 5 s after the
stream ended with the server idle, and after 200 small unary calls.

    python3 tests/abuse/purge.py --binary target/release/arbiter

The settings are mimalloc's environment variables (the server's allocator reads them
at start): its defaults, and MIMALLOC_PURGE_DELAY=0 (give freed memory back at once).
"""

import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from game_memory import CASES, Server, Stream, binary_argument, pb, warmed_up  # noqa: E402

SETTINGS = [
    ("mimalloc defaults", {}),
    ("MIMALLOC_PURGE_DELAY=0", {"MIMALLOC_PURGE_DELAY": "0"}),
]
GAMES = 256


def burst(binary, env):
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        server = Server(binary)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    start = dict((name, start) for name, _, start in CASES)["Othello 100x100 (3,333 legal moves)"]
    readings = {}
    try:
        channel, stub = warmed_up(server, start)
        readings["before"] = server.rss()
        stream = Stream(stub)
        for first in range(0, GAMES, 16):
            stream.exchange([start(g) for g in range(first, first + 16)])
        readings["256 games open"] = server.rss()
        stream.close()
        readings["freed, 1 s idle"] = server.rss()
        time.sleep(4)
        readings["5 s idle"] = server.rss()
        for _ in range(200):
            stub.JudgeTicTacToe(pb.JudgeTicTacToeRequest())
        readings["after 200 calls"] = server.rss()
        channel.close()
    finally:
        server.stop()
    return readings


def main():
    binary = binary_argument(__doc__)
    rows = [(name, burst(binary, env)) for name, env in SETTINGS]
    columns = list(rows[0][1])
    print("| setting | " + " | ".join(columns) + " |")
    print("| --- |" + " --- |" * len(columns))
    for name, readings in rows:
        print(f"| {name} | " + " | ".join(f"{readings[c]:,} KiB" for c in columns) + " |")


if __name__ == "__main__":
    main()
