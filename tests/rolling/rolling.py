"""The rolling-restart test (run by tests/rolling/run.sh): no live game and no unary call
is lost when every replica of three is restarted in turn (`--stop term`, a graceful
restart) or killed in turn (`--stop kill`, SIGKILL: a crash, an OOM kill, a node lost),
behind two balancers of the ecosystem's kind.

Two phases, one per balancer, each stopping all three replicas one after the other, a
new replica (on a new port) taking each one's place:

- `round-robin`: grpcio's own client-side balancing over the three addresses
  (`ipv4:A,B,C` with `grpc.lb_policy_name=round_robin`, and `grpc.default_authority`,
  since grpcio would otherwise send the whole address list as `:authority`, which the
  server's HTTP/2 stack refuses). A replica leaves the list (a new channel) once its
  health stops saying SERVING (NOT_SERVING after SIGTERM; no answer after SIGKILL),
  and its replacement joins once SERVING.
- `nginx`: Debian's nginx as an L7 gRPC proxy (`grpc_pass` to an upstream of the three).
  A replica leaves the upstream (the config rewritten, then SIGHUP) the same way, and
  its replacement joins the same way. nginx answers its own failures (502, 503, 504: a
  replica that died under a call) with a gRPC UNAVAILABLE, Trailers-Only, rather than
  an HTML page (see Nginx.write_config).

With `--upstream fixed` there is one phase, behind nginx as it is usually run in front of
VMs: its upstream lists the first three replicas' addresses once and is never rewritten,
and nothing tells it that a replica stops. Each replica in turn gets SIGTERM (SIGKILL
with `--stop kill`), exits, and its replacement starts on the same address (the first
three took ports the OS picked; a replacement whose bind fails while the old socket goes
tries again). nginx's configuration is FIXED_NGINX[`--nginx-conf`]: `deploy`, DEPLOY.md's
(the default), or `defaults`, nginx's defaults beyond keepalive (each server max_fails=1
fail_timeout=10s), and `--nginx-*` options change single directives. nginx logs at
`info` and writes an access log of every call with its upstreams (nginx/access.log; keep
the logs with --keep-logs). `--retry-policy` gives the unary calls the retry policy with
`--stop term` too. Such a run also fails if a resume took more than a second
(`--max-resume`).

Throughout each phase, SLOTS single-game streams (Tic-Tac-Toe, Othello, Connect Four,
a third each) play games back to back, a move every few hundred milliseconds, and
MANY PlayMany streams hold GAMES_PER_MANY games each; tasks make unary calls back to
back. A game client keeps what the README says a game server must keep: the moves the
server applied (and, for Othello, the starting board and side). When its stream ends
with UNAVAILABLE (the drain's "server shutting down: resume the game with a setup and
its history", or a transport error such as "Stream removed (sendmsg: Broken pipe)"), or
a write fails because the stream's transport has just ended it (grpcio's asyncio API
then makes up a local INTERNAL "Internal error from Core" instead of the stream's
status: see LOCAL_WRITE_FAILURE), it opens a new stream through the balancer with a
setup whose history is those moves, and sends again the move whose reply it had not
received. With `--stop kill` it also resumes a stream that ends INTERNAL with
"RST_STREAM" in its details: nginx resets the client's stream (RST_STREAM,
INTERNAL_ERROR) when the replica behind it dies, and a resume replays a history, so it
is always safe. Nothing else is resumed: any other status (a server's INTERNAL, say),
or a reply that takes over READ_TIMEOUT seconds, loses the game.

Afterwards every game is played once more, uninterrupted, against one replica, with the
same moves, and every reply is compared, field for field (protobuf equality): the reply
to each move, the reply to the first setup, and the reply to each resuming setup (which
must be the state after the history: the uninterrupted game's reply to its last applied
move). The unary calls are made once each, with a deadline of UNARY_DEADLINE seconds.
With `--stop term` nothing retries them but grpcio's transparent retry of a call that
never left the client (gRFC A6). With `--stop kill` the channel also carries the
service config's retry policy (RETRY_POLICY: up to 4 attempts on UNAVAILABLE, for the
unary RPCs, which are all pure), as gRPC's guidance says a client should; nothing else
retries. A unary call is lost if it ends in any error, or with a wrong answer.

Exit status 0 only when no game is lost, no reply differs, no unary call is lost and no
replica panicked. The last line is "N passed, M failed".
"""

import argparse
import asyncio
import collections
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import grpc

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
from game_clients import (  # noqa: E402
    LOCAL_WRITE_FAILURE, Checks, Client, ServerProcess, log, log_trouble, pb, pb_grpc, read,
    replay, start_games)

READ_TIMEOUT = 15.0
UNARY_DEADLINE = 5.0
RESUME_ATTEMPTS = 10
SHUTDOWN_MESSAGE = "server shutting down: resume the game with a setup and its history"
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
SERVING, NOT_SERVING = b"\x08\x01", b"\x08\x02"


# ---------------------------------------------------------------------------------------
# Processes: replicas and nginx, each started by us and stopped by its own pid.


