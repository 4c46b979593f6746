"""The client's hand-written codecs (requests out, responses and error details in) agree with
the generated protobuf classes."""

from __future__ import annotations

from typing import Any

from google.protobuf import any_pb2
from google.rpc import status_pb2
from hypothesis import given
from hypothesis import strategies as st
from p4.v1 import p4runtime_pb2 as p4r

from sliceportal.emulator import wire as server_wire
from sliceportal.p4rt import wire

uint64 = st.integers(0, 2**64 - 1)
ids = st.integers(0, 2**32 - 1)


@given(
    device_id=uint64,
    election_id=st.integers(1, 2**128 - 1),
    role=st.text(max_size=8),
    counters=st.lists(st.tuples(ids, st.none() | st.integers(0, 2**40)), max_size=5),
)
def test_write_requests_parse_as_protobuf(
    device_id: int, election_id: int, role: str, counters: list[tuple[int, int | None]]
) -> None:
    updates = [
        wire.encode_update(wire.UpdateType.MODIFY, wire.EntityKind.COUNTER_ENTRY, body)
        for body in (wire.encode_cell_entry(c, i) for c, i in counters)
    ]
    parsed = p4r.WriteRequest.FromString(
        wire.encode_write_request(device_id, election_id, updates, role=role)
    )
    assert parsed.device_id == device_id and parsed.role == role
    assert (parsed.election_id.high << 64 | parsed.election_id.low) == election_id
    assert parsed.atomicity == p4r.WriteRequest.CONTINUE_ON_ERROR
    got = [
        (u.type, u.entity.counter_entry.counter_id, u.entity.counter_entry.HasField("index"))
        for u in parsed.updates
    ]
    assert got == [(p4r.Update.MODIFY, c, i is not None) for c, i in counters]
    assert [u.entity.counter_entry.index.index for u in parsed.updates] == [
        i or 0 for _, i in counters
    ]


def test_read_requests_parse_as_protobuf() -> None:
    entities = [
        wire.encode_entity(wire.EntityKind.TABLE_ENTRY, wire.encode_table_entry(7, (), None)),
        wire.encode_entity(wire.EntityKind.REGISTER_ENTRY, wire.encode_cell_entry(9, 0)),
    ]
    parsed = p4r.ReadRequest.FromString(wire.encode_read_request(3, entities, role="r"))
    assert parsed.device_id == 3 and parsed.role == "r"
    assert parsed.entities[0].table_entry.table_id == 7
    assert not parsed.entities[0].table_entry.match
    assert parsed.entities[1].register_entry.register_id == 9
    assert parsed.entities[1].register_entry.HasField("index")


int64 = st.integers(0, 2**63 - 1)
cells = st.lists(st.tuples(ids, st.integers(0, 2**20), int64, int64), max_size=30)


def _response(cells: list[tuple[int, int, int, int]]) -> bytes:
    response = p4r.ReadResponse()
    for counter_id, index, packets, byte_count in cells:
        entry = response.entities.add().counter_entry
        entry.counter_id = counter_id
        entry.index.index = index
        entry.data.packet_count = packets
        entry.data.byte_count = byte_count
    serialized: bytes = response.SerializeToString()
    return serialized


@given(cells)
def test_counter_cells_decode_like_protobuf(cells: list[tuple[int, int, int, int]]) -> None:
    data = _response(cells)
    assert wire.decode_counter_cells(data) == cells
    generic = [
        (e.body.counter_id, e.body.index, e.body.data.packet_count, e.body.data.byte_count)
        for e in wire.decode_read_response(data)
        if isinstance(e.body, wire.CounterEntry) and e.body.data is not None
    ]
    assert generic == [(c, i, p, b) for c, i, p, b in cells]


def test_the_emulators_counter_cells_take_the_fast_path() -> None:
    prefixes = server_wire.cell_prefixes(0x12000005, 300)
    items = server_wire.counter_items(prefixes, range(300), (3 * n for n in range(300)))
    (response,) = server_wire.read_responses(items)
    assert wire.decode_counter_cells(response) == [(0x12000005, n, n, 3 * n) for n in range(300)]


def test_unusual_counter_entries_fall_back_to_the_generic_decoder() -> None:
    response = p4r.ReadResponse()
    first = response.entities.add().counter_entry
    first.counter_id, first.index.index, first.data.packet_count = 5, 1, 2
    odd = response.entities.add().counter_entry  # a varint of 8 bytes: still the fast path
    odd.counter_id, odd.index.index, odd.data.byte_count = 5, 2, 7
    odd.data.packet_count = 10**15
    response.entities.add().table_entry.table_id = 9  # not a counter: skipped
    last = response.entities.add().counter_entry
    last.counter_id = 6
    data = response.SerializeToString() + b"\x12\x00"  # an unknown field at the end
    assert wire.decode_counter_cells(data) == [(5, 1, 2, 0), (5, 2, 10**15, 7), (6, 0, 0, 0)]


@given(st.lists(st.none() | st.tuples(st.integers(1, 16), st.text(max_size=20)), max_size=20))
def test_batch_status_decodes_like_protobuf(errors: list[tuple[int, str] | None]) -> None:
    status = status_pb2.Status(code=2, message="some updates failed")
    for error in errors:
        detail = p4r.Error()
        if error is not None:
            detail.canonical_code, detail.message = error
            detail.space = "test"
        packed = any_pb2.Any()
        packed.Pack(detail)
        status.details.append(packed)
    decoded = wire.decode_status(status.SerializeToString())
    assert (decoded.code, decoded.message) == (2, "some updates failed")
    assert [None if e.code == 0 else (e.code, e.message) for e in decoded.errors] == errors


def test_the_emulators_batch_status_decodes() -> None:
    data = server_wire.encode_batch_status(2, "1 of 2", [None, (6, "exists")])
    decoded = wire.decode_status(data)
    assert [(e.code, e.message) for e in decoded.errors] == [(0, ""), (6, "exists")]


def test_a_status_detail_of_another_type_is_refused() -> None:
    status = status_pb2.Status(code=2)
    packed: Any = any_pb2.Any()
    packed.Pack(status_pb2.Status(code=3))
    status.details.append(packed)
    try:
        wire.decode_status(status.SerializeToString())
    except wire.WireError as exc:
        assert "google.rpc.Status" in str(exc)
    else:
        raise AssertionError("decoded a foreign detail")
