"""Builds arbiter_client with its gRPC stubs, generated at build time by grpcio-tools (a
build requirement only) from the package's copy of the contract,
arbiter_client/proto/arbiter/v1/arbiter.proto, into the built package as
arbiter_client/arbiter_pb2.py, arbiter_pb2.pyi and arbiter_pb2_grpc.py. Everything else is in
pyproject.toml.

Built inside the Arbiter repository, the copy must be the repository's
proto/arbiter/v1/arbiter.proto byte for byte, or the build fails saying how to refresh it: a
package built here is always the contract as it is. Built elsewhere (from an sdist), the
copy is the contract.
"""

import pathlib
import shutil
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent
PROTO_ROOT = HERE / "arbiter_client" / "proto"
PROTO = PROTO_ROOT / "arbiter" / "v1" / "arbiter.proto"
# The contract, when this is examples/python of an Arbiter checkout.
CONTRACT = HERE.parent.parent / "proto" / "arbiter" / "v1" / "arbiter.proto"
# grpcio-tools writes the service stubs' import of the messages as the proto's path; in
# the package they are siblings.
GENERATED_IMPORT = "from arbiter.v1 import arbiter_pb2 as"
PACKAGE_IMPORT = "from . import arbiter_pb2 as"


def check_copy():
    if CONTRACT.is_file() and CONTRACT.read_bytes() != PROTO.read_bytes():
        raise SystemExit(
            f"{PROTO} is not the contract {CONTRACT}; refresh the package's copy:\n"
            f"    cp proto/arbiter/v1/arbiter.proto examples/python/arbiter_client/proto/arbiter/v1/")


def generate(package_dir):
    """Writes arbiter_pb2.py, arbiter_pb2.pyi and arbiter_pb2_grpc.py into `package_dir`."""
    from grpc_tools import protoc

    well_known = pathlib.Path(protoc.__file__).parent / "_proto"  # google/protobuf/duration.proto
    with tempfile.TemporaryDirectory(prefix="arbiter-stubs-") as out:
        code = protoc.main([
            "grpc_tools.protoc", f"-I{PROTO_ROOT}", f"-I{well_known}",
            f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}", str(PROTO),
        ])
        if code != 0:
            raise SystemExit(f"grpc_tools.protoc exited {code} on {PROTO}")
        generated = pathlib.Path(out) / "arbiter" / "v1"
        grpc_stubs = generated / "arbiter_pb2_grpc.py"
        text = grpc_stubs.read_text(encoding="utf-8")
        if text.count(GENERATED_IMPORT) != 1:
            raise SystemExit(f"{grpc_stubs.name}: expected one {GENERATED_IMPORT!r}, "
                             "grpcio-tools writes its imports differently now")
        grpc_stubs.write_text(text.replace(GENERATED_IMPORT, PACKAGE_IMPORT), encoding="utf-8")
        package_dir.mkdir(parents=True, exist_ok=True)
        for name in ("arbiter_pb2.py", "arbiter_pb2.pyi", "arbiter_pb2_grpc.py"):
            shutil.copyfile(generated / name, package_dir / name)


class BuildPyWithStubs(build_py):
    """build_py, then the stubs generated into the built package; for an editable install
    (`pip install -e`), into the source tree's arbiter_client/ (which git ignores)."""

    def run(self):
        check_copy()
        super().run()
        if self.dry_run:
            return
        if getattr(self, "editable_mode", False):
            generate(HERE / "arbiter_client")
        else:
            generate(pathlib.Path(self.build_lib) / "arbiter_client")


setup(cmdclass={"build_py": BuildPyWithStubs})
