// The pieces of an Arbiter client on @grpc/grpc-js that a Node backend copies: the stub
// loaded from proto/arbiter/v1/arbiter.proto with @grpc/proto-loader (its types generated
// by proto-loader-gen-types into src/generated/), a channel with gzip, retries and
// client-side balancing, promises over the callback API, the google.rpc.BadRequest of
// an error, and a Connect Four game that survives the loss of its stream.

import * as path from 'node:path';

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { getProtoPath } from 'google-proto-files';
import * as protobuf from 'protobufjs';

import type { ProtoGrpcType } from './generated/arbiter';
import type { ArbiterServiceClient } from './generated/arbiter/v1/ArbiterService';
import type { PlayConnectFourRequest } from './generated/arbiter/v1/PlayConnectFourRequest';
import type { PlayConnectFourResponse__Output } from './generated/arbiter/v1/PlayConnectFourResponse';
import type { BadRequest__Output } from './generated/google/rpc/BadRequest';
import type { Status__Output } from './generated/google/rpc/Status';

export type { ArbiterServiceClient };

const SERVICE = 'arbiter.v1.ArbiterService';
const PROTO_ROOT = path.resolve(__dirname, '..', '..', '..', 'proto');

// The same options as the `generate` script of package.json gives proto-loader-gen-types,
// so that the generated types describe the objects the stub hands over.
const LOADER_OPTIONS: protoLoader.Options = {
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

const arbiterProto = grpc.loadPackageDefinition(
  protoLoader.loadSync('arbiter/v1/arbiter.proto', { ...LOADER_OPTIONS, includeDirs: [PROTO_ROOT] }),
) as unknown as ProtoGrpcType;

// Every unary RPC is pure, so each is safe to retry: the standard gRPC retry policy
// sends it again (up to 4 attempts in all) when it fails UNAVAILABLE.
const RETRY_UNARY_CALLS = {
  name: ['CheckOthelloMove', 'ListOthelloMoves', 'CheckConnectFour', 'JudgeTicTacToe', 'CheckBatch'].map(
    (method) => ({ service: SERVICE, method }),
  ),
  retryPolicy: {
    maxAttempts: 4,
    initialBackoff: '0.1s',
    maxBackoff: '1s',
    backoffMultiplier: 2,
    retryableStatusCodes: ['UNAVAILABLE'],
  },
};

/**
 * A client of one server (`host:port`, `localhost:50051` by default) or of several
 * replicas, balanced from the client: `ipv4:` (or `ipv6:`) with the addresses separated
 * by commas, round robin over them. grpc-js sends the first address of such a list as
 * `:authority`, a well-formed one, so no `grpc.default_authority` is needed (grpcio
 * needs it: it sends the whole list). grpc-js has no client-side health checking; a
 * replica leaves the rotation when its connection closes, and a call refused on the way
 * out is retried elsewhere by the retry policy.
 */
export function connect(target: string, options: grpc.ChannelOptions = {}): ArbiterServiceClient {
  const balanced = target.includes(',');
  const serviceConfig = {
    ...(balanced ? { loadBalancingConfig: [{ round_robin: {} }] } : {}),
    methodConfig: [RETRY_UNARY_CALLS],
  };
  return new arbiterProto.arbiter.v1.ArbiterService(target, grpc.credentials.createInsecure(), {
    'grpc.service_config': JSON.stringify(serviceConfig),
    // Every request message is sent gzipped; the server answers each in kind.
    'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip,
    ...options,
  });
}

/** Call options with a deadline `seconds` from now: every call gets one. */
export function within(seconds: number): grpc.CallOptions {
  return { deadline: new Date(Date.now() + seconds * 1000) };
}

/**
 * A unary call as a promise. `start` makes the call with the options given (a deadline)
 * and the callback, e.g. `(options, done) => client.judgeTicTacToe(request, options, done)`.
 */
export function unary<Reply>(
  start: (options: grpc.CallOptions, done: grpc.requestCallback<Reply>) => grpc.ClientUnaryCall,
  seconds = 5,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    start(within(seconds), (error, reply) => (error ? reject(error) : resolve(reply as Reply)));
  });
}

/**
 * A live game's stream played one message at a time: `send` writes a message and waits
 * for its reply, so that each move can be chosen after the last reply, as a bot or a game
 * server does. A stream that ends with an error rejects the pending `send` with it.
 */
export class Turns<Request, Reply> {
  private readonly replies: AsyncIterator<Reply>;

  constructor(readonly call: grpc.ClientDuplexStream<Request, Reply>) {
    this.replies = call[Symbol.asyncIterator]();
  }

  async send(message: Request): Promise<Reply> {
    this.call.write(message);
    const next = await this.replies.next();
    if (next.done) {
      throw new Error('the stream ended before answering');
    }
    return next.value;
  }