class Replica(ServerProcess):
    """One arbiter process on 127.0.0.1 port 0 (or on `listen`: a replacement on its
    predecessor's port, --upstream fixed); its address is read from its log."""

    def __init__(self, binary, workdir, name, extra, listen="127.0.0.1:0",
                 log_filter="warn,arbiter=info"):
        super().__init__(binary, pathlib.Path(workdir) / f"{name}.log", name, extra,
                         listen=listen, log_filter=log_filter)

    async def health(self):
        """The replica's health over a new connection, or None if it does not answer."""
        channel = grpc.aio.insecure_channel(self.address)
        try:
            check = channel.unary_unary(HEALTH_CHECK)
            return await check(b"", timeout=1.0)
        except grpc.RpcError:
            return None
        finally:
            await channel.close()

    async def wait_health(self, wanted):
        for _ in range(200):
            if await self.health() == wanted:
                return
            await asyncio.sleep(0.05)
        raise RuntimeError(f"{self.name} never answered {wanted!r}")

    async def wait_unanswered(self):
        """Returns once the replica's health no longer answers (it was killed)."""
        for _ in range(200):
            if await self.health() is None:
                return
            await asyncio.sleep(0.05)
        raise RuntimeError(f"{self.name} still answers its health check")

    def terminate(self):
        self.process.send_signal(signal.SIGTERM)

    def sigkill(self):
        self.process.send_signal(signal.SIGKILL)

    async def exited(self):
        while self.process.poll() is None:
            await asyncio.sleep(0.05)
        return self.process.returncode


class Nginx:
    """nginx in the foreground, with its own config, pid and logs in `workdir`.

    nginx cannot listen on port 0, so the listening socket is ours: bound to
    127.0.0.1 port 0 here and handed to nginx as an inherited socket (its `NGINX`
    environment variable, the mechanism of its binary upgrade), whose port the config's
    `listen` names. No port is freed and bound again."""

    def __init__(self, binary, workdir, grpc_error_page=True, log_level="notice",
                 keepalive=64, server_params="", upstream_extra="", location_extra="",
                 access_log=False):
        self.binary = binary
        self.grpc_error_page = grpc_error_page
        # --upstream fixed: what its nginx configuration adds (see FIXED_NGINX).
        self.log_level = log_level
        self.keepalive = keepalive
        self.server_params = server_params
        self.upstream_extra = upstream_extra
        self.location_extra = location_extra
        self.access_log = access_log
        self.dir = pathlib.Path(workdir) / "nginx"
        self.dir.mkdir()
        os.chmod(self.dir, 0o755)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(511)
        self.listener.set_inheritable(True)
        self.port = self.listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.conf = self.dir / "nginx.conf"
        self.error_log = self.dir / "error.log"
        self.process = None

    def write_config(self, upstreams):
        params = f" {self.server_params}" if self.server_params else ""
        servers = "\n".join(f"    server {address}{params};" for address in upstreams)
        upstream_extra = "".join(f"\n    {d.strip()};" for d in self.upstream_extra.split(";")
                                 if d.strip())
        location_extra = "".join(f"\n      {d.strip()};" for d in self.location_extra.split(";")
                                 if d.strip())
        d = self.dir
        # Per call: when it ended, how long it took, the upstream(s) tried and their
        # statuses and times ("a, b" when nginx went on to the next upstream).
        access_log = (f"""log_format calls '$time_iso8601 $msec $status $request_time '
                    '"$request_uri" up=$upstream_addr st=$upstream_status '
                    'ct=$upstream_connect_time ht=$upstream_header_time '
                    'rt=$upstream_response_time';
  access_log {d}/access.log calls;""" if self.access_log else "access_log off;")
        # nginx's own failures (a replica that died under a call: 502) answered as gRPC
        # UNAVAILABLE in a Trailers-Only response, as nginx's gRPC gateway guide does,
        # instead of an HTML 502 page. A client's retry policy may retry only a call whose
        # response headers have not come (gRFC A6): grpcio retries the Trailers-Only
        # answer every time, the HTML 502 (headers, then a body) only sometimes.
        error_page = """
      error_page 502 503 504 = @unavailable;
    }
    location @unavailable {
      default_type application/grpc;
      add_header grpc-status 14 always;
      add_header grpc-message "upstream unavailable" always;
      return 204;""" if self.grpc_error_page else ""
        self.conf.write_text(f"""\
daemon off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {self.error_log} {self.log_level};
worker_rlimit_nofile {DEPLOY_NGINX['worker_rlimit_nofile']};
events {{ worker_connections {DEPLOY_NGINX['worker_connections']}; }}
http {{
  {access_log}
  client_body_temp_path {d}/body;
  proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi;
  scgi_temp_path {d}/scgi;
  upstream arbiter {{
{servers}
    keepalive {self.keepalive};{upstream_extra}
  }}
  server {{
    listen 127.0.0.1:{self.port} http2;
    http2_max_concurrent_streams {DEPLOY_NGINX['http2_max_concurrent_streams']};
    location / {{
      grpc_pass grpc://arbiter;
      grpc_read_timeout 1h;
      grpc_send_timeout 1h;{location_extra}{error_page}
    }}
  }}
}}
""")

    async def start(self, upstreams):
        self.write_config(upstreams)
        fd = self.listener.fileno()
        self.process = subprocess.Popen(
            [self.binary, "-c", str(self.conf), "-p", str(self.dir), "-e", str(self.error_log)],
            pass_fds=(fd,), env={**os.environ, "NGINX": f"{fd};"},
            stdout=subprocess.DEVNULL, stderr=open(self.dir / "stderr.log", "w"))
        await self.wait_for_log("start worker process", 1)

    async def wait_for_log(self, text, count):
        for _ in range(200):
            if self.error_log.exists() and self.error_log.read_text().count(text) >= count:
                return
            if self.process.poll() is not None:
                raise RuntimeError("nginx exited:\n" + self.error_log.read_text()
                                   + (self.dir / "stderr.log").read_text())
            await asyncio.sleep(0.05)
        raise RuntimeError(f"nginx never logged {text!r} x{count}:\n" + self.error_log.read_text())

    async def reload(self, upstreams):
        """Rewrites the upstream and reloads (SIGHUP, as `nginx -s reload` sends it);
        returns once the new worker has started."""
        done = self.error_log.read_text().count("start worker process")
        self.write_config(upstreams)
        self.process.send_signal(signal.SIGHUP)
        await self.wait_for_log("start worker process", done + 1)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# ---------------------------------------------------------------------------------------
