// A bare HTTP/2 server that stands in for a gRPC server in the tests, to see what grpc-js
// sends: the `:authority` and compression of each request, and how many attempts a call
// makes. Not part of the client.

import { once } from 'node:events';
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

import type * as grpc from '@grpc/grpc-js';

/** What a witness saw of one gRPC request. */
export interface Seen {
  authority: string;
  encoding: string;
  compressed: boolean;
}

export interface Witness {
  /** `127.0.0.1:PORT` */
  address: string;
  seen: Seen[];
  close: () => void;
}

/**
 * A witness on loopback port 0 that answers every gRPC call with `code` and the `trailers`
 * given (or resets its stream, as nginx resets a stream whose upstream died) and records
 * what it saw of each.
 */
export async function witness(
  code: grpc.status | 'reset',
  trailers: http2.OutgoingHttpHeaders = {},
): Promise<Witness> {
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
        stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      } else {
        stream.respond(
          { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(code), ...trailers },
          { endStream: true },
        );
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { address: `127.0.0.1:${port}`, seen, close: () => server.close() };
}
