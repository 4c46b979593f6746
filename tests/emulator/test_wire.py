"""The hand-written wire codecs agree with the generated protobuf classes."""

from __future__ import annotations

from typing import Any

import pytest
from google.rpc import status_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from p4.v1 import p4runtime_pb2 as p4r

from sliceportal.emulator import wire

ids = st.integers(0, 2**32 - 1)
values = st.binary(max_size=20)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
uint64 = st.integers(0, 2**64 - 1)


@st.composite
def field_matches(draw: st.DrawFn) -> Any:
    match = p4r.FieldMatch(field_id=draw(ids))
    kind = draw(st.sampled_from(["exact", "lpm", "ternary", "range", "optional", None]))
    if kind == "exact":
        match.exact.value = draw(values)
    elif kind == "lpm":
        match.lpm.value = draw(values)
        match.lpm.prefix_len = draw(int32)
    elif kind == "ternary":
        match.ternary.value = draw(values)
        match.ternary.mask = draw(values)
    elif kind == "range":
        match.range.low = draw(values)
        match.range.high = draw(values)
    elif kind == "optional":
        match.optional.value = draw(values)
    return match


@st.composite
def table_entries(draw: st.DrawFn) -> Any:
    entry = p4r.TableEntry(
        table_id=draw(ids),
        priority=draw(int32),
        controller_metadata=draw(uint64),
        metadata=draw(values),
        is_default_action=draw(st.booleans()),
        idle_timeout_ns=draw(int64),
        is_const=draw(st.booleans()),
    )
    entry.match.extend(draw(st.lists(field_matches(), max_size=4)))
    action_kind = draw(st.sampled_from(["action", "member", "group", "empty", None]))
    if action_kind == "action":
        entry.action.action.action_id = draw(ids)
        for param_id, value in draw(st.lists(st.tuples(ids, values), max_size=4)):
            entry.action.action.params.add(param_id=param_id, value=value)
    elif action_kind == "member":
        entry.action.action_profile_member_id = draw(ids)
    elif action_kind == "group":
        entry.action.action_profile_group_id = draw(ids)
    elif action_kind == "empty":
        entry.action.SetInParent()
    if draw(st.booleans()):
        entry.counter_data.packet_count = draw(int64)
        entry.counter_data.byte_count = draw(int64)
    return entry


def assert_same_table_entry(decoded: wire.TableEntry, entry: Any) -> None:
    assert decoded.table_id == entry.table_id
    assert decoded.priority == entry.priority
    assert decoded.controller_metadata == entry.controller_metadata
    assert decoded.metadata == entry.metadata
    assert decoded.is_default_action == entry.is_default_action
    assert decoded.idle_timeout_ns == entry.idle_timeout_ns
    assert decoded.is_const == entry.is_const
    assert len(decoded.match) == len(entry.match)
    for got, want in zip(decoded.match, entry.match, strict=True):
        assert got.field_id == want.field_id
        kind = want.WhichOneof("field_match_type")
        assert (
            got.kind
            == {
                None: wire.MatchKind.UNSET,
                "exact": wire.MatchKind.EXACT,
                "lpm": wire.MatchKind.LPM,
                "ternary": wire.MatchKind.TERNARY,
                "range": wire.MatchKind.RANGE,
                "optional": wire.MatchKind.OPTIONAL,
            }[kind]
        )
        if kind in ("exact", "optional"):
            assert got.value == getattr(want, kind).value
        elif kind == "lpm":
            assert (got.value, got.prefix_len) == (want.lpm.value, want.lpm.prefix_len)
        elif kind == "ternary":
            assert (got.value, got.mask) == (want.ternary.value, want.ternary.mask)
        elif kind == "range":
            assert (got.value, got.mask) == (want.range.low, want.range.high)
    if not entry.HasField("action"):
        assert decoded.action_kind is None
    else:
        kind = entry.action.WhichOneof("type")
        assert (
            decoded.action_kind
            == {
                None: wire.TableActionKind.UNSET,
                "action": wire.TableActionKind.ACTION,
                "action_profile_member_id": wire.TableActionKind.MEMBER,
                "action_profile_group_id": wire.TableActionKind.GROUP,
            }[kind]
        )
        if kind == "action":
            assert decoded.action is not None
            assert decoded.action.action_id == entry.action.action.action_id
            assert decoded.action.params == [
                (p.param_id, p.value) for p in entry.action.action.params
            ]
    if entry.HasField("counter_data"):
        assert decoded.counter_data == wire.CounterData(
            entry.counter_data.byte_count, entry.counter_data.packet_count
        )
    else:
        assert decoded.counter_data is None


