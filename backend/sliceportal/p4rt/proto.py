"""The generated P4Runtime, P4Info and google.rpc messages, imported in one place.

They are finsy's (`finsy.proto`, Apache-2.0): stubs generated from the P4Runtime 1.4 protos with
a current protoc, with type stubs (`.pyi`), so mypy checks their use. The project runs them on
protobuf >= 6 and its upb backend (`backend()` says which one a process runs on). finsy's own
controller is not used: importing `finsy.proto` loads the package (~0.15 s), nothing more.

Only `sliceportal.p4rt` and the emulator import this module; nothing imports the generated
modules elsewhere.
"""

from __future__ import annotations

from finsy.proto import p4i, p4r, p4r_grpc, rpc_code, rpc_status
from google.protobuf import any_pb2, text_format
from google.protobuf.internal import api_implementation

__all__ = ["any_pb2", "backend", "p4i", "p4r", "p4r_grpc", "rpc_code", "rpc_status", "text_format"]


def backend() -> str:
    """The protobuf implementation this process runs on: "upb" (C), "cpp" or "python"."""
    return str(api_implementation.Type())
