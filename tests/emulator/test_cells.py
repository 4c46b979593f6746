"""The compiled cell codecs agree with protobuf: the client's scanner (`p4rt.wire.counter_cells`,
`register_cells`, on `p4rt.scan`) and the emulator's encoders (`counter_items`,
`register_items`), on the layouts serializers write and on the ones they may."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from google.protobuf.message import DecodeError
from hypothesis import given, settings
from hypothesis import strategies as st
from p4.v1 import p4runtime_pb2 as p4r

from sliceportal.emulator import wire as server_wire
from sliceportal.p4rt import wire

ids = st.integers(0, 2**32 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
TOP = 1 << 64

Cell = tuple[int, int, int, int]


def _unsigned(value: int) -> int:
    return value % TOP


def _expected_counters(data: bytes) -> list[Cell]:
    """What protobuf reads: (counter id, index, packets, bytes) of each counter entity, its
    int64 values as the uint64 they carry."""
    response = p4r.ReadResponse.FromString(data)
    return [
        (
            e.counter_entry.counter_id,
            _unsigned(e.counter_entry.index.index),
            _unsigned(e.counter_entry.data.packet_count),
            _unsigned(e.counter_entry.data.byte_count),
        )
        for e in response.entities
        if e.WhichOneof("entity") == "counter_entry"
    ]


def _counters(parts: list[bytes]) -> list[Cell]:
    cells = wire.counter_cells(parts)
    columns = (cells.counter_ids, cells.indices, cells.packets, cells.bytes)
    return list(zip(*(column.tolist() for column in columns), strict=True))


@st.composite
def entities(draw: st.DrawFn) -> Any:
    """A counter entry with any of its fields set, or another kind of entity."""
    entity = p4r.Entity()
    kind = draw(st.sampled_from(["counter", "counter", "counter", "register", "table", "meter"]))
    if kind == "counter":
        entry = entity.counter_entry
        entry.counter_id = draw(ids)
        if draw(st.booleans()):
            entry.index.index = draw(int64)
        if draw(st.booleans()):
            entry.data.packet_count = draw(int64)
            entry.data.byte_count = draw(st.sampled_from([0, 1, 2**63 - 1, -1, 300]))
    elif kind == "register":
        entity.register_entry.register_id = draw(ids)
        entity.register_entry.data.bitstring = draw(st.binary(max_size=8))
    elif kind == "table":
        entity.table_entry.table_id = draw(ids)
    else:
        entity.meter_entry.meter_id = draw(ids)
    return entity


def _responses(groups: list[list[Any]]) -> list[bytes]:
    out = []
    for group in groups:
        response = p4r.ReadResponse()
        for entity in group:
            response.entities.add().CopyFrom(entity)
        out.append(response.SerializeToString())
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(entities(), max_size=12), max_size=4))
def test_counter_cells_of_a_stream_read_like_protobuf(groups: list[list[Any]]) -> None:
    parts = _responses(groups)
    # A stream of ReadResponses parses like their concatenation: one message.
    assert _counters(parts) == _expected_counters(b"".join(parts))


def test_zero_max_and_missing_values() -> None:
    response = p4r.ReadResponse()
    zero = response.entities.add().counter_entry  # index, data unset: 0
    zero.counter_id = 5
    top = response.entities.add().counter_entry
    top.counter_id, top.index.index = 5, 2**63 - 1
    top.data.packet_count, top.data.byte_count = -1, -(2**63)  # uint64 max, 2^63
    empty_data = response.entities.add().counter_entry
    empty_data.counter_id = 6
    empty_data.index.SetInParent()
    empty_data.data.SetInParent()
    data = response.SerializeToString()
    assert _counters([data]) == [
        (5, 0, 0, 0),
        (5, 2**63 - 1, TOP - 1, 2**63),
        (6, 0, 0, 0),
    ]


def test_nothing_to_read() -> None:
    for parts in ([], [b""], [b"", b""]):
        cells = wire.counter_cells(parts)
        assert len(cells.counter_ids) == len(cells.packets) == 0
        assert cells.packets.dtype == np.uint64


def _varint(value: int) -> bytes:
    return wire.varint(value % TOP)


UNKNOWN_FIELDS = [
    _varint(99 << 3) + _varint(2**64 - 1),  # varint
    _varint(98 << 3 | 1) + b"\xff" * 8,  # fixed64
    _varint(97 << 3 | 5) + b"\x01\x02\x03\x04",  # fixed32
    _varint(96 << 3 | 2) + b"\x03abc",  # length-delimited
    _varint(2000 << 3 | 2) + b"\x00",  # a tag of two bytes
]


def _len(number: int, body: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(body)) + body


@pytest.mark.parametrize("unknown", UNKNOWN_FIELDS)
def test_unknown_fields_anywhere_are_skipped(unknown: bytes) -> None:
    index = _len(2, b"\x08\x07" + unknown)  # Index { index: 7 }
    data = _len(3, unknown + b"\x08\x64\x10\x0a" + unknown)  # bytes 100, packets 10
    entry = unknown + b"\x08\x05" + unknown + index + data + unknown
    entity = unknown + _len(7, entry) + unknown
    response = unknown + _len(1, entity) + unknown + _len(1, _len(7, b"\x08\x06")) + unknown
    assert _counters([response]) == _expected_counters(response) == [(5, 7, 10, 100), (6, 0, 0, 0)]


def test_repeated_fields_merge_like_protobuf() -> None:
    entry = b"\x08\x05" + _len(3, b"\x10\x01") + _len(2, b"\x08\x02") + b"\x08\x09"
    entry += _len(3, b"\x08\x03")  # a second data: merged, packets stay 1
    entity = _len(7, entry) + _len(7, _len(2, b"\x08\x04"))  # the member again: merged
    other = _len(7, b"\x08\x05") + _len(2, b"")  # then a table entry: no counter left
    again = _len(2, b"") + _len(7, b"\x08\x08")  # a table entry, then a counter: fresh
    response = _len(1, entity) + _len(1, other) + _len(1, again)
    assert _counters([response]) == _expected_counters(response) == [(9, 4, 1, 3), (8, 0, 0, 0)]


VALID = _len(1, _len(7, b"\x08\x05" + _len(2, b"\x08\x87\x01") + _len(3, b"\x10\x01")))


@pytest.mark.parametrize("cut", range(1, len(VALID)))
def test_a_truncated_response_is_refused_like_protobuf(cut: int) -> None:
    with pytest.raises(DecodeError):
        p4r.ReadResponse.FromString(VALID[:cut])
    with pytest.raises(wire.WireError):
        wire.counter_cells([VALID[:cut]])


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"\x0a\x05\x3a\x03", "runs past the end"),
        (b"\x0a\x02\x3a\x80", "ends inside"),
        (b"\x08" + b"\xff" * 10 + b"\x01", "longer than 10 bytes"),
        (b"\x0b", "wire type"),  # a group
        (b"\x0e\x00", "wire type"),  # wire type 6
        (_len(1, _len(7, b"\x0f")), "wire type"),
    ],
)
def test_malformed_bytes_are_refused(data: bytes, problem: str) -> None:
    with pytest.raises(wire.WireError, match=problem):
        wire.counter_cells([data])


def test_the_emulators_cells_decode_with_every_value_width() -> None:
    values = [0, 1, 127, 128, 2**14, 2**35, 2**56, 2**63 - 1, -1, -(2**63)]
    indices = np.array([0, 1, 127, 128, 4095, 2**20, 2**31, 7, 8, 9], dtype=np.int64)
    prefixes = server_wire.CellPrefixes(0x12000005, indices)
    packets = np.array(values, dtype=np.int64)
    byte_counts = packets[::-1].copy()
    items = server_wire.counter_items(prefixes, packets, byte_counts)
    data = b"".join(server_wire.read_responses(items))
    expected = _expected_counters(data)
    assert _counters([data]) == expected
    assert expected == [
        (0x12000005, i, _unsigned(p), _unsigned(b))
        for i, p, b in zip(indices.tolist(), values, values[::-1], strict=True)
    ]


def test_large_reads_come_in_chunks_that_split_into_responses_at_entities() -> None:
    size = 3 * server_wire.CHUNK_ITEMS + 5
    packets = np.arange(size, dtype=np.int64) * 1_000_003
    items = list(server_wire.counter_items(server_wire.cell_prefixes(7, size), packets, packets))
    assert len(items) == 4
    responses = list(server_wire.read_responses(items, max_bytes=100_000))
    assert all(len(r) < 100_100 for r in responses) and len(responses) > 10
    cells = wire.counter_cells(responses)
    assert cells.indices.tolist() == list(range(size))
    assert cells.packets.tolist() == cells.bytes.tolist() == packets.tolist()
    for response in responses:  # each a ReadResponse of whole entities
        assert len(p4r.ReadResponse.FromString(response).entities) > 0


def _expected_registers(data: bytes) -> list[tuple[int, int, int]]:
    response = p4r.ReadResponse.FromString(data)
    return [
        (
            e.register_entry.register_id,
            e.register_entry.index.index,
            int.from_bytes(e.register_entry.data.bitstring, "big"),
        )
        for e in response.entities
        if e.WhichOneof("entity") == "register_entry"
    ]


def _registers(parts: list[bytes]) -> list[tuple[int, int, int]]:
    cells = wire.register_cells(parts)
    columns = (cells.register_ids, cells.indices, cells.values)
    return list(zip(*(column.tolist() for column in columns), strict=True))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=40))
def test_register_cells_round_trip_through_the_emulators_encoder(values: list[int]) -> None:
    prefixes = server_wire.cell_prefixes(0x13000001, len(values))
    array = np.array(values, dtype=np.uint64)
    data = b"".join(server_wire.register_items(prefixes, array))
    assert _registers([data]) == _expected_registers(data)
    assert _registers([data]) == [(0x13000001, i, v) for i, v in enumerate(values)]
    bitstrings = [
        e.register_entry.data.bitstring for e in p4r.ReadResponse.FromString(data).entities
    ]
    assert bitstrings == [v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big") for v in values]


def test_register_values_in_other_forms() -> None:
    response = p4r.ReadResponse()
    padded = response.entities.add().register_entry  # BMv2 may pad to the register's width
    padded.register_id, padded.index.index = 1, 3
    padded.data.bitstring = b"\x00" * 10 + b"\x01\x02"
    boolean = response.entities.add().register_entry  # not a bitstring: read as 0
    boolean.register_id = 1
    boolean.data.bitstring = b"\x05"
    boolean.data.bool = True
    response.entities.add().counter_entry.counter_id = 4  # not a register: skipped
    data = response.SerializeToString()
    assert _registers([data]) == [(1, 3, 0x0102), (1, 0, 0)]
    wide = p4r.ReadResponse()
    wide.entities.add().register_entry.data.bitstring = b"\x01" + b"\x00" * 8
    with pytest.raises(wire.WireError, match="wider than 64 bits"):
        wire.register_cells([wide.SerializeToString()])


def test_registers_wider_than_64_bits_are_encoded() -> None:
    values = [2**100 + 5, 0, 2**64]
    data = b"".join(server_wire.register_items(server_wire.cell_prefixes(9, 3), values))
    parsed = p4r.ReadResponse.FromString(data)
    assert [
        int.from_bytes(e.register_entry.data.bitstring, "big") for e in parsed.entities
    ] == values
    assert [len(e.register_entry.data.bitstring) for e in parsed.entities] == [13, 1, 9]


def test_the_fast_path_and_the_generic_decoder_agree() -> None:
    """A canonical entity takes the fast path; the same with a trailing unknown field in the
    entity takes the generic one."""
    packets = np.array([0, 5, 2**40, -1], dtype=np.int64)
    prefixes = server_wire.CellPrefixes(3, np.array([0, 1, 200, 2**33], dtype=np.int64))
    canonical = b"".join(server_wire.counter_items(prefixes, packets, packets[::-1].copy()))
    generic = b""
    for entity in p4r.ReadResponse.FromString(canonical).entities:
        generic += _len(1, entity.SerializeToString() + UNKNOWN_FIELDS[0])
    assert _counters([canonical]) == _counters([generic]) == _expected_counters(canonical)
