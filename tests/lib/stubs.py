"""The Python stubs of proto/arbiter/v1/arbiter.proto, for the scripted tests
(tests/interop/interop.py, tests/abuse/abuse.py).

`load_stubs()` generates arbiter_pb2 and arbiter_pb2_grpc with grpcio-tools once per
process, from proto/ as it is, into a temporary directory that is removed when the process
exits, and imports them. The Python client's package (examples/python, `arbiter_client`)
has stubs of its own, generated when it is built; the scripts here need no package
installed. (Both register arbiter/v1/arbiter.proto in protobuf's default pool, which
takes the same file twice: one process may import both while the package's copy of the
proto is proto/'s, as its build requires.)
"""

import atexit
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]

_stubs = None


def load_stubs():
    """Returns (arbiter_pb2, arbiter_pb2_grpc), generating them on the first call."""
    global _stubs
    if _stubs is None:
        from grpc_tools import protoc

        out = tempfile.TemporaryDirectory(prefix="arbiter-stubs-")
        # Kept for the whole process (the imported modules came from it), removed at exit.
        atexit.register(out.cleanup)
        root = REPO / "proto"
        code = protoc.main(
            [
                "grpc_tools.protoc",
                f"-I{root}",
                # google/protobuf/duration.proto and the other well-known types, which
                # grpcio-tools ships.
                f"-I{pathlib.Path(protoc.__file__).parent / '_proto'}",
                f"--python_out={out.name}",
                f"--grpc_python_out={out.name}",
                str(root / "arbiter" / "v1" / "arbiter.proto"),
            ]
        )
        if code != 0:
            raise RuntimeError(f"protoc exited {code}")
        sys.path.insert(0, out.name)
        from arbiter.v1 import arbiter_pb2, arbiter_pb2_grpc

        _stubs = (arbiter_pb2, arbiter_pb2_grpc)
    return _stubs
