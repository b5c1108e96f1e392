// A TypeScript client of every Arbiter RPC on @grpc/grpc-js: one call of each one-shot
// RPC, the google.rpc.BadRequest of a malformed one, a live game of each kind with a
// move the server rejects, a game on the clock that A loses on time, a CheckBatch with a
// malformed check, a PlayMany stream of two kinds of game, and a Connect Four game
// resumed on a new stream from its history. It exits non-zero if any answer is not the
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
import type { CheckConnectFourResponse__Output } from './generated/arbiter/v1/CheckConnectFourResponse';
import type { CheckOthelloMoveResponse__Output } from './generated/arbiter/v1/CheckOthelloMoveResponse';
import type { JudgeTicTacToeResponse__Output } from './generated/arbiter/v1/JudgeTicTacToeResponse';
import type { ListOthelloMovesResponse__Output } from './generated/arbiter/v1/ListOthelloMovesResponse';
import type { PlayConnectFourResponse__Output } from './generated/arbiter/v1/PlayConnectFourResponse';
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
  const [othello, malformed, connectFour, ticTacToe] = reply.results;
  expect(
    reply.results.length === 4 &&
      othello.checkOthelloMove?.legal === true &&
      othello.checkOthelloMove.flips.length === 6 &&
      malformed.result === undefined &&
      same(malformed.invalid.map((violation) => violation.field), ['color']) &&
      connectFour.checkConnectFour?.wins === true &&
      same(connectFour.checkConnectFour.run, at([2, 0], [2, 1], [2, 2], [2, 3])) &&
      ticTacToe.judgeTicTacToe?.verdict === 'VERDICT_PENDING' &&
      same(ticTacToe.judgeTicTacToe.board?.rows, ['O..', '.X.', '...']),
    'four results in order, the second invalid on its colour',
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
    await aMalformedRequest(client);
    await playTicTacToe(client);
    await playTicTacToeOnTheClock(client);
    await playOthello(client);
    await playConnectFour(client);
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
