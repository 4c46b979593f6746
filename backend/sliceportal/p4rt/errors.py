"""The errors of the P4Runtime client: a refused or unreachable switch."""

from __future__ import annotations

import grpc  # type: ignore[import-untyped, unused-ignore]

TRANSIENT_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


class SwitchError(Exception):
    """A switch refused a request or could not be reached; `code` is the gRPC status (None
    when the request never reached the switch, e.g. an unreadable certificate)."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message if self.code is None else f"{self.code.name}: {self.message}"


class TransientSwitchError(SwitchError):
    """UNAVAILABLE or DEADLINE_EXCEEDED: the switch may answer later, so the task retries."""


def rpc_error(exc: grpc.RpcError, what: str) -> SwitchError:
    """A failed RPC as the error to raise: transient for the codes worth retrying."""
    code = exc.code()
    cls = TransientSwitchError if code in TRANSIENT_CODES else SwitchError
    return cls(f"{what}: {exc.details() or 'no details'}", code)
