// Balancing over three Arbiter replicas from @grpc/grpc-js, the way a Node backend does
// it without a proxy: one channel on `ipv4:A,B,C` with round robin (`connect` in
// arbiter.ts). Run by run.sh, which starts the replicas and passes each one's address
// and pid:
//
//   node dist/replicas.js --replica 127.0.0.1:PORT --pid PID   (three times)
//
// It holds what grpc-js does with such a target: the `:authority` it sends is the first
// address of the list, a well-formed one, so the server's HTTP/2 layer (h2) accepts it
// and no option is needed (grpcio, which sends the whole list, needs
// `grpc.default_authority`); requests are gzipped and a unary call failed UNAVAILABLE is
// retried; the calls spread over all three replicas; a replica stopped gracefully
// (SIGTERM) loses no unary call and its live game resumes on another replica; so does a
// game whose replica is killed (SIGKILL); a stream reset as nginx resets one counts as
// lost. Exits non-zero on any failure.

import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

import * as grpc from '@grpc/grpc-js';

import {
  connect,
  isServiceError,
  isStreamLost,
  playConnectFourResumably,
  Turns,
  within,
  type ArbiterServiceClient,
} from './arbiter';

interface Replica {
  address: string;
  pid: number;
}

function same(actual: unknown, expected: unknown): boolean {
  return JSON.stringify(actual) === JSON.stringify(expected);
}

function check(holds: boolean, what: string): void {
  if (!holds) {
    throw new Error(`check failed: ${what}`);
  }
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

/** What a bare HTTP/2 server saw of one gRPC request. */
interface Seen {
  authority: string;
  encoding: string;
  compressed: boolean;
}

/**
 * A bare HTTP/2 server on loopback port 0 that answers every gRPC call with `code` and
 * records what it saw of each request: to see what grpc-js sends.
 */
async function witness(code: grpc.status | 'reset'): Promise<{ address: string; seen: Seen[]; close: () => void }> {
  const seen: Seen[] = [];
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {}); // a stream it resets ends in an error on its side too
    // Answered on its first message: a live stream's requests do not end.
    stream.once('data', (chunk: Buffer) => {
      seen.push({
        authority: String(headers[':authority']),
        encoding: String(headers['grpc-encoding']),
        compressed: chunk[0] === 1, // the gRPC frame's compressed flag
      });
      if (code === 'reset') {
        // What nginx does to a stream whose upstream died.
        stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      } else {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(code) }, { endStream: true });
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { address: `127.0.0.1:${port}`, seen, close: () => server.close() };
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
 * What the channel of `connect` sends: the `:authority` of an `ipv4:` target with
 * several addresses (seen by a witness put last in the list, after the replicas), gzip,
 * and a call failed UNAVAILABLE sent again by the retry policy.
 */
async function whatTheChannelSends(replicas: Replica[]): Promise<void> {
  const last = await witness(grpc.status.UNIMPLEMENTED);
  const client = connect(`ipv4:${[...replicas.map((replica) => replica.address), last.address].join(',')}`);
  try {
    const ok = await callUntil(client, grpc.status.UNIMPLEMENTED, (ok) => ok >= 6 && last.seen.length >= 2);
    const authorities = [...new Set(last.seen.map((request) => request.authority))];
    check(
      same(authorities, [replicas[0].address]) && ok >= 6,
      `grpc-js sends the first address of the list as :authority (${authorities}), which the replicas accept ` +
        `(${ok} calls answered): no grpc.default_authority needed`,
    );
    check(
      last.seen.every((request) => request.encoding === 'gzip' && request.compressed),
      'every request is sent gzipped (grpc-encoding: gzip, compressed frames)',
    );
  } finally {
    client.close();
    last.close();
  }

  const down = await witness(grpc.status.UNAVAILABLE);
  const retrying = connect(down.address);
  try {
    await callUntil(retrying, grpc.status.UNAVAILABLE, () => down.seen.length > 0);
    check(down.seen.length === 4, `a unary call failed UNAVAILABLE is retried: ${down.seen.length} attempts`);
  } finally {
    retrying.close();
    down.close();
  }
}

/** A live stream reset as nginx resets one (RST_STREAM, INTERNAL_ERROR) counts as lost. */
async function aResetIsALostStream(): Promise<void> {
  const proxy = await witness('reset');
  const client = connect(proxy.address);
  try {
    const game = new Turns(client.playConnectFour(within(5)));
    const error = await game.send({ drop: 3 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    check(
      isServiceError(error) && error.code === grpc.status.INTERNAL && isStreamLost(error),
      `a stream reset by a proxy is resumed like an UNAVAILABLE one (${isServiceError(error) ? error.details : error})`,
    );
  } finally {
    client.close();
    proxy.close();
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

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { replica: { type: 'string', multiple: true }, pid: { type: 'string', multiple: true } },
  });
  const replicas: Replica[] = (values.replica ?? []).map((address, i) => ({
    address,
    pid: Number(values.pid?.[i]),
  }));
  if (replicas.length !== 3 || replicas.some((replica) => !(replica.pid > 0))) {
    throw new Error('usage: replicas.js --replica HOST:PORT --pid PID (three times)');
  }

  // 1. The authority (the first address of the list, never the list itself), gzip, retries.
  await whatTheChannelSends(replicas);
  await aResetIsALostStream();

  const client = connect(`ipv4:${replicas.map((replica) => replica.address).join(',')}`);
  try {
    // 2. Round robin: every replica gets its share.
    let counts = await spread(client, replicas, 300);
    check(counts.every((count) => count >= 50), `round robin over three replicas: ${counts}`);

    // 3. A replica stopped gracefully (SIGTERM: it drains, then ends its live games with
    // UNAVAILABLE): unary calls keep being answered all along, and its game resumes.
    let duringDrain = 0;
    const drained = await gameOutlivesItsReplica(client, replicas, async (replica) => {
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
    counts = await spread(client, replicas, 100);
    check(
      counts[replicas.indexOf(drained)] === 0 && counts.filter((count) => count >= 40).length === 2,
      `the stopped replica left the rotation: ${counts}`,
    );

    // 4. A replica killed outright: the connection drops, and the game resumes all the same.
    const living = replicas.filter((replica) => replica !== drained);
    await gameOutlivesItsReplica(client, living, async (replica) => {
      process.kill(replica.pid, 'SIGKILL');
      while (!exited(replica.pid)) {
        await sleep(20);
      }
    });
  } finally {
    client.close();
  }
  console.log('replicas: all checks passed');
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? `error: ${error.message}` : error);
  process.exitCode = 1;
});
