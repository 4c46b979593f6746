"""The canonical status codes the emulator answers with, and the error that carries one.

Codes are `google.rpc.Code` numbers (the same numbers as `grpc.StatusCode`), kept here as a
typed enum so that validation code needs neither gRPC nor the untyped protobuf modules.
"""

from __future__ import annotations

from enum import IntEnum


class Code(IntEnum):
    OK = 0
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13


class P4RuntimeError(Exception):
    """A request (or one update of a batch) that the switch refuses, with the code to answer."""

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(message: str) -> P4RuntimeError:
    return P4RuntimeError(Code.INVALID_ARGUMENT, message)
