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
from wire import field, varint  # noqa: E402


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
        # The bulk RPCs too: a batch of two checks and one with no kind, and a PlayMany
        # stream of two games, one closed.
        batch = pb.CheckBatchRequest(checks=[pb.Check(check_connect_four=c4),
                                             pb.Check(judge_tic_tac_toe=judge), pb.Check()])
        many = [pb.PlayManyRequest(actions=[
                    pb.GameAction(game=1, connect_four=pb.PlayConnectFourRequest(drop=3)),
                    pb.GameAction(game=2, tic_tac_toe=pb.PlayTicTacToeRequest(row=1, col=1))]),
                pb.PlayManyRequest(actions=[
                    pb.GameAction(game=1, connect_four=pb.PlayConnectFourRequest(drop=3)),
                    pb.GameAction(game=2, close=True)])]
        while not self.stop.is_set():
            try:
                reply = stub.CheckConnectFour(c4, timeout=10)
                ok = reply.wins and [(c.row, c.col) for c in reply.run] == [(5, 1), (5, 2), (5, 3), (5, 4)]
                reply = stub.JudgeTicTacToe(judge, timeout=10)
                ok = ok and reply.verdict == pb.VERDICT_A_WINS and list(reply.board.rows) == ["X..", ".X.", "OOX"]
                moves = iter([pb.PlayTicTacToeRequest(row=1, col=1), pb.PlayTicTacToeRequest(row=1, col=1)])
                replies = list(stub.PlayTicTacToe(moves, timeout=10))
                ok = ok and len(replies) == 2 and replies[1].rejected == "square (1, 1) is taken"
                reply = stub.CheckBatch(batch, timeout=10)
                ok = ok and [r.WhichOneof("result") for r in reply.results] == [
                    "check_connect_four", "judge_tic_tac_toe", None] and reply.results[0].check_connect_four.wins
                replies = list(stub.PlayMany(iter(many), timeout=10))
                ok = ok and [[(s.game, s.WhichOneof("state")) for s in r.states] for r in replies] == [
                    [(1, "connect_four"), (2, "tic_tac_toe")], [(1, "connect_four"), (2, None)]]
                ok = ok and replies[1].states[0].connect_four.moves_played == 2
            except grpc.RpcError as error:
                ok = False
                print(f"well-formed call failed: {error.code()} {error.details()}", flush=True)
            self.calls += 5
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
    # Bytes that are not the request message: the client's fault, INVALID_ARGUMENT
    # (tonic's own answer is INTERNAL); framing errors above stay INTERNAL.
    "random bytes as the message": "grpc-status 3; connection usable",
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


def send_body(client, sid, body):
    """Sends `body` on stream `sid` and ends it, in frames the server's flow-control
    windows and frame size allow (waiting for its window updates), unless the stream ends
    first (the server may answer before the body is in)."""
    conn = client.conn
    deadline = time.time() + 10
    while body and client.outcomes[sid] is None and not client.closed and time.time() < deadline:
        room = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size, len(body))
        if room == 0:
            client.pump(timeout=1)
            continue
        conn.send_data(sid, body[:room])
        body = body[room:]
        client.flush()
    if client.outcomes[sid] is None and not client.closed:
        conn.end_stream(sid)
        client.flush()


def h2_exchange(address, path, body, then):
    """One raw HTTP/2 call and, on the same connection, the well-formed call `then`
    (path, body); returns (the call's outcome, the gRPC messages of its reply, whether
    `then` was answered OK)."""
    client = H2Client(address)
    try:
        sid = client.start(path)
        send_body(client, sid, body)
        deadline = time.time() + 10
        while client.outcomes[sid] is None and not client.closed and time.time() < deadline:
            client.pump()
        outcome = client.outcomes[sid] or ("closed" if client.closed else "no answer in 10 s")
        messages, data = [], client.data.get(sid, b"")
        while len(data) >= 5:
            length = struct.unpack(">I", data[1:5])[0]
            messages.append(data[5:5 + length])
            data = data[5 + length:]
        after = "closed" if client.closed else client.call(*then)
    except OSError:
        outcome, messages, after = "closed", [], "closed"
    finally:
        client.close()
    return outcome, messages, after == "grpc-status 0"


I32_MIN, I32_MAX, U64_MAX = -(1 << 31), (1 << 31) - 1, (1 << 64) - 1


