#!/usr/bin/env python3
"""What a malformed request costs the server, beside valid CheckBatch requests of its
size: server CPU per MB of request (from /proc, fifty calls in a row after one to warm
up) and resident memory, for requests of about 1 MB each. `tests/request_cost.rs` holds
the memory side in `cargo test` (a counting allocator); this measures the CPU side on
the release server, which a test cannot hold without timing it.

    python3 tests/abuse/request_cost.py --binary target/release/arbiter
"""

import os
import pathlib
import sys

import grpc

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from game_memory import Server, binary_argument, pb  # noqa: E402

SERVICE = "/arbiter.v1.ArbiterService/"
CALLS = 50


def cpu_seconds(pid):
    """The user and system CPU time process `pid` has used, in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def unary(channel, method):
    """Sends a request's bytes as they are; any status is an answer."""
    call = channel.unary_unary(SERVICE + method, request_serializer=None,
                               response_deserializer=None)

    def send(data):
        try:
            call(data)
        except grpc.RpcError:
            pass
    return send


def play_many(channel):
    """Sends a request's bytes as the one message of a PlayMany stream."""
    call = channel.stream_stream(SERVICE + "PlayMany", request_serializer=None,
                                 response_deserializer=None)
    return lambda data: list(call(iter([data])))


def live(channel, method):
    """Sends a request's bytes as the one message of a live game's stream; any status is
    an answer."""
    call = channel.stream_stream(SERVICE + method, request_serializer=None,
                                 response_deserializer=None)

    def send(data):
        try:
            list(call(iter([data])))
        except grpc.RpcError:
            pass
    return send


def measure(server, name, send, request):
    data = request.SerializeToString()
    send(data)
    before = cpu_seconds(server.process.pid)
    for _ in range(CALLS):
        send(data)
    used = cpu_seconds(server.process.pid) - before
    per_mb = 1000 * used / CALLS / (len(data) / 1e6)
    print(f"| {name} | {len(data):,} | {per_mb:.1f} ms | {server.rss() // 1024} MiB |")


def main():
    server = Server(binary_argument(__doc__))
    try:
        channel = grpc.insecure_channel(server.address, options=[
            ("grpc.max_receive_message_length", 64 << 20),
            ("grpc.max_send_message_length", 64 << 20)])
        othello = ["........"] * 3 + ["...WB...", "...BW..."] + ["........"] * 3
        far = pb.TicTacToeMove(row=1_000_000, col=1_000_000)
        off = pb.TicTacToeMove(row=5, col=5)
        print("| request | bytes | server CPU per MB | RSS after |")
        print("| --- | ---: | ---: | ---: |")
        measure(server, "valid CheckBatch, 10,000 CheckOthelloMove 8x8", unary(channel, "CheckBatch"),
                pb.CheckBatchRequest(checks=[pb.Check(check_othello_move=pb.CheckOthelloMoveRequest(
                    board=pb.Board(rows=othello), row=2, col=3, color="B"))] * 10_000))
        measure(server, "valid CheckBatch, 100 CheckConnectFour 100x100", unary(channel, "CheckBatch"),
                pb.CheckBatchRequest(checks=[pb.Check(check_connect_four=pb.CheckConnectFourRequest(
                    board=pb.Board(rows=["0" * 100] * 100), row=99, col=0))] * 100))
        measure(server, "JudgeTicTacToe, 166,000 moves off the board", unary(channel, "JudgeTicTacToe"),
                pb.JudgeTicTacToeRequest(moves=[off] * 166_000))
        measure(server, "CheckBatch, one JudgeTicTacToe of 166,000 moves off the board",
                unary(channel, "CheckBatch"),
                pb.CheckBatchRequest(checks=[pb.Check(judge_tic_tac_toe=pb.JudgeTicTacToeRequest(
                    moves=[off] * 166_000))]))
        measure(server, "CheckBatch, 10,000 checks of 9 moves off the board", unary(channel, "CheckBatch"),
                pb.CheckBatchRequest(checks=[pb.Check(judge_tic_tac_toe=pb.JudgeTicTacToeRequest(
                    moves=[far] * 9))] * 10_000))
        measure(server, "PlayMany, one message of 10,000 malformed Othello setups", play_many(channel),
                pb.PlayManyRequest(actions=[pb.GameAction(game=game, othello=pb.PlayOthelloRequest(
                    setup=pb.OthelloSetup(board=pb.Board(rows=["XXXXXXXX"] * 8), to_move="B")))
                    for game in range(10_000)]))
        # A board of 100 rows of 10,000 bad characters: about 1 MB, a violation a row.
        bad = pb.Board(rows=["X" * 10_000] * 100)
        measure(server, "CheckOthelloMove, 100 rows of 10,000 bad cells",
                unary(channel, "CheckOthelloMove"),
                pb.CheckOthelloMoveRequest(board=bad, row=0, col=0, color="B"))
        measure(server, "ListOthelloMoves, 100 rows of 10,000 bad cells",
                unary(channel, "ListOthelloMoves"), pb.ListOthelloMovesRequest(board=bad, color="B"))
        measure(server, "CheckConnectFour, 100 rows of 10,000 bad cells",
                unary(channel, "CheckConnectFour"), pb.CheckConnectFourRequest(board=bad))
        measure(server, "PlayOthello, a setup of 100 rows of 10,000 bad cells",
                live(channel, "PlayOthello"),
                pb.PlayOthelloRequest(setup=pb.OthelloSetup(board=bad, to_move="B")))
        measure(server, "PlayConnectFour, a setup of 250,000 drops off the board",
                live(channel, "PlayConnectFour"),
                pb.PlayConnectFourRequest(setup=pb.ConnectFourSetup(
                    rows=100, cols=100, history=[1_000_000] * 250_000)))
        measure(server, "PlayTicTacToe, a setup of 166,000 moves off the board",
                live(channel, "PlayTicTacToe"),
                pb.PlayTicTacToeRequest(setup=pb.TicTacToeSetup(history=[off] * 166_000)))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
