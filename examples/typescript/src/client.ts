// A TypeScript client of every Arbiter RPC on @grpc/grpc-js: one call of each one-shot
// RPC (Othello, Connect Four, Tic-Tac-Toe, Gomoku and chess, a chess move in SAN), the
// google.rpc.BadRequest of a malformed one, a live game of each kind with a message the
// server rejects (the chess game drawn by a claim of threefold repetition), a game on the
// clock that A loses on time, a CheckBatch with a malformed check, a PlayMany stream of
// two kinds of game, and a Connect Four game resumed on a new stream from its history. It exits non-zero if any answer is not the
// one the rules give.
//
//   npm ci && npm run build
//   node dist/client.js                      # the server's default address, localhost:50051
//   node dist/client.js HOST:PORT
//   node dist/client.js 127.0.0.1:50051,127.0.0.1:50052   # balanced over replicas (connect)

import * as grpc from '@grpc/grpc-js';

import {
  badRequests,
  connect,
  exchange,
  isServiceError,
  playConnectFourResumably,
  Turns,
  unary,
  within,
  type ArbiterServiceClient,
} from './arbiter';
import type { Board } from './generated/arbiter/v1/Board';
import type { Cell } from './generated/arbiter/v1/Cell';
import type { CheckBatchResponse__Output } from './generated/arbiter/v1/CheckBatchResponse';
import type { CheckChessMoveResponse__Output } from './generated/arbiter/v1/CheckChessMoveResponse';
import type { CheckConnectFourResponse__Output } from './generated/arbiter/v1/CheckConnectFourResponse';
import type { CheckGomokuMoveResponse__Output } from './generated/arbiter/v1/CheckGomokuMoveResponse';
import type { CheckOthelloMoveResponse__Output } from './generated/arbiter/v1/CheckOthelloMoveResponse';
import type { JudgeChessGameResponse__Output } from './generated/arbiter/v1/JudgeChessGameResponse';
import type { JudgeTicTacToeResponse__Output } from './generated/arbiter/v1/JudgeTicTacToeResponse';
import type { ListChessMovesResponse__Output } from './generated/arbiter/v1/ListChessMovesResponse';
import type { ListOthelloMovesResponse__Output } from './generated/arbiter/v1/ListOthelloMovesResponse';
import type { PlayChessRequest } from './generated/arbiter/v1/PlayChessRequest';
import type { PlayChessResponse__Output } from './generated/arbiter/v1/PlayChessResponse';
import type { PlayConnectFourResponse__Output } from './generated/arbiter/v1/PlayConnectFourResponse';
import type { PlayGomokuRequest } from './generated/arbiter/v1/PlayGomokuRequest';
import type { PlayManyRequest } from './generated/arbiter/v1/PlayManyRequest';
import type { PlayOthelloRequest } from './generated/arbiter/v1/PlayOthelloRequest';
import type { PlayTicTacToeRequest } from './generated/arbiter/v1/PlayTicTacToeRequest';
import type { PlayTicTacToeResponse__Output } from './generated/arbiter/v1/PlayTicTacToeResponse';
import type { Duration__Output } from './generated/google/protobuf/Duration';

/** Fails the run with `what` unless `holds`. */
function expect(holds: boolean, what: string): void {
  if (!holds) {
    throw new Error(`unexpected answer: ${what}`);
  }
}

function same(actual: unknown, expected: unknown): boolean {
  return JSON.stringify(actual) === JSON.stringify(expected);
}

const cells = (list: Cell[]): string => `[${list.map(({ row, col }) => `(${row}, ${col})`).join(', ')}]`;
const at = (...pairs: [number, number][]): Cell[] => pairs.map(([row, col]) => ({ row, col }));
/** A google.protobuf.Duration in seconds; undefined when it is not set. */
const seconds = (duration: Duration__Output | null | undefined): number | undefined =>
  duration ? Number(duration.seconds) + duration.nanos / 1e9 : undefined;

const OTHELLO_BOARD: Board = {
  rows: ['...B....', '...W....', '...W....', '...W....', 'WBB.WWWB', '...B....', '...B....', '...W....'],
};
const OPENING: Board = {
  rows: ['........', '........', '........', '...WB...', '...BW...', '........', '........', '........'],
};
const CONNECT_FOUR_BOARD: Board = { rows: ['0000000', '0000000', '0000000', '0000000', '0222000', '0111100'] };

