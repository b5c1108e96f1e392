#!/usr/bin/env python3
"""How large one PlayMany reply can be, and what it costs the server: the request limit
bounds what a client sends, and the reply budget (MAX_REPLY_BYTES, 2 MiB of states) what
the server answers. A fresh server (the release binary, on 127.0.0.1 port 0) holds one
100x100 Connect Four game (runs of 100, so that no one wins before the board is nearly
full); then one message of 10,000 drops (80 KB) would play the whole game, each state
carrying the 100x100 board. Prints the sizes, how many drops were applied, the time,
and the server's resident memory before and after.

    python3 tests/abuse/reply_size.py --binary target/release/arbiter
"""

import pathlib
import sys
import time

import grpc

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from game_memory import Server, Stream, binary_argument, pb, pb_grpc  # noqa: E402


def main():
    server = Server(binary_argument(__doc__))
    try:
        channel = grpc.insecure_channel(server.address,
                                        options=[("grpc.max_receive_message_length", 1 << 30)])
        stream = Stream(pb_grpc.ArbiterServiceStub(channel))
        stream.exchange([pb.GameAction(game=1, connect_four=pb.PlayConnectFourRequest(
            setup=pb.ConnectFourSetup(rows=100, cols=100, run_length=100)))])
        before = server.rss()
        request = pb.PlayManyRequest(actions=[
            pb.GameAction(game=1, connect_four=pb.PlayConnectFourRequest(drop=k % 100))
            for k in range(10_000)])
        started = time.time()
        stream.queue.put(request)
        reply = next(stream.replies)
        seconds = time.time() - started
        after = server.rss()
        stream.close()
        channel.close()
    finally:
        server.stop()
    print(f"request: {request.ByteSize():,} bytes, {len(request.actions):,} actions")
    applied = sum(1 for state in reply.states if state.WhichOneof("state"))
    print(f"reply: {reply.ByteSize():,} bytes, {len(reply.states):,} states "
          f"({applied:,} drops applied, {len(reply.states) - applied:,} left unapplied), "
          f"in {seconds:.1f} s")
    print(f"server RSS: {before:,} KiB before, {after:,} KiB after")


if __name__ == "__main__":
    main()
