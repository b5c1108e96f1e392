"""A Python client for Arbiter: every RPC of the contract once, checked against the answers
the rules give: live Tic-Tac-Toe, Othello, Connect Four, Gomoku and chess games (chess's
ending with a draw claimed by threefold repetition), many checks in one CheckBatch call,
many games in one PlayMany stream, and a live game that survives the loss of its stream by
resuming from its history. Every call is compressed with gzip (the channel's
`compression`) and has a deadline (`timeout=`: DEADLINE for a one-shot call,
STREAM_DEADLINE for a live game's whole stream), and the channels retry the one-shot RPCs on
UNAVAILABLE by the service config's retry policy (RETRY_UNARY_CALLS, read from the
package's retry_policy.json). It exits non-zero if an answer is not the one the rules give.

Install the package and run it against a server on the default address (start one with
`cargo run --release`), from anywhere:

    python3 -m venv .venv && .venv/bin/pip install ./examples/python
    .venv/bin/python -m arbiter_client localhost:50051

(a virtual environment: Debian's Python refuses a plain `pip install`; `arbiter-client
HOST:PORT` is the same). Pass several replicas' addresses separated by commas
(`host:port,host:port,...`) to balance the calls over them from the client
(`replicas_channel`). The stubs (`arbiter_client.arbiter_pb2`, `arbiter_pb2_grpc`) were
generated from the contract when the package was built; nothing is generated at run time.

tests/test_client.py (pytest, no server needed) holds the deadlines, the retries, the
resume loop and the ends of a Gomoku and a chess game against a scripted server:
`.venv/bin/pip install ./examples/python -r examples/python/requirements.txt &&
.venv/bin/python -m pytest examples/python`.
"""

import collections
import importlib.resources
import json
import queue
import sys

import grpc
from google.protobuf import duration_pb2
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from . import arbiter_pb2 as pb
from . import arbiter_pb2_grpc as pb_grpc

SERVICE = "arbiter.v1.ArbiterService"

# How long a one-shot call may take (each attempt of it, and its retries within it), and
# how long a live game's whole stream may; passed as `timeout=` on every call, which
# grpcio sends as the call's deadline (`grpc-timeout`).
DEADLINE = 10
STREAM_DEADLINE = 30

# The standard gRPC retry policy, in the service config, for the one-shot RPCs: they are
# all pure (the same request always gets the same answer, and nothing is kept), so a call
# that failed UNAVAILABLE (a replica that died or was shutting down under it, a
# connection refused, a proxy's 502) is safe to send again, here up to 4 attempts in all
# within the call's deadline. The live-game streams are left out on purpose: a lost game
# is resumed from its history instead (play_connect_four_resumably). The policy is the
# package's retry_policy.json, the `methodConfig` entry every Arbiter client reads, written
# from the contract (tests/clients.rs in the repository).
RETRY_UNARY_CALLS = json.loads(
    importlib.resources.files(__package__).joinpath("retry_policy.json").read_text(encoding="utf-8"))


def server_channel(address):
    """A channel to one server (or to a proxy in front of replicas), with the retry
    policy, every request compressed with gzip. `grpc.enable_retries` is on by default in
    recent grpcio; said here anyway."""
    service_config = {"methodConfig": [RETRY_UNARY_CALLS]}
    return grpc.insecure_channel(
        address,
        compression=grpc.Compression.Gzip,
        options=[
            ("grpc.service_config", json.dumps(service_config)),
            ("grpc.enable_retries", 1),
        ],
    )


def replicas_channel(addresses):
    """A channel that balances calls over several replicas without a proxy: round robin,
    and client-side health checking, so that a replica draining for a deploy (its health
    says NOT_SERVING) leaves the rotation before it stops; and the retry policy, so that
    a call caught by a replica that dies is sent again to another. Requests are
    compressed with gzip, call by call (`GzipEveryCall`): with the channel's own
    `compression=`, grpcio's health checks never find a replica ready.

    `grpc.default_authority` is required: without it grpcio sends the whole address
    list as `:authority`, which the server's HTTP/2 layer refuses as malformed, and every
    call fails (INTERNAL, or UNAVAILABLE "health check call failed")."""
    service_config = {
        "loadBalancingConfig": [{"round_robin": {}}],
        "healthCheckConfig": {"serviceName": SERVICE},
        "methodConfig": [RETRY_UNARY_CALLS],
    }
    channel = grpc.insecure_channel(
        "ipv4:" + ",".join(addresses),
        options=[
            ("grpc.service_config", json.dumps(service_config)),
            ("grpc.enable_retries", 1),
            ("grpc.default_authority", "arbiter"),
        ],
    )
    return grpc.intercept_channel(channel, GzipEveryCall())