async function checkOthelloMove(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** CheckOthelloMove');
  const reply = await unary<CheckOthelloMoveResponse__Output>((options, done) =>
    client.checkOthelloMove({ board: OTHELLO_BOARD, row: 4, col: 3, color: 'B' }, options, done),
  );
  console.log(`Black at (4, 3): legal ${reply.legal}, flips ${cells(reply.flips)}`);
  expect(
    reply.legal && same(reply.flips, at([1, 3], [2, 3], [3, 3], [4, 4], [4, 5], [4, 6])),
    'Black at (4, 3) turns over three discs up and three to the right',
  );
  const taken = await unary<CheckOthelloMoveResponse__Output>((options, done) =>
    client.checkOthelloMove({ board: OTHELLO_BOARD, row: 4, col: 4, color: 'B' }, options, done),
  );
  console.log(`Black at (4, 4), a white disc: legal ${taken.legal}`);
  expect(!taken.legal && taken.flips.length === 0, 'an occupied cell is not a legal move');
}

async function listOthelloMoves(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** ListOthelloMoves');
  const reply = await unary<ListOthelloMovesResponse__Output>((options, done) =>
    client.listOthelloMoves({ board: OPENING, color: 'W' }, options, done),
  );
  for (const move of reply.moves) {
    console.log(`White may play (${move.cell?.row}, ${move.cell?.col}), turning over ${cells(move.flips)}`);
  }
  expect(
    same(
      reply.moves.map((move) => [move.cell, move.flips]),
      [
        [{ row: 2, col: 4 }, at([3, 4])],
        [{ row: 3, col: 5 }, at([3, 4])],
        [{ row: 4, col: 2 }, at([4, 3])],
        [{ row: 5, col: 3 }, at([4, 3])],
      ],
    ),
    "White's four opening moves, row-major, each turning over one disc",
  );
}

async function checkConnectFour(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** CheckConnectFour');
  const reply = await unary<CheckConnectFourResponse__Output>((options, done) =>
    client.checkConnectFour({ board: CONNECT_FOUR_BOARD, row: 5, col: 4, player: 1 }, options, done),
  );
  console.log(`player 1 at (5, 4): wins ${reply.wins}, run ${cells(reply.run)}`);
  expect(reply.wins && same(reply.run, at([5, 1], [5, 2], [5, 3], [5, 4])), 'four 1s along the bottom row');
  const longer = await unary<CheckConnectFourResponse__Output>((options, done) =>
    client.checkConnectFour({ board: CONNECT_FOUR_BOARD, row: 5, col: 4, player: 1, runLength: 5 }, options, done),
  );
  console.log(`the same, runs of 5: wins ${longer.wins}`);
  expect(!longer.wins && longer.run.length === 0, 'four in a row is not a run of 5');
}

async function judgeTicTacToe(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** JudgeTicTacToe');
  const moves = at([0, 0], [2, 0], [1, 1], [2, 1], [2, 2]);
  const reply = await unary<JudgeTicTacToeResponse__Output>((options, done) =>
    client.judgeTicTacToe({ moves }, options, done),
  );
  console.log(`${reply.verdict} after ${reply.movesPlayed} moves, line ${cells(reply.line)}, board ${JSON.stringify(reply.board?.rows)}`);
  expect(
    reply.verdict === 'VERDICT_A_WINS' &&
      same(reply.line, at([0, 0], [1, 1], [2, 2])) &&
      same(reply.board?.rows, ['X..', '.X.', 'OOX']) &&
      reply.movesPlayed === 5,
    'A wins on the diagonal in five moves',
  );
}

/** A Gomoku board where Black at (2, 3) makes six in a row: an overline. */
const GOMOKU_BOARD: Board = { rows: ['..W....', '...W...', 'BBB.BB.', '....W..', '.....W.'] };

