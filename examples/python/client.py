#!/usr/bin/env python3
"""A Python client for Arbiter: every RPC once, then live Tic-Tac-Toe, Othello and
Connect Four games.

Run it against a server on the default address (start one with `cargo run --release`):

    python3 -m venv .venv && .venv/bin/pip install -r examples/python/requirements.txt
    .venv/bin/python examples/python/client.py

(a virtual environment: Debian's Python refuses a plain `pip install`). Pass another
address as the first argument: `.venv/bin/python examples/python/client.py host:port`.
The stubs are generated from the repository's proto/ at start-up with grpcio-tools, so
the example always matches the contract; copy the `load_stubs` function or generate
the stubs once with `python -m grpc_tools.protoc` in your own project.
"""

import atexit
import pathlib
import sys
import tempfile

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

PROTO_ROOT = pathlib.Path(__file__).resolve().parents[2] / "proto"


def load_stubs():
    """Generates arbiter_pb2 and arbiter_pb2_grpc from proto/ into a temporary directory,
    removed when the program exits, and imports them."""
    from grpc_tools import protoc

    out = tempfile.TemporaryDirectory(prefix="arbiter-stubs-")
    atexit.register(out.cleanup)
    proto = PROTO_ROOT / "arbiter" / "v1" / "arbiter.proto"
    code = protoc.main(
        [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"--python_out={out.name}",
            f"--grpc_python_out={out.name}",
            str(proto),
        ]
    )
    if code != 0:
        raise RuntimeError(f"protoc failed with exit code {code}")
    sys.path.insert(0, out.name)
    from arbiter.v1 import arbiter_pb2, arbiter_pb2_grpc

    return arbiter_pb2, arbiter_pb2_grpc


def main(address):
    pb, pb_grpc = load_stubs()
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.ArbiterServiceStub(channel)

        # Othello: is black's disc at (4, 3) legal, and what does it turn over?
        othello_board = pb.Board(
            rows=["...B....", "...W....", "...W....", "...W....",
                  "WBB.WWWB", "...B....", "...B....", "...W...."]
        )
        reply = stub.CheckOthelloMove(
            pb.CheckOthelloMoveRequest(board=othello_board, row=4, col=3, color="B")
        )
        flips = [(c.row, c.col) for c in reply.flips]
        print(f"CheckOthelloMove: legal={reply.legal} flips={flips}")

        # Othello: every legal move for white in the opening position.
        opening = pb.Board(
            rows=["........", "........", "........", "...WB...",
                  "...BW...", "........", "........", "........"]
        )
        reply = stub.ListOthelloMoves(pb.ListOthelloMovesRequest(board=opening, color="W"))
        cells = [(m.cell.row, m.cell.col) for m in reply.moves]
        print(f"ListOthelloMoves: {cells}")

        # Connect Four: does player 1's piece at (5, 4) win? run_length 0 means 4.
        c4_board = pb.Board(
            rows=["0000000", "0000000", "0000000", "0000000", "0222000", "0111100"]
        )
        reply = stub.CheckConnectFour(
            pb.CheckConnectFourRequest(board=c4_board, row=5, col=4, player=1)
        )
        run = [(c.row, c.col) for c in reply.run]
        print(f"CheckConnectFour: wins={reply.wins} run={run}")

        # Tic-Tac-Toe: judge a whole game, A (X) moving first.
        moves = [pb.TicTacToeMove(row=r, col=c) for r, c in [(0, 0), (2, 0), (1, 1), (2, 1), (2, 2)]]
        reply = stub.JudgeTicTacToe(pb.JudgeTicTacToeRequest(moves=moves))
        print(
            f"JudgeTicTacToe: {pb.Verdict.Name(reply.verdict)} "
            f"board={list(reply.board.rows)} moves_played={reply.moves_played}"
        )

        # A bad request: the status carries a google.rpc.BadRequest with one violation
        # per problem, each naming its field.
        try:
            stub.CheckConnectFour(
                pb.CheckConnectFourRequest(board=c4_board, row=9, col=4, player=3)
            )
        except grpc.RpcError as error:
            print(f"CheckConnectFour (bad): {error.code().name}")
            status = rpc_status.from_call(error)
            for detail in status.details:
                if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                    bad_request = error_details_pb2.BadRequest()
                    detail.Unpack(bad_request)
                    for violation in bad_request.field_violations:
                        print(f"  {violation.field}: {violation.description}")

        # A live game on the PlayTicTacToe stream: one reply per move, in order. The
        # second move is refused (the square is taken) and the game goes on.
        live_moves = [(1, 1), (1, 1), (0, 0), (2, 2), (0, 2), (2, 0), (0, 1)]
        requests = (pb.PlayTicTacToeRequest(row=r, col=c) for r, c in live_moves)
        for (r, c), reply in zip(live_moves, stub.PlayTicTacToe(requests)):
            note = f" rejected: {reply.rejected}" if reply.rejected else ""
            print(
                f"PlayTicTacToe ({r}, {c}): {pb.Verdict.Name(reply.verdict)} "
                f"board={list(reply.board.rows)} moves_played={reply.moves_played}{note}"
            )

        # A live Othello game from a custom start: after Black's first disc White has no
        # legal move, so White passes (`passed`) and Black plays again, then wins.
        othello_messages = [
            pb.PlayOthelloRequest(setup=pb.OthelloSetup(board=pb.Board(rows=[".WB.WB"]), to_move="B")),
            pb.PlayOthelloRequest(move=pb.Cell(row=0, col=0)),
            pb.PlayOthelloRequest(move=pb.Cell(row=0, col=3)),
        ]
        for reply in stub.PlayOthello(iter(othello_messages)):
            legal = [(c.row, c.col) for c in reply.legal_moves]
            print(
                f"PlayOthello: {pb.Verdict.Name(reply.verdict)} board={list(reply.board.rows)} "
                f"to_move={reply.to_move!r} passed={reply.passed} legal={legal} "
                f"discs={reply.black_discs}/{reply.white_discs}"
            )

        # A live Connect Four game on the default 6x7 board: pieces fall to the lowest
        # empty cell; player 1 wins on a diagonal with the last drop.
        drops = [0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3]
        replies = list(stub.PlayConnectFour(pb.PlayConnectFourRequest(drop=c) for c in drops))
        last = replies[-1]
        print(
            f"PlayConnectFour: {pb.Verdict.Name(last.verdict)} after {last.moves_played} drops, "
            f"run={[(c.row, c.col) for c in last.run]}"
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "localhost:50051")