# Balancers: where a new stream or call goes.


CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 64 << 20)]

# The service config's retry policy for the unary RPCs (all pure: the same request always
# gets the same answer, so a call sent twice changes nothing), as the examples' channels
# carry it. Live-game streams are not in it: a lost game is resumed from its history.
SERVICE = "arbiter.v1.ArbiterService"
RETRY_POLICY = {
    "methodConfig": [{
        "name": [{"service": SERVICE, "method": method}
                 for method in ["CheckOthelloMove", "ListOthelloMoves", "CheckConnectFour",
                                "JudgeTicTacToe", "CheckBatch"]],
        "retryPolicy": {
            "maxAttempts": 4,
            "initialBackoff": "0.1s",
            "maxBackoff": "1s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": ["UNAVAILABLE"],
        },
    }],
}


def deploy_nginx():
    """The settings of DEPLOY.md's nginx configuration that every nginx of this test
    uses as they are (each a number): read from DEPLOY.md, so that the test runs what it
    gives."""
    text = (pathlib.Path(__file__).resolve().parents[2] / "DEPLOY.md").read_text()
    block = re.search(r"```nginx\n(.*?)```", text, re.S)
    if block is None:
        raise SystemExit("DEPLOY.md has no nginx configuration")
    settings = {}
    for name in ("worker_rlimit_nofile", "worker_connections", "http2_max_concurrent_streams"):
        found = re.search(rf"^\s*{name} (\d+);", block.group(1), re.M)
        if found is None:
            raise SystemExit(f"DEPLOY.md's nginx configuration sets no {name}")
        settings[name] = int(found.group(1))
    settings["text"] = block.group(1)
    return settings


DEPLOY_NGINX = deploy_nginx()


# --upstream fixed: nginx's configuration beyond the test's usual one (grpc_pass, the
# long read and send timeouts, the gRPC answer to its own failures): `defaults`, as nginx
# is usually run in front of VMs; `deploy`, DEPLOY.md's.
FIXED_NGINX = {
    "defaults": {
        "why": "keepalive 32 and grpc_next_upstream error timeout (nginx's default), "
               "nothing else: each server max_fails=1 fail_timeout=10s",
        "keepalive": 32, "server": "", "upstream": "",
        "location": "grpc_next_upstream error timeout",
    },
    "deploy": {
        "why": "DEPLOY.md's: as defaults, and a server that refused a connection is skipped "
               "for 1 s, not nginx's 10 s (max_fails=1 fail_timeout=1s), and a connection "
               "not set up within 1 s goes to the next server (grpc_connect_timeout 1s)",
        "keepalive": 32, "server": "max_fails=1 fail_timeout=1s", "upstream": "",
        "location": "grpc_next_upstream error timeout; grpc_connect_timeout 1s",
    },
}

# The `deploy` configuration is DEPLOY.md's: each of its directives stands there as is.
for _directive in ([f"keepalive {FIXED_NGINX['deploy']['keepalive']};",
                    FIXED_NGINX["deploy"]["server"]]
                   + [f"{d.strip()};" for d in FIXED_NGINX["deploy"]["location"].split(";")
                      if d.strip()]):
    if _directive not in DEPLOY_NGINX["text"]:
        raise SystemExit(f"DEPLOY.md's nginx configuration lacks {_directive!r}")


def channel_options(retry):
    """The game clients' and unary callers' channel options; `retry` adds the retry
    policy (and `grpc.enable_retries`, on by default in grpcio but said here)."""
    if not retry:
        return list(CHANNEL_OPTIONS)
    return CHANNEL_OPTIONS + [("grpc.enable_retries", 1),
                              ("grpc.service_config", json.dumps(RETRY_POLICY))]