async function checkGomokuMove(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** CheckGomokuMove');
  const freestyle = await unary<CheckGomokuMoveResponse__Output>((options, done) =>
    client.checkGomokuMove({ board: GOMOKU_BOARD, row: 2, col: 3, color: 'B' }, options, done),
  );
  console.log(`Black at (2, 3), five or more: legal ${freestyle.legal}, wins ${freestyle.wins}, run ${cells(freestyle.run)}`);
  expect(
    freestyle.legal && freestyle.wins && same(freestyle.run, at([2, 0], [2, 1], [2, 2], [2, 3], [2, 4], [2, 5])),
    'six in a row wins freestyle Gomoku, the whole line its run',
  );
  const standard = await unary<CheckGomokuMoveResponse__Output>((options, done) =>
    client.checkGomokuMove({ board: GOMOKU_BOARD, row: 2, col: 3, color: 'B', exact: true }, options, done),
  );
  console.log(`the same, exactly five: legal ${standard.legal}, wins ${standard.wins}`);
  expect(standard.legal && !standard.wins && standard.run.length === 0, 'an overline does not win standard Gomoku');
  const taken = await unary<CheckGomokuMoveResponse__Output>((options, done) =>
    client.checkGomokuMove({ board: GOMOKU_BOARD, row: 0, col: 2, color: 'B' }, options, done),
  );
  console.log(`Black at (0, 2), a white stone: legal ${taken.legal}`);
  expect(!taken.legal && !taken.wins, 'a taken cell is no move');
}

/** After 1. f3 e5 2. g4, Black to move. */
const FOOLS_MATE = 'rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2';

/** A move in SAN: Black's Qh4 mates, given back in UCI and SAN; Qh5 names no legal move. */
async function checkChessMove(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** CheckChessMove');
  const mate = await unary<CheckChessMoveResponse__Output>((options, done) =>
    client.checkChessMove({ fen: FOOLS_MATE, move: 'Qh4' }, options, done),
  );
  console.log(
    `Qh4: legal ${mate.legal}, ${mate.move?.san} (${mate.move?.uci}), check ${mate.check}, ${mate.termination}, then ${mate.fen}`,
  );
  expect(
    mate.legal &&
      mate.move?.uci === 'd8h4' &&
      mate.move.san === 'Qh4#' &&
      mate.check &&
      mate.termination === 'CHESS_TERMINATION_CHECKMATE' &&
      mate.fen === 'rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3',
    'Qh4 is d8h4, and mates',
  );
  const unreachable = await unary<CheckChessMoveResponse__Output>((options, done) =>
    client.checkChessMove({ fen: FOOLS_MATE, move: 'Qh5' }, options, done),
  );
  console.log(`Qh5: legal ${unreachable.legal}`);
  expect(!unreachable.legal && unreachable.move === null && unreachable.fen === '', 'Qh5 names no legal move');
}

/** Every legal move of a king and pawn ending, sorted by UCI. */
async function listChessMoves(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** ListChessMoves');
  const reply = await unary<ListChessMovesResponse__Output>((options, done) =>
    client.listChessMoves({ fen: '4k3/8/8/8/8/8/4P3/4K3 w - - 0 1' }, options, done),
  );
  const moves = reply.moves.map(({ uci, san }) => `${uci} ${san}`);
  console.log(`White may play ${moves.join(', ')}; check ${reply.check}, ${reply.termination}`);
  expect(
    same(moves, ['e1d1 Kd1', 'e1d2 Kd2', 'e1f1 Kf1', 'e1f2 Kf2', 'e2e3 e3', 'e2e4 e4']) &&
      !reply.check &&
      reply.termination === 'CHESS_TERMINATION_UNSPECIFIED',
    'four king moves and two pawn moves, in UCI order',
  );
}

/** A whole game judged from its moves in SAN: the scholar's mate. */
async function judgeChessGame(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** JudgeChessGame');
  const reply = await unary<JudgeChessGameResponse__Output>((options, done) =>
    client.judgeChessGame({ moves: ['e4', 'e5', 'Bc4', 'Nc6', 'Qh5', 'Nf6', 'Qxf7'] }, options, done),
  );
  console.log(`${reply.verdict} by ${reply.termination} after ${reply.movesPlayed} plies: ${reply.san.join(' ')}, ${reply.fen}`);
  expect(
    reply.verdict === 'VERDICT_A_WINS' &&
      reply.termination === 'CHESS_TERMINATION_CHECKMATE' &&
      reply.movesPlayed === 7 &&
      reply.check &&
      !reply.drawClaimable &&
      same(reply.san, ['e4', 'e5', 'Bc4', 'Nc6', 'Qh5', 'Nf6', 'Qxf7#']) &&
      reply.fen === 'r1bqkb1r/pppp1Qpp/2n2n2/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 4',
    'White mates on f7',
  );
}

/**
 * A malformed request: INVALID_ARGUMENT, with a google.rpc.BadRequest in the
 * `grpc-status-details-bin` trailer naming every field at fault.
 */
