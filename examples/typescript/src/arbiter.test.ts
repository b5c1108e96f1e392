// Tests of the channel that `connect` makes, against witnesses (bare HTTP/2 servers, see
// witness.ts): no Arbiter server is needed, so `npm test` runs them anywhere.
//
//   npm run build && npm test

import * as assert from 'node:assert/strict';
import { test } from 'node:test';

import * as grpc from '@grpc/grpc-js';
import { getProtoPath } from 'google-proto-files';
import * as protobuf from 'protobufjs';

import {
  arbiterProto,
  badRequests,
  connect,
  isServiceError,
  isStreamLost,
  RETRY_POLICY,
  targetOf,
  Turns,
  within,
  type ArbiterServiceClient,
} from './arbiter';
import { witness } from './witness';

/** One JudgeTicTacToe call; resolves with its error (every witness answers with one). */
function failure(client: ArbiterServiceClient): Promise<grpc.ServiceError> {
  return new Promise((resolve, reject) => {
    client.judgeTicTacToe({ moves: [{ row: 1, col: 1 }] }, within(5), (error) =>
      error ? resolve(error) : reject(new Error('a witness answered OK')),
    );
  });
}

test('targetOf: one address as it is, a list of replicas as an ipv4: or ipv6: target', () => {
  assert.equal(targetOf('localhost:50051'), 'localhost:50051');
  assert.equal(targetOf('127.0.0.1:50051,127.0.0.1:50052'), 'ipv4:127.0.0.1:50051,127.0.0.1:50052');
  assert.equal(targetOf('[::1]:50051,[::1]:50052'), 'ipv6:[::1]:50051,[::1]:50052');
  assert.equal(targetOf('ipv4:10.0.0.1:50051,10.0.0.2:50051'), 'ipv4:10.0.0.1:50051,10.0.0.2:50051');
  assert.throws(() => targetOf('arbiter-1:50051,arbiter-2:50051'), /IPv4 .* or all IPv6/);
});

test("balancing as README.md says: node dist/client.js A,B, no scheme, no option", async () => {
  const [a, b] = [await witness(grpc.status.UNIMPLEMENTED), await witness(grpc.status.UNIMPLEMENTED)];
  const client = connect(`${a.address},${b.address}`);
  try {
    for (let i = 0; i < 10; i++) {
      const error = await failure(client);
      assert.equal(error.code, grpc.status.UNIMPLEMENTED, error.message); // not a failed name resolution
    }
    assert.ok(a.seen.length > 0 && b.seen.length > 0, `round robin: ${a.seen.length} and ${b.seen.length} calls`);
    const authorities = new Set([...a.seen, ...b.seen].map((request) => request.authority));
    assert.deepEqual([...authorities], [a.address], 'the first address of the list is the :authority');
    assert.ok(
      [...a.seen, ...b.seen].every((request) => request.encoding === 'gzip' && request.compressed),
      'every request is sent gzipped (grpc-encoding: gzip, compressed frames)',
    );
  } finally {
    client.close();
    a.close();
    b.close();
  }
});

test('the retry policy (retry_policy.json) names every unary RPC of the contract, and no stream', () => {
  const methods = Object.values(arbiterProto.arbiter.v1.ArbiterService.service);
  const unary = methods.filter((method) => !method.requestStream && !method.responseStream).map((method) => method.path);
  assert.ok(unary.includes('/arbiter.v1.ArbiterService/CheckChessMove'), unary.join(' '));
  assert.deepEqual(
    RETRY_POLICY.name.map(({ service, method }) => `/${service}/${method}`).sort(),
    unary.sort(),
  );
  assert.equal(RETRY_POLICY.retryPolicy.maxAttempts, 4);
  assert.deepEqual(RETRY_POLICY.retryPolicy.retryableStatusCodes, ['UNAVAILABLE']);
});

test('a unary call failed UNAVAILABLE is retried by the retry policy, 4 attempts in all', async () => {
  const down = await witness(grpc.status.UNAVAILABLE);
  const client = connect(down.address);
  try {
    const error = await failure(client);
    assert.equal(error.code, grpc.status.UNAVAILABLE);
    assert.equal(down.seen.length, 4);
  } finally {
    client.close();
    down.close();
  }
});

test('a stream reset as nginx resets one (RST_STREAM) counts as lost: the game resumes', async () => {
  const proxy = await witness('reset');
  const client = connect(proxy.address);
  try {
    const game = new Turns(client.playConnectFour(within(5)));
    const error = await game.send({ drop: 3 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(isServiceError(error) && error.code === grpc.status.INTERNAL, String(error));
    assert.ok(isStreamLost(error), error.details);
  } finally {
    client.close();
    proxy.close();
  }
});

test("badRequests reads the google.rpc.BadRequest of the grpc-status-details-bin trailer", async () => {
  const rpc = protobuf.loadSync([getProtoPath('rpc', 'status.proto'), getProtoPath('rpc', 'error_details.proto')]);
  const badRequest = rpc.lookupType('google.rpc.BadRequest');
  const status = rpc.lookupType('google.rpc.Status');
  const details = status.encode({
    code: grpc.status.INVALID_ARGUMENT,
    message: 'a malformed request',
    details: [
      {
        type_url: 'type.googleapis.com/google.rpc.BadRequest',
        value: badRequest.encode({ fieldViolations: [{ field: 'player', description: 'must be 1 or 2' }] }).finish(),
      },
    ],
  }).finish();
  const server = await witness(grpc.status.INVALID_ARGUMENT, {
    'grpc-status-details-bin': Buffer.from(details).toString('base64'),
  });
  const client = connect(server.address);
  try {
    const error = await failure(client);
    assert.equal(error.code, grpc.status.INVALID_ARGUMENT);
    assert.deepEqual(
      badRequests(error)
        .flatMap((request) => request.fieldViolations)
        .map(({ field, description }) => ({ field, description })),
      [{ field: 'player', description: 'must be 1 or 2' }],
    );
  } finally {
    client.close();
    server.close();
  }
});
