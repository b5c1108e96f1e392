#!/usr/bin/env python3
"""Arbiter beside python-chess in the caller's own process, in one run, on the same
positions and games: what a Python backend gets from calling python-chess itself, and
from calling Arbiter with grpcio through CheckBatch and PlayMany.

- Legal moves with SAN: python-chess's `[board.san(m) for m in board.legal_moves]` per
  position (its FEN read first), against ListChessMoves checks, 1,000 a CheckBatch call:
  positions a second, the client's encoding and decoding included. Every position's SAN
  moves must be the same both ways.
- A referee step: python-chess's parse, SAN, push, outcome, FEN and draw claims
  (`parse_uci`, `san`, `push`, `outcome`, `fen`, `can_claim_draw`) per move, against the
  same games played in one PlayMany stream, every game's next move in each message:
  moves a second. Every game's final FEN must be the same both ways.

The positions and games are random games from the start (seeded), played by
python-chess. Needs `pip install chess grpcio grpcio-tools` (the interop venv has the
gRPC ones: `.tools/venv/bin/pip install chess`):

    .tools/venv/bin/python benches/python_chess.py --address 127.0.0.1:50051
"""

import argparse
import pathlib
import random
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "lib"))
from stubs import load_stubs  # noqa: E402

import chess  # noqa: E402
import grpc  # noqa: E402

pb, pb_grpc = load_stubs()


def random_games(count, plies, seed):
    """`count` random games from the start, each at most `plies` long or to its end: each
    game's moves as UCI, and every position met (FEN), the start's included."""
    rng = random.Random(seed)
    games, positions = [], []
    for _ in range(count):
        board, moves = chess.Board(), []
        positions.append(board.fen())
        while len(moves) < plies and board.outcome(claim_draw=False) is None:
            move = rng.choice(list(board.legal_moves))
            moves.append(move.uci())
            board.push(move)
            positions.append(board.fen())
        games.append(moves)
    return games, positions


def python_legal_with_san(positions):
    started = time.perf_counter()
    listed = []
    for fen in positions:
        board = chess.Board(fen)
        listed.append(sorted(board.san(move) for move in board.legal_moves))
    return listed, time.perf_counter() - started


def arbiter_legal_with_san(stub, positions):
    started = time.perf_counter()
    listed = []
    for at in range(0, len(positions), 1000):
        checks = [pb.Check(list_chess_moves=pb.ListChessMovesRequest(fen=fen))
                  for fen in positions[at:at + 1000]]
        reply = stub.CheckBatch(pb.CheckBatchRequest(checks=checks), timeout=60)
        listed.extend(sorted(move.san for move in result.list_chess_moves.moves)
                      for result in reply.results)
    return listed, time.perf_counter() - started


def python_referee(games):
    started = time.perf_counter()
    finals = []
    for moves in games:
        board = chess.Board()
        for uci in moves:
            move = board.parse_uci(uci)
            board.san(move)
            board.push(move)
            board.outcome(claim_draw=False)
            board.fen()
            board.can_claim_draw()
        finals.append(board.fen())
    return finals, time.perf_counter() - started


def arbiter_referee(stub, games):
    longest = max(len(moves) for moves in games)
    messages = []
    for ply in range(longest):
        actions = [pb.GameAction(game=number, chess=pb.PlayChessRequest(move=moves[ply]))
                   for number, moves in enumerate(games) if ply < len(moves)]
        messages.append(pb.PlayManyRequest(actions=actions))
    finals = {}
    started = time.perf_counter()
    for reply in stub.PlayMany(iter(messages), timeout=300):
        for state in reply.states:
            if state.HasField("chess"):
                if state.chess.rejected:
                    raise SystemExit(f"game {state.game}: {state.chess.rejected}")
                finals[state.game] = state.chess.fen
    elapsed = time.perf_counter() - started
    return [finals[number] for number in range(len(games))], elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--plies", type=int, default=80)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    games, positions = random_games(args.games, args.plies, args.seed)
    moves = sum(len(game) for game in games)
    options = [("grpc.max_receive_message_length", 64 << 20)]
    with grpc.insecure_channel(args.address, options=options) as channel:
        stub = pb_grpc.ArbiterServiceStub(channel)
        stub.CheckBatch(pb.CheckBatchRequest(), timeout=10)  # connected and warm
        python_listed, python_seconds = python_legal_with_san(positions)
        arbiter_listed, arbiter_seconds = arbiter_legal_with_san(stub, positions)
        if python_listed != arbiter_listed:
            raise SystemExit("the SAN moves differ")
        python_finals, python_referee_seconds = python_referee(games)
        arbiter_finals, arbiter_referee_seconds = arbiter_referee(stub, games)
        if python_finals != arbiter_finals:
            raise SystemExit("the final positions differ")
    print(f"chess {chess.__version__}, grpcio {grpc.__version__}; {len(positions)} positions, "
          f"{len(games)} games of {moves} moves")
    print("| workload | python-chess in process | Arbiter through grpcio | Arbiter / python-chess |")
    print("| --- | ---: | ---: | ---: |")
    for name, unit, count, python, arbiter in [
        ("legal moves with SAN (CheckBatch of ListChessMoves)", "positions/s", len(positions),
         python_seconds, arbiter_seconds),
        ("referee step (PlayMany)", "moves/s", moves, python_referee_seconds,
         arbiter_referee_seconds),
    ]:
        print(f"| {name} | {count / python:,.0f} {unit} | {count / arbiter:,.0f} {unit} | "
              f"**{python / arbiter:.1f}** |")


if __name__ == "__main__":
    main()