def bulk_faults(pb):
    """Malformed CheckBatch and PlayMany messages: {name: (path, body, expected, describe)},
    where `describe` turns the reply's messages into what is compared with `expected`
    (the grpc-status alone when there is nothing to decode)."""
    batch_path = "/arbiter.v1.ArbiterService/CheckBatch"
    many_path = "/arbiter.v1.ArbiterService/PlayMany"
    judge = pb.Check(judge_tic_tac_toe=pb.JudgeTicTacToeRequest(moves=[pb.TicTacToeMove(row=1, col=1)]))
    good_batch = pb.CheckBatchRequest(checks=[judge]).SerializeToString()
    start_8 = ["........", "........", "........", "...WB...", "...BW...", "........", "........", "........"]
    c4_board = pb.Board(rows=["0000000"] * 5 + ["1000000"])

    def results(messages):
        """Each result of a CheckBatch reply, as its kind or the fields it names as invalid."""
        if len(messages) != 1:
            return f"{len(messages)} replies"
        reply = pb.CheckBatchResponse.FromString(messages[0])
        return [r.WhichOneof("result") or "invalid " + ",".join(v.field for v in r.invalid)
                for r in reply.results]

    def states(messages):
        """Each state of each PlayMany reply: its kind, and `rejected` or the invalid fields."""
        out = []
        for message in messages:
            for state in pb.PlayManyResponse.FromString(message).states:
                kind = state.WhichOneof("state")
                if kind is None and not state.invalid:
                    out.append((state.game, "closed"))
                elif kind is None:
                    out.append((state.game, "invalid " + ",".join(v.field for v in state.invalid)))
                else:
                    reply = getattr(state, kind)
                    out.append((state.game, kind, "rejected" if reply.rejected else "applied"))
        return out

    extremes = pb.CheckBatchRequest(checks=[
        pb.Check(check_othello_move=pb.CheckOthelloMoveRequest(
            board=pb.Board(rows=start_8), row=I32_MIN, col=I32_MAX, color="B")),
        pb.Check(list_othello_moves=pb.ListOthelloMovesRequest(
            board=pb.Board(rows=start_8), color="\U0010ffff")),
        # A run longer than any board is no violation: it never wins.
        pb.Check(check_connect_four=pb.CheckConnectFourRequest(
            board=c4_board, row=I32_MAX, col=I32_MIN, player=I32_MIN, run_length=I32_MAX)),
        pb.Check(check_connect_four=pb.CheckConnectFourRequest(
            board=c4_board, row=5, col=0, player=I32_MAX, run_length=I32_MIN)),
        pb.Check(judge_tic_tac_toe=pb.JudgeTicTacToeRequest(moves=[
            pb.TicTacToeMove(row=I32_MIN, col=I32_MAX), pb.TicTacToeMove(row=I32_MAX, col=I32_MIN)])),
    ]).SerializeToString()
    many_extremes = pb.PlayManyRequest(actions=[
        pb.GameAction(game=U64_MAX, othello=pb.PlayOthelloRequest(move=pb.Cell(row=I32_MIN, col=I32_MAX))),
        pb.GameAction(game=U64_MAX - 1, connect_four=pb.PlayConnectFourRequest(drop=I32_MIN)),
        pb.GameAction(game=U64_MAX - 2, tic_tac_toe=pb.PlayTicTacToeRequest(row=I32_MAX, col=I32_MIN)),
        pb.GameAction(game=U64_MAX - 3, connect_four=pb.PlayConnectFourRequest(setup=pb.ConnectFourSetup(
            rows=I32_MAX, cols=I32_MIN, run_length=I32_MIN, history=[I32_MIN, I32_MAX]))),
        pb.GameAction(game=U64_MAX - 4, othello=pb.PlayOthelloRequest(setup=pb.OthelloSetup(
            board=pb.Board(rows=start_8), to_move="B",
            history=[pb.Cell(row=I32_MIN, col=I32_MIN)]))),
        pb.GameAction(game=U64_MAX - 5, tic_tac_toe=pb.PlayTicTacToeRequest(setup=pb.TicTacToeSetup(
            history=[pb.TicTacToeMove(row=I32_MAX, col=I32_MAX)]))),
        # Another kind on u64::MAX, which now holds an Othello game; and closes.
        pb.GameAction(game=U64_MAX, tic_tac_toe=pb.PlayTicTacToeRequest(row=0, col=0)),
        pb.GameAction(game=U64_MAX, close=True),
        pb.GameAction(game=U64_MAX, close=True),
        pb.GameAction(game=0),
    ]).SerializeToString()
    judge_bytes = judge.SerializeToString()
    othello_check = pb.Check(check_othello_move=pb.CheckOthelloMoveRequest(
        board=pb.Board(rows=start_8), row=2, col=3, color="B")).SerializeToString()
    drop_action = pb.GameAction(game=7, connect_four=pb.PlayConnectFourRequest(drop=3)).SerializeToString()
    move_action = pb.GameAction(game=7, tic_tac_toe=pb.PlayTicTacToeRequest(row=1, col=1)).SerializeToString()
    one_check = lambda check_bytes: frame(field(1, 2, check_bytes))  # noqa: E731
    one_action = lambda action_bytes: frame(field(1, 2, action_bytes))  # noqa: E731
    status = lambda messages: None  # noqa: E731 - the outcome alone is compared
    return {
        "CheckBatch truncated": (batch_path, frame(good_batch)[:-2], "grpc-status 13", status),
        "CheckBatch length prefix past the body": (
            batch_path, frame(good_batch, declared=len(good_batch) + 100), "grpc-status 13", status),
        # Two members of the oneof in one Check: protobuf keeps the last one.
        "CheckBatch two kinds in one check": (
            batch_path, one_check(othello_check + judge_bytes), ("grpc-status 0", ["judge_tic_tac_toe"]), results),
        # A field number the oneof does not have is skipped: a check with no kind.
        "CheckBatch unknown kind (field 9)": (
            batch_path, one_check(field(9, 2, judge_bytes[2:])), ("grpc-status 0", ["invalid check"]), results),
        "CheckBatch kind with the wrong wire type": (
            batch_path, one_check(field(1, 0, varint(1))), "grpc-status 3", status),
        "CheckBatch int32 extremes in every coordinate": (batch_path, frame(extremes), ("grpc-status 0", [
            "invalid row,col", "invalid color", "invalid row,col,player", "invalid player,run_length",
            "invalid moves[0],moves[1]"]), results),
        "CheckBatch of 10,001 checks": (
            batch_path, frame(pb.CheckBatchRequest(checks=[judge] * 10_001).SerializeToString()),
            "grpc-status 3", status),
        "PlayMany truncated": (many_path, one_action(drop_action)[:-1], "grpc-status 13", status),
        "PlayMany game numbers at u64::MAX, int32 extremes in every coordinate": (
            many_path, frame(many_extremes), ("grpc-status 0", [
                (U64_MAX, "othello", "rejected"), (U64_MAX - 1, "connect_four", "rejected"),
                (U64_MAX - 2, "tic_tac_toe", "rejected"), (U64_MAX - 3, "invalid setup.rows,setup.cols,setup.run_length"),
                (U64_MAX - 4, "invalid setup.history[0]"), (U64_MAX - 5, "invalid setup.history[0]"),
                (U64_MAX, "invalid action"), (U64_MAX, "closed"), (U64_MAX, "invalid game"),
                (0, "invalid action")]), states),
        # A game number longer than any varint (11 bytes) does not decode.
        "PlayMany game number of 11 varint bytes": (
            many_path, one_action(field(1, 0, b"\xff" * 10 + b"\x01") + drop_action[2:]), "grpc-status 3", status),
        "PlayMany two actions in one GameAction": (
            many_path, one_action(drop_action + move_action), ("grpc-status 0", [(7, "tic_tac_toe", "applied")]),
            states),
        "PlayMany action with the wrong wire type": (
            many_path, one_action(field(1, 0, varint(7)) + field(3, 0, varint(3))), "grpc-status 3", status),
        "PlayMany of 10,001 actions": (
            many_path, frame(pb.PlayManyRequest(actions=[pb.GameAction(game=1, close=True)] * 10_001)
                             .SerializeToString()), "grpc-status 3", status),
    }