class RoundRobin:
    """grpcio client-side round robin over the replicas' addresses; a change of the
    list makes a new channel (the old ones stay open for the streams they carry)."""

    name = "round-robin"

    def __init__(self, options):
        self.options = options
        self.channel = None
        self.old = []

    async def set(self, addresses):
        target = "ipv4:" + ",".join(addresses)
        options = self.options + [("grpc.lb_policy_name", "round_robin"),
                                  ("grpc.default_authority", "arbiter")]
        if self.channel is not None:
            self.old.append(self.channel)
        self.channel = grpc.aio.insecure_channel(target, options=options)

    async def close(self):
        for channel in self.old + [self.channel]:
            await channel.close()


class Proxied:
    """One channel to nginx, whose upstream follows the replicas; with `fixed`
    (--upstream fixed) the upstream is the first three addresses, never rewritten."""

    name = "nginx"

    def __init__(self, nginx, options, fixed=False):
        self.nginx = nginx
        self.options = options
        self.fixed = fixed
        self.channel = None
        if fixed:
            self.name = "nginx (fixed upstream)"

    async def set(self, addresses):
        if self.channel is None:
            await self.nginx.start(addresses)
            self.channel = grpc.aio.insecure_channel(self.nginx.address, options=self.options)
        elif not self.fixed:
            await self.nginx.reload(addresses)

    async def close(self):
        await self.channel.close()


# ---------------------------------------------------------------------------------------
# Games (tests/lib/game_clients.py): which stream endings are resumed, and what is counted.


class WriteFailed(Exception):
    """A write on a stream failed; `error` is what grpcio raised."""

    def __init__(self, error):
        super().__init__(repr(error))
        self.error = error


async def ending(call, error):
    """How a stream that raised `error` ended: (status code, details), or (None, what
    was raised) when it did not end within 5 s (a reply that never came). The call's
    own status is what counts: a write on a stream that has just ended raises, in
    grpcio's asyncio API, InvalidStateError (the call's status is then the server's),
    or the local INTERNAL of LOCAL_WRITE_FAILURE when the connection was lost under it,
    which is reported as ("stream lost", ...)."""
    written = isinstance(error, WriteFailed)
    error = error.error if written else error
    try:
        code = await asyncio.wait_for(call.code(), 5)
        details = await call.details()
    except asyncio.TimeoutError:
        return None, f"{type(error).__name__}: {error}"
    if written and code == grpc.StatusCode.INTERNAL and details == LOCAL_WRITE_FAILURE:
        return "stream lost", "a write failed on a stream its transport had ended (grpcio: local INTERNAL)"
    if code != grpc.StatusCode.UNAVAILABLE and not stream_reset(code, details):
        debug = error.debug_error_string() if isinstance(error, grpc.aio.AioRpcError) else repr(error)
        details += f" at {time.strftime('%H:%M:%S')} ({debug})"
    return code, details


def stream_reset(code, details):
    """Whether a stream ended INTERNAL because it was reset (HTTP/2 RST_STREAM), as
    nginx resets the client's stream when the replica behind it dies: grpcio says
    "Received RST_STREAM with error code 2" or "Stream removed (RST_STREAM ...)". A
    server's own INTERNAL carries its own words."""
    return code == grpc.StatusCode.INTERNAL and "RST_STREAM" in details


def note_ending(stats, code, details):
    """Counts how a stream ended; True when the client resumes from it: UNAVAILABLE
    (the drain's message, or a transport failure), a stream lost under a write, and
    with `--stop kill` a stream reset (stream_reset). A resume replays the moves the
    server applied on a new stream, so it is always safe."""
    name = code if isinstance(code, str) else code.name if code else "no status"
    stats.statuses[(name, details)] += 1
    return (code in (grpc.StatusCode.UNAVAILABLE, "stream lost")
            or (stats.resume_resets and stream_reset(code, details)))


class Stats:
    def __init__(self, resume_resets):
        self.resume_resets = resume_resets  # resume a stream reset too (--stop kill)
        self.resume_seconds = []        # single-game streams
        self.many_resume_seconds = []   # PlayMany streams (every game of the stream at once)
        self.statuses = collections.Counter()  # (code, details) of the streams that ended
        # Streams that ended with an error once every move had its reply (nothing lost).
        self.ended_after_last_reply = collections.Counter()
        self.games = []
        self.manys = []
        self.unary_calls = 0
        self.unary_lost = collections.Counter()
        self.messages = 0
        self.loop_lag = []
        self.unary_seconds = []
        self.unary_codes = collections.Counter()  # failed unary calls by status code
        self.unary_failures = []   # (wall clock at the end, seconds, method, code, details)
        self.resume_events = []    # (wall clock when answered, seconds, PlayMany or not)