@settings(max_examples=150, deadline=None)
@given(
    entries=st.lists(table_entries(), max_size=5),
    election_id=st.none() | st.integers(0, 2**128 - 1),
    device_id=uint64,
    role=st.text(max_size=8),
    atomicity=st.integers(0, 2),
)
def test_write_requests_decode_like_protobuf(
    entries: list[Any], election_id: int | None, device_id: int, role: str, atomicity: int
) -> None:
    request = p4r.WriteRequest(device_id=device_id, role=role, atomicity=atomicity)
    if election_id is not None:
        request.election_id.high = election_id >> 64
        request.election_id.low = election_id & (2**64 - 1)
    for i, entry in enumerate(entries):
        request.updates.add(type=i % 4).entity.table_entry.CopyFrom(entry)

    decoded = wire.decode_write_request(request.SerializeToString())

    assert (decoded.device_id, decoded.role, decoded.atomicity) == (device_id, role, atomicity)
    assert decoded.election_id == election_id
    assert [u.type for u in decoded.updates] == [u.type for u in request.updates]
    for got, want in zip(decoded.updates, entries, strict=True):
        assert got.entity is not None and got.entity.kind == wire.EntityKind.TABLE_ENTRY
        assert isinstance(got.entity.body, wire.TableEntry)
        assert_same_table_entry(got.entity.body, want)


@settings(max_examples=100, deadline=None)
@given(counter_id=ids, index=st.none() | int64, packets=int64, byte_count=int64, value=values)
def test_counter_and_register_entries_decode_like_protobuf(
    counter_id: int, index: int | None, packets: int, byte_count: int, value: bytes
) -> None:
    request = p4r.ReadRequest(device_id=1)
    counter = request.entities.add().counter_entry
    counter.counter_id = counter_id
    if index is not None:
        counter.index.index = index
    counter.data.packet_count = packets
    counter.data.byte_count = byte_count
    register = request.entities.add().register_entry
    register.register_id = counter_id
    register.data.bitstring = value
    direct = request.entities.add().direct_counter_entry
    direct.table_entry.table_id = counter_id
    request.entities.add().meter_entry.meter_id = counter_id

    decoded = wire.decode_read_request(request.SerializeToString())

    got_counter, got_register, got_direct, got_meter = (e.body for e in decoded.entities)
    assert got_counter == wire.CounterEntry(
        counter_id, index, wire.CounterData(byte_count, packets)
    )
    assert got_register == wire.RegisterEntry(counter_id, None, True, value)
    assert isinstance(got_direct, wire.DirectCounterEntry)
    assert got_direct.table_entry is not None and got_direct.table_entry.table_id == counter_id
    assert got_direct.data is None
    assert got_meter == wire.MeterEntry(counter_id)
    assert decoded.entities[3].kind == wire.EntityKind.METER_ENTRY


def test_unknown_fields_are_skipped() -> None:
    # field 15 as fixed64 and field 14 as fixed32 before the device id
    raw = b"\x79" + b"\x00" * 8 + b"\x75" + b"\x00" * 4 + b"\x08\x07"
    assert wire.decode_write_request(raw).device_id == 7


@pytest.mark.parametrize(
    "raw",
    [b"\x22\x05\x0a", b"\x08", b"\x08\xff\xff", b"\x0b", b"\x79\x00", b"\x08" + b"\xff" * 11],
    ids=[
        "runs-past-end",
        "missing-varint",
        "truncated-varint",
        "group",
        "short-fixed64",
        "long-varint",
    ],
)
def test_malformed_bytes_raise_wire_error(raw: bytes) -> None:
    with pytest.raises(wire.WireError):
        wire.decode_write_request(raw)


