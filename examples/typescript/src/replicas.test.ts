// Balancing over three Arbiter replicas from @grpc/grpc-js, the way a Node backend does
// it without a proxy: one channel on `A,B,C` (made an `ipv4:` target by `connect` in
// arbiter.ts) with round robin. Run by run.sh, which starts the replicas and passes each
// one's address and pid:
//
//   ARBITER_REPLICAS=127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3 ARBITER_PIDS=PID1,PID2,PID3 npm test
//
// (skipped without them). It holds what grpc-js does with such a target: the `:authority`
// it sends is the first address of the list, a well-formed one, so the server's HTTP/2
// layer (h2) accepts it and no option is needed (grpcio, which sends the whole list,
// needs `grpc.default_authority`); the calls spread over all three replicas; a replica
// stopped gracefully (SIGTERM) loses no unary call and its live game resumes on another
// replica; so does a game whose replica is killed (SIGKILL). The subtests run in order,
// each on what the one before left.

import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import * as grpc from '@grpc/grpc-js';

import { connect, isServiceError, playConnectFourResumably, within, type ArbiterServiceClient } from './arbiter';
import { witness } from './witness';

interface Replica {
  address: string;
  pid: number;
}

function same(actual: unknown, expected: unknown): boolean {
  return JSON.stringify(actual) === JSON.stringify(expected);
}

function check(holds: boolean, what: string): void {
  assert.ok(holds, what);
  console.log(`ok   ${what}`);
}

/** One JudgeTicTacToe call; resolves with the replica (`host:port`) that answered it. */
function judge(client: ArbiterServiceClient): Promise<string> {
  return new Promise((resolve, reject) => {
    const call = client.judgeTicTacToe({ moves: [{ row: 1, col: 1 }] }, within(5), (error, reply) => {
      if (error) {
        reject(error);
      } else if (reply?.movesPlayed !== 1) {
        reject(new Error(`a wrong answer: ${JSON.stringify(reply)}`));
      } else {
        resolve(call.getPeer());
      }
    });
  });
}

/** How many of `count` calls, one after the other, each replica answered. */
async function spread(client: ArbiterServiceClient, replicas: Replica[], count: number): Promise<number[]> {
  const counts = replicas.map(() => 0);
  for (let i = 0; i < count; i++) {
    const peer = await judge(client);
    const index = replicas.findIndex((replica) => replica.address === peer);
    if (index < 0) {
      throw new Error(`a call was answered by ${peer}, not a replica`);
    }
    counts[index]++;
  }
  return counts;
}

/** Whether the process has ended (a zombie not yet reaped by its parent counts). */
function exited(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z');
  } catch {
    return true;
  }
}

/**
 * Makes calls one after the other until `enough` says so (40 at most), counting those
 * answered OK; a call may fail only with `refusal`.
 */
async function callUntil(
  client: ArbiterServiceClient,
  refusal: grpc.status,
  enough: (ok: number) => boolean,
): Promise<number> {
  let ok = 0;
  for (let i = 0; i < 40 && !enough(ok); i++) {
    try {
      await judge(client);
      ok++;
    } catch (error) {
      if (!isServiceError(error) || error.code !== refusal) {
        throw error;
      }
    }
  }
  return ok;
}

/**
 * The `:authority` that grpc-js sends for a list of replicas: seen by a witness put last
 * in the list, after the replicas, which accept it.
 */
async function theAuthorityIsAccepted(replicas: Replica[]): Promise<void> {
  const last = await witness(grpc.status.UNIMPLEMENTED);
  const client = connect([...replicas.map((replica) => replica.address), last.address].join(','));
  try {
    const ok = await callUntil(client, grpc.status.UNIMPLEMENTED, (ok) => ok >= 6 && last.seen.length >= 2);
    const authorities = [...new Set(last.seen.map((request) => request.authority))];
    check(
      same(authorities, [replicas[0].address]) && ok >= 6,
      `grpc-js sends the first address of the list as :authority (${authorities}), which the replicas accept ` +
        `(${ok} calls answered): no grpc.default_authority needed`,
    );
  } finally {
    client.close();
    last.close();
  }
}