class Games(Client):
    """The game clients (tests/lib/game_clients.py): their streams go through
    `balancer`, a reply must come within READ_TIMEOUT seconds, and a failed stream is
    resumed as note_ending says."""

    resume_attempts = RESUME_ATTEMPTS
    retry_pause = 0.01
    paces = {"ttt": 0.9, "c4": 0.3, "othello": 0.25}
    stagger = 0.005  # the slots start over 1.5 s
    many_pace = 0.3

    def __init__(self, balancer, stats):
        super().__init__(stats)
        self.balancer = balancer

    def channel(self):
        return self.balancer.channel

    async def write(self, call, request):
        try:
            await call.write(request)
        except Exception as error:  # noqa: BLE001 - classified by ending()
            raise WriteFailed(error) from error

    async def read(self, call):
        return await read(call, READ_TIMEOUT)

    async def finish(self, call):
        """A drain that ended the stream before its OK lost nothing: counted in
        ended_after_last_reply, not resumed."""
        await call.done_writing()
        code = await asyncio.wait_for(call.code(), READ_TIMEOUT)
        if code != grpc.StatusCode.OK:
            self.stats.ended_after_last_reply[(code.name, await call.details())] += 1

    async def failed(self, call, error, many=None):
        """Resumed as note_ending says; never on a new connection of its own (the
        balancer's channel is the one to use)."""
        code, details = await ending(call, error)
        call.cancel()
        return note_ending(self.stats, code, details), f"{code}: {details}", False

    def resumed(self, seconds, many):
        (self.stats.many_resume_seconds if many else self.stats.resume_seconds).append(seconds)
        self.stats.resume_events.append((time.time(), seconds, many is not None))


# Unary calls with known answers, made once each.
UNARY_CALLS = [
    ("JudgeTicTacToe",
     pb.JudgeTicTacToeRequest(moves=[
         pb.TicTacToeMove(row=0, col=0), pb.TicTacToeMove(row=1, col=0),
         pb.TicTacToeMove(row=0, col=1), pb.TicTacToeMove(row=1, col=1),
         pb.TicTacToeMove(row=0, col=2)]),
     lambda r: r.verdict == pb.Verdict.Value("VERDICT_A_WINS") and r.moves_played == 5),
    ("CheckConnectFour",
     pb.CheckConnectFourRequest(board=pb.Board(rows=["0000000", "0000000", "0000000",
                                                     "1000000", "1200000", "1220000"]),
                                row=3, col=0, player=1, run_length=3),
     lambda r: r.wins and len(r.run) == 3),
]


async def loop_lag(stats, stop):
    """How late the client's event loop wakes a task that sleeps 100 ms: a client
    starved of CPU shows here, not as a fault of the servers."""
    while not stop.is_set():
        t0 = time.monotonic()
        await asyncio.sleep(0.1)
        stats.loop_lag.append(time.monotonic() - t0 - 0.1)


async def unary_caller(balancer, stats, stop):
    index = 0
    while not stop.is_set():
        name, request, right = UNARY_CALLS[index % len(UNARY_CALLS)]
        index += 1
        stub = pb_grpc.ArbiterServiceStub(balancer.channel)
        stats.unary_calls += 1
        t0 = time.monotonic()
        try:
            reply = await getattr(stub, name)(request, timeout=UNARY_DEADLINE)
            stats.unary_seconds.append(time.monotonic() - t0)
            if not right(reply):
                stats.unary_lost[f"{name}: wrong answer {reply}"] += 1
        except grpc.aio.AioRpcError as error:
            stats.unary_codes[error.code().name] += 1
            stats.unary_failures.append((time.time(), time.monotonic() - t0, name,
                                         error.code().name, error.details()))
            stats.unary_lost[f"{name}: {error.code().name}: {error.details()} at "
                             f"{time.strftime('%H:%M:%S')} ({error.debug_error_string()})"] += 1


# ---------------------------------------------------------------------------------------
# The phases.


def clock(t=None):
    """A wall-clock time with milliseconds (now, or `t`), to set beside the replicas' and
    nginx's logs."""
    t = time.time() if t is None else t
    return time.strftime("%H:%M:%S", time.localtime(t)) + f".{int(t * 1000) % 1000:03d}"


class Fleet:
    def __init__(self, binary, workdir, extra, log_filter="warn,arbiter=info"):
        self.binary = binary
        self.workdir = workdir
        self.extra = extra
        self.log_filter = log_filter
        self.started = 0
        self.replicas = []
        self.all = []

    async def start_one(self, address=None):
        """A new replica, once SERVING: on port 0, or on `address` (its predecessor's,
        --upstream fixed), whose bind is tried again for up to 5 s while the old
        replica's socket goes (a start that fails so is logged as replica-N.try-K)."""
        self.started += 1
        name = f"replica-{self.started}"
        for attempt in range(50):
            replica = Replica(self.binary, self.workdir,
                              name if attempt == 0 else f"{name}.try-{attempt + 1}", self.extra,
                              listen=address or "127.0.0.1:0", log_filter=self.log_filter)
            replica.name = name
            self.all.append(replica)
            try:
                await replica.started()
                break
            except RuntimeError:
                if address is None or attempt == 49 or "in use" not in replica.log_path.read_text():
                    raise
                await asyncio.sleep(0.1)
        await replica.wait_health(SERVING)
        return replica

    def addresses(self):
        return [r.address for r in self.replicas]

    def stop_all(self):
        for replica in self.all:
            replica.kill()


