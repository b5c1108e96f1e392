"""Tests of the client's own behaviour against a scripted grpcio server on loopback (no
Arbiter needed): a deadline on every call, the one-shot RPCs retried on UNAVAILABLE by the
service config and on nothing else, the resume loop, which sends a drop only once the
one before is answered and resumes on the statuses the README names and on no other, a
Gomoku game, which sends no move once the game is won, and a chess game, whose draw is
claimed after its last move. They import the installed package (pytest's importlib mode,
pyproject.toml), as any program would:

    .venv/bin/pip install ./examples/python -r examples/python/requirements.txt
    .venv/bin/python -m pytest examples/python
"""

import json
import pathlib
from concurrent import futures

import grpc
import pytest

import arbiter_client
from arbiter_client import arbiter_pb2 as pb
from arbiter_client import arbiter_pb2_grpc as pb_grpc
from arbiter_client import client

# The package's source tree, when these tests run from it (they always do).
SOURCE = pathlib.Path(__file__).resolve().parents[1]


class Scripted(pb_grpc.ArbiterServiceServicer):
    def __init__(self):
        self.unavailable_for = 0
        self.judge_calls = 0
        self.deadlines = []  # time_remaining() of each call
        self.fail_third_drop = None  # (code, details) the first stream ends with
        self.setups = []  # each stream's setup history
        self.early = []  # messages that came before the reply to the one before was sent
        self.gomoku = []  # each PlayGomoku message's action: "setup" or the move's (row, col)
        self.chess = []  # each PlayChess message: its move, or "setup" or "claim_draw"

    def JudgeTicTacToe(self, request, context):
        self.deadlines.append(context.time_remaining())
        self.judge_calls += 1
        if self.unavailable_for > 0:
            self.unavailable_for -= 1
            context.abort(grpc.StatusCode.UNAVAILABLE, "scripted")
        return pb.JudgeTicTacToeResponse(moves_played=len(request.moves))

    def CheckConnectFour(self, request, context):
        self.deadlines.append(context.time_remaining())
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "scripted")

    def PlayConnectFour(self, request_iterator, context):
        self.deadlines.append(context.time_remaining())
        stream = len(self.setups)
        played = drops = 0
        for message in request_iterator:
            if message.WhichOneof("action") == "setup":
                self.setups.append(list(message.setup.history))
                played = len(message.setup.history)
            else:
                drops += 1
                if stream == 0 and drops == 3 and self.fail_third_drop:
                    context.abort(*self.fail_third_drop)
                if message.drop >= 7:
                    yield pb.PlayConnectFourResponse(moves_played=played,
                                                     rejected="off the board")
                    continue
                played += 1
            yield pb.PlayConnectFourResponse(moves_played=played)

    def PlayGomoku(self, request_iterator, context):
        """Black wins with the second move after the setup."""
        self.deadlines.append(context.time_remaining())
        played = moves = 0
        for message in request_iterator:
            if message.WhichOneof("action") == "setup":
                self.gomoku.append("setup")
                played = len(message.setup.history)
            else:
                self.gomoku.append((message.move.row, message.move.col))
                moves += 1
                played += 1
            won = moves == 2
            yield pb.PlayGomokuResponse(
                verdict=pb.VERDICT_A_WINS if won else pb.VERDICT_PENDING,
                moves_played=played, to_move="" if won else "BW"[played % 2])

    def PlayChess(self, request_iterator, context):
        """A move "mate" ends the game; a claim holds after four moves."""
        self.deadlines.append(context.time_remaining())
        played, over = 0, False
        for message in request_iterator:
            action = message.WhichOneof("action")
            self.chess.append(message.move if action == "move" else action)
            if over:
                yield pb.PlayChessResponse(verdict=pb.VERDICT_A_WINS, rejected="the game is over")
            elif action == "claim_draw":
                holds = played >= 4
                yield pb.PlayChessResponse(
                    verdict=pb.VERDICT_DRAW if holds else pb.VERDICT_PENDING, moves_played=played,
                    ending=pb.ENDING_CLAIM if holds else pb.ENDING_UNSPECIFIED,
                    rejected="" if holds else "no draw can be claimed")
                over = holds
            else:
                played += action == "move"
                over = message.move == "mate"
                yield pb.PlayChessResponse(
                    verdict=pb.VERDICT_A_WINS if over else pb.VERDICT_PENDING,
                    moves_played=played, draw_claimable=played >= 4)