@settings(max_examples=100, deadline=None)
@given(
    table_id=ids,
    exact_value=st.integers(0, 2**64),
    lpm=st.tuples(st.integers(0, 2**32 - 1), st.integers(1, 32)),
    ternary=st.tuples(st.integers(0, 2**32 - 1), st.integers(1, 2**32 - 1)),
    args=st.lists(st.integers(0, 2**48), max_size=3),
    priority=st.integers(0, 2**31 - 1),
    metadata=values,
    controller_metadata=uint64,
    counts=st.tuples(st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1)),
)
def test_encoded_table_entries_parse_as_protobuf(
    table_id: int,
    exact_value: int,
    lpm: tuple[int, int],
    ternary: tuple[int, int],
    args: list[int],
    priority: int,
    metadata: bytes,
    controller_metadata: int,
    counts: tuple[int, int],
) -> None:
    matches = [
        wire.encode_field_match(1, wire.MatchKind.EXACT, exact_value),
        wire.encode_field_match(2, wire.MatchKind.LPM, *lpm),
        wire.encode_field_match(3, wire.MatchKind.TERNARY, *ternary),
        wire.encode_field_match(4, wire.MatchKind.RANGE, 0, exact_value),
        wire.encode_field_match(5, wire.MatchKind.OPTIONAL, exact_value),
    ]
    action = wire.encode_table_action(7, range(1, len(args) + 1), args)
    body = wire.encode_table_entry(
        table_id,
        matches,
        action,
        priority=priority,
        controller_metadata=controller_metadata,
        metadata=metadata,
    )
    body = wire.with_counter_data(body, *counts)
    response = p4r.ReadResponse.FromString(wire.read_item(wire.EntityKind.TABLE_ENTRY, body))
    entry = response.entities[0].table_entry

    def number(raw: bytes) -> int:
        assert raw == wire.canonical_bytes(int.from_bytes(raw, "big"))  # shortest form
        return int.from_bytes(raw, "big")

    assert entry.table_id == table_id
    assert number(entry.match[0].exact.value) == exact_value
    assert (number(entry.match[1].lpm.value), entry.match[1].lpm.prefix_len) == lpm
    assert (number(entry.match[2].ternary.value), number(entry.match[2].ternary.mask)) == ternary
    assert (number(entry.match[3].range.low), number(entry.match[3].range.high)) == (0, exact_value)
    assert number(entry.match[4].optional.value) == exact_value
    assert entry.action.action.action_id == 7
    assert [number(p.value) for p in entry.action.action.params] == args
    assert (entry.priority, entry.metadata) == (priority, metadata)
    assert entry.controller_metadata == controller_metadata
    assert (entry.counter_data.packet_count, entry.counter_data.byte_count) == counts


@settings(max_examples=100, deadline=None)
@given(
    cells=st.lists(
        st.tuples(st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1)), min_size=1, max_size=300
    ),
    counter_id=ids,
)
def test_encoded_counter_cells_parse_as_protobuf(
    cells: list[tuple[int, int]], counter_id: int
) -> None:
    prefixes = wire.cell_prefixes(counter_id, len(cells))
    items = wire.counter_items(prefixes, [p for p, _ in cells], [b for _, b in cells])
    (raw,) = wire.read_responses(items)
    response = p4r.ReadResponse.FromString(raw)
    assert len(response.entities) == len(cells)
    for index, (got, (packets, byte_count)) in enumerate(
        zip(response.entities, cells, strict=True)
    ):
        entry = got.counter_entry
        assert (entry.counter_id, entry.index.index) == (counter_id, index)
        assert entry.HasField("index") and entry.HasField("data")
        assert (entry.data.packet_count, entry.data.byte_count) == (packets, byte_count)


def test_encoded_register_cells_parse_as_protobuf() -> None:
    values_ = [0, 1, 2**48 - 1, 300]
    items = wire.register_items(wire.cell_prefixes(9, 4), values_)
    response = p4r.ReadResponse.FromString(b"".join(items))
    assert [e.register_entry.data.bitstring for e in response.entities] == [
        b"\x00",
        b"\x01",
        b"\xff" * 6,
        b"\x01\x2c",
    ]
    assert [e.register_entry.index.index for e in response.entities] == [0, 1, 2, 3]


def test_read_responses_are_split_near_the_limit() -> None:
    items = [b"x" * 100] * 50
    chunks = list(wire.read_responses(items, max_bytes=1000))
    assert len(chunks) == 5 and b"".join(chunks) == b"".join(items)


def test_batch_status_parses_as_google_rpc_status() -> None:
    raw = wire.encode_batch_status(2, "1 of 3 failed", [None, (6, "exists"), None])
    status = status_pb2.Status.FromString(raw)
    assert (status.code, status.message) == (2, "1 of 3 failed")
    errors = []
    for detail in status.details:
        error = p4r.Error()
        assert detail.Unpack(error)
        errors.append((error.canonical_code, error.message))
    assert errors == [(0, ""), (6, "exists"), (0, "")]


@pytest.mark.parametrize("number", [1, 127, 128, 16383, 16384, 2**21 - 1, 2**21, 2**63, 2**64 - 1])
def test_varints_match_protobuf(number: int) -> None:
    assert (
        wire.varint(number)
        == p4r.Index(index=number if number < 2**63 else number - 2**64).SerializeToString()[1:]
    )
