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
import threading
import time
import pathlib

import grpc
import h2.config
import h2.connection
import h2.events

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))
from proc import rss_kib  # noqa: E402
from stubs import load_stubs  # noqa: E402


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


class H2Client:
    """A raw HTTP/2 client connection, reading every frame the server sends."""

    def __init__(self, address, settings=None):
        self.address = address
        self.sock = connect(address)
        self.conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        if settings:
            self.conn.update_settings(settings)
        self.closed = False
        self.outcomes = {}  # stream id -> outcome
        self.data = {}  # stream id -> bytes received
        self.read_window = True
        self.protocol_error = None
        self.settings_acked = 0
        self.flush()
        if settings:
            # A server applies new settings when it acknowledges them: wait for that, so
            # that no stream starts under the default window of 65,535 bytes.
            deadline = time.time() + 10
            while self.settings_acked < 2 and not self.closed and time.time() < deadline:
                self.pump(timeout=1)

    def flush(self):
        self.sock.sendall(self.conn.data_to_send())

    def start(self, path, content_type="application/grpc", extra=()):
        sid = self.conn.get_next_available_stream_id()
        headers = [(":method", "POST"), (":scheme", "http"), (":authority", self.address),
                   (":path", path), ("content-type", content_type), ("te", "trailers"), *extra]
        self.conn.send_headers(sid, headers)
        self.outcomes[sid] = None
        self.data[sid] = b""
        return sid

    def call(self, path, body, content_type="application/grpc", extra=()):
        """One call on this connection; returns its grpc-status (or 'http N', 'reset',
        'ended', 'closed')."""
        sid = self.start(path, content_type, extra)
        self.conn.send_data(sid, body, end_stream=True)
        self.flush()
        deadline = time.time() + 10
        while self.outcomes[sid] is None and not self.closed and time.time() < deadline:
            self.pump()
        return self.outcomes[sid] or ("closed" if self.closed else "no answer in 10 s")

    def pump(self, timeout=5):
        """Reads once from the socket and handles what came; False on a timeout, or once
        the connection is closed."""
        if self.closed:
            return False
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65535)
        except socket.timeout:
            return False
        except OSError:
            data = b""
        if not data:
            self.closed = True
            return False
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError as error:  # e.g. data past a flow-control window
            self.protocol_error = repr(error)
            self.closed = True
            return False
        for event in events:
            sid = getattr(event, "stream_id", None)
            if isinstance(event, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
                fields = dict(event.headers)
                if "grpc-status" in fields:
                    self.outcomes[sid] = f"grpc-status {fields['grpc-status']}"
                elif fields.get(":status", "200") != "200":
                    self.outcomes[sid] = f"http {fields[':status']}"
            elif isinstance(event, h2.events.DataReceived):
                self.data[sid] = self.data.get(sid, b"") + event.data
                if self.read_window:
                    self.conn.acknowledge_received_data(event.flow_controlled_length, sid)
            elif isinstance(event, h2.events.StreamReset):
                self.outcomes[sid] = self.outcomes.get(sid) or "reset"
            elif isinstance(event, h2.events.StreamEnded) and self.outcomes.get(sid) is None:
                self.outcomes[sid] = "ended"
            elif isinstance(event, h2.events.SettingsAcknowledged):
                self.settings_acked += 1
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.closed = True
        self.flush()
        return True

    def close(self):
        self.sock.close()


def h2_call(address, path, body, content_type="application/grpc", extra=(), then=None):
    """One raw HTTP/2 call; returns its outcome (the grpc-status, or the HTTP status,
    'reset', 'closed'), and with `then` (path, body) whether a well-formed call on the same
    connection afterwards still works."""
    client = H2Client(address)
    try:
        outcome = client.call(path, body, content_type, extra)
        if then is not None:
            after = "closed" if client.closed else client.call(*then)
            outcome += "; connection usable" if after == "grpc-status 0" else f"; next call: {after}"
    except OSError:
        outcome = "closed"
    finally:
        client.close()
    return outcome


def frame(message, compressed=0, declared=None):
    length = len(message) if declared is None else declared
    return struct.pack(">BI", compressed, length) + message


# What the server must answer to each broken call, and that the connection stays usable:
# tonic does not check the request's content-type, so `text/plain` is served like
# `application/grpc` (measured; see RELIABILITY.md).
FAULT_OUTCOMES = {
    "wrong content-type": "grpc-status 0; connection usable",
    "truncated message": "grpc-status 13; connection usable",
    "length prefix larger than the body": "grpc-status 13; connection usable",
    "compressed flag, no compression": "grpc-status 13; connection usable",
    "unknown method": "grpc-status 12; connection usable",
    "random bytes as the message": "grpc-status 13; connection usable",
}


def grpc_faults(address, pb, count):
    """gRPC calls broken in each way; returns {fault: {outcome: count}}."""
    judge = pb.JudgeTicTacToeRequest(moves=[pb.TicTacToeMove(row=1, col=1)]).SerializeToString()
    path = "/arbiter.v1.ArbiterService/JudgeTicTacToe"
    good = (path, frame(judge))
    rng = random.Random(11)
    faults = {
        "wrong content-type": lambda: h2_call(address, path, frame(judge), content_type="text/plain", then=good),
        "truncated message": lambda: h2_call(address, path, frame(judge)[:-3], then=good),
        "length prefix larger than the body": lambda: h2_call(address, path, frame(judge, declared=4096), then=good),
        "compressed flag, no compression": lambda: h2_call(address, path, frame(judge, compressed=1), then=good),
        "unknown method": lambda: h2_call(address, "/arbiter.v1.ArbiterService/Nope", frame(judge), then=good),
        # Seeded, so that every run sends the same bytes (none of which decodes).
        "random bytes as the message": lambda: h2_call(address, path, frame(rng.randbytes(64)), then=good),
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


def slow_reader(address, pb):
    """A live game whose client reads none of its replies: it announces a stream window of
    0 bytes, so the server may send no reply at all, and sends moves (each padded to about
    2 KiB with an unknown field, which the server skips) for as long as the server's
    windows let it. A server that stops reading moves while its replies are unread never
    gives window back, so the client is held at the server's initial windows, far short of
    the 1,000 moves a stream may carry; a server that read on (buffering replies) would
    give window back and take them all. Then the client opens its window: every move held
    must be answered, in order, and the stream end with OK.

    Returns (moves sent, bytes per move, the server's initial stream window, bytes of replies received
    while the window was shut, replies after it opened, final outcome, replies correct)."""
    client = H2Client(address, {h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
    client.read_window = False
    conn = client.conn
    sid = client.start("/arbiter.v1.ArbiterService/PlayTicTacToe")
    padding = b"\x7a" + bytes([0xd0, 0x0f]) + b"p" * 2000  # field 15, 2,000 bytes
    move = frame(pb.PlayTicTacToeRequest(row=1, col=1).SerializeToString() + padding)
    sent, stalled_since = 0, None
    deadline = time.time() + 30
    while time.time() < deadline and not client.closed:
        if conn.local_flow_control_window(sid) >= len(move):
            try:
                conn.send_data(sid, move)
                client.flush()
            except (h2.exceptions.H2Error, OSError):  # the server ended the stream
                break
            sent += 1
            stalled_since = None
            continue
        # Held: wait for window from the server, for a second at most.
        stalled_since = stalled_since or time.time()
        if time.time() - stalled_since > 1:
            break
        client.pump(timeout=0.2)
    server_window = conn.remote_settings.initial_window_size
    while client.pump(timeout=0.5):
        pass
    held_bytes = len(client.data.get(sid, b""))
    # Open the window and read every reply, then end the stream.
    try:
        conn.increment_flow_control_window(1 << 30, stream_id=sid)
        conn.increment_flow_control_window(1 << 30)
        client.read_window = True
        conn.end_stream(sid)
        client.flush()
    except (h2.exceptions.H2Error, OSError) as error:
        client.protocol_error = client.protocol_error or repr(error)
    deadline = time.time() + 30
    while client.outcomes[sid] is None and not client.closed and time.time() < deadline:
        client.pump(timeout=1)
    client.close()
    replies, data = [], client.data.get(sid, b"")
    while len(data) >= 5:
        length = struct.unpack(">I", data[1:5])[0]
        replies.append(pb.PlayTicTacToeResponse.FromString(data[5:5 + length]))
        data = data[5 + length:]
    correct = bool(replies) and replies[0].rejected == "" and all(
        r.rejected == "square (1, 1) is taken" and r.moves_played == 1 for r in replies[1:])
    outcome = client.outcomes[sid] or client.protocol_error or "no end"
    return sent, len(move), server_window, held_bytes, len(replies), outcome, correct


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
    slow = slow_reader(address, pb)
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
    sent, move_bytes, server_window, held_bytes, answered, slow_outcome, slow_correct = slow
    print(f"slow reader: held after {sent} moves of {move_bytes} bytes "
          f"(the server's stream window: {server_window} bytes), {held_bytes} bytes of replies "
          f"while its window was shut; once opened, {answered} replies "
          f"({'all correct' if slow_correct else 'WRONG'}), then {slow_outcome}")
    print(f"faults injected: {injected} in {time.time() - started:.1f}s")
    print(f"well-formed calls checked: {steady.calls}; failures: {steady.failures}")
    print(f"server RSS: {rss_before} KiB before, {rss_after} KiB after")

    checks = {
        "well-formed calls all correct": steady.failures == 0 and steady.calls > 0,
        "server still up": os.path.exists(f"/proc/{args.pid}"),
        "memory back near the start": rss_after <= rss_before + 16 * 1024,
        **{f"{name}: {expected}": faults[name] == {expected: 100 * scale}
           for name, expected in FAULT_OUTCOMES.items()},
        # The server sent nothing past the client's window of 0, never gave back window
        # for moves it did not read (so the client stopped within the server's initial
        # windows, far short of the stream's 1,000 moves), and answered every held move.
        "slow reader: no reply past a shut window": held_bytes == 0,
        "slow reader: held within the server's windows": 0 < sent * move_bytes <= server_window and sent < 1000,
        "slow reader: every held move answered once the window opened": answered == sent and slow_correct,
        "slow reader: the game then ended OK": slow_outcome == "grpc-status 0",
    }
    passed = sum(checks.values())
    for name, ok in checks.items():
        print(("ok   " if ok else "FAIL ") + name)
    print(f"abuse: {passed} passed, {len(checks) - passed} failed")
    return 0 if passed == len(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