def run_bulk_faults(address, pb, count):
    """Each malformed bulk message `count` times, each followed by a well-formed call on
    its connection; returns {fault: {outcome: count}} and {fault: expected outcome}."""
    judge = pb.JudgeTicTacToeRequest(moves=[pb.TicTacToeMove(row=1, col=1)]).SerializeToString()
    good = ("/arbiter.v1.ArbiterService/JudgeTicTacToe", frame(judge))
    seen, expected = {}, {}
    for name, (path, body, expect, describe) in bulk_faults(pb).items():
        expected[name] = f"{expect}; connection usable"
        for _ in range(count):
            outcome, messages, usable = h2_exchange(address, path, body, good)
            try:
                described = describe(messages)
            except Exception as error:  # noqa: BLE001 - an undecodable reply is an outcome
                described = f"undecodable reply: {error!r}"
            got = outcome if described is None else (outcome, described)
            key = f"{got}; " + ("connection usable" if usable else "connection NOT usable")
            seen.setdefault(name, {}).setdefault(key, 0)
            seen[name][key] += 1
    return seen, expected


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
    bulk, bulk_expected = run_bulk_faults(address, pb, 50 * scale)
    slow = slow_reader(address, pb)
    for worker in workers:
        worker.join(timeout=300)
    time.sleep(2)
    steady.stop.set()
    steady.join(timeout=30)
    time.sleep(1)
    rss_after = rss_kib(args.pid)

    injected = (connections + 2 * 300 * scale + 300 * scale + sum(sum(o.values()) for o in faults.values())
                + sum(sum(o.values()) for o in bulk.values()) + 1)
    print(f"connections opened and dropped: {connections}")
    print("garbage connections: %d; HTTP/1.1 requests: %d; abandoned games: %d" % (300 * scale, 300 * scale, 300 * scale))
    for name, outcomes in faults.items():
        print(f"gRPC fault '{name}': " + ", ".join(f"{k} x{v}" for k, v in sorted(outcomes.items())))
    for name, outcomes in bulk.items():
        print(f"bulk fault '{name}': " + ", ".join(f"{k} x{v}" for k, v in sorted(outcomes.items())))
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
        **{f"{name}: {expected}": bulk[name] == {expected: 50 * scale}
           for name, expected in bulk_expected.items()},
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