async function aMalformedRequest(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** a malformed request');
  const error = await unary((options, done) =>
    client.checkConnectFour({ board: { rows: ['000', '00', '0000'] }, row: 9, col: -1, player: 3 }, options, done),
  ).then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!isServiceError(error)) {
    throw new Error(`unexpected answer: a ragged board must be refused, got ${String(error)}`);
  }
  console.log(`${grpc.status[error.code]}: ${error.details}`);
  const violations = badRequests(error).flatMap((badRequest) => badRequest.fieldViolations);
  for (const violation of violations) {
    console.log(`  ${violation.field}: ${violation.description}`);
  }
  expect(
    error.code === grpc.status.INVALID_ARGUMENT &&
      same(
        violations.map((violation) => violation.field),
        ['board.rows[1]', 'board.rows[2]', 'row', 'col', 'player'],
      ),
    'two ragged rows, a row off the board, a negative column and a bad player',
  );
}

/** A live game played move by move: the second move is refused (taken), and B wins. */
async function playTicTacToe(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** PlayTicTacToe');
  const game = new Turns<PlayTicTacToeRequest, PlayTicTacToeResponse__Output>(client.playTicTacToe(within(10)));
  let rejected = 0;
  let last: PlayTicTacToeResponse__Output | undefined;
  for (const [row, col] of [[1, 1], [1, 1], [0, 0], [2, 2], [0, 2], [2, 0], [0, 1]]) {
    last = await game.send({ row, col });
    if (last.rejected) {
      rejected++;
      console.log(`(${row}, ${col}): rejected: ${last.rejected}`);
    } else {
      console.log(`(${row}, ${col}): ${last.verdict}, ${last.movesPlayed} moves played`);
    }
  }
  // Ending the requests ends the game; the server then ends its replies.
  await game.close();
  expect(
    rejected === 1 &&
      last?.verdict === 'VERDICT_B_WINS' &&
      same(last.line, at([0, 0], [0, 1], [0, 2])) &&
      same(last.board?.rows, ['OOO', '.X.', 'X.X']) &&
      last.movesPlayed === 6,
    'a taken square refused, then B wins along the top row',
  );
}

/**
 * A clock runs out on its own: with 300 ms each and no move sent, the server announces, in
 * a reply marked unprompted, that A (X) lost on time with 0 left and B's 300 ms untouched,
 * then ends the stream. Only the setup is sent and the requests end at once: a running
 * clock keeps the stream open until the announcement, well within the call's deadline.
 */
async function playTicTacToeOnTheClock(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** PlayTicTacToe on the clock');
  const sent = Date.now();
  const replies = await exchange(client.playTicTacToe(within(10)), [
    { setup: { timeControl: { initial: { nanos: 300_000_000 } } } },
  ]);
  for (const { verdict, ending, unprompted, clock } of replies) {
    console.log(
      `${verdict}, ${ending}, unprompted ${unprompted}, time left A ${seconds(clock?.aLeft)} s, B ${seconds(clock?.bLeft)} s`,
    );
  }
  console.log(`the stream ended ${Date.now() - sent} ms after the setup`);
  const [start, flag] = replies;
  expect(replies.length === 2, "the setup's reply, then the announcement, then the end of the stream");
  expect(
    seconds(start.clock?.aLeft) === 0.3 &&
      seconds(start.clock?.bLeft) === 0.3 &&
      start.ending === 'ENDING_UNSPECIFIED' &&
      !start.unprompted,
    "the setup's reply: 300 ms each, the game going on",
  );
  expect(
    flag.unprompted &&
      flag.ending === 'ENDING_TIME' &&
      flag.verdict === 'VERDICT_B_WINS' &&
      seconds(flag.clock?.aLeft) === 0 &&
      seconds(flag.clock?.bLeft) === 0.3,
    'an unprompted reply: A out of time with 0 left, B winning with 300 ms',
  );
}

/**
 * A whole Othello game sent as one stream: a disc on an occupied cell is rejected, then
 * White has no move after Black's first disc, so White passes and Black fills the row.
 */