  /** Ends the requests; resolves once the server has ended its replies, with none left. */
  async close(): Promise<void> {
    this.call.end();
    const next = await this.replies.next();
    if (!next.done) {
      throw new Error('a reply came after the last message');
    }
  }
}

/** Every reply of a stream whose messages are all known up front. */
export async function exchange<Request, Reply>(
  call: grpc.ClientDuplexStream<Request, Reply>,
  messages: Request[],
): Promise<Reply[]> {
  for (const message of messages) {
    call.write(message);
  }
  call.end();
  const replies: Reply[] = [];
  for await (const reply of call) {
    replies.push(reply as Reply);
  }
  return replies;
}

// google.rpc.Status and its details, from Google's own protos (the google-proto-files
// package), decoded with protobufjs: the rich error model, as grpc-js leaves it in the
// `grpc-status-details-bin` trailer.
const googleRpc = protobuf.loadSync([getProtoPath('rpc', 'status.proto'), getProtoPath('rpc', 'error_details.proto')]);
const STATUS = googleRpc.lookupType('google.rpc.Status');
const BAD_REQUEST = googleRpc.lookupType('google.rpc.BadRequest');
const AS_OBJECT: protobuf.IConversionOptions = { defaults: true, arrays: true, longs: String, enums: String };

/** The `google.rpc.BadRequest` details of a failed call: none when it carries none. */
export function badRequests(error: grpc.ServiceError): BadRequest__Output[] {
  const [encoded] = error.metadata?.get('grpc-status-details-bin') ?? [];
  if (!Buffer.isBuffer(encoded)) {
    return [];
  }
  const status = STATUS.toObject(STATUS.decode(encoded), AS_OBJECT) as Status__Output;
  return status.details
    .filter((detail) => detail.type_url === `type.googleapis.com/${BAD_REQUEST.fullName.slice(1)}`)
    .map((detail) => BAD_REQUEST.toObject(BAD_REQUEST.decode(detail.value), AS_OBJECT) as BadRequest__Output);
}

export function isServiceError(error: unknown): error is grpc.ServiceError {
  return error instanceof Error && typeof (error as Partial<grpc.ServiceError>).code === 'number';
}

/**
 * A stream lost on the way, after which the game is resumed from its history: UNAVAILABLE
 * (a server shutting down, a connection dropped), or INTERNAL with RST_STREAM, as a
 * proxy such as nginx resets a stream whose upstream died. A resume replays the moves
 * applied, so it is always safe.
 */
export function isStreamLost(error: unknown): error is grpc.ServiceError {
  return (
    isServiceError(error) &&
    (error.code === grpc.status.UNAVAILABLE ||
      (error.code === grpc.status.INTERNAL && error.details.includes('RST_STREAM')))
  );
}

export interface ResumableOptions {
  /** Rows and columns of the board (0 for the defaults, 6 and 7). */
  rows?: number;
  cols?: number;
  /** How many streams to open at most. */
  attempts?: number;
  /** Told of each drop's reply and of the server (`host:port`) that sent it. */
  onReply?: (drop: number, reply: PlayConnectFourResponse__Output, peer: string) => void | Promise<void>;
}

/**
 * Plays `drops` on a PlayConnectFour stream, resuming on a new stream (on any replica)
 * whenever the stream is lost: the loop a game server copies. What it keeps is the list of
 * drops the server applied; the reply to the resuming setup, which replays them, is the
 * game as it stood, so play goes on as if the stream had never ended. A drop whose reply
 * never came is sent again. Returns the last reply.
 */
export async function playConnectFourResumably(
  client: ArbiterServiceClient,
  drops: number[],
  { rows = 0, cols = 0, attempts = 5, onReply }: ResumableOptions = {},
): Promise<PlayConnectFourResponse__Output> {
  const applied: number[] = [];
  let answered = 0;
  let last: PlayConnectFourResponse__Output | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const game = new Turns<PlayConnectFourRequest, PlayConnectFourResponse__Output>(
      client.playConnectFour(within(30)),
    );
    try {
      await game.send({ setup: { rows, cols, history: applied } }); // the game as it stood
      for (const drop of drops.slice(answered)) {
        const reply = await game.send({ drop });
        answered++;
        if (!reply.rejected) {
          applied.push(drop);
        }
        last = reply;
        await onReply?.(drop, reply, game.call.getPeer());
      }
      await game.close();
      if (last === undefined) {
        throw new Error('no drop was played');
      }
      return last;
    } catch (error) {
      game.call.cancel();
      if (!isStreamLost(error)) {
        throw error;
      }
      console.log(
        `  stream lost (${grpc.status[error.code]}: ${error.details}); resuming after ${applied.length} drops`,
      );
    }
  }
  throw new Error(`the game could not be resumed in ${attempts} streams`);
}
