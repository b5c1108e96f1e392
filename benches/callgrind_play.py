"""Plays live games against a server for benches/callgrind.sh: one move in flight per
stream, the same moves the tonic load generator (tools/load.rs) plays.

    python3 benches/callgrind_play.py ADDR GAME GAMES [--script FILE] [--record FILE]

GAME is PlayTicTacToe, PlayOthello, PlayConnectFour or PlayGomoku. Against Arbiter (no
--script) the moves follow the replies: Tic-Tac-Toe's nine-move draw, Othello from the
standard start with each side playing its first legal move, Connect Four dropping into
every third column (skipping full ones) until the game ends, Gomoku's 17-stone freestyle
game on 15x15 that Black wins with a five (GOMOKU_GAME of benches/support/requests.rs);
every reply must apply its move.
--record writes the moves played, one game's messages per line, and --script replays
them without reading the replies (the baseline answers every message with an empty
reply, so its games follow Arbiter's script). Prints the number of messages sent.
"""

import argparse
import json
import pathlib
import queue
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "lib"))
from stubs import load_stubs  # noqa: E402

import grpc  # noqa: E402

pb, pb_grpc = load_stubs()

DRAW = [(0, 0), (1, 1), (2, 2), (0, 1), (2, 1), (2, 0), (0, 2), (1, 2), (1, 0)]
# GOMOKU_GAME of benches/support/requests.rs: Black first, Black's ninth stone makes five.
GOMOKU = [
    (6, 7), (5, 8), (8, 7), (7, 8), (6, 6), (6, 5), (8, 8), (8, 9), (8, 6),
    (8, 5), (6, 8), (6, 9), (7, 7), (9, 9), (5, 7), (9, 7), (4, 7),
]


def request(game, move):
    if game == "PlayTicTacToe":
        return pb.PlayTicTacToeRequest(row=move[0], col=move[1])
    if game == "PlayOthello":
        return pb.PlayOthelloRequest(move=pb.Cell(row=move[0], col=move[1]))
    if game == "PlayGomoku":
        return pb.PlayGomokuRequest(move=pb.Cell(row=move[0], col=move[1]))
    return pb.PlayConnectFourRequest(drop=move)


def next_move(game, index, reply, state):
    """The move after `reply` (None for the first), or None when the game is over."""
    if game == "PlayTicTacToe":
        return DRAW[index] if index < len(DRAW) else None
    if game == "PlayGomoku":
        return GOMOKU[index] if index < len(GOMOKU) else None
    if game == "PlayOthello":
        if reply is None:
            return (2, 3)  # Black's first legal move, row-major, from the standard start
        if reply.legal_moves:
            first = reply.legal_moves[0]
            return (first.row, first.col)
        return None
    if reply is not None and reply.verdict != pb.VERDICT_PENDING:
        return None
    while True:
        col = state["col"] % 7
        state["col"] += 3
        if state["heights"][col] < 6:
            state["heights"][col] += 1
            return col


def play(stub, game, script=None):
    """Plays one game; returns the moves sent."""
    outgoing = queue.Queue()
    replies = getattr(stub, game)(iter(outgoing.get, None))
    moves, reply, state = [], None, {"col": 0, "heights": [0] * 7}
    while True:
        if script is not None:
            move = script[len(moves)] if len(moves) < len(script) else None
        else:
            move = next_move(game, len(moves), reply, state)
        if move is None:
            break
        outgoing.put(request(game, move))
        reply = next(replies)
        if script is None and reply.rejected:
            raise SystemExit(f"{game}: move {move} rejected: {reply.rejected}")
        moves.append(move)
    outgoing.put(None)
    for _ in replies:
        pass
    return moves


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("addr")
    parser.add_argument("game")
    parser.add_argument("games", type=int)
    parser.add_argument("--script")
    parser.add_argument("--record")
    args = parser.parse_args()
    script = json.loads(pathlib.Path(args.script).read_text()) if args.script else None
    if script is not None:
        script = [tuple(m) if isinstance(m, list) else m for m in script]
    with grpc.insecure_channel(args.addr) as channel:
        stub = pb_grpc.ArbiterServiceStub(channel)
        sent = 0
        played = None
        for _ in range(args.games):
            played = play(stub, args.game, script)
            sent += len(played)
    if args.record:
        pathlib.Path(args.record).write_text(json.dumps(played))
    print(sent)


if __name__ == "__main__":
    main()
