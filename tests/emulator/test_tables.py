"""Properties of the table store, without gRPC: any valid entry, in any byte encoding, reads back
in canonical form, and the same key in another encoding is the same entry."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.p4rt import (
    ACL,
    CLASSIFIER,
    DROP,
    INSERT,
    P4INFO,
    canonical,
    exact,
    lpm,
    optional,
    range_,
    table_entry,
    ternary,
    update,
)
from sliceportal.emulator import entities, service
from sliceportal.emulator.errors import Code, P4RuntimeError
from sliceportal.emulator.state import DeviceState
from sliceportal.p4rt.p4info import P4InfoIndex
from sliceportal.p4rt.proto import p4r

PROGRAM = P4InfoIndex.from_file(P4INFO)


def padded(value: int, extra: int) -> bytes:
    return b"\x00" * extra + canonical(value)


def apply(state: DeviceState, message: Any) -> None:
    request = p4r.WriteRequest()
    request.updates.append(message)
    (decoded,) = p4r.WriteRequest.FromString(request.SerializeToString()).updates
    entities.apply_update(state, decoded)


def read_table(state: DeviceState, table_id: int) -> list[Any]:
    request = p4r.ReadRequest()
    request.entities.add().table_entry.table_id = table_id
    (decoded,) = p4r.ReadRequest.FromString(request.SerializeToString()).entities
    raw = b"".join(service.read_responses(entities.read(state, decoded)))
    return [e.table_entry for e in p4r.ReadResponse.FromString(raw).entities]


@st.composite
def acl_entries(draw: st.DrawFn) -> tuple[list[tuple[int, Any]], int]:
    """(field id, match builder args) of a valid ACL key, in canonical values, and a priority."""
    fields = []
    if draw(st.booleans()):
        mask = draw(st.integers(1, 2**32 - 1))
        fields.append((1, ("ternary", draw(st.integers(0, 2**32 - 1)) & mask, mask)))
    if draw(st.booleans()):
        low = draw(st.integers(0, 2**16 - 1))
        high = draw(st.integers(low, 2**16 - 1))
        if (low, high) != (0, 2**16 - 1):
            fields.append((2, ("range", low, high)))
    if draw(st.booleans()):
        fields.append((3, ("optional", draw(st.integers(0, 255)))))
    return fields, draw(st.integers(1, 2**31 - 1))


def build(fields: list[tuple[int, Any]], priority: int, pad: int) -> Any:
    matches = []
    for field_id, (kind, *values) in fields:
        if kind == "ternary":
            matches.append(ternary(field_id, padded(values[0], pad), padded(values[1], pad)))
        elif kind == "range":
            matches.append(range_(field_id, padded(values[0], pad), padded(values[1], pad)))
        else:
            matches.append(optional(field_id, padded(values[0], pad)))
    return table_entry(ACL, matches, DROP, priority=priority)


@settings(max_examples=150, deadline=None)
@given(entry=acl_entries(), pad=st.integers(0, 3), other_pad=st.integers(0, 3))
def test_any_acl_entry_reads_back_canonical(entry: Any, pad: int, other_pad: int) -> None:
    fields, priority = entry
    state = DeviceState(PROGRAM)
    apply(state, update(INSERT, build(fields, priority, pad)))
    assert read_table(state, ACL) == [build(fields, priority, 0)]
    with pytest.raises(P4RuntimeError) as caught:
        apply(state, update(INSERT, build(fields, priority, other_pad)))
    assert caught.value.code == Code.ALREADY_EXISTS


@settings(max_examples=150, deadline=None)
@given(
    vid=st.integers(0, 2**12 - 1),
    prefix_len=st.integers(1, 32),
    address=st.integers(0, 2**32 - 1),
    pad=st.integers(0, 2),
)
def test_lpm_values_need_zero_bits_beyond_the_prefix(
    vid: int, prefix_len: int, address: int, pad: int
) -> None:
    state = DeviceState(PROGRAM)
    host_bits = address & ((1 << (32 - prefix_len)) - 1)
    entry = table_entry(
        CLASSIFIER, [exact(1, padded(vid, pad)), lpm(2, padded(address, pad), prefix_len)], DROP
    )
    if host_bits:
        with pytest.raises(P4RuntimeError) as caught:
            apply(state, update(INSERT, entry))
        assert caught.value.code == Code.INVALID_ARGUMENT
    else:
        apply(state, update(INSERT, entry))
        (read,) = read_table(state, CLASSIFIER)
        assert read.match[0].exact.value == canonical(vid)
        assert (read.match[1].lpm.value, read.match[1].lpm.prefix_len) == (
            canonical(address),
            prefix_len,
        )


@settings(max_examples=100, deadline=None)
@given(value=st.binary(max_size=4))
def test_values_fit_their_bitwidth_or_are_refused(value: bytes) -> None:
    """The classifier's vid is 12 bits wide: refused iff empty or above 4095."""
    state = DeviceState(PROGRAM)
    entry = table_entry(CLASSIFIER, [exact(1, value)], DROP)
    number = int.from_bytes(value, "big")
    if value and number < 2**12:
        apply(state, update(INSERT, entry))
    else:
        with pytest.raises(P4RuntimeError) as caught:
            apply(state, update(INSERT, entry))
        assert caught.value.code == Code.INVALID_ARGUMENT
