#!/usr/bin/env python3
"""Abuse test: hostile and broken traffic against a running Arbiter while a steady stream
of well-formed calls is checked, one by one. Loopback only, bounded in count and time.
Run through tests/abuse/run.sh, which starts the server and checks its log afterwards.

Prints the figures RELIABILITY.md records, and `N passed, M failed` last.
"""

import argparse
import os
import random
import socket
import struct
import sys
import tempfile
import threading
import time
import pathlib

import grpc
import h2.config
import h2.connection
import h2.events

REPO = pathlib.Path(__file__).resolve().parents[2]


def load_stubs():
    from grpc_tools import protoc

    out = tempfile.mkdtemp(prefix="arbiter-abuse-stubs-")
    root = REPO / "proto"
    code = protoc.main(["protoc", f"-I{root}", f"--python_out={out}", f"--grpc_python_out={out}",
                        str(root / "arbiter" / "v1" / "arbiter.proto")])
    assert code == 0
    sys.path.insert(0, out)
    from arbiter.v1 import arbiter_pb2, arbiter_pb2_grpc

    return arbiter_pb2, arbiter_pb2_grpc


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


class Steady(threading.Thread):
    """Well-formed calls in a loop, every answer checked, until told to stop."""

    def __init__(self, address, pb, pb_grpc):
        super().__init__(daemon=True)
        self.address, self.pb, self.pb_grpc = address, pb, pb_grpc
        self.calls = self.failures = 0
        self.stop = threading.Event()

    def run(self):
        pb = self.pb
        channel = grpc.insecure_channel(self.address)
        stub = self.pb_grpc.ArbiterServiceStub(channel)
        c4 = pb.CheckConnectFourRequest(
            board=pb.Board(rows=["0000000", "0000000", "0000000", "0000000", "0222000", "0111100"]),
            row=5, col=4, player=1)
        judge = pb.JudgeTicTacToeRequest(moves=[pb.TicTacToeMove(row=r, col=c) for r, c in
                                                [(0, 0), (2, 0), (1, 1), (2, 1), (2, 2)]])
        while not self.stop.is_set():
            try:
                reply = stub.CheckConnectFour(c4, timeout=10)
                ok = reply.wins and [(c.row, c.col) for c in reply.run] == [(5, 1), (5, 2), (5, 3), (5, 4)]
                reply = stub.JudgeTicTacToe(judge, timeout=10)
                ok = ok and reply.verdict == pb.VERDICT_A_WINS and list(reply.board.rows) == ["X..", ".X.", "OOX"]
                moves = iter([pb.PlayTicTacToeRequest(row=1, col=1), pb.PlayTicTacToeRequest(row=1, col=1)])
                replies = list(stub.PlayTicTacToe(moves, timeout=10))
                ok = ok and len(replies) == 2 and replies[1].rejected == "square (1, 1) is taken"
            except grpc.RpcError as error:
                ok = False
                print(f"well-formed call failed: {error.code()} {error.details()}", flush=True)
            self.calls += 3
            if not ok:
                self.failures += 1
        channel.close()


def connect(address, timeout=5):
    host, port = address.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=timeout)


def open_and_drop(address, count):
    """Connections opened and dropped, half of them after the HTTP/2 preface."""
    for i in range(count):
        sock = connect(address)
        if i % 2:
            sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        sock.close()


def garbage(address, count):
    """Bytes that are not HTTP/2 at all."""
    rng = random.Random(7)
    for _ in range(count):
        sock = connect(address)
        try:
            sock.sendall(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 512))))
            sock.recv(4096)
        except OSError:
            pass
        finally:
            sock.close()


def http1(address, count):
    """HTTP/1.1 requests, which a gRPC server does not serve."""
    for i in range(count):
        sock = connect(address)
        try:
            verb = "GET" if i % 2 else "POST"
            sock.sendall(f"{verb} /arbiter.v1.ArbiterService/JudgeTicTacToe HTTP/1.1\r\n"
                         f"Host: {address}\r\nContent-Length: 0\r\n\r\n".encode())
            sock.recv(4096)
        except OSError:
            pass
        finally:
            sock.close()


