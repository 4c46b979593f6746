"""The generated P4Runtime protobuf modules, imported in one place.

They ship without type information, so they are `Any` to mypy; the rest of the package touches
them only for the cold RPCs (arbitration, pipeline config, capabilities, error details). The hot
path (Write, Read) uses `wire.py` instead.
"""

from __future__ import annotations

from google.protobuf import any_pb2, text_format  # type: ignore[import-untyped, unused-ignore]
from google.rpc import code_pb2, status_pb2  # type: ignore[import-untyped, unused-ignore]
from p4.config.v1 import p4info_pb2  # type: ignore[import-untyped, unused-ignore]
from p4.v1 import p4runtime_pb2  # type: ignore[import-untyped, unused-ignore]

__all__ = ["any_pb2", "code_pb2", "p4info_pb2", "p4runtime_pb2", "status_pb2", "text_format"]
