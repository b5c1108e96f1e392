"""A gRPC client of Arbiter (the arbiter.v1 contract): the stubs, generated from the contract
when the package was built (`arbiter_pb2`, `arbiter_pb2_grpc`), channels with the retry policy
and gzip (`server_channel`, `replicas_channel`), live games played move by move
(`LiveStream`, `play_gomoku`, `play_chess`) and resumed from their history when their stream
is lost (`play_connect_four_resumably`, `stream_lost`), and `main`, which calls every RPC of
the contract and checks each answer (`python -m arbiter_client HOST:PORT`).

    from arbiter_client import arbiter_pb2 as pb, arbiter_pb2_grpc as pb_grpc, server_channel

    with server_channel("localhost:50051") as channel:
        stub = pb_grpc.ArbiterServiceStub(channel)
        reply = stub.JudgeChessGame(pb.JudgeChessGameRequest(moves=["f3", "e5", "g4", "Qh4"]),
                                    timeout=10)
"""

import importlib.util

if importlib.util.find_spec(f"{__name__}.arbiter_pb2") is None:
    raise ImportError(
        f"{__name__} was imported from its source tree ({__path__[0]}), which has no stubs: they "
        "are generated when the package is built. Install it (pip install ./examples/python) "
        "and import it from anywhere but examples/python.")

from . import arbiter_pb2, arbiter_pb2_grpc  # noqa: E402
from .client import (  # noqa: E402
    DEADLINE,
    RETRY_UNARY_CALLS,
    SERVICE,
    STREAM_DEADLINE,
    GzipEveryCall,
    LiveStream,
    StreamEnded,
    main,
    play_chess,
    play_connect_four_resumably,
    play_gomoku,
    replicas_channel,
    run,
    server_channel,
    stream_lost,
)

__all__ = [
    "DEADLINE", "RETRY_UNARY_CALLS", "SERVICE", "STREAM_DEADLINE", "GzipEveryCall", "LiveStream",
    "StreamEnded", "arbiter_pb2", "arbiter_pb2_grpc", "main", "play_chess",
    "play_connect_four_resumably", "play_gomoku", "replicas_channel", "run", "server_channel",
    "stream_lost",
]