async function playOthello(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** PlayOthello');
  const move = (row: number, col: number): PlayOthelloRequest => ({ move: { row, col } });
  const replies = await exchange(client.playOthello(within(10)), [
    { setup: { board: { rows: ['.WB.WB'] }, toMove: 'B' } },
    move(0, 1),
    move(0, 0),
    move(0, 3),
  ]);
  for (const reply of replies) {
    const note = reply.rejected ? ` rejected: ${reply.rejected}` : '';
    console.log(
      `${reply.verdict} ${JSON.stringify(reply.board?.rows)} to move ${JSON.stringify(reply.toMove)} passed ${reply.passed} ` +
        `legal ${cells(reply.legalMoves)} discs ${reply.blackDiscs}/${reply.whiteDiscs}${note}`,
    );
  }
  const [, occupied, pass, end] = replies;
  expect(
    replies.length === 4 &&
      occupied.rejected !== '' &&
      pass.passed &&
      pass.toMove === 'B' &&
      same(pass.flips, at([0, 1])) &&
      end.verdict === 'VERDICT_A_WINS' &&
      same(end.board?.rows, ['BBBBBB']) &&
      end.blackDiscs === 6 &&
      end.whiteDiscs === 0,
    'an occupied cell refused, White passes, Black wins 6-0',
  );
}

/** A Connect Four game (with a drop off the board, rejected) won on a diagonal. */
async function playConnectFour(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** PlayConnectFour');
  let rejected = 0;
  const last = await playConnectFourResumably(client, [0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 7, 3], {
    onReply: (drop, reply) => {
      if (reply.rejected) {
        rejected++;
        console.log(`column ${drop}: rejected: ${reply.rejected}`);
      }
    },
  });
  console.log(`${last.verdict} after ${last.movesPlayed} drops at (${last.placed?.row}, ${last.placed?.col}), run ${cells(last.run)}`);
  expect(
    rejected === 1 &&
      last.verdict === 'VERDICT_A_WINS' &&
      last.movesPlayed === 11 &&
      same(last.run, at([2, 3], [3, 2], [4, 1], [5, 0])) &&
      last.toMove === 0,
    'column 7 is off the board; player 1 wins on a diagonal',
  );
}

/**
 * A whole Gomoku game sent as one stream, on a 5x5 board, three in a row to win: a stone
 * on a taken cell is rejected, Black wins along row 2, and a stone after the end is
 * rejected.
 */
async function playGomoku(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** PlayGomoku');
  const move = (row: number, col: number): PlayGomokuRequest => ({ move: { row, col } });
  const replies = await exchange(client.playGomoku(within(10)), [
    { setup: { rows: 5, cols: 5, runLength: 3 } },
    move(2, 2),
    move(1, 1),
    move(1, 1),
    move(2, 1),
    move(2, 3),
    move(2, 0),
    move(0, 0),
  ]);
  for (const reply of replies) {
    const note = reply.rejected ? ` rejected: ${reply.rejected}` : '';
    console.log(
      `${reply.verdict} ${JSON.stringify(reply.board?.rows)} to move ${JSON.stringify(reply.toMove)}, ${reply.movesPlayed} stones${note}`,
    );
  }
  const [start, , , taken, , , win, late] = replies;
  expect(
    replies.length === 8 &&
      same(start.board?.rows, ['.....', '.....', '.....', '.....', '.....']) &&
      start.toMove === 'B' &&
      taken.rejected !== '' &&
      taken.movesPlayed === 2 &&
      win.verdict === 'VERDICT_A_WINS' &&
      win.ending === 'ENDING_BOARD' &&
      same(win.run, at([2, 0], [2, 1], [2, 2])) &&
      same(win.board?.rows, ['.....', '.W...', 'BBBW.', '.....', '.....']) &&
      win.toMove === '' &&
      late.rejected !== '' &&
      late.movesPlayed === 5,
    'a taken cell refused, Black wins along row 2, no stone after the end',
  );
}

/** A FEN's first four fields: two positions are the same exactly when these are. */
const position = (fen: string): string => fen.split(' ').slice(0, 4).join(' ');

/**
 * A live chess game played move by move, in SAN (one move in UCI): the knights go out and
 * back twice. The player claims a draw after the first round, when the start position has
 * stood twice (rejected, the game goes on), and again when the reply says it may: the
 * position has stood three times, and the claim ends the game drawn.
 */