@pytest.fixture
def scripted():
    service = Scripted()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pb_grpc.add_ArbiterServiceServicer_to_server(service, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    with client.server_channel(f"127.0.0.1:{port}") as channel:
        yield service, pb_grpc.ArbiterServiceStub(channel)
    server.stop(None)


def test_a_unary_call_is_retried_on_unavailable(scripted):
    service, stub = scripted
    service.unavailable_for = 2
    reply = stub.JudgeTicTacToe(pb.JudgeTicTacToeRequest(moves=[pb.TicTacToeMove()]),
                                timeout=client.DEADLINE)
    assert reply.moves_played == 1
    assert service.judge_calls == 3
    assert all(d is not None and d <= client.DEADLINE + 1 for d in service.deadlines)


def test_an_answer_is_not_retried(scripted):
    service, stub = scripted
    with pytest.raises(grpc.RpcError) as error:
        stub.CheckConnectFour(pb.CheckConnectFourRequest(), timeout=client.DEADLINE)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("code, details", [
    (grpc.StatusCode.UNAVAILABLE, "server shutting down"),
    (grpc.StatusCode.INTERNAL, "Received RST_STREAM with error code 2"),
])
def test_a_lost_game_is_resumed_from_its_history(scripted, code, details):
    service, stub = scripted
    service.fail_third_drop = (code, details)
    last = client.play_connect_four_resumably(stub, [3, 7, 4, 4, 5])
    # 7 was rejected, so the history is [3]; the unanswered 4 is sent again.
    assert service.setups == [[], [3]]
    assert last.moves_played == 4
    assert all(d is not None and d <= client.STREAM_DEADLINE + 1 for d in service.deadlines), service.deadlines


def test_any_other_status_is_the_answer(scripted):
    service, stub = scripted
    service.fail_third_drop = (grpc.StatusCode.DEADLINE_EXCEEDED, "idle")
    with pytest.raises(grpc.RpcError) as error:
        client.play_connect_four_resumably(stub, [3, 4, 5, 6])
    assert error.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert service.setups == [[]]


def test_every_unary_rpc_is_retried_and_no_stream():
    """RETRY_UNARY_CALLS, read from the installed package's retry_policy.json, names every
    one-shot RPC of the contract (chess's three too), and no streaming one: a lost live
    game is resumed, never retried."""
    service = pb.DESCRIPTOR.services_by_name["ArbiterService"]
    unary = sorted(m.name for m in service.methods
                   if not m.client_streaming and not m.server_streaming)
    assert sorted(name["method"] for name in client.RETRY_UNARY_CALLS["name"]) == unary
    assert {"CheckGomokuMove", "CheckChessMove", "ListChessMoves", "JudgeChessGame"} <= set(unary)
    assert client.RETRY_UNARY_CALLS["retryPolicy"]["retryableStatusCodes"] == ["UNAVAILABLE"]


def test_the_installed_package_is_built_from_the_contract():
    """The tests run against the installed package, not the source tree; its stubs were
    built from its copy of the proto, which is the repository's contract, and its retry
    policy is the source tree's (tests/clients.rs writes that one from the contract)."""
    installed = pathlib.Path(arbiter_client.__file__).resolve().parent
    assert installed != SOURCE / "arbiter_client", "the source tree was imported, not the package"
    copy = SOURCE / "arbiter_client" / "proto" / "arbiter" / "v1" / "arbiter.proto"
    contract = SOURCE.parents[1] / "proto" / "arbiter" / "v1" / "arbiter.proto"
    if contract.is_file():
        assert copy.read_bytes() == contract.read_bytes(), (
            "the package's proto is not the contract: "
            "cp proto/arbiter/v1/arbiter.proto examples/python/arbiter_client/proto/arbiter/v1/")
    assert (installed / "proto" / "arbiter" / "v1" / "arbiter.proto").read_bytes() == copy.read_bytes(), (
        "the installed package is older than its sources: pip install ./examples/python")
    source_policy = json.loads((SOURCE / "arbiter_client" / "retry_policy.json").read_text())
    assert client.RETRY_UNARY_CALLS == source_policy, "reinstall: pip install ./examples/python"
    # Every RPC the installed stubs know is the copy's (no grpcio-tools needed to see it).
    service = pb.DESCRIPTOR.services_by_name["ArbiterService"]
    assert {m.name for m in service.methods} == {
        line.split("(")[0].split()[-1] for line in copy.read_text().splitlines()
        if line.strip().startswith("rpc ")}


def test_a_gomoku_game_sends_no_move_after_the_win(scripted):
    service, stub = scripted
    setup = pb.GomokuSetup(rows=6, cols=6, run_length=4,
                           history=[pb.Cell(row=2, col=2), pb.Cell(row=3, col=3)])
    replies = client.play_gomoku(stub, setup, [(2, 3), (3, 4), (2, 4), (2, 5)])
    assert service.gomoku == ["setup", (2, 3), (3, 4)]
    assert [r.moves_played for r in replies] == [2, 3, 4]
    assert replies[-1].verdict == pb.VERDICT_A_WINS
    assert all(d is not None and d <= client.STREAM_DEADLINE + 1 for d in service.deadlines)


def test_a_chess_game_claims_its_draw_after_its_last_move(scripted):
    service, stub = scripted
    replies = client.play_chess(stub, ["Nf3", "Nf6", "Ng1", "Ng8"], claim_draw=True)
    assert service.chess == ["Nf3", "Nf6", "Ng1", "Ng8", "claim_draw"]
    assert [r.draw_claimable for r in replies[:-1]] == [False, False, False, True]
    assert replies[-1].verdict == pb.VERDICT_DRAW and replies[-1].ending == pb.ENDING_CLAIM
    assert all(d is not None and d <= client.STREAM_DEADLINE + 1 for d in service.deadlines)


def test_a_chess_game_sends_nothing_after_its_end(scripted):
    service, stub = scripted
    setup = pb.ChessSetup(history=["e4"])
    replies = client.play_chess(stub, ["e5", "mate", "Nc6"], claim_draw=True, setup=setup)
    assert service.chess == ["setup", "e5", "mate"]
    assert [r.verdict for r in replies] == [pb.VERDICT_PENDING] * 2 + [pb.VERDICT_A_WINS]


def test_a_live_stream_hands_grpcio_one_request_at_a_time():
    """LiveStream's request iterator holds only what send() gave it: a move chosen after
    the last reply, never moves queued up front; close() ends it."""
    stream = client.LiveStream()
    requests = stream.requests
    reply = pb.PlayConnectFourResponse(moves_played=1)
    assert stream.open(iter([reply])) is stream
    first = pb.PlayConnectFourRequest(drop=3)
    stream.send(first)
    assert next(requests) is first
    assert stream.next() is reply
    stream.close()
    assert next(requests, "ended") == "ended"
    assert stream.next() is None


def test_every_call_is_compressed_with_gzip():
    """A server that accepts no gzip refuses every call of both channels, so each request
    was compressed: `server_channel` by its default, `replicas_channel` call by call (with
    the channel's own `compression=`, grpcio's health checks never find a replica ready)."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4),
                         options=[("grpc.compression_enabled_algorithms_bitset", 1)])
    pb_grpc.add_ArbiterServiceServicer_to_server(Scripted(), server)
    address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
    server.start()
    try:
        for make in (client.server_channel, lambda at: client.replicas_channel([at])):
            with make(address) as channel:
                with pytest.raises(grpc.RpcError) as refused:
                    pb_grpc.ArbiterServiceStub(channel).JudgeTicTacToe(
                        pb.JudgeTicTacToeRequest(), timeout=5)
                assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED, refused.value
        with grpc.insecure_channel(address) as plain:
            pb_grpc.ArbiterServiceStub(plain).JudgeTicTacToe(pb.JudgeTicTacToeRequest(), timeout=5)
    finally:
        server.stop(None)