async def rolling_restart(fleet, balancer, report, stop_mode, fixed=False):
    """Replaces each replica in turn, as a Deployment would: `term`, a graceful restart
    (SIGTERM, the replica leaves the balancer once its health says NOT_SERVING); `kill`,
    a crash (SIGKILL, the replica leaves the balancer once its health no longer
    answers). Either way a new replica starts in its place and joins once SERVING.

    With `fixed` (--upstream fixed) nothing tells the balancer: the replica is sent
    SIGTERM (or SIGKILL), it exits, and its replacement starts on the same address, as
    a process manager restarts a service on a VM behind a plain nginx."""
    for i in range(len(fleet.replicas)):
        old = fleet.replicas[i]
        t0 = time.monotonic()
        if fixed:
            signalled = time.time()
            old.sigkill() if stop_mode == "kill" else old.terminate()
            code = await old.exited()
            exited = time.time()
            new = await fleet.start_one(old.address)
            fleet.replicas[i] = new
            signal_name = "SIGKILL" if stop_mode == "kill" else "SIGTERM"
            log(f"  {balancer.name}: {old.name} ({old.address}) {signal_name} at "
                f"{clock(signalled)}, exited {code} at {clock(exited)} ({exited - signalled:.1f} s); {new.name} "
                f"serving on the same address at {clock()}, "
                f"{time.monotonic() - t0:.1f} s after {signal_name}")
            report.append((old.name, code))
            await asyncio.sleep(1.5)
            continue
        if stop_mode == "kill":
            old.sigkill()
            await old.wait_unanswered()
        else:
            old.terminate()
            await old.wait_health(NOT_SERVING)
        fleet.replicas = [r for r in fleet.replicas if r is not old]
        await balancer.set(fleet.addresses())
        code = await old.exited()
        stopped = time.monotonic() - t0
        new = await fleet.start_one()
        fleet.replicas.insert(i, new)
        await balancer.set(fleet.addresses())
        signal_name = "SIGKILL" if stop_mode == "kill" else "SIGTERM"
        log(f"  {balancer.name}: {old.name} ({old.address}) exited {code} {stopped:.1f} s after "
            f"{signal_name}; {new.name} serving on {new.address}, "
            f"{time.monotonic() - t0:.1f} s after {signal_name}")
        report.append((old.name, code))
        await asyncio.sleep(1.5)


async def phase(fleet, balancer, args, seed):
    stats = Stats(resume_resets=args.resume_resets)
    stop = asyncio.Event()
    await balancer.set(fleet.addresses())
    # A new grpcio round-robin channel sends every call to the first subchannel that
    # connects until the others have; past the server's streams per connection
    # (--max-concurrent-streams) grpcio queues further streams, unary calls included,
    # on that connection, behind games that last for seconds. So the games start once
    # the channel has had time to connect to every replica.
    await balancer.channel.channel_ready()
    await asyncio.sleep(0.5)
    tasks = start_games(Games(balancer, stats), args, seed, stop)
    unary = [asyncio.create_task(unary_caller(balancer, stats, stop)) for _ in range(2)]
    lag = asyncio.create_task(loop_lag(stats, stop))

    def live():
        return sum(1 for g in stats.games if g.setup_reply is not None and g.lost is None
                   and not g.finished)

    # Every slot and every PlayMany game live before the first restart.
    wanted = args.slots + args.many * args.games_per_many
    deadline = time.monotonic() + 60
    while live() < wanted and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    await asyncio.sleep(args.warmup)
    live = live()
    verb = "killing" if args.stop == "kill" else "restarting"
    log(f"{balancer.name}: {live} games live, {stats.messages} replies so far; {verb}")
    exits = []
    await rolling_restart(fleet, balancer, exits, args.stop, fixed=args.upstream == "fixed")
    stop.set()
    log(f"{balancer.name}: {verb} done; letting the games finish")
    await asyncio.wait_for(asyncio.gather(*tasks, *unary, lag), 120)
    return stats, exits