/**
 * Plays a Connect Four game over `client`; after four drops, `stop` stops the replica
 * that holds its stream, and the game must go on, resumed on another replica.
 * Returns the replica stopped.
 */
async function gameOutlivesItsReplica(
  client: ArbiterServiceClient,
  replicas: Replica[],
  stop: (replica: Replica) => Promise<void>,
): Promise<Replica> {
  const peers: string[] = [];
  let stopped: Replica | undefined;
  const last = await playConnectFourResumably(client, [0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3], {
    onReply: async (_drop, reply, peer) => {
      peers.push(peer);
      if (reply.movesPlayed === 4 && stopped === undefined) {
        stopped = replicas.find((replica) => replica.address === peer);
        if (stopped === undefined) {
          throw new Error(`the game is on ${peer}, not a replica`);
        }
        await stop(stopped);
      }
    },
  });
  check(
    stopped !== undefined &&
      last.verdict === 'VERDICT_A_WINS' &&
      last.movesPlayed === 11 &&
      peers.slice(4).every((peer) => peer !== stopped?.address),
    `the game resumed on another replica and was won as it would have been (${peers[0]} then ${peers.at(-1)})`,
  );
  return stopped as Replica;
}

const replicas: Replica[] = (process.env.ARBITER_REPLICAS ?? '')
  .split(',')
  .filter((address) => address !== '')
  .map((address, i) => ({ address, pid: Number((process.env.ARBITER_PIDS ?? '').split(',')[i]) }));
const skip =
  replicas.length === 0 && 'needs three running replicas: ARBITER_REPLICAS and ARBITER_PIDS (run.sh starts them)';

test('balancing over three replicas', { skip, timeout: 120_000 }, async (t) => {
  assert.ok(
    replicas.length === 3 && replicas.every((replica) => replica.pid > 0),
    'ARBITER_REPLICAS and ARBITER_PIDS must each list three replicas',
  );

  await t.test('the :authority of a list is its first address, which the server accepts', () =>
    theAuthorityIsAccepted(replicas),
  );

  const client = connect(replicas.map((replica) => replica.address).join(','));
  t.after(() => client.close());
  let drained: Replica | undefined;

  await t.test('round robin: every replica gets its share', async () => {
    const counts = await spread(client, replicas, 300);
    check(counts.every((count) => count >= 50), `round robin over three replicas: ${counts}`);
  });

  await t.test('a replica stopped gracefully loses no call, and its game resumes', async () => {
    // SIGTERM: it drains, then ends its live games with UNAVAILABLE; unary calls keep
    // being answered all along.
    let duringDrain = 0;
    drained = await gameOutlivesItsReplica(client, replicas, async (replica) => {
      process.kill(replica.pid, 'SIGTERM');
      const deadline = Date.now() + 30_000;
      while (!exited(replica.pid)) {
        if (Date.now() > deadline) {
          throw new Error(`replica ${replica.address} did not stop in 30 s after SIGTERM`);
        }
        await judge(client); // throws if a call is lost
        duringDrain++;
      }
    });
    check(duringDrain > 0, `no unary call lost while ${drained.address} drained and stopped (${duringDrain} calls)`);
    const counts = await spread(client, replicas, 100);
    check(
      counts[replicas.indexOf(drained)] === 0 && counts.filter((count) => count >= 40).length === 2,
      `the stopped replica left the rotation: ${counts}`,
    );
  });

  await t.test('a replica killed outright: the game resumes all the same', async () => {
    const living = replicas.filter((replica) => replica !== drained);
    await gameOutlivesItsReplica(client, living, async (replica) => {
      process.kill(replica.pid, 'SIGKILL');
      while (!exited(replica.pid)) {
        await sleep(20);
      }
    });
  });
});
