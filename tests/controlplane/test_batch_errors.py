"""The per-update outcomes of a failed Write batch, read from its `grpc-status-details-bin`
trailer (`p4rt.writes.batch_outcomes`): as the emulator writes it and as any protobuf does.

(The requests themselves are generated messages now; the hand-written codecs these tests
checked against protobuf are gone. Cells: tests/emulator/test_cells.py.)"""

from __future__ import annotations

from typing import Any

import grpc
from hypothesis import given
from hypothesis import strategies as st

from sliceportal.emulator.service import batch_status
from sliceportal.p4rt.proto import any_pb2, p4r, rpc_status
from sliceportal.p4rt.writes import OK, UpdateOutcome, batch_outcomes


class _Failed(grpc.RpcError):  # type: ignore[misc]
    def __init__(self, details: bytes) -> None:
        self._metadata = (("grpc-status-details-bin", details),)

    def trailing_metadata(self) -> Any:
        return self._metadata


@given(st.lists(st.none() | st.tuples(st.integers(1, 16), st.text(max_size=20)), max_size=20))
def test_batch_outcomes_decode_any_status(errors: list[tuple[int, str] | None]) -> None:
    status = rpc_status.Status(code=2, message="some updates failed")
    for error in errors:
        detail = p4r.Error()
        if error is not None:
            detail.canonical_code, detail.message = error
            detail.space = "test"
        status.details.add().Pack(detail)
    outcomes = batch_outcomes(_Failed(status.SerializeToString()), len(errors))
    assert outcomes is not None
    assert [None if o.ok else (o.code.value[0], o.message) for o in outcomes] == errors


def test_the_emulators_batch_status_decodes() -> None:
    data = batch_status(2, "1 of 2", [None, (6, "exists")])
    outcomes = batch_outcomes(_Failed(data), 2)
    assert outcomes == [OK, UpdateOutcome(grpc.StatusCode.ALREADY_EXISTS, "exists")]


def test_a_status_that_does_not_fit_the_batch_is_ignored() -> None:
    data = batch_status(2, "1 of 2", [None, (6, "exists")])
    assert batch_outcomes(_Failed(data), 3) is None


def test_a_status_detail_of_another_type_is_refused() -> None:
    status = rpc_status.Status(code=2)
    packed = any_pb2.Any()
    packed.Pack(rpc_status.Status(code=3))
    status.details.append(packed)
    assert batch_outcomes(_Failed(status.SerializeToString()), 1) is None


def test_undecodable_details_are_ignored() -> None:
    assert batch_outcomes(_Failed(b"\xff\xff"), 1) is None