async function playChess(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** PlayChess');
  const game = new Turns<PlayChessRequest, PlayChessResponse__Output>(client.playChess(within(10)));
  const start = await game.send({ setup: {} });
  console.log(`${start.verdict}, ${start.toMove} to move: ${start.fen}`);
  const round = async (moves: string[]): Promise<PlayChessResponse__Output> => {
    let last = start;
    for (const move of moves) {
      last = await game.send({ move });
      console.log(
        `${move}: ${last.move?.san} (${last.move?.uci}), ${last.movesPlayed} plies, ${last.toMove} to move, draw claimable ${last.drawClaimable}${last.rejected ? `, rejected: ${last.rejected}` : ''}`,
      );
    }
    return last;
  };
  const twice = await round(['Nf3', 'Nf6', 'Ng1', 'Ng8']);
  const early = await game.send({ claimDraw: true });
  console.log(`claim: rejected: ${early.rejected}`);
  const thrice = await round(['g1f3', 'Nf6', 'Ng1', 'Ng8']);
  let drawn: PlayChessResponse__Output | undefined;
  if (thrice.drawClaimable) {
    drawn = await game.send({ claimDraw: true });
    console.log(`claim: ${drawn.verdict}, ${drawn.termination}, ${drawn.ending}`);
  }
  await game.close();
  expect(start.toMove === 'w' && start.movesPlayed === 0 && start.move === null, "the setup's reply: the standard position, White to move");
  expect(
    !twice.drawClaimable && early.rejected !== '' && early.verdict === 'VERDICT_PENDING' && early.movesPlayed === 4,
    'a claim on a position that has stood twice is rejected, the game going on',
  );
  expect(
    thrice.drawClaimable && thrice.movesPlayed === 8 && position(thrice.fen) === position(start.fen),
    'the start position stands a third time: a draw may be claimed',
  );
  expect(
    drawn !== undefined &&
      drawn.rejected === '' &&
      drawn.verdict === 'VERDICT_DRAW' &&
      drawn.termination === 'CHESS_TERMINATION_THREEFOLD_REPETITION' &&
      drawn.ending === 'ENDING_CLAIM' &&
      drawn.toMove === '' &&
      !drawn.drawClaimable,
    'the claim ends the game drawn by threefold repetition',
  );
}

/** Many checks in one call, answered in order; the malformed one in place. */
async function checkBatch(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** CheckBatch');
  const reply = await unary<CheckBatchResponse__Output>((options, done) =>
    client.checkBatch(
      {
        checks: [
          { checkOthelloMove: { board: OTHELLO_BOARD, row: 4, col: 3, color: 'B' } },
          { listOthelloMoves: { board: { rows: ['.WB'] }, color: 'G' } },
          { checkConnectFour: { board: { rows: ['0000', '2220', '1111'] }, row: 2, col: 3, player: 1 } },
          { judgeTicTacToe: { moves: at([1, 1], [0, 0]) } },
          { checkGomokuMove: { board: { rows: ['BBBB.', 'WWWW.'] }, row: 0, col: 4, color: 'B' } },
          { checkChessMove: { move: 'e2e4' } },
        ],
      },
      options,
      done,
    ),
  );
  reply.results.forEach((result, index) => {
    if (result.result === undefined) {
      for (const violation of result.invalid) {
        console.log(`check ${index}: invalid ${violation.field}: ${violation.description}`);
      }
    } else {
      console.log(`check ${index}: ${result.result} ${JSON.stringify(result[result.result])}`);
    }
  });
  const [othello, malformed, connectFour, ticTacToe, gomoku, chess] = reply.results;
  expect(
    reply.results.length === 6 &&
      othello.checkOthelloMove?.legal === true &&
      othello.checkOthelloMove.flips.length === 6 &&
      malformed.result === undefined &&
      same(malformed.invalid.map((violation) => violation.field), ['color']) &&
      connectFour.checkConnectFour?.wins === true &&
      same(connectFour.checkConnectFour.run, at([2, 0], [2, 1], [2, 2], [2, 3])) &&
      ticTacToe.judgeTicTacToe?.verdict === 'VERDICT_PENDING' &&
      same(ticTacToe.judgeTicTacToe.board?.rows, ['O..', '.X.', '...']) &&
      gomoku.checkGomokuMove?.wins === true &&
      same(gomoku.checkGomokuMove.run, at([0, 0], [0, 1], [0, 2], [0, 3], [0, 4])) &&
      chess.checkChessMove?.legal === true &&
      chess.checkChessMove.move?.san === 'e4' &&
      chess.checkChessMove.fen === 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1',
    'six results in order, the second invalid on its colour',
  );
}

/**
 * Many live games in one stream, numbered by the client: a Tic-Tac-Toe game and a 2x3
 * Connect Four game, a rejected move, a close, and a close of a number that holds no game.
 */