def summary(label, values):
    if not values:
        return f"{label}: none"
    values = sorted(values)
    return (f"{label}: {len(values)}, median {statistics.median(values) * 1000:.0f} ms, "
            f"worst {values[-1] * 1000:.0f} ms")


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--nginx", required=True)
    parser.add_argument("--slots", type=int, default=300,
                        help="single-game streams live at once (a third of each kind)")
    parser.add_argument("--many", type=int, default=3, help="PlayMany streams")
    parser.add_argument("--games-per-many", type=int, default=100)
    parser.add_argument("--warmup", type=float, default=2.0,
                        help="seconds of play, once every game is live, before the first restart")
    parser.add_argument("--drain", default="1s")
    parser.add_argument("--grace", default="1s")
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--stop", choices=["term", "kill"], default="term",
                        help="how each replica is stopped: term, a graceful restart (SIGTERM "
                             "and the drain); kill, a crash (SIGKILL). With kill the client "
                             "also retries unary calls by the service config's retry policy and "
                             "resumes games whose stream was reset (RST_STREAM)")
    parser.add_argument("--no-retry-policy", action="store_true",
                        help="with --stop kill, leave the retry policy out, to see which unary "
                             "calls it saves (the test then fails if any is lost)")
    parser.add_argument("--no-resume-on-reset", action="store_true",
                        help="with --stop kill, do not resume a stream reset (RST_STREAM), to "
                             "see which games that saves (the test then fails if any is lost)")
    parser.add_argument("--no-grpc-error-page", action="store_true",
                        help="let nginx answer a dead upstream with its HTML 502 instead of a "
                             "gRPC UNAVAILABLE (to see which unary calls grpcio's retry policy "
                             "then fails to retry)")
    parser.add_argument("--upstream", choices=["rewrite", "fixed"], default="rewrite",
                        help="rewrite (the default): each balancer in turn, the stopping replica "
                             "taken out of it once its health says so, its replacement on a new "
                             "port; fixed: nginx alone, with an upstream of three fixed addresses "
                             "never rewritten, each replica stopped, then replaced on its own "
                             "address once it has exited (see FIXED_NGINX for its configuration)")
    parser.add_argument("--nginx-conf", choices=sorted(FIXED_NGINX), default="deploy",
                        help="with --upstream fixed, nginx's configuration: " + "; ".join(
                            f"{k}: {v['why']}" for k, v in sorted(FIXED_NGINX.items())))
    parser.add_argument("--nginx-keepalive", type=int,
                        help="with --upstream fixed, the upstream's `keepalive` instead")
    parser.add_argument("--nginx-server-params",
                        help="with --upstream fixed, each upstream `server`'s parameters instead "
                             "(e.g. 'max_fails=1 fail_timeout=1s')")
    parser.add_argument("--nginx-upstream",
                        help="with --upstream fixed, the upstream block's further directives "
                             "instead, ';'-separated")
    parser.add_argument("--nginx-location",
                        help="with --upstream fixed, the location's further directives instead, "
                             "';'-separated (e.g. 'grpc_next_upstream error timeout')")
    parser.add_argument("--nginx-log-level", help="nginx's error_log level (default notice; "
                                                  "info with --upstream fixed)")
    parser.add_argument("--replica-log", default="warn,arbiter=info",
                        help="RUST_LOG for the replicas (e.g. 'debug,h2=trace' to see each frame)")
    parser.add_argument("--retry-policy", action="store_true",
                        help="with --stop term, give the unary calls the retry policy too")
    parser.add_argument("--resume-on-reset", action="store_true",
                        help="with --stop term, resume a stream reset (RST_STREAM) too")
    parser.add_argument("--max-resume", type=float,
                        help="fail if a resume takes longer than this many seconds (default: "
                             "1 with --upstream fixed, no limit otherwise)")
    parser.add_argument("--keep-logs", metavar="DIR",
                        help="copy the replicas' and nginx's logs to DIR, pass or fail")
    args = parser.parse_args()
    args.retry = (args.stop == "kill" or args.retry_policy) and not args.no_retry_policy
    args.resume_resets = ((args.stop == "kill" or args.resume_on_reset)
                          and not args.no_resume_on_reset)
    fixed = args.upstream == "fixed"
    if args.max_resume is None and fixed:
        args.max_resume = 1.0

    # A timeout's SIGTERM cancels the run, so that the finally below still stops the
    # replicas and nginx.
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, asyncio.current_task().cancel)
    workdir = tempfile.mkdtemp(prefix="arbiter-rolling-")
    fleet = Fleet(args.binary, workdir, ["--shutdown-drain", args.drain,
                                          "--shutdown-grace", args.grace],
                  log_filter=args.replica_log)
    if fixed:
        conf = FIXED_NGINX[args.nginx_conf]
        nginx = Nginx(
            args.nginx, workdir, grpc_error_page=not args.no_grpc_error_page,
            log_level=args.nginx_log_level or "info",
            keepalive=args.nginx_keepalive or conf["keepalive"],
            server_params=(conf["server"] if args.nginx_server_params is None
                           else args.nginx_server_params),
            upstream_extra=(conf["upstream"] if args.nginx_upstream is None
                            else args.nginx_upstream),
            location_extra=(conf["location"] if args.nginx_location is None
                            else args.nginx_location),
            access_log=True)
    else:
        nginx = Nginx(args.nginx, workdir, grpc_error_page=not args.no_grpc_error_page,
                      log_level=args.nginx_log_level or "notice")
    check = Checks()

    started = time.monotonic()
    try:
        fleet.replicas = [await fleet.start_one() for _ in range(3)]
        log("replicas: " + ", ".join(fleet.addresses()))
        results = []
        options = channel_options(retry=args.retry)
        log(f"--stop {args.stop}: "
            + ("SIGKILL" if args.stop == "kill" else "SIGTERM and the drain")
            + "; unary calls " + ("retried by the service config's retry policy" if args.retry
                                  else "not retried (no retry policy)")
            + "; games resumed on UNAVAILABLE"
            + (" and on a stream reset (RST_STREAM)" if args.resume_resets else ""))
        if fixed:
            log(f"nginx with a fixed upstream (--nginx-conf {args.nginx_conf}): server params "
                f"{nginx.server_params!r}, keepalive {nginx.keepalive}, upstream "
                f"{nginx.upstream_extra!r}, location {nginx.location_extra!r}")
        balancers = ([Proxied(nginx, options, fixed=True)] if fixed
                     else [RoundRobin(options), Proxied(nginx, options)])
        for number, balancer in enumerate(balancers, 2 if fixed else 1):
            t0 = time.monotonic()
            stats, exits = await phase(fleet, balancer, args, args.seed + number)
            results.append((balancer.name, stats, exits, time.monotonic() - t0))
            await balancer.close()
        # Every game again, uninterrupted, on one replica that was never restarted
        # during play: a fresh one.
        judge = await fleet.start_one()
        log(f"replaying every game on {judge.name} ({judge.address})")
        totals = collections.Counter()
        for name, stats, exits, seconds in results:
            problems = []
            t0 = time.monotonic()
            # Every reply compared; what differs noted up to 20 times.
            _, differ = await replay(stats.games, judge.address, CHANNEL_OPTIONS, problems,
                                     concurrency=64, deadline=READ_TIMEOUT, most=20)
            singles = [g for g in stats.games if isinstance(g.number, tuple)]
            many_games = [g for g in stats.games if not isinstance(g.number, tuple)]
            lost = [g for g in stats.games if g.lost is not None]
            log_trouble(lost, problems, stats.manys)
            by_kind = collections.Counter(g.kind for g in stats.games)
            resumed = sum(1 for g in stats.games if g.resumes)
            log(f"{name}: {seconds:.1f} s of play, {len(singles)} single-stream games and "
                f"{len(many_games)} PlayMany games ({dict(by_kind)}), "
                f"{sum(len(g.replies) for g in stats.games)} move replies, {resumed} games resumed; "
                f"replayed in {time.monotonic() - t0:.1f} s")
            log(f"{name}: " + summary("client event-loop lag", stats.loop_lag))
            log(f"{name}: " + summary("unary calls answered", stats.unary_seconds))
            log(f"{name}: " + summary("single-stream resumes", stats.resume_seconds))
            log(f"{name}: " + summary("PlayMany resumes (all its games in one setup message)",
                                      stats.many_resume_seconds))
            if stats.unary_codes:
                log(f"{name}: unary calls failed by code: {dict(stats.unary_codes)}")
            for at, seconds, method, code, details in stats.unary_failures[:10]:
                log(f"  unary {method} failed at {clock(at)} after {seconds:.3f} s: "
                    f"{code} {details!r}")
            slowest = sorted(stats.resume_events, key=lambda e: -e[1])[:5]
            if slowest:
                log(f"{name}: slowest resumes: " + ", ".join(
                    f"{seconds:.3f} s ({'PlayMany' if many else 'single'}, answered at {clock(at)})"
                    for at, seconds, many in slowest))
            for (code, details), count in stats.statuses.most_common():
                log(f"{name}: streams ended {code} x{count}: {details!r}")
            for (code, details), count in stats.ended_after_last_reply.most_common():
                log(f"{name}: streams ended {code} after their last reply (nothing to resume) "
                    f"x{count}: {details!r}")
            if args.stop == "kill":
                check(f"{name}: replicas killed by SIGKILL",
                      all(code == -signal.SIGKILL for _, code in exits), str(exits))
            else:
                check(f"{name}: replicas exited 0 after SIGTERM",
                      all(code == 0 for _, code in exits), str(exits))
            check(f"{name}: games lost: {len(lost)}", not lost)
            check(f"{name}: replies that differ: {sum(differ.values())}",
                  not differ, str(dict(differ)) if differ else "")
            many_problems = sum(len(m.problems) for m in stats.manys)
            check(f"{name}: PlayMany replies out of shape: {many_problems}", many_problems == 0)
            check(f"{name}: games resumed: {resumed} (the test must interrupt games)", resumed > 0)
            if args.max_resume is not None:
                worst = max((seconds for _, seconds, _ in stats.resume_events), default=0)
                check(f"{name}: slowest resume {worst * 1000:.0f} ms (at most "
                      f"{args.max_resume * 1000:.0f} ms)", worst <= args.max_resume)
            lost_unary = sum(stats.unary_lost.values())
            check(f"{name}: unary calls lost: {lost_unary} of {stats.unary_calls}",
                  lost_unary == 0 and stats.unary_calls > 0,
                  "; ".join(f"{k} x{v}" for k, v in stats.unary_lost.most_common(5)))
            totals["games"] += len(stats.games)
            totals["lost"] += len(lost)
            totals["differ"] += sum(differ.values())
            totals["unary"] += stats.unary_calls
            totals["unary lost"] += lost_unary
        log(f"all balancers (--stop {args.stop}): {totals['games']} games, games lost: "
            f"{totals['lost']}, replies that differ: {totals['differ']}; unary calls lost: "
            f"{totals['unary lost']} of {totals['unary']}")
        panics = [r.name for r in fleet.all if r.panicked()]
        check(f"replicas that panicked: {len(panics)}", not panics, ", ".join(panics))
    finally:
        fleet.stop_all()
        nginx.stop()
        if args.keep_logs:
            shutil.copytree(workdir, args.keep_logs, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("body", "proxy", "*cgi", "uwsgi"))
    return check.report(started, workdir, "the logs are")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
