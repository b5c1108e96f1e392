#!/usr/bin/env python3
"""A hostile client that holds live games and never reads: how much server memory can
one connection hold, and for how long?

It opens one HTTP/2 connection advertising a 1-byte flow-control window (so the server
can send a byte of each reply and must keep the rest), answers PINGs, never acknowledges
a byte, and on each of `--streams` streams sets up the most expensive game Arbiter has
(a 100x100 Othello board with thousands of legal moves) and sends moves. It prints the
server's resident memory before, while the games are held, and after the server has
freed them (the games end with the idle timeout or the game lifetime, whichever the
server was started with), and how long that took.

    python3 tests/abuse/hold.py --address 127.0.0.1:50051 --pid SERVER_PID

Only the `h2` package is needed (tests/abuse/requirements.txt installs it).
"""

import argparse
import pathlib
import socket
import sys
import threading
import time

import h2.config
import h2.connection
import h2.settings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "lib"))
from proc import rss_kib  # noqa: E402
from wire import field, varint  # noqa: E402


def othello_setup(side):
    """PlayOthelloRequest{setup: {board: rows, to_move: "B"}} on a board where a third
    of the cells are legal for Black ('.' then 'W' then 'B' along each row)."""
    row = (".WB" * side)[:side].encode()
    board = b"".join(field(1, 2, row) for _ in range(side))
    return field(1, 2, field(1, 2, board) + field(2, 2, b"B"))


def othello_move(row, col):
    cell = varint(1 << 3) + varint(row) + varint(2 << 3) + varint(col)
    return field(2, 2, cell)


def framed(message):
    return b"\0" + len(message).to_bytes(4, "big") + message


def live_games(metrics):
    """The server's arbiter_live_games, summed over games."""
    import urllib.request
    text = urllib.request.urlopen(f"http://{metrics}/metrics", timeout=5).read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("arbiter_live_games"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--streams", type=int, default=256)
    parser.add_argument("--side", type=int, default=100)
    parser.add_argument("--hold", type=float, default=3.0, help="seconds to hold before measuring")
    parser.add_argument("--limit", type=float, default=120.0, help="give up waiting after this long")
    parser.add_argument("--metrics", required=True,
                        help="the server's metrics address (--metrics-listen), to read arbiter_live_games")
    args = parser.parse_args()
    host, port = args.address.rsplit(":", 1)

    before = rss_kib(args.pid)
    sock = socket.create_connection((host, int(port)))
    config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
    conn = h2.connection.H2Connection(config=config)
    conn.local_settings = h2.settings.Settings(client=True, initial_values={
        h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1,
        h2.settings.SettingCodes.ENABLE_PUSH: 0,
    })
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    lock = threading.Lock()
    closed = threading.Event()

    def pump():
        # Reads frames so that PINGs and SETTINGS are answered; never acknowledges
        # DATA, so no window ever opens.
        while not closed.is_set():
            try:
                data = sock.recv(65536)
            except OSError:
                break
            if not data:
                break
            with lock:
                try:
                    conn.receive_data(data)
                except Exception:  # a reset or GOAWAY ends the experiment
                    break
                out = conn.data_to_send()
            if out:
                sock.sendall(out)
        closed.set()

    threading.Thread(target=pump, daemon=True).start()
    setup = framed(othello_setup(args.side))
    move = framed(othello_move(0, 0))
    time.sleep(0.5)  # the server's SETTINGS and window updates
    pending = {}
    with lock:
        for _ in range(args.streams):
            stream = conn.get_next_available_stream_id()
            conn.send_headers(stream, [
                (":method", "POST"), (":scheme", "http"), (":authority", args.address),
                (":path", "/arbiter.v1.ArbiterService/PlayOthello"),
                ("content-type", "application/grpc"), ("te", "trailers"),
            ])
            pending[stream] = setup + move * 4
        sock.sendall(conn.data_to_send())
    # Send every stream's messages as the server's windows allow: it opens them only as
    # it reads, so this also shows how much it takes in from a client it cannot answer.
    deadline = time.monotonic() + 10
    while pending and time.monotonic() < deadline and not closed.is_set():
        with lock:
            for stream in list(pending):
                room = min(conn.local_flow_control_window(stream), conn.max_outbound_frame_size)
                if room > 0:
                    data = pending[stream]
                    conn.send_data(stream, data[:room])
                    if len(data) > room:
                        pending[stream] = data[room:]
                    else:
                        del pending[stream]
            out = conn.data_to_send()
        if out:
            sock.sendall(out)
        time.sleep(0.01)
    print(f"streams whose messages the server did not take in whole: {len(pending)}")
    time.sleep(args.hold)
    held = rss_kib(args.pid)
    print(f"streams: {args.streams}, board {args.side}x{args.side}")
    print(f"server RSS: {before} KiB before, {held} KiB while held "
          f"({(held - before) / args.streams:.1f} KiB per game)")
    print(f"live games while held: {live_games(args.metrics):.0f}")
    start = time.monotonic()
    # The server frees the games by itself; the connection stays open, never read.
    while live_games(args.metrics) > 0 and time.monotonic() - start < args.limit:
        time.sleep(0.2)
    print(f"live games {live_games(args.metrics):.0f} after {time.monotonic() - start:.1f} s more "
          f"({time.monotonic() - start + args.hold:.1f} s after they opened); "
          f"server RSS then {rss_kib(args.pid)} KiB; connection open: {not closed.is_set()}")
    closed.set()
    sock.close()


if __name__ == "__main__":
    main()
