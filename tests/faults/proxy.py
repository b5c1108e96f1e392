"""A fault-injecting TCP proxy for the bad-network test (tests/faults/faults.py).

No maintained fault proxy is packaged by Debian or PyPI (toxiproxy ships as Go release
binaries), and the kernel's netem cannot be relied on, so this one is small and in the
tests. It listens on 127.0.0.1 port 0, opens one upstream connection per client
connection, and copies bytes both ways, with three faults that can be switched on and
off while connections are open:

- latency and jitter: each chunk read is written on after `latency` seconds plus or
  minus up to `jitter` (uniform), in order: a chunk never overtakes the one before it,
  as on one TCP connection;
- `reset_all()`: every open connection is reset in both directions (SO_LINGER 0, then
  close: the kernel sends RST, not FIN), whatever it is carrying;
- `blackhole_all()`: every open connection goes silent in both directions: nothing more
  is read or written on either side, queued chunks are dropped, and both sockets stay
  open (no FIN, no RST), as when packets are black-holed. Each side's own kernel still
  acknowledges what fits in the proxy's receive buffer; past that the sender's window
  shuts. Connections opened later are forwarded as usual.

Everything runs on the caller's asyncio loop; `close()` resets what is left open.
"""

import asyncio
import random
import socket
import struct
import time

CHUNK = 64 * 1024


def _reset(writer):
    """Closes `writer`'s socket with RST (SO_LINGER on, 0 s), not FIN."""
    transport = writer.transport
    if transport.is_closing():
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    transport.abort()


class _Pair:
    """One client connection and its upstream connection."""

    def __init__(self, proxy, client, upstream):
        self.proxy = proxy
        self.client = client        # (reader, writer)
        self.upstream = upstream    # (reader, writer)
        self.stopped = False     # reset or black-holed: the copying tasks close nothing
        self.tasks = []
        self.opened = time.monotonic()

    def start(self):
        for source, sink in ((self.client, self.upstream), (self.upstream, self.client)):
            queue = asyncio.Queue()
            self.tasks.append(asyncio.create_task(self._read(source[0], sink[1], queue)))
            self.tasks.append(asyncio.create_task(self._write(sink[1], queue)))

    async def _read(self, reader, sink, queue):
        last = 0.0
        try:
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    break
                self.proxy.bytes += len(data)
                delay = self.proxy.latency
                if self.proxy.jitter:
                    delay += self.proxy.rng.uniform(-self.proxy.jitter, self.proxy.jitter)
                # In order: never before the chunk read before it.
                last = max(last, time.monotonic() + max(0.0, delay))
                queue.put_nowait((last, data))
        except (ConnectionError, OSError):
            pass
        queue.put_nowait((None, None))

    async def _write(self, writer, queue):
        try:
            while True:
                at, data = await queue.get()
                if data is None:
                    break
                wait = at - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
            # The source ended (FIN or reset): pass a FIN on, then close once the other
            # direction is done too.
            if writer.can_write_eof():
                writer.write_eof()
        except (ConnectionError, OSError):
            pass
        finally:
            self._maybe_done()

    def _maybe_done(self):
        if self.stopped:
            return
        current = asyncio.current_task()
        if all(t.done() or t is current for t in self.tasks):
            self.close()

    def close(self):
        for _, writer in (self.client, self.upstream):
            if not writer.transport.is_closing():
                writer.close()
        self.proxy.pairs.discard(self)

    def reset(self):
        self.stopped = True
        for task in self.tasks:
            task.cancel()
        for _, writer in (self.client, self.upstream):
            _reset(writer)
        self.proxy.pairs.discard(self)

    def blackhole(self):
        """Stops both directions; the sockets stay open until the proxy closes."""
        self.stopped = True
        for task in self.tasks:
            task.cancel()
        self.proxy.pairs.discard(self)
        self.proxy.silent.add(self)


class FaultProxy:
    def __init__(self, upstream_host, upstream_port, seed=1):
        self.upstream = (upstream_host, upstream_port)
        self.rng = random.Random(seed)
        self.latency = 0.0
        self.jitter = 0.0
        self.pairs = set()      # connections being forwarded
        self.silent = set()     # black-holed connections, held open
        self.server = None
        self.port = None
        self.address = None
        self.connections = 0
        self.resets = 0
        self.blackholed = 0
        self.bytes = 0

    async def start(self):
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        return self

    async def _accept(self, reader, writer):
        self.connections += 1
        try:
            upstream = await asyncio.wait_for(asyncio.open_connection(*self.upstream), 5)
        except (OSError, asyncio.TimeoutError):
            _reset(writer)
            return
        for w in (writer, upstream[1]):
            sock = w.transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pair = _Pair(self, (reader, writer), upstream)
        self.pairs.add(pair)
        pair.start()

    def set_latency(self, latency, jitter=0.0):
        self.latency, self.jitter = latency, jitter

    def reset_all(self):
        """Resets every connection being forwarded; returns how many."""
        pairs = list(self.pairs)
        for pair in pairs:
            pair.reset()
        self.resets += len(pairs)
        return len(pairs)

    def blackhole_all(self):
        """Black-holes every connection being forwarded; returns how many."""
        pairs = list(self.pairs)
        for pair in pairs:
            pair.blackhole()
        self.blackholed += len(pairs)
        return len(pairs)

    def release_silent(self):
        """Resets the black-holed connections still held open."""
        for pair in list(self.silent):
            for _, writer in (pair.client, pair.upstream):
                _reset(writer)
        self.silent.clear()

    async def close(self):
        if self.server is not None:
            self.server.close()
        for pair in list(self.pairs):
            pair.reset()
        self.release_silent()
        if self.server is not None:
            await asyncio.wait_for(self.server.wait_closed(), 5)
