#!/usr/bin/env python3
"""Interop tests: the real grpcurl binary and a Python grpcio client against a running
Arbiter, and the Python client's package (examples/python) as installed. Run through
tests/interop/run.sh, which builds and starts the server and installs the package
(examples/grpcurl.sh is run, and its replies compared with the docs', by doc_replies.py).

Each check prints `ok` or `FAIL` with the reason; the last line is `N passed, M failed`.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import traceback

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))
from stubs import load_stubs  # noqa: E402

CHECKS = []


def check(function):
    CHECKS.append(function)
    return function


class Context:
    def __init__(self, address, grpcurl):
        self.address = address
        self.grpcurl_path = grpcurl

    def grpcurl(self, *args, data=None, expect_ok=True):
        command = [self.grpcurl_path, "-plaintext", "-emit-defaults"]
        if data is not None:
            command += ["-d", "@"]
        command += [self.address, *args]
        done = subprocess.run(
            command, input=data, capture_output=True, text=True, timeout=60
        )
        if expect_ok and done.returncode != 0:
            raise AssertionError(f"{command} exited {done.returncode}: {done.stderr}")
        return done

    def call_json(self, method, body):
        done = self.grpcurl(f"arbiter.v1.ArbiterService/{method}", data=json.dumps(body))
        return json_documents(done.stdout)

    @property
    def stubs(self):
        return load_stubs()


def json_documents(text):
    """Every JSON document in `text`, one after the other (grpcurl prints one per reply)."""
    decoder = json.JSONDecoder()
    documents, at = [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return documents
        document, at = decoder.raw_decode(text, at)
        documents.append(document)


def equal(actual, expected, what=""):
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def cells(pairs):
    return [{"row": r, "col": c} for r, c in pairs]


OTHELLO_EXAMPLE = ["...B....", "...W....", "...W....", "...W....",
                   "WBB.WWWB", "...B....", "...B....", "...W...."]
OTHELLO_OPENING = ["........", "........", "........", "...WB...",
                   "...BW...", "........", "........", "........"]
C4_EXAMPLE = ["0000000", "0000000", "0000000", "0000000", "0222000", "0111100"]
# A live game with a refused move in it: B wins on row 0.
LIVE_MOVES = [(1, 1), (1, 1), (0, 0), (2, 2), (0, 2), (2, 0), (0, 1)]
LIVE_REPLIES = [
    ("VERDICT_PENDING", [], ["...", ".X.", "..."], 1, ""),
    ("VERDICT_PENDING", [], ["...", ".X.", "..."], 1, "square (1, 1) is taken"),
    ("VERDICT_PENDING", [], ["O..", ".X.", "..."], 2, ""),
    ("VERDICT_PENDING", [], ["O..", ".X.", "..X"], 3, ""),
    ("VERDICT_PENDING", [], ["O.O", ".X.", "..X"], 4, ""),
    ("VERDICT_PENDING", [], ["O.O", ".X.", "X.X"], 5, ""),
    ("VERDICT_B_WINS", [(0, 0), (0, 1), (0, 2)], ["OOO", ".X.", "X.X"], 6, ""),
]


# ---- grpcurl, reflection only -------------------------------------------------------


@check
def grpcurl_list(ctx):
    services = ctx.grpcurl("list").stdout.split()
    equal(sorted(services), [
        "arbiter.v1.ArbiterService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    ], "services")


@check
def grpcurl_describe(ctx):
    text = ctx.grpcurl("describe", "arbiter.v1.ArbiterService").stdout
    for rpc in ["CheckOthelloMove", "ListOthelloMoves", "CheckConnectFour",
                "JudgeTicTacToe", "PlayTicTacToe", "PlayOthello", "PlayConnectFour"]:
        assert f"rpc {rpc} (" in text, f"{rpc} missing from: {text}"
    assert "stream .arbiter.v1.PlayTicTacToeRequest" in text, text


@check
def grpcurl_check_othello_move(ctx):
    [reply] = ctx.call_json("CheckOthelloMove", {
        "board": {"rows": OTHELLO_EXAMPLE}, "row": 4, "col": 3, "color": "B"})
    equal(reply, {"legal": True,
                  "flips": cells([(1, 3), (2, 3), (3, 3), (4, 4), (4, 5), (4, 6)])})
    [reply] = ctx.call_json("CheckOthelloMove", {
        "board": {"rows": OTHELLO_EXAMPLE}, "row": 0, "col": 3, "color": "W"})
    equal(reply, {"legal": False, "flips": []}, "occupied target")


@check
def grpcurl_list_othello_moves(ctx):
    [reply] = ctx.call_json("ListOthelloMoves", {
        "board": {"rows": OTHELLO_OPENING}, "color": "W"})
    equal(reply, {"moves": [
        {"cell": {"row": 2, "col": 4}, "flips": cells([(3, 4)])},
        {"cell": {"row": 3, "col": 5}, "flips": cells([(3, 4)])},
        {"cell": {"row": 4, "col": 2}, "flips": cells([(4, 3)])},
        {"cell": {"row": 5, "col": 3}, "flips": cells([(4, 3)])},
    ]})


@check
def grpcurl_check_connect_four(ctx):
    [reply] = ctx.call_json("CheckConnectFour", {
        "board": {"rows": C4_EXAMPLE}, "row": 5, "col": 4, "player": 1})
    equal(reply, {"wins": True, "run": cells([(5, 1), (5, 2), (5, 3), (5, 4)])})
    [reply] = ctx.call_json("CheckConnectFour", {
        "board": {"rows": C4_EXAMPLE}, "row": 5, "col": 4, "player": 1, "runLength": 5})
    equal(reply, {"wins": False, "run": []}, "run_length 5")


@check
def grpcurl_judge_tic_tac_toe(ctx):
    moves = [{"row": r, "col": c} for r, c in [(0, 0), (2, 0), (1, 1), (2, 1), (2, 2)]]
    [reply] = ctx.call_json("JudgeTicTacToe", {"moves": moves})
    equal(reply, {"verdict": "VERDICT_A_WINS", "line": cells([(0, 0), (1, 1), (2, 2)]),
                  "board": {"rows": ["X..", ".X.", "OOX"]}, "movesPlayed": 5})


@check
def grpcurl_play_tic_tac_toe(ctx):
    body = "\n".join(json.dumps({"row": r, "col": c}) for r, c in LIVE_MOVES)
    done = ctx.grpcurl("arbiter.v1.ArbiterService/PlayTicTacToe", data=body)
    replies = json_documents(done.stdout)
    equal(len(replies), len(LIVE_MOVES), "reply count")
    for i, (reply, expected) in enumerate(zip(replies, LIVE_REPLIES)):
        verdict, line, rows, played, rejected = expected
        ending = "ENDING_UNSPECIFIED" if verdict == "VERDICT_PENDING" else "ENDING_BOARD"
        equal(reply, {"verdict": verdict, "line": cells(line), "board": {"rows": rows},
                      "movesPlayed": played, "rejected": rejected, "clock": None, "ending": ending,
                      "unprompted": False}, f"reply {i}")


# A live Othello game with a forced pass, and a Connect Four game won on a diagonal.
OTHELLO_LIVE = [{"setup": {"board": {"rows": [".WB.WB"]}, "toMove": "B"}},
                {"move": {"row": 0, "col": 0}}, {"move": {"row": 0, "col": 3}},
                {"move": {"row": 0, "col": 3}}, {}]
OTHELLO_LIVE_REPLIES = [
    # verdict, rows, flips, to_move, passed, legal, black, white, played, rejected word
    ("VERDICT_PENDING", [".WB.WB"], [], "B", False, [(0, 0), (0, 3)], 2, 2, 0, ""),
    ("VERDICT_PENDING", ["BBB.WB"], [(0, 1)], "B", True, [(0, 3)], 4, 1, 1, ""),
    ("VERDICT_A_WINS", ["BBBBBB"], [(0, 4)], "", False, [], 6, 0, 2, ""),
    ("VERDICT_A_WINS", ["BBBBBB"], [], "", False, [], 6, 0, 2, "over"),
    ("VERDICT_A_WINS", ["BBBBBB"], [], "", False, [], 6, 0, 2, "no action"),
]
C4_LIVE = [0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3]
C4_LIVE_END = (["0000000", "0000000", "0001000", "0011000", "0112000", "1222002"],
               [(2, 3), (3, 2), (4, 1), (5, 0)])


def check_othello_replies(replies, name_of_verdict, as_tuple):
    equal(len(replies), len(OTHELLO_LIVE_REPLIES), "reply count")
    for i, (reply, expected) in enumerate(zip(replies, OTHELLO_LIVE_REPLIES)):
        got = as_tuple(reply)
        equal((name_of_verdict(got[0]),) + got[1:9], expected[:9], f"reply {i}")
        assert expected[9] in got[9] and (expected[9] == "") == (got[9] == ""), \
            f"reply {i}: rejected {got[9]!r}, expected {expected[9]!r}"


@check
def grpcurl_play_othello(ctx):
    body = "\n".join(json.dumps(m) for m in OTHELLO_LIVE)
    done = ctx.grpcurl("arbiter.v1.ArbiterService/PlayOthello", data=body)

    def as_tuple(r):
        return (r["verdict"], r["board"]["rows"], [(c.get("row", 0), c.get("col", 0)) for c in r["flips"]],
                r["toMove"], r["passed"], [(c.get("row", 0), c.get("col", 0)) for c in r["legalMoves"]],
                r["blackDiscs"], r["whiteDiscs"], r["movesPlayed"], r["rejected"])
    check_othello_replies(json_documents(done.stdout), lambda v: v, as_tuple)


@check
def grpcurl_play_connect_four(ctx):
    body = "\n".join(json.dumps({"drop": c}) for c in C4_LIVE)
    done = ctx.grpcurl("arbiter.v1.ArbiterService/PlayConnectFour", data=body)
    replies = json_documents(done.stdout)
    equal(len(replies), len(C4_LIVE), "reply count")
    equal(replies[0]["placed"], {"row": 5, "col": 0}, "first drop")
    equal(replies[0]["toMove"], 2, "to move")
    rows, run = C4_LIVE_END
    equal(replies[-1], {"verdict": "VERDICT_A_WINS", "board": {"rows": rows},
                        "placed": {"row": 2, "col": 3}, "run": cells(run), "toMove": 0,
                        "movesPlayed": 11, "rejected": "", "clock": None, "ending": "ENDING_BOARD",
                        "unprompted": False}, "winning reply")


@check
def grpcurl_health(ctx):
    for service in ["", "arbiter.v1.ArbiterService"]:
        done = ctx.grpcurl("grpc.health.v1.Health/Check", data=json.dumps({"service": service}))
        equal(json_documents(done.stdout), [{"status": "SERVING"}], repr(service))


@check
def grpcurl_bad_request(ctx):
    body = {"board": {"rows": ["000", "00", "0000"]}, "row": 9, "col": -1, "player": 3}
    done = ctx.grpcurl("arbiter.v1.ArbiterService/CheckConnectFour",
                       data=json.dumps(body), expect_ok=False)
    assert done.returncode != 0, "a bad request succeeded"
    text = done.stdout + done.stderr
    assert "Code: InvalidArgument" in text, text
    detail = next(line for line in text.splitlines() if "google.rpc.BadRequest" in line)
    decoded = json.loads(detail.split("\t", 1)[1])
    equal([v["field"] for v in decoded["fieldViolations"]],
          ["board.rows[1]", "board.rows[2]", "row", "col", "player"], "violations")


# ---- the bulk RPCs and setups with a history, from grpcurl -----------------------------

CONNECT_FOUR_WIN_ROWS = ["0000000", "0000000", "0000000", "0000000", "0222000", "0111100"]


@check
def grpcurl_check_batch(ctx):
    body = {"checks": [
        {"checkOthelloMove": {"board": {"rows": OTHELLO_EXAMPLE}, "row": 4, "col": 3, "color": "B"}},
        {"listOthelloMoves": {"board": {"rows": OTHELLO_OPENING}, "color": "G"}},
        {"checkConnectFour": {"board": {"rows": CONNECT_FOUR_WIN_ROWS}, "row": 5, "col": 4, "player": 1}},
        {"judgeTicTacToe": {"moves": [{"row": 1, "col": 1}, {"row": 1, "col": 1}]}},
        {},
    ]}
    [reply] = ctx.call_json("CheckBatch", body)
    results = reply["results"]
    equal(len(results), 5, "result count")
    equal(results[0]["checkOthelloMove"]["legal"], True, "othello move")
    equal(results[0]["invalid"], [], "othello move violations")
    equal(results[1], {"invalid": [{"field": "color", "description": 'must be "B" or "W", got "G"'}]},
          "a malformed check, in place")
    equal(results[2]["checkConnectFour"]["wins"], True, "connect four")
    equal(results[3], {"invalid": [{"field": "moves[1]", "description": "square (1, 1) is taken"}]},
          "tic-tac-toe")
    equal([v["field"] for v in results[4]["invalid"]], ["check"], "no check set")


@check
def grpcurl_play_many(ctx):
    body = "\n".join(json.dumps(m) for m in [
        {"actions": [{"game": 1, "ticTacToe": {"row": 1, "col": 1}},
                     {"game": 2, "connectFour": {"drop": 3}}]},
        {"actions": [{"game": 1, "ticTacToe": {"row": 0, "col": 0}}, {"game": 2, "close": True},
                     {"game": 2, "close": True}]},
    ])
    done = ctx.grpcurl("arbiter.v1.ArbiterService/PlayMany", data=body)
    first, second = json_documents(done.stdout)
    equal([s["game"] for s in first["states"]], ["1", "2"], "games, in order")
    equal(first["states"][0]["ticTacToe"]["board"]["rows"], ["...", ".X.", "..."], "tic-tac-toe")
    equal(first["states"][1]["connectFour"]["placed"], {"row": 5, "col": 3}, "connect four")
    equal(second["states"][0]["ticTacToe"]["movesPlayed"], 2, "the game went on")
    equal(second["states"][1], {"game": "2", "invalid": []}, "a close")
    equal([v["field"] for v in second["states"][2]["invalid"]], ["game"], "a second close")


@check
def grpcurl_resume_from_history(ctx):
    # The Connect Four game of C4_LIVE, cut before its last drop and resumed elsewhere.
    body = "\n".join(json.dumps(m) for m in [{"setup": {"history": C4_LIVE[:-1]}},
                                              {"drop": C4_LIVE[-1]}])
    done = ctx.grpcurl("arbiter.v1.ArbiterService/PlayConnectFour", data=body)
    setup, last = json_documents(done.stdout)
    equal(setup["movesPlayed"], 10, "the history counted")
    equal(setup["placed"], {"row": 5, "col": 6}, "the history's last drop")
    rows, run = C4_LIVE_END
    equal(last, {"verdict": "VERDICT_A_WINS", "board": {"rows": rows},
                 "placed": {"row": 2, "col": 3}, "run": cells(run), "toMove": 0,
                 "movesPlayed": 11, "rejected": "", "clock": None, "ending": "ENDING_BOARD",
                 "unprompted": False}, "the resumed game's winning reply")


@check
def grpcurl_a_flag_falls(ctx):
    # A game on a half-second clock, X moving at once: grpcurl sends the setup and the
    # move and half-closes; the server announces O's loss on time on its own, then ends
    # the stream.
    body = "\n".join(json.dumps(m) for m in [{"setup": {"timeControl": {"initial": "0.5s"}}},
                                              {"row": 1, "col": 1}])
    done = ctx.grpcurl("arbiter.v1.ArbiterService/PlayTicTacToe", data=body)
    setup, moved, flag = json_documents(done.stdout)
    equal(setup["clock"], {"aLeft": "0.500s", "bLeft": "0.500s"}, "the clock at the start")
    equal((moved["unprompted"], moved["ending"]), (False, "ENDING_UNSPECIFIED"), "the move")
    equal((flag["verdict"], flag["ending"], flag["unprompted"], flag["clock"]["bLeft"]),
          ("VERDICT_A_WINS", "ENDING_TIME", True, "0s"), "the announcement")


# ---- Python grpcio, stubs generated from proto/ -------------------------------------


def py_cells(reply_cells):
    return [(c.row, c.col) for c in reply_cells]


def stub(ctx):
    import grpc

    pb, pb_grpc = ctx.stubs
    channel = grpc.insecure_channel(ctx.address)
    return pb, pb_grpc.ArbiterServiceStub(channel)


@check
def python_check_othello_move(ctx):
    pb, client = stub(ctx)
    reply = client.CheckOthelloMove(pb.CheckOthelloMoveRequest(
        board=pb.Board(rows=OTHELLO_EXAMPLE), row=4, col=3, color="B"), timeout=10)
    equal(reply.legal, True)
    equal(py_cells(reply.flips), [(1, 3), (2, 3), (3, 3), (4, 4), (4, 5), (4, 6)])


@check
def python_list_othello_moves(ctx):
    pb, client = stub(ctx)
    reply = client.ListOthelloMoves(pb.ListOthelloMovesRequest(
        board=pb.Board(rows=OTHELLO_OPENING), color="B"), timeout=10)
    equal([(m.cell.row, m.cell.col) for m in reply.moves], [(2, 3), (3, 2), (4, 5), (5, 4)])
    equal([py_cells(m.flips) for m in reply.moves], [[(3, 3)], [(3, 3)], [(4, 4)], [(4, 4)]])


@check
def python_check_connect_four(ctx):
    pb, client = stub(ctx)
    rows = ["0000000", "0000000", "0002000", "0021000", "0211000", "2111220"]
    reply = client.CheckConnectFour(pb.CheckConnectFourRequest(
        board=pb.Board(rows=rows), row=2, col=3, player=2), timeout=10)
    equal(reply.wins, True)
    equal(py_cells(reply.run), [(2, 3), (3, 2), (4, 1), (5, 0)])


@check
def python_judge_tic_tac_toe(ctx):
    pb, client = stub(ctx)
    draw = [(0, 0), (1, 1), (2, 0), (1, 0), (1, 2), (2, 1), (0, 1), (0, 2), (2, 2)]
    reply = client.JudgeTicTacToe(pb.JudgeTicTacToeRequest(
        moves=[pb.TicTacToeMove(row=r, col=c) for r, c in draw]), timeout=10)
    equal(reply.verdict, pb.VERDICT_DRAW)
    equal(py_cells(reply.line), [])
    equal(list(reply.board.rows), ["XXO", "OOX", "XOX"])
    equal(reply.moves_played, 9)
    reply = client.JudgeTicTacToe(pb.JudgeTicTacToeRequest(), timeout=10)
    equal((reply.verdict, list(reply.board.rows), reply.moves_played),
          (pb.VERDICT_PENDING, ["...", "...", "..."], 0), "no moves")


@check
def python_play_tic_tac_toe(ctx):
    pb, client = stub(ctx)
    requests = (pb.PlayTicTacToeRequest(row=r, col=c) for r, c in LIVE_MOVES)
    replies = list(client.PlayTicTacToe(requests, timeout=30))
    equal(len(replies), len(LIVE_REPLIES), "reply count")
    for i, (reply, expected) in enumerate(zip(replies, LIVE_REPLIES)):
        verdict, line, rows, played, rejected = expected
        equal((pb.Verdict.Name(reply.verdict), py_cells(reply.line), list(reply.board.rows),
               reply.moves_played, reply.rejected),
              (verdict, line, rows, played, rejected), f"reply {i}")


@check
def python_play_othello(ctx):
    pb, client = stub(ctx)

    def request(message):
        if "setup" in message:
            setup = message["setup"]
            return pb.PlayOthelloRequest(setup=pb.OthelloSetup(
                board=pb.Board(rows=setup["board"]["rows"]), to_move=setup["toMove"]))
        if "move" in message:
            return pb.PlayOthelloRequest(move=pb.Cell(**message["move"]))
        return pb.PlayOthelloRequest()

    replies = list(client.PlayOthello((request(m) for m in OTHELLO_LIVE), timeout=30))

    def as_tuple(r):
        return (r.verdict, list(r.board.rows), py_cells(r.flips), r.to_move, r.passed,
                py_cells(r.legal_moves), r.black_discs, r.white_discs, r.moves_played, r.rejected)
    check_othello_replies(replies, pb.Verdict.Name, as_tuple)


@check
def python_play_connect_four(ctx):
    pb, client = stub(ctx)
    requests = [pb.PlayConnectFourRequest(setup=pb.ConnectFourSetup())]
    requests += [pb.PlayConnectFourRequest(drop=c) for c in C4_LIVE]
    replies = list(client.PlayConnectFour(iter(requests), timeout=30))
    equal(len(replies), len(requests), "reply count")
    equal((list(replies[0].board.rows), replies[0].to_move, replies[0].HasField("placed")),
          (["0000000"] * 6, 1, False), "setup reply")
    last = replies[-1]
    rows, run = C4_LIVE_END
    equal((pb.Verdict.Name(last.verdict), list(last.board.rows), (last.placed.row, last.placed.col),
           py_cells(last.run), last.to_move, last.moves_played, last.rejected),
          ("VERDICT_A_WINS", rows, (2, 3), run, 0, 11, ""), "winning reply")
    # A bad setup ends the stream with INVALID_ARGUMENT naming each field.
    import grpc
    from grpc_status import rpc_status
    from google.rpc import error_details_pb2
    try:
        list(client.PlayConnectFour(iter([pb.PlayConnectFourRequest(
            setup=pb.ConnectFourSetup(rows=-1, cols=101))]), timeout=30))
        raise AssertionError("a bad setup was accepted")
    except grpc.RpcError as error:
        equal(error.code(), grpc.StatusCode.INVALID_ARGUMENT, "code")
        status = rpc_status.from_call(error)
        bad = error_details_pb2.BadRequest()
        status.details[0].Unpack(bad)
        equal([v.field for v in bad.field_violations], ["setup.rows", "setup.cols"], "fields")


@check
def python_bad_request_details(ctx):
    import grpc
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    pb, client = stub(ctx)
    try:
        client.JudgeTicTacToe(pb.JudgeTicTacToeRequest(moves=[
            pb.TicTacToeMove(row=0, col=0), pb.TicTacToeMove(row=0, col=0)]), timeout=10)
    except grpc.RpcError as error:
        equal(error.code(), grpc.StatusCode.INVALID_ARGUMENT)
        status = rpc_status.from_call(error)
        assert status is not None, "no grpc-status-details-bin trailer"
        [detail] = status.details
        assert detail.Is(error_details_pb2.BadRequest.DESCRIPTOR), detail.type_url
        bad_request = error_details_pb2.BadRequest()
        detail.Unpack(bad_request)
        equal([(v.field, v.description) for v in bad_request.field_violations],
              [("moves[1]", "square (0, 0) is taken")])
    else:
        raise AssertionError("a bad request succeeded")


@check
def python_large_bad_requests_fit_default_metadata_limits(ctx):
    """The worst bad requests, from a channel with grpcio's default options (8 KiB soft,
    16 KiB hard limit on received metadata): the error arrives as INVALID_ARGUMENT with
    its BadRequest, not as RESOURCE_EXHAUSTED "received metadata size exceeds limit"."""
    import grpc
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    pb, client = stub(ctx)  # grpc.insecure_channel(address), no options
    color_length = (1 << 20) - 1024  # just under the server's 1 MiB request limit
    rows = [f"board.rows[{i}]" for i in range(10)]
    cases = [
        ("a color of about 1 MiB",
         pb.CheckOthelloMoveRequest(board=pb.Board(rows=["..."]), color="\x01" * color_length),
         ["color"], f"({color_length} bytes)"),
        ("100 rows of 150 cells",
         pb.CheckOthelloMoveRequest(board=pb.Board(rows=["." * 150] * 100), color="B"),
         rows + ["board.rows"], "... and 90 more violations not listed"),
    ]
    for what, request, fields, last in cases:
        try:
            client.CheckOthelloMove(request, timeout=30)
        except grpc.RpcError as error:
            equal(error.code(), grpc.StatusCode.INVALID_ARGUMENT,
                  f"{what} ({error.details()[:200]!r})")
            trailers = sum(len(k) + len(v) for k, v in error.trailing_metadata())
            assert trailers < 8192, f"{what}: {trailers} bytes of trailing metadata"
            status = rpc_status.from_call(error)
            assert status is not None, f"{what}: no grpc-status-details-bin trailer"
            [detail] = status.details
            bad_request = error_details_pb2.BadRequest()
            assert detail.Unpack(bad_request), detail.type_url
            violations = [(v.field, v.description) for v in bad_request.field_violations]
            equal([field for field, _ in violations], fields, f"{what}: fields")
            assert violations[-1][1].endswith(last), f"{what}: {violations[-1]!r}"
            print(f"     {what}: {trailers} bytes of trailing metadata (decoded)", flush=True)
        else:
            raise AssertionError(f"{what}: a bad request succeeded")


@check
def python_check_batch(ctx):
    pb, client = stub(ctx)
    checks = [
        pb.Check(check_othello_move=pb.CheckOthelloMoveRequest(
            board=pb.Board(rows=OTHELLO_EXAMPLE), row=4, col=3, color="B")),
        pb.Check(list_othello_moves=pb.ListOthelloMovesRequest(
            board=pb.Board(rows=OTHELLO_OPENING), color="B")),
        pb.Check(check_connect_four=pb.CheckConnectFourRequest(
            board=pb.Board(rows=["000", "00"]), row=9, col=0, player=1)),
        pb.Check(judge_tic_tac_toe=pb.JudgeTicTacToeRequest(
            moves=[pb.TicTacToeMove(row=0, col=0)])),
    ]
    reply = client.CheckBatch(pb.CheckBatchRequest(checks=checks), timeout=10)
    equal(len(reply.results), 4)
    equal(reply.results[0].WhichOneof("result"), "check_othello_move")
    single = client.CheckOthelloMove(checks[0].check_othello_move, timeout=10)
    equal(reply.results[0].check_othello_move, single, "as its own RPC answers it")
    equal([(m.cell.row, m.cell.col) for m in reply.results[1].list_othello_moves.moves],
          [(2, 3), (3, 2), (4, 5), (5, 4)])
    equal(reply.results[2].WhichOneof("result"), None, "a malformed check has no result")
    equal([v.field for v in reply.results[2].invalid], ["board.rows[1]", "row"])
    equal(reply.results[3].judge_tic_tac_toe.moves_played, 1)
    import grpc
    try:
        client.CheckBatch(pb.CheckBatchRequest(checks=[pb.Check()] * 10_001), timeout=10)
    except grpc.RpcError as error:
        equal(error.code(), grpc.StatusCode.INVALID_ARGUMENT, "10,001 checks")
    else:
        raise AssertionError("10,001 checks were answered")


@check
def python_play_many(ctx):
    pb, client = stub(ctx)
    messages = [
        pb.PlayManyRequest(actions=[
            pb.GameAction(game=10, othello=pb.PlayOthelloRequest(move=pb.Cell(row=2, col=3))),
            pb.GameAction(game=20, tic_tac_toe=pb.PlayTicTacToeRequest(row=1, col=1)),
            pb.GameAction(game=30, connect_four=pb.PlayConnectFourRequest(
                setup=pb.ConnectFourSetup(rows=4, cols=4, history=[0, 1, 0, 1, 0, 1]))),
        ]),
        pb.PlayManyRequest(actions=[
            pb.GameAction(game=30, connect_four=pb.PlayConnectFourRequest(drop=0)),
            pb.GameAction(game=20, othello=pb.PlayOthelloRequest(move=pb.Cell(row=0, col=0))),
            pb.GameAction(game=10, close=True),
        ]),
        pb.PlayManyRequest(),
    ]
    replies = list(client.PlayMany(iter(messages), timeout=30))
    equal(len(replies), 3, "one reply per message")
    first, second, third = replies
    equal([s.game for s in first.states], [10, 20, 30])
    equal(first.states[0].othello.moves_played, 1)
    equal(first.states[2].connect_four.moves_played, 6, "the history counted")
    equal(second.states[0].connect_four.verdict, pb.VERDICT_A_WINS, "four in column 0")
    equal([v.field for v in second.states[1].invalid], ["action"], "another kind than the game's")
    equal((list(second.states[2].invalid), second.states[2].WhichOneof("state")), ([], None), "close")
    equal(len(third.states), 0, "an empty message, an empty reply")


@check
def python_resume_from_history(ctx):
    pb, client = stub(ctx)
    played = [(0, 0), (1, 1), (2, 0)]
    rest = [(1, 0), (1, 2), (2, 1), (0, 1), (0, 2), (2, 2)]
    whole = list(client.PlayTicTacToe(
        (pb.PlayTicTacToeRequest(row=r, col=c) for r, c in played + rest), timeout=30))
    history = pb.TicTacToeSetup(history=[pb.TicTacToeMove(row=r, col=c) for r, c in played])
    resumed = list(client.PlayTicTacToe(
        iter([pb.PlayTicTacToeRequest(setup=history)]
             + [pb.PlayTicTacToeRequest(row=r, col=c) for r, c in rest]), timeout=30))
    equal(resumed[0], whole[len(played) - 1], "the setup's reply is the last played move's")
    equal(resumed[1:], whole[len(played):], "the game goes on as it would have")
    equal(resumed[-1].verdict, pb.VERDICT_DRAW)
def python_compressed_channel(ctx):
    """A channel that compresses every call, as one line of grpcio configuration does
    (gzip, then deflate: what grpcio offers): the 100x100 board, a live game and health
    are answered as they are uncompressed. A server without the codecs refuses each with
    UNIMPLEMENTED "Content is compressed with `gzip` which isn't supported"."""
    import grpc

    pb, pb_grpc = ctx.stubs
    service = b"arbiter.v1.ArbiterService"
    # grpc.health.v1 by hand, so as not to need its package: HealthCheckRequest
    # {service}, and HealthCheckResponse {status: SERVING} is field 1 = 1.
    health_request = b"\x0a" + bytes([len(service)]) + service
    for compression in (grpc.Compression.Gzip, grpc.Compression.Deflate):
        what = str(compression)
        channel = grpc.insecure_channel(ctx.address, compression=compression)
        client = pb_grpc.ArbiterServiceStub(channel)
        reply = client.CheckConnectFour(pb.CheckConnectFourRequest(
            board=pb.Board(rows=["1" * 100] * 100), row=0, col=0, player=1), timeout=10)
        equal((reply.wins, len(reply.run)), (True, 100), what)
        requests = (pb.PlayTicTacToeRequest(row=r, col=c) for r, c in LIVE_MOVES)
        replies = list(client.PlayTicTacToe(requests, timeout=30))
        equal([(pb.Verdict.Name(r.verdict), r.moves_played, r.rejected) for r in replies],
              [(verdict, played, rejected)
               for verdict, _, _, played, rejected in LIVE_REPLIES], what)
        health = channel.unary_unary("/grpc.health.v1.Health/Check")(health_request, timeout=10)
        equal(health, b"\x08\x01", f"{what}: health")
        channel.close()
    # Compression chosen per call, on a plain channel.
    _, client = stub(ctx)
    reply = client.CheckConnectFour(pb.CheckConnectFourRequest(
        board=pb.Board(rows=["1" * 100] * 100), row=0, col=0, player=1), timeout=10,
        compression=grpc.Compression.Gzip)
    equal(reply.wins, True, "per call")


# The installed package, run as `python -m arbiter_client ADDRESS` from a directory outside
# the checkout, with grpcio-tools out of reach (an import of grpc_tools fails): its stubs
# were generated when the package was built, and its retry policy is its own file.
RUN_INSTALLED_CLIENT = """
import runpy, sys
sys.modules["grpc_tools"] = None
import arbiter_client
print("package:", arbiter_client.__file__, flush=True)
sys.argv = ["arbiter_client", sys.argv[1]]
runpy.run_module("arbiter_client", run_name="__main__", alter_sys=True)
"""


@check
def python_example_client(ctx):
    with tempfile.TemporaryDirectory(prefix="elsewhere-") as elsewhere:
        done = subprocess.run([sys.executable, "-c", RUN_INSTALLED_CLIENT, ctx.address],
                              cwd=elsewhere, capture_output=True, text=True, timeout=120)
    equal(done.returncode, 0, f"python -m arbiter_client: {done.stderr[-2000:]}")
    package = done.stdout.split("package: ", 1)[1].split("\n", 1)[0]
    assert not pathlib.Path(package).resolve().is_relative_to(REPO / "examples" / "python"), (
        f"arbiter_client was imported from its sources ({package}), not the installed package")
    for expected in ["CheckOthelloMove: legal=True", "CheckConnectFour: wins=True",
                     "JudgeTicTacToe: VERDICT_A_WINS", "CheckConnectFour (bad): INVALID_ARGUMENT",
                     "rejected: square (1, 1) is taken", "VERDICT_B_WINS",
                     "to_move='B' passed=True legal=[(0, 3)]",
                     "PlayConnectFour: VERDICT_A_WINS after 11 drops, run=[(2, 3), (3, 2), (4, 1), (5, 0)]",
                     "CheckBatch [0]: check_othello_move",
                     'CheckBatch [1]: invalid (color: must be "B" or "W", got "G")',
                     "PlayMany: 12 replies; games 1-3 after 11 drops: ['VERDICT_A_WINS', 'VERDICT_A_WINS', 'VERDICT_A_WINS']",
                     "Resumable PlayConnectFour: VERDICT_A_WINS after 11 drops",
                     "PlayGomoku: VERDICT_A_WINS",
                     "CheckChessMove: legal=True uci=d8h4 san=Qh4# CHESS_TERMINATION_CHECKMATE",
                     "ListChessMoves: ['Kd1', 'Kd2', 'Kf1', 'Kf2', 'e3', 'e4']",
                     "JudgeChessGame: VERDICT_A_WINS by CHESS_TERMINATION_CHECKMATE",
                     "PlayChess: Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8, then a claim: VERDICT_DRAW by "
                     "CHESS_TERMINATION_THREEFOLD_REPETITION (ENDING_CLAIM)",
                     "every answer was the one the rules give"]:
        assert expected in done.stdout, f"{expected!r} not in {done.stdout}"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--address", required=True)
    parser.add_argument("--grpcurl", default="grpcurl")
    args = parser.parse_args()
    ctx = Context(args.address, args.grpcurl)
    passed = failed = 0
    for function in CHECKS:
        try:
            function(ctx)
        except Exception:  # noqa: BLE001 - every failure is reported, then counted
            failed += 1
            print(f"FAIL {function.__name__}\n{traceback.format_exc()}", flush=True)
        else:
            passed += 1
            print(f"ok   {function.__name__}", flush=True)
    print(f"interop: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
