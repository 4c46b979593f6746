"""Writes in batches, and each update's own outcome.

Updates go in batches of at most 1,000 per WriteRequest (CONTINUE_ON_ERROR, the only atomicity
BMv2 has); each update gets its own outcome, decoded from the batch's `p4.v1.Error`s in the
`grpc-status-details-bin` trailer. p4runtime-shell's `write` loops forever on a partly failed
batch (its error iterator does not advance past OK entries): one of the reasons the portal has
its own client.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import grpc  # type: ignore[import-untyped, unused-ignore]
from google.protobuf.message import DecodeError

from sliceportal.p4rt.proto import p4r, rpc_status

logger = logging.getLogger(__name__)

MAX_BATCH = 1000
"""Updates per WriteRequest at most: BMv2's sweet spot, and a bounded error trailer."""
T = TypeVar("T")
_STATUS_CODES = {status.value[0]: status for status in grpc.StatusCode}


@dataclass(frozen=True)
class UpdateOutcome:
    """What the switch answered to one update of a batch."""

    code: grpc.StatusCode
    message: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.code == grpc.StatusCode.OK)

    def __str__(self) -> str:
        return "OK" if self.ok else f"{self.code.name}: {self.message}"


OK = UpdateOutcome(grpc.StatusCode.OK)


def _outcome(error: p4r.Error) -> UpdateOutcome:
    return UpdateOutcome(
        _STATUS_CODES.get(error.canonical_code, grpc.StatusCode.UNKNOWN), error.message
    )


def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def batch_outcomes(exc: grpc.RpcError, size: int) -> list[UpdateOutcome] | None:
    """The per-update outcomes of a failed batch of `size` updates, from its
    `google.rpc.Status` trailer; None when there is none or it does not fit the batch."""
    for key, value in exc.trailing_metadata() or ():
        if key != "grpc-status-details-bin":
            continue
        try:
            status = rpc_status.Status.FromString(value)
            errors = []
            for detail in status.details:
                error = p4r.Error()
                if not detail.Unpack(error):
                    logger.warning("a switch's error detail of type %s", detail.type_url)
                    return None
                errors.append(error)
        except DecodeError:
            logger.warning("undecodable error details from a switch", exc_info=True)
            return None
        if len(errors) != size:
            return None
        return [OK if e.canonical_code == 0 else _outcome(e) for e in errors]
    return None
