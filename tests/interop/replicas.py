"""Three replicas driven from grpcio the way a Python backend balances without a proxy: one
channel over the three addresses (`ipv4:A,B,C`), round robin, client-side health
checking (the service config's `healthCheckConfig`, which watches each replica's
grpc.health.v1 service), and `grpc.default_authority`: `replicas_channel` of the Python
client's package (examples/python, `arbiter_client`), which the README shows, with the
package's stubs.

The option is needed: without it grpcio sends the whole address list as `:authority`,
which the HTTP/2 layer under tonic (h2) refuses as malformed before any server code sees
the request, so every call fails with INTERNAL (RST_STREAM with PROTOCOL_ERROR), or with
health checking on, every replica is marked down. The first check holds that, so that the README's advice is dropped the day h2 accepts it.

Run by tests/interop/run.sh with the release binary:
    python tests/interop/replicas.py --binary target/release/arbiter
"""

import argparse
import json
import re
import subprocess
import time
import urllib.request

import grpc

# The Python client's package, installed (tests/interop/run.sh: pip install ./examples/python):
# the README's channel, as users take it, and the stubs it was built with.
from arbiter_client import arbiter_pb2, arbiter_pb2_grpc, replicas_channel

SERVICE = "arbiter.v1.ArbiterService"
JUDGE = f"/{SERVICE}/JudgeTicTacToe"


class Replica:
    """One `arbiter` process on loopback port 0, with metrics on another port 0."""

    def __init__(self, binary, drain):
        self.process = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
             "--shutdown-drain", drain],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.address = self.metrics = None
        deadline = time.monotonic() + 30
        while self.address is None or self.metrics is None:
            line = self.process.stdout.readline()
            if not line or time.monotonic() > deadline:
                raise RuntimeError(f"replica did not start: {line!r}")
            if match := re.search(r"arbiter listening on (\S+)", line):
                self.address = match.group(1)
            if match := re.search(r"metrics on (http://\S+)", line):
                self.metrics = match.group(1)

    def judged(self):
        """How many JudgeTicTacToe calls this replica has answered OK."""
        text = urllib.request.urlopen(self.metrics, timeout=5).read().decode()
        total = 0
        for line in text.splitlines():
            if (line.startswith("arbiter_calls_total{") and f'rpc="{JUDGE[1:]}"' in line
                    and 'code="Ok"' in line):
                total += int(float(line.rsplit(" ", 1)[1]))
        return total

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def judge_request(pb):
    return pb.JudgeTicTacToeRequest(moves=[pb.TicTacToeMove(row=1, col=1)])


def calls(stub, pb, count):
    for _ in range(count):
        reply = stub.JudgeTicTacToe(judge_request(pb), timeout=5)
        assert reply.moves_played == 1, reply


def spread(replicas, before):
    return [replica.judged() - was for replica, was in zip(replicas, before)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    args = parser.parse_args()

    pb, pb_grpc = arbiter_pb2, arbiter_pb2_grpc

    replicas = [Replica(args.binary, drain) for drain in ("5s", "5s", "30s")]
    try:
        target = "ipv4:" + ",".join(r.address for r in replicas)
        service_config = json.dumps({
            "loadBalancingConfig": [{"round_robin": {}}],
            "healthCheckConfig": {"serviceName": SERVICE},
        })

        # 1. As grpcio documents static balancing, without the authority: every call
        # refused (INTERNAL, a stream reset), or with health checking on, every replica
        # marked down (UNAVAILABLE, "health check call failed").
        round_robin = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})
        for config, expected in [(round_robin, grpc.StatusCode.INTERNAL),
                                 (service_config, grpc.StatusCode.UNAVAILABLE)]:
            options = [("grpc.service_config", config)]
            with grpc.insecure_channel(target, options=options) as channel:
                stub = pb_grpc.ArbiterServiceStub(channel)
                try:
                    stub.JudgeTicTacToe(judge_request(pb), timeout=5)
                except grpc.RpcError as error:
                    assert error.code() == expected, (config, error)
                    print(f"ok   without grpc.default_authority: {error.code().name} "
                          f"({error.details()})")
                else:
                    raise AssertionError(
                        "a call with the address list as :authority succeeded: h2 accepts "
                        "it now, so the README's advice to set grpc.default_authority can go")

        # 2. The example's channel (the same, with the authority): every replica healthy,
        # the calls spread over all three.
        with replicas_channel([r.address for r in replicas]) as channel:
            grpc.channel_ready_future(channel).result(timeout=10)
            stub = pb_grpc.ArbiterServiceStub(channel)
            before = [r.judged() for r in replicas]
            calls(stub, pb, 300)
            counts = spread(replicas, before)
            assert sum(counts) == 300 and all(n >= 50 for n in counts), counts
            print(f"ok   round robin with health checking over three replicas: {counts}")

            # 3. One replica drains (SIGTERM: health NOT_SERVING, calls still served):
            # the health watch takes it out of the rotation, and no call is lost.
            draining = replicas[2]
            draining.process.terminate()
            deadline = time.monotonic() + 10
            while True:
                before = [r.judged() for r in replicas]
                calls(stub, pb, 30)
                if spread(replicas, before)[2] == 0:
                    break
                assert time.monotonic() < deadline, "the draining replica kept getting calls"
            before = [r.judged() for r in replicas]
            calls(stub, pb, 300)
            counts = spread(replicas, before)
            assert counts[2] == 0 and counts[0] >= 50 and counts[1] >= 50, counts
            assert draining.process.poll() is None, "the draining replica exited early"
            print(f"ok   a draining replica leaves the rotation, no call lost: {counts}")
    finally:
        for replica in replicas:
            replica.stop()
    print("replicas: all checks passed")


if __name__ == "__main__":
    main()
