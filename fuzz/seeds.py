#!/usr/bin/env python3
"""Writes the seed inputs of the `requests` fuzz target into fuzz/corpus/requests/:
one valid request of each kind the target reads (its first bytes pick the kind: 0 and
the unary RPC's index in the contract, 1 for PlayMany, 2 and the live game's index in
the registration; the rest is the request, or for the live games and PlayMany the
messages, each prefixed with its length), live games on a clock among them, so that the fuzzer starts from time
controls, clocks, moves and deadlines rather than having to find their encodings.

    .tools/venv/bin/python fuzz/seeds.py

Needs grpcio-tools (tests/interop/requirements.txt installs it into .tools/venv).
"""

import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "lib"))
from stubs import load_stubs  # noqa: E402

pb, _ = load_stubs()
from google.protobuf.duration_pb2 import Duration  # noqa: E402


def ms(n):
    return Duration(seconds=n // 1000, nanos=(n % 1000) * 1_000_000)


def delimited(*messages):
    out = b""
    for message in messages:
        body = message.SerializeToString()
        length = len(body)
        prefix = b""
        while True:
            byte = length & 0x7F
            length >>= 7
            prefix += bytes([byte | (0x80 if length else 0)])
            if not length:
                break
        out += prefix + body
    return out


def control(initial, increment=0, move_limit=0):
    return pb.TimeControl(initial=ms(initial), increment=ms(increment),
                          move_limit=ms(move_limit) if move_limit else None)


OTHELLO_BOARD = pb.Board(rows=["....", ".WB.", ".BW.", "...."])


def seeds():
    yield "check_othello_move", [0, 0], pb.CheckOthelloMoveRequest(
        board=OTHELLO_BOARD, row=0, col=1, color="B").SerializeToString()
    yield "list_othello_moves", [0, 1], pb.ListOthelloMovesRequest(
        board=OTHELLO_BOARD, color="W").SerializeToString()
    yield "check_connect_four", [0, 2], pb.CheckConnectFourRequest(
        board=pb.Board(rows=["0000", "0000", "1220", "1120"]), row=1, col=0, player=1,
        run_length=3).SerializeToString()
    yield "judge_tic_tac_toe", [0, 3], pb.JudgeTicTacToeRequest(
        moves=[pb.TicTacToeMove(row=r, col=c) for r, c in [(0, 0), (1, 1), (0, 1)]]
    ).SerializeToString()
    yield "check_batch", [0, 4], pb.CheckBatchRequest(checks=[
        pb.Check(check_othello_move=pb.CheckOthelloMoveRequest(
            board=OTHELLO_BOARD, row=0, col=1, color="B")),
        pb.Check(check_connect_four=pb.CheckConnectFourRequest(
            board=pb.Board(rows=["00", "11"]), row=1, col=1, player=1, run_length=2)),
        pb.Check(judge_tic_tac_toe=pb.JudgeTicTacToeRequest(
            moves=[pb.TicTacToeMove(row=0, col=0)])),
    ]).SerializeToString()
    ttt_setup = pb.PlayTicTacToeRequest(setup=pb.TicTacToeSetup(
        history=[pb.TicTacToeMove(row=1, col=1)], time_control=control(500, 100, 300),
        clock=pb.Clock(a_left=ms(400), b_left=ms(200))))
    ttt_moves = [pb.PlayTicTacToeRequest(row=r, col=c) for r, c in [(0, 0), (0, 1), (2, 2)]]
    yield "tic_tac_toe_clocked", [2, 2], delimited(ttt_setup, *ttt_moves)
    yield "tic_tac_toe", [2, 2], delimited(*ttt_moves)
    othello_setup = pb.PlayOthelloRequest(setup=pb.OthelloSetup(
        board=OTHELLO_BOARD, to_move="B", history=[pb.Cell(row=0, col=1)],
        time_control=control(1000, 0, 50)))
    othello_moves = [pb.PlayOthelloRequest(move=pb.Cell(row=r, col=c))
                     for r, c in [(0, 0), (1, 0), (3, 2)]]
    yield "othello_clocked", [2, 0], delimited(othello_setup, *othello_moves)
    c4_setup = pb.PlayConnectFourRequest(setup=pb.ConnectFourSetup(
        rows=4, cols=4, run_length=3, history=[0, 1], time_control=control(60_000, 1000),
        clock=pb.Clock(a_left=ms(0), b_left=ms(10))))
    c4_drops = [pb.PlayConnectFourRequest(drop=c) for c in [0, 1, 0, 4]]
    yield "connect_four_clocked", [2, 1], delimited(c4_setup, *c4_drops)
    many = pb.PlayManyRequest(actions=[
        pb.GameAction(game=1, tic_tac_toe=ttt_setup),
        pb.GameAction(game=2, othello=othello_setup),
        pb.GameAction(game=3, connect_four=c4_setup),
        pb.GameAction(game=1, tic_tac_toe=ttt_moves[0]),
    ])
    later = pb.PlayManyRequest(actions=[
        pb.GameAction(game=3, connect_four=c4_drops[0]),
        pb.GameAction(game=2, close=True),
    ])
    yield "play_many_clocked", [1], delimited(many, later)
    yield "check_gomoku_move", [0, 5], pb.CheckGomokuMoveRequest(
        board=pb.Board(rows=[".BBBB.", "WWW..."]), row=0, col=5, color="B", run_length=5,
        exact=True).SerializeToString()
    gomoku_setup = pb.PlayGomokuRequest(setup=pb.GomokuSetup(
        rows=6, cols=6, run_length=4, history=[pb.Cell(row=0, col=0), pb.Cell(row=1, col=0)],
        time_control=control(500, 100), clock=pb.Clock(a_left=ms(300), b_left=ms(50))))
    gomoku_moves = [pb.PlayGomokuRequest(move=pb.Cell(row=r, col=c))
                    for r, c in [(0, 1), (0, 1), (1, 1), (0, 2), (9, 9), (1, 2), (0, 3)]]
    yield "gomoku_clocked", [2, 3], delimited(gomoku_setup, *gomoku_moves)
    before_mate = "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2"
    yield "check_chess_move", [0, 6], pb.CheckChessMoveRequest(
        fen=before_mate, move="Qh4#").SerializeToString()
    yield "list_chess_moves", [0, 7], pb.ListChessMovesRequest(
        fen="r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").SerializeToString()
    yield "judge_chess_game", [0, 8], pb.JudgeChessGameRequest(
        moves=["e4", "e7e5", "Nf3", "Nc6", "Bb5", "a6", "Bxc6", "dxc6", "O-O"]
    ).SerializeToString()
    yield "check_batch_chess", [0, 4], pb.CheckBatchRequest(checks=[
        pb.Check(check_chess_move=pb.CheckChessMoveRequest(fen=before_mate, move="d8h4")),
        pb.Check(list_chess_moves=pb.ListChessMovesRequest(
            fen="nrbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBKQBRN w GBgb - 0 1", chess960=True)),
        pb.Check(judge_chess_game=pb.JudgeChessGameRequest(
            moves=["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8"])),
    ]).SerializeToString()
    chess_setup = pb.PlayChessRequest(setup=pb.ChessSetup(
        history=["e4", "e5", "Nf3"], time_control=control(800, 100, 400),
        clock=pb.Clock(a_left=ms(500), b_left=ms(300)), legal_moves=True))
    chess_moves = [pb.PlayChessRequest(move=m) for m in ["Nf6", "zz", "Ng1", "Ng8", "e9"]]
    chess_moves.append(pb.PlayChessRequest(claim_draw=True))
    yield "chess_clocked", [2, 4], delimited(chess_setup, *chess_moves)
    yield "play_many_chess", [1], delimited(pb.PlayManyRequest(actions=[
        pb.GameAction(game=1, chess=chess_setup),
        pb.GameAction(game=1, chess=chess_moves[0]),
        pb.GameAction(game=2, chess=pb.PlayChessRequest(move="e4")),
    ]))


def main():
    out = REPO / "fuzz" / "corpus" / "requests"
    out.mkdir(parents=True, exist_ok=True)
    for name, kind, body in seeds():
        (out / f"seed-{name}").write_bytes(bytes(kind) + body)
    print(f"wrote the seeds into {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