async function playMany(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** PlayMany');
  const messages: PlayManyRequest[] = [
    {
      actions: [
        { game: 1, ticTacToe: { row: 1, col: 1 } },
        { game: 2, connectFour: { setup: { rows: 2, cols: 3, runLength: 2 } } },
      ],
    },
    {
      actions: [
        { game: 2, connectFour: { drop: 0 } },
        { game: 1, ticTacToe: { row: 1, col: 1 } }, // taken: rejected, the game goes on
      ],
    },
    {
      actions: [
        { game: 2, close: true },
        { game: 2, close: true }, // the number holds no game any more
        { game: 1, ticTacToe: { row: 0, col: 0 } },
      ],
    },
  ];
  const replies = await exchange(client.playMany(within(10)), messages);
  for (const state of replies.flatMap((reply) => reply.states)) {
    if (state.state !== undefined) {
      const game = state[state.state] ?? undefined;
      // Every game but chess has a board of rows (chess writes its position as FEN).
      const board =
        game === undefined ? undefined : 'board' in game ? JSON.stringify(game.board?.rows) : 'fen' in game ? game.fen : undefined;
      console.log(`game ${state.game} (${state.state}): ${game?.movesPlayed} played, board ${board}${game?.rejected ? `, rejected: ${game.rejected}` : ''}`);
    } else if (state.invalid.length === 0) {
      console.log(`game ${state.game}: closed`);
    } else {
      console.log(`game ${state.game}: invalid ${state.invalid.map((v) => `${v.field}: ${v.description}`).join('; ')}`);
    }
  }
  const [first, second, third] = replies.map((reply) => reply.states);
  expect(
    replies.length === 3 &&
      same(first.map((state) => [state.game, state.state]), [['1', 'ticTacToe'], ['2', 'connectFour']]) &&
      same(first[1].connectFour?.board?.rows, ['000', '000']) &&
      first[1].connectFour?.toMove === 1 &&
      same(second[0].connectFour?.placed, { row: 1, col: 0 }) &&
      second[1].ticTacToe?.rejected !== '' &&
      second[1].ticTacToe?.movesPlayed === 1 &&
      third[0].state === undefined &&
      third[0].invalid.length === 0 &&
      third[1].state === undefined &&
      third[1].invalid.length > 0 &&
      third[2].ticTacToe?.movesPlayed === 2 &&
      same(third[2].ticTacToe.board?.rows, ['O..', '.X.', '...']),
    'one state per action, in order: a rejected move, a close, a close of nothing',
  );
}

/**
 * A game moved to a new stream (on this server or any other) from its history alone: the
 * setup's reply is the game as the old stream left it.
 */
async function resumeFromHistory(client: ArbiterServiceClient): Promise<void> {
  console.log('\n*** resuming from a history');
  const drops = [3, 4, 3, 4];
  const before = (await exchange(client.playConnectFour(within(10)), drops.map((drop) => ({ drop })))).at(-1);
  const [after] = await exchange(client.playConnectFour(within(10)), [{ setup: { history: drops } }]);
  const game = (reply?: PlayConnectFourResponse__Output) => [reply?.board?.rows, reply?.toMove, reply?.movesPlayed];
  console.log(`old stream left ${JSON.stringify(before?.board?.rows)}`);
  console.log(`new stream holds ${JSON.stringify(after?.board?.rows)}`);
  expect(before !== undefined && same(game(before), game(after)), 'the resumed game is the game');
}

async function main(): Promise<void> {
  const target = process.argv[2] ?? 'localhost:50051';
  const client = connect(target);
  console.log(`calling ${target}`);
  try {
    await checkOthelloMove(client);
    await listOthelloMoves(client);
    await checkConnectFour(client);
    await judgeTicTacToe(client);
    await checkGomokuMove(client);
    await checkChessMove(client);
    await listChessMoves(client);
    await judgeChessGame(client);
    await aMalformedRequest(client);
    await playTicTacToe(client);
    await playTicTacToeOnTheClock(client);
    await playOthello(client);
    await playConnectFour(client);
    await playGomoku(client);
    await playChess(client);
    await checkBatch(client);
    await playMany(client);
    await resumeFromHistory(client);
  } finally {
    client.close();
  }
  console.log('\nevery answer was the one the rules give');
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? `error: ${error.message}` : error);
    process.exitCode = 1;
  });
}