class _CallDetails(collections.namedtuple(
        "_CallDetails", ("method", "timeout", "metadata", "credentials", "wait_for_ready",
                         "compression")), grpc.ClientCallDetails):
    pass


class GzipEveryCall(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor,
                    grpc.StreamUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
    """Compresses every call's requests with gzip, for a channel that cannot compress by
    default (`replicas_channel`)."""

    @staticmethod
    def _gzip(details):
        return _CallDetails(details.method, details.timeout, details.metadata,
                            details.credentials, details.wait_for_ready, grpc.Compression.Gzip)

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._gzip(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._gzip(details), request)

    def intercept_stream_unary(self, continuation, details, requests):
        return continuation(self._gzip(details), requests)

    def intercept_stream_stream(self, continuation, details, requests):
        return continuation(self._gzip(details), requests)


def expect(holds, what):
    """Fails the example (exit status 1) unless `holds`: an answer the rules do not give."""
    if not holds:
        raise SystemExit(f"unexpected answer: {what}")


def main(address):
    """Calls every RPC of the contract on the server (or replicas) at `address`; raises
    SystemExit on an answer the rules do not give."""
    if "," in address:
        channel = replicas_channel(address.split(","))
    else:
        channel = server_channel(address)
    with channel:
        stub = pb_grpc.ArbiterServiceStub(channel)

        # Othello: is black's disc at (4, 3) legal, and what does it turn over?
        othello_board = pb.Board(
            rows=["...B....", "...W....", "...W....", "...W....",
                  "WBB.WWWB", "...B....", "...B....", "...W...."]
        )
        reply = stub.CheckOthelloMove(
            pb.CheckOthelloMoveRequest(board=othello_board, row=4, col=3, color="B"),
            timeout=DEADLINE,
        )
        flips = [(c.row, c.col) for c in reply.flips]
        print(f"CheckOthelloMove: legal={reply.legal} flips={flips}")
        expect(reply.legal and flips == [(1, 3), (2, 3), (3, 3), (4, 4), (4, 5), (4, 6)],
               "black at (4, 3) turns over three discs up and three to the right")

        # Othello: every legal move for white in the opening position.
        opening = pb.Board(
            rows=["........", "........", "........", "...WB...",
                  "...BW...", "........", "........", "........"]
        )
        reply = stub.ListOthelloMoves(pb.ListOthelloMovesRequest(board=opening, color="W"),
                                      timeout=DEADLINE)
        cells = [(m.cell.row, m.cell.col) for m in reply.moves]
        print(f"ListOthelloMoves: {cells}")
        expect(cells == [(2, 4), (3, 5), (4, 2), (5, 3)], "white's four opening moves, row-major")

        # Connect Four: does player 1's piece at (5, 4) win? run_length 0 means 4.
        c4_board = pb.Board(
            rows=["0000000", "0000000", "0000000", "0000000", "0222000", "0111100"]
        )
        reply = stub.CheckConnectFour(
            pb.CheckConnectFourRequest(board=c4_board, row=5, col=4, player=1),
            timeout=DEADLINE,
        )
        run = [(c.row, c.col) for c in reply.run]
        print(f"CheckConnectFour: wins={reply.wins} run={run}")
        expect(reply.wins and run == [(5, 1), (5, 2), (5, 3), (5, 4)],
               "1 1 1 1 on the bottom row wins")

        # Tic-Tac-Toe: judge a whole game, A (X) moving first.
        moves = [pb.TicTacToeMove(row=r, col=c) for r, c in [(0, 0), (2, 0), (1, 1), (2, 1), (2, 2)]]
        reply = stub.JudgeTicTacToe(pb.JudgeTicTacToeRequest(moves=moves), timeout=DEADLINE)
        print(
            f"JudgeTicTacToe: {pb.Verdict.Name(reply.verdict)} "
            f"board={list(reply.board.rows)} moves_played={reply.moves_played}"
        )
        expect(reply.verdict == pb.VERDICT_A_WINS and list(reply.board.rows) == ["X..", ".X.", "OOX"]
               and reply.moves_played == 5, "A wins on the diagonal")

        # Gomoku: may a black stone go at (1, 3), and does it make five in a row?
        # run_length 0 means 5; exact=False (freestyle): an overline wins too.
        gomoku_board = pb.Board(rows=["..W.W..", ".BB.BB.", "...W.W."])
        reply = stub.CheckGomokuMove(
            pb.CheckGomokuMoveRequest(board=gomoku_board, row=1, col=3, color="B"),
            timeout=DEADLINE,
        )
        run = [(c.row, c.col) for c in reply.run]
        print(f"CheckGomokuMove: legal={reply.legal} wins={reply.wins} run={run}")
        expect(reply.legal and reply.wins and run == [(1, 1), (1, 2), (1, 3), (1, 4), (1, 5)],
               "B B B B B on row 1 wins")

        # A bad request: the status carries a google.rpc.BadRequest with one violation
        # per problem, each naming its field.
        try:
            stub.CheckConnectFour(
                pb.CheckConnectFourRequest(board=c4_board, row=9, col=4, player=3),
                timeout=DEADLINE,
            )
            expect(False, "a row off the board and a bad player were accepted")
        except grpc.RpcError as error:
            print(f"CheckConnectFour (bad): {error.code().name}")
            status = rpc_status.from_call(error)
            fields = []
            for detail in status.details if status else []:
                if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                    bad_request = error_details_pb2.BadRequest()
                    detail.Unpack(bad_request)
                    for violation in bad_request.field_violations:
                        print(f"  {violation.field}: {violation.description}")
                        fields.append(violation.field)
            expect(error.code() == grpc.StatusCode.INVALID_ARGUMENT and fields == ["row", "player"],
                   f"INVALID_ARGUMENT naming row and player, got {error.code().name} {fields}")

        # A live game on the PlayTicTacToe stream, played as a game server or a bot plays
        # one: send a move, read its reply, then choose the next (LiveStream). The second
        # move is refused (the square is taken) and the game goes on.
        live_moves = [(1, 1), (1, 1), (0, 0), (2, 2), (0, 2), (2, 0), (0, 1)]
        game = LiveStream()
        game.open(stub.PlayTicTacToe(game.requests, timeout=STREAM_DEADLINE))
        try:
            rejected = 0
            for r, c in live_moves:
                game.send(pb.PlayTicTacToeRequest(row=r, col=c))
                reply = game.next()
                expect(reply is not None, "a reply to every move")
                rejected += bool(reply.rejected)
                note = f" rejected: {reply.rejected}" if reply.rejected else ""
                print(
                    f"PlayTicTacToe ({r}, {c}): {pb.Verdict.Name(reply.verdict)} "
                    f"board={list(reply.board.rows)} moves_played={reply.moves_played}{note}"
                )
        finally:
            game.close()
        expect(game.next() is None, "the stream ends after the client's")
        expect(rejected == 1 and reply.verdict == pb.VERDICT_B_WINS
               and [(c.row, c.col) for c in reply.line] == [(0, 0), (0, 1), (0, 2)],
               "one taken square, then B completes the top row")

        # A live Othello game from a custom start: after Black's first disc White has no
        # legal move, so White passes (`passed`) and Black plays again, then wins. The
        # messages are known up front here, so they are sent as one request iterator.
        othello_messages = [
            pb.PlayOthelloRequest(setup=pb.OthelloSetup(board=pb.Board(rows=[".WB.WB"]), to_move="B")),
            pb.PlayOthelloRequest(move=pb.Cell(row=0, col=0)),
            pb.PlayOthelloRequest(move=pb.Cell(row=0, col=3)),
        ]
        replies = []
        for reply in stub.PlayOthello(iter(othello_messages), timeout=STREAM_DEADLINE):
            legal = [(c.row, c.col) for c in reply.legal_moves]
            print(
                f"PlayOthello: {pb.Verdict.Name(reply.verdict)} board={list(reply.board.rows)} "
                f"to_move={reply.to_move!r} passed={reply.passed} legal={legal} "
                f"discs={reply.black_discs}/{reply.white_discs}"
            )
            replies.append(reply)
        expect(len(replies) == 3 and replies[1].passed and replies[1].to_move == "B"
               and replies[2].verdict == pb.VERDICT_A_WINS
               and list(replies[2].board.rows) == ["BBBBBB"],
               "White passes, then Black fills the board and wins")

        # A live Connect Four game on the default 6x7 board: pieces fall to the lowest
        # empty cell; player 1 wins on a diagonal with the last drop.
        drops = [0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3]
        replies = list(stub.PlayConnectFour((pb.PlayConnectFourRequest(drop=c) for c in drops),
                                            timeout=STREAM_DEADLINE))
        last = replies[-1]
        run = [(c.row, c.col) for c in last.run]
        print(
            f"PlayConnectFour: {pb.Verdict.Name(last.verdict)} after {last.moves_played} drops, "
            f"run={run}"
        )
        expect(last.verdict == pb.VERDICT_A_WINS and last.moves_played == 11
               and run == [(2, 3), (3, 2), (4, 1), (5, 0)], "player 1 wins on a diagonal")

        # A live Gomoku game on a 6x6 board, four in a row to win, starting after four
        # stones (the setup's history, Black first). A stone on a taken cell is refused
        # and the game goes on; Black wins on row 2.
        setup = pb.GomokuSetup(rows=6, cols=6, run_length=4, history=[
            pb.Cell(row=r, col=c) for r, c in [(2, 2), (3, 3), (2, 3), (3, 4)]])
        replies = play_gomoku(stub, setup, [(2, 2), (2, 4), (2, 5), (2, 1)])
        for reply in replies[1:]:
            note = f" rejected: {reply.rejected}" if reply.rejected else ""
            print(f"PlayGomoku: {pb.Verdict.Name(reply.verdict)} board={list(reply.board.rows)} "
                  f"to_move={reply.to_move!r}{note}")
        last = replies[-1]
        run = [(c.row, c.col) for c in last.run]
        expect(len(replies) == 5 and replies[1].rejected and last.verdict == pb.VERDICT_A_WINS
               and last.moves_played == 7 and run == [(2, 1), (2, 2), (2, 3), (2, 4)],
               "a taken cell refused, then Black makes four on row 2")

        # Chess: is Black's Qh4, in SAN, legal after 1. f3 e5 2. g4? It mates (the fool's
        # mate). The reply gives the move in UCI and SAN, the position after it and what
        # it ends the game by.
        reply = stub.CheckChessMove(pb.CheckChessMoveRequest(
            fen="rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2", move="Qh4"),
            timeout=DEADLINE)
        print(f"CheckChessMove: legal={reply.legal} uci={reply.move.uci} san={reply.move.san} "
              f"{pb.ChessTermination.Name(reply.termination)}")
        expect(reply.legal and (reply.move.uci, reply.move.san) == ("d8h4", "Qh4#") and reply.check
               and reply.fen == "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
               and reply.termination == pb.CHESS_TERMINATION_CHECKMATE,
               "Qh4 is d8h4 and mates")

        # Chess: every legal move of a king and pawn ending, sorted by UCI.
        reply = stub.ListChessMoves(pb.ListChessMovesRequest(fen="4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"),
                                    timeout=DEADLINE)
        sans = [m.san for m in reply.moves]
        print(f"ListChessMoves: {sans}")
        expect([m.uci for m in reply.moves] == ["e1d1", "e1d2", "e1f1", "e1f2", "e2e3", "e2e4"]
               and sans == ["Kd1", "Kd2", "Kf1", "Kf2", "e3", "e4"] and not reply.check
               and reply.termination == pb.CHESS_TERMINATION_UNSPECIFIED,
               "four king moves and two pawn moves")

        # Chess: a whole game judged, the scholar's mate.
        reply = stub.JudgeChessGame(pb.JudgeChessGameRequest(
            moves=["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7"]), timeout=DEADLINE)
        print(f"JudgeChessGame: {pb.Verdict.Name(reply.verdict)} by "
              f"{pb.ChessTermination.Name(reply.termination)}, {' '.join(reply.san)}")
        expect(reply.verdict == pb.VERDICT_A_WINS
               and reply.termination == pb.CHESS_TERMINATION_CHECKMATE
               and reply.moves_played == 7 and list(reply.san)[-1] == "Qxf7#"
               and reply.fen == "r1bqkb1r/pppp1Qpp/2n2n2/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 4",
               "White mates on f7")

        # A live chess game on PlayChess: the knights go out and back twice, so the start
        # position stands for the third time; Black may claim a draw then, and not before,
        # and the claim ends the game (threefold repetition).
        knights = ["Nf3", "Nf6", "Ng1", "Ng8"] * 2
        replies = play_chess(stub, knights, claim_draw=True)
        claimable = [r.draw_claimable for r in replies[:-1]]
        last = replies[-1]
        print(f"PlayChess: {' '.join(r.move.san for r in replies[:-1])}, then a claim: "
              f"{pb.Verdict.Name(last.verdict)} by {pb.ChessTermination.Name(last.termination)} "
              f"({pb.Ending.Name(last.ending)})")
        expect(len(replies) == 9 and not any(r.rejected for r in replies)
               and claimable == [False] * 7 + [True]
               and last.verdict == pb.VERDICT_DRAW
               and last.termination == pb.CHESS_TERMINATION_THREEFOLD_REPETITION
               and last.ending == pb.ENDING_CLAIM and last.moves_played == 8 and last.to_move == "",
               "a draw claimed once the start position has stood three times")

        # Many checks in one call: each answered as its own RPC would answer it, a
        # malformed one (here a colour that is not "B" or "W") in place.
        batch = stub.CheckBatch(pb.CheckBatchRequest(checks=[
            pb.Check(check_othello_move=pb.CheckOthelloMoveRequest(
                board=othello_board, row=4, col=3, color="B")),
            pb.Check(list_othello_moves=pb.ListOthelloMovesRequest(board=othello_board, color="G")),
            pb.Check(judge_tic_tac_toe=pb.JudgeTicTacToeRequest(
                moves=[pb.TicTacToeMove(row=r, col=c) for r, c in [(0, 0), (1, 1)]])),
        ]), timeout=DEADLINE)
        for i, result in enumerate(batch.results):
            if result.invalid:
                problems = "; ".join(f"{v.field}: {v.description}" for v in result.invalid)
                print(f"CheckBatch [{i}]: invalid ({problems})")
            else:
                print(f"CheckBatch [{i}]: {result.WhichOneof('result')}")
        expect([r.WhichOneof("result") for r in batch.results]
               == ["check_othello_move", None, "judge_tic_tac_toe"]
               and [v.field for v in batch.results[1].invalid] == ["color"]
               and batch.results[0].check_othello_move.legal,
               "three results in order, the second invalid on its colour")

        # Many live games in one stream, numbered by the client: each message carries
        # one action per game, and each reply one state per action, in order.
        messages = [
            pb.PlayManyRequest(actions=[
                pb.GameAction(game=game, connect_four=pb.PlayConnectFourRequest(drop=drop))
                for game in range(1, 4)
            ])
            for drop in drops
        ]
        messages.append(pb.PlayManyRequest(actions=[pb.GameAction(game=g, close=True) for g in range(1, 4)]))
        replies = list(stub.PlayMany(iter(messages), timeout=STREAM_DEADLINE))
        verdicts = [pb.Verdict.Name(s.connect_four.verdict) for s in replies[-2].states]
        print(f"PlayMany: {len(replies)} replies; games 1-3 after 11 drops: {verdicts}")
        expect(len(replies) == 12 and verdicts == ["VERDICT_A_WINS"] * 3,
               "three games, each won by player 1")

        # A live game that outlives its stream: keep the moves applied so far, and when
        # the stream is lost (UNAVAILABLE: a server draining for a deploy, a dropped
        # connection; or reset by a proxy whose replica died), open a new stream, on any
        # replica, whose setup replays them.
        last = play_connect_four_resumably(stub, drops)
        print(f"Resumable PlayConnectFour: {pb.Verdict.Name(last.verdict)} after "
              f"{last.moves_played} drops")
        expect(last.verdict == pb.VERDICT_A_WINS and last.moves_played == 11,
               "the resumable game is won by player 1")

        # A game on the clock: half a second each. X moves at once; O does not, and
        # the server announces, on its own, that O ran out of time (a reply marked
        # `unprompted`, the clock as it stood at the deadline). Sending only the setup
        # and the move is enough: the stream stays open until the clock has run out.
        clocked = pb.PlayTicTacToeRequest(setup=pb.TicTacToeSetup(
            time_control=pb.TimeControl(initial=duration_pb2.Duration(nanos=500_000_000))))
        replies = list(stub.PlayTicTacToe(iter([clocked, pb.PlayTicTacToeRequest(row=1, col=1)]),
                                          timeout=STREAM_DEADLINE))
        flag = replies[-1]
        left = (flag.clock.a_left.ToTimedelta().total_seconds(),
                flag.clock.b_left.ToTimedelta().total_seconds())
        print(f"On the clock: {pb.Verdict.Name(flag.verdict)} by "
              f"{pb.Ending.Name(flag.ending)}, unprompted {flag.unprompted}, time left {left}")
        if not (len(replies) == 3 and flag.unprompted and flag.ending == pb.ENDING_TIME
                and flag.verdict == pb.VERDICT_A_WINS and left[1] == 0):
            raise SystemExit(f"unexpected replies on the clock: {replies}")
    print("every answer was the one the rules give")


_CLOSE = object()


class LiveStream:
    """A bidirectional stream driven one message at a time, as a game server or a bot
    plays: `send` a move, read its reply with `next`, choose the next move. The call reads
    its requests from `requests`, a queue that grpcio reads on its own thread; `close`
    half-closes the stream (always call it, in a `finally`, so that grpcio's thread is
    released).

        game = LiveStream()
        game.open(stub.PlayConnectFour(game.requests, timeout=STREAM_DEADLINE))
        try:
            game.send(request)
            reply = game.next()   # None once the server has ended the stream
        finally:
            game.close()

    Give the call a deadline (`timeout`): a stream whose server never answers then fails
    DEADLINE_EXCEEDED instead of waiting for ever."""

    def __init__(self):
        self._queue = queue.Queue()
        # iter(get, _CLOSE): what send() puts, until close() puts the sentinel.
        self.requests = iter(self._queue.get, _CLOSE)
        self._call = iter(())

    def open(self, call):
        """Takes the stream's call, made with `self.requests` as its request iterator."""
        self._call = call
        return self

    def send(self, request):
        self._queue.put(request)

    def next(self):
        """The next reply, None once the stream has ended; raises the grpc.RpcError the
        stream failed with, if it did."""
        return next(self._call, None)

    def close(self):
        self._queue.put(_CLOSE)


def stream_lost(error):
    """Whether a live game's stream that failed with `error` is resumed on a new stream:

    - UNAVAILABLE: a server shutting down ends its games so ("server shutting down:
      resume the game with a setup and its history"), and so does a lost connection
      (a replica killed, a node lost);
    - INTERNAL with RST_STREAM in its details: a proxy such as nginx resets the client's
      stream (RST_STREAM, INTERNAL_ERROR) when the replica behind it dies, and grpcio
      reports that as INTERNAL "... Received RST_STREAM with error code 2".

    A resume replays the moves the server applied, on a new stream, which applies
    nothing the game had not already applied: it is always safe, so when in doubt
    resume. Any other status is the server's answer to the game (INVALID_ARGUMENT,
    RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, ...) and resuming would not change it."""
    code = error.code()
    return code == grpc.StatusCode.UNAVAILABLE or (
        code == grpc.StatusCode.INTERNAL and "RST_STREAM" in (error.details() or "")
    )


def play_connect_four_resumably(stub, drops, size=(6, 7), attempts=5, timeout=STREAM_DEADLINE):
    """Plays `drops` on a PlayConnectFour stream, resuming from the history whenever the
    stream is lost (stream_lost): the pattern a game server copies. Each drop is sent
    once the reply to the one before has come (LiveStream), as a game server sends the
    moves its players make; each stream has a deadline (`timeout`). What it keeps is the
    list of drops the server applied (for Othello: the starting board and side too, and
    the moves applied); the reply to the resuming setup is the state after them, so the
    game goes on as if the stream had never ended. A drop whose reply never came is sent
    again on the next stream. Returns the last reply."""
    applied = []  # the drops the server applied: the history a new stream starts from
    answered = 0  # how many of `drops` have been answered (applied or rejected)
    last = None
    for _ in range(attempts):
        stream = LiveStream()
        stream.open(stub.PlayConnectFour(stream.requests, timeout=timeout))
        try:
            setup = pb.ConnectFourSetup(rows=size[0], cols=size[1], history=applied)
            stream.send(pb.PlayConnectFourRequest(setup=setup))
            if stream.next() is None:  # the setup's reply: the game as it stood
                raise StreamEnded()
            for drop in drops[answered:]:
                stream.send(pb.PlayConnectFourRequest(drop=drop))
                reply = stream.next()
                if reply is None:
                    raise StreamEnded()
                answered += 1
                if not reply.rejected:
                    applied.append(drop)
                last = reply
            return last
        except (grpc.RpcError, StreamEnded) as error:
            if isinstance(error, grpc.RpcError) and not stream_lost(error):
                raise
            what = (f"{error.code().name}: {error.details()}"
                    if isinstance(error, grpc.RpcError) else "the stream ended early")
            print(f"  stream lost ({what}); resuming after {len(applied)} drops")
        finally:
            stream.close()
    raise RuntimeError("the game could not be resumed")


def play_gomoku(stub, setup, moves, timeout=STREAM_DEADLINE):
    """Plays a live Gomoku game from `setup`: each move (row, col) is sent once the reply
    to the one before has come (LiveStream), and none once the game is over. Returns
    every reply, the setup's first."""
    game = LiveStream()
    game.open(stub.PlayGomoku(game.requests, timeout=timeout))
    try:
        game.send(pb.PlayGomokuRequest(setup=setup))
        replies = [game.next()]
        for row, col in moves:
            if replies[-1] is None or replies[-1].verdict != pb.VERDICT_PENDING:
                break
            game.send(pb.PlayGomokuRequest(move=pb.Cell(row=row, col=col)))
            replies.append(game.next())
    finally:
        game.close()
    if replies[-1] is None:
        raise StreamEnded()
    return replies


def play_chess(stub, moves, claim_draw=False, setup=None, timeout=STREAM_DEADLINE):
    """Plays a live chess game: the `setup` first if there is one, then each move (UCI or
    SAN) once the reply to the one before has come (LiveStream), none once the game is
    over, and with `claim_draw` a claim of a draw after the last (when the game is still
    on). Returns every reply, the setup's first."""
    game = LiveStream()
    game.open(stub.PlayChess(game.requests, timeout=timeout))
    replies = []

    def over():
        return replies and (replies[-1] is None or replies[-1].verdict != pb.VERDICT_PENDING)

    try:
        if setup is not None:
            game.send(pb.PlayChessRequest(setup=setup))
            replies.append(game.next())
        for move in moves:
            if over():
                break
            game.send(pb.PlayChessRequest(move=move))
            replies.append(game.next())
        if claim_draw and not over():
            game.send(pb.PlayChessRequest(claim_draw=True))
            replies.append(game.next())
    finally:
        game.close()
    if replies and replies[-1] is None:
        raise StreamEnded()
    return replies


class StreamEnded(Exception):
    """A live game's stream that the server ended before answering every message: lost
    like an UNAVAILABLE one, and resumed."""


def run(argv=None):
    """`python -m arbiter_client [ADDRESS]` and `arbiter-client [ADDRESS]`: main() against
    ADDRESS, localhost:50051 by default."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        raise SystemExit("usage: python -m arbiter_client [HOST:PORT[,HOST:PORT...]]")
    main(args[0] if args else "localhost:50051")


if __name__ == "__main__":
    run()