def h2_call(address, path, body, content_type="application/grpc", extra=(), read_window=True):
    """One raw HTTP/2 call; returns the grpc-status (or the HTTP status, or 'reset')."""
    sock = connect(address)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    sid = conn.get_next_available_stream_id()
    headers = [(":method", "POST"), (":scheme", "http"), (":authority", address), (":path", path),
               ("content-type", content_type), ("te", "trailers"), *extra]
    conn.send_headers(sid, headers)
    conn.send_data(sid, body, end_stream=True)
    sock.sendall(conn.data_to_send())
    outcome = None
    try:
        while outcome is None:
            data = sock.recv(65535)
            if not data:
                outcome = "closed"
                break
            for event in conn.receive_data(data):
                if isinstance(event, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
                    fields = dict(event.headers)
                    if "grpc-status" in fields:
                        outcome = f"grpc-status {fields['grpc-status']}"
                    elif fields.get(":status", "200") != "200":
                        outcome = f"http {fields[':status']}"
                elif isinstance(event, h2.events.DataReceived) and read_window:
                    conn.acknowledge_received_data(event.flow_controlled_length, sid)
                elif isinstance(event, h2.events.StreamReset):
                    outcome = "reset"
                elif isinstance(event, h2.events.StreamEnded) and outcome is None:
                    outcome = "ended"
            sock.sendall(conn.data_to_send())
    except OSError:
        outcome = outcome or "closed"
    finally:
        sock.close()
    return outcome


def frame(message, compressed=0, declared=None):
    length = len(message) if declared is None else declared
    return struct.pack(">BI", compressed, length) + message


def grpc_faults(address, pb, count):
    """gRPC calls broken in each way; returns {fault: {outcome: count}}."""
    judge = pb.JudgeTicTacToeRequest(moves=[pb.TicTacToeMove(row=1, col=1)]).SerializeToString()
    path = "/arbiter.v1.ArbiterService/JudgeTicTacToe"
    faults = {
        "wrong content-type": lambda: h2_call(address, path, frame(judge), content_type="text/plain"),
        "truncated message": lambda: h2_call(address, path, frame(judge)[:-3]),
        "length prefix larger than the body": lambda: h2_call(address, path, frame(judge, declared=4096)),
        "compressed flag, no compression": lambda: h2_call(address, path, frame(judge, compressed=1)),
        "unknown method": lambda: h2_call(address, "/arbiter.v1.ArbiterService/Nope", frame(judge)),
        "garbage message": lambda: h2_call(address, path, frame(os.urandom(64))),
    }
    seen = {}
    for name, fault in faults.items():
        for _ in range(count):
            outcome = fault()
            seen.setdefault(name, {}).setdefault(outcome, 0)
            seen[name][outcome] += 1
    return seen


def abandoned_streams(address, pb, pb_grpc, count):
    """Live games abandoned mid-game: the client cancels after two moves."""
    channel = grpc.insecure_channel(address)
    stub = pb_grpc.ArbiterServiceStub(channel)
    for _ in range(count):
        moves = iter([pb.PlayTicTacToeRequest(row=0, col=0), pb.PlayTicTacToeRequest(row=1, col=1)]
                     + [pb.PlayTicTacToeRequest(row=2, col=2)] * 0)
        call = stub.PlayTicTacToe(moves)
        next(call)
        call.cancel()
    channel.close()


def slow_reader(address, pb, seconds):
    """A live game that sends moves and never reads its replies nor opens its window."""
    sock = connect(address)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    sid = conn.get_next_available_stream_id()
    conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":authority", address),
                            (":path", "/arbiter.v1.ArbiterService/PlayTicTacToe"),
                            ("content-type", "application/grpc"), ("te", "trailers")])
    move = frame(pb.PlayTicTacToeRequest(row=1, col=1).SerializeToString())
    sent = 0
    deadline = time.time() + seconds
    sock.settimeout(0.2)
    while time.time() < deadline:
        try:
            if conn.local_flow_control_window(sid) >= len(move):
                conn.send_data(sid, move)
                sent += 1
            sock.sendall(conn.data_to_send())
            time.sleep(0.001)
        except (OSError, h2.exceptions.H2Error):
            break
    sock.close()
    return sent


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--address", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--scale", type=int, default=1, help="multiplies every fault count")
    args = parser.parse_args()
    pb, pb_grpc = load_stubs()
    address, scale = args.address, args.scale

    steady = Steady(address, pb, pb_grpc)
    steady.start()
    time.sleep(1)
    rss_before = rss_kib(args.pid)
    started = time.time()
    figures = {}
    connections = 2000 * scale
    workers = [
        threading.Thread(target=open_and_drop, args=(address, connections // 2)),
        threading.Thread(target=open_and_drop, args=(address, connections // 2)),
        threading.Thread(target=garbage, args=(address, 300 * scale)),
        threading.Thread(target=http1, args=(address, 300 * scale)),
        threading.Thread(target=abandoned_streams, args=(address, pb, pb_grpc, 300 * scale)),
    ]
    for worker in workers:
        worker.start()
    faults = grpc_faults(address, pb, 100 * scale)
    sent = slow_reader(address, pb, 3)
    for worker in workers:
        worker.join(timeout=300)
    time.sleep(2)
    steady.stop.set()
    steady.join(timeout=30)
    time.sleep(1)
    rss_after = rss_kib(args.pid)

    injected = connections + 2 * 300 * scale + 300 * scale + sum(sum(o.values()) for o in faults.values()) + 1
    print(f"connections opened and dropped: {connections}")
    print("garbage connections: %d; HTTP/1.1 requests: %d; abandoned games: %d" % (300 * scale, 300 * scale, 300 * scale))
    for name, outcomes in faults.items():
        print(f"gRPC fault '{name}': " + ", ".join(f"{k} x{v}" for k, v in sorted(outcomes.items())))
    print(f"slow reader: the server took {sent} moves, then flow control held the client")
    print(f"faults injected: {injected} in {time.time() - started:.1f}s")
    print(f"well-formed calls checked: {steady.calls}; failures: {steady.failures}")
    print(f"server RSS: {rss_before} KiB before, {rss_after} KiB after")

    checks = {
        "well-formed calls all correct": steady.failures == 0 and steady.calls > 0,
        "server still up": os.path.exists(f"/proc/{args.pid}"),
        "memory back near the start": rss_after <= rss_before + 16 * 1024,
        "unknown method is UNIMPLEMENTED": faults["unknown method"] == {"grpc-status 12": 100 * scale},
        "slow reader was held back": 0 < sent < 200_000,
    }
    passed = sum(checks.values())
    for name, ok in checks.items():
        print(("ok   " if ok else "FAIL ") + name)
    print(f"abuse: {passed} passed, {len(checks) - passed} failed")
    return 0 if passed == len(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
