"""`p4rt.cells`, the one codec that bypasses the generated messages, agrees with them: the
emulator's encoders write what protobuf writes, byte for byte, and the client's decoder reads
any ReadResponse as protobuf does (its fast path for the usual layout, the generated messages
for any other)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sliceportal.p4rt import cells
from sliceportal.p4rt.proto import p4r

ids = st.integers(1, 2**32 - 1)
uint64 = st.integers(0, 2**64 - 1)
counter_rows = st.lists(st.tuples(st.integers(0, 2**31), uint64, uint64), max_size=40)


def _counters(counter_id: int, rows: list[tuple[int, int, int]]) -> bytes:
    response = p4r.ReadResponse()
    for index, packets, byte_count in rows:
        entry = response.entities.add().counter_entry
        entry.counter_id = counter_id
        entry.index.index = index
        entry.data.packet_count = packets - (1 << 64) if packets >> 63 else packets
        entry.data.byte_count = byte_count - (1 << 64) if byte_count >> 63 else byte_count
    return response.SerializeToString()


def _registers(register_id: int, rows: list[tuple[int, int]]) -> bytes:
    response = p4r.ReadResponse()
    for index, value in rows:
        entry = response.entities.add().register_entry
        entry.register_id = register_id
        entry.index.index = index
        entry.data.bitstring = value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")
    return response.SerializeToString()


def _columns(found: cells.Cells) -> list[tuple[int, int, int, int]]:
    columns = (found.ids, found.indices, found.first, found.second)
    return list(zip(*(c.tolist() for c in columns), strict=True))


@given(ids, counter_rows)
def test_counter_cells_encode_as_protobuf_does(
    counter_id: int, rows: list[tuple[int, int, int]]
) -> None:
    indices = [r[0] for r in rows]
    packets = np.array([r[1] for r in rows], dtype=np.uint64)
    byte_counts = np.array([r[2] for r in rows], dtype=np.uint64)
    encoded = b"".join(cells.counter_items(counter_id, indices, packets, byte_counts))
    assert encoded == _counters(counter_id, rows)


@given(ids, counter_rows)
def test_counter_cells_decode_as_protobuf_does(
    counter_id: int, rows: list[tuple[int, int, int]]
) -> None:
    found = cells.decode([_counters(counter_id, rows)], cells.CellKind.COUNTER)
    assert _columns(found) == [(counter_id, i, p, b) for i, p, b in rows]


@given(ids, st.lists(st.tuples(st.integers(0, 2**20), uint64), max_size=40))
def test_register_cells_round_trip(register_id: int, rows: list[tuple[int, int]]) -> None:
    values = np.array([v for _, v in rows], dtype=np.uint64)
    encoded = b"".join(cells.register_items(register_id, [i for i, _ in rows], values))
    assert encoded == _registers(register_id, rows)
    found = cells.decode([encoded], cells.CellKind.REGISTER)
    assert _columns(found) == [(register_id, i, v, 0) for i, v in rows]


def test_registers_wider_than_64_bits_are_encoded_by_protobuf() -> None:
    rows = [(0, 1 << 70), (1, 5)]
    (encoded,) = cells.register_items(3, [0, 1], [1 << 70, 5])
    assert encoded == _registers(3, rows)
    with pytest.raises(ValueError, match="wider than 64 bits"):
        cells.decode([encoded], cells.CellKind.REGISTER)


def test_other_layouts_are_read_by_the_generated_messages() -> None:
    response = p4r.ReadResponse()
    first = response.entities.add().counter_entry
    first.counter_id, first.index.index, first.data.packet_count = 5, 1, 2
    response.entities.add().table_entry.table_id = 9  # not a counter: skipped
    last = response.entities.add().counter_entry
    last.counter_id = 6  # no index, no data
    data = response.SerializeToString() + b"\x12\x00"  # an unknown field at the end
    found = cells.decode([data], cells.CellKind.COUNTER)
    assert _columns(found) == [(5, 1, 2, 0), (6, 0, 0, 0)]
    assert cells.decode([data[:10], data[10:]], cells.CellKind.COUNTER).ids.tolist() == [5, 6]


def test_a_stream_of_responses_reads_as_one() -> None:
    parts = [_counters(7, [(i, i, 2 * i)]) for i in range(5)]
    found = cells.decode(parts, cells.CellKind.COUNTER)
    assert found.indices.tolist() == list(range(5))


def test_nothing_to_read() -> None:
    assert len(cells.decode([b""], cells.CellKind.COUNTER)) == 0
    assert len(cells.decode([], cells.CellKind.REGISTER)) == 0


@pytest.mark.parametrize("cut", [1, 5, 17])
def test_a_truncated_response_is_refused(cut: int) -> None:
    data = _counters(7, [(1, 2, 3), (300, 2**40, 2**50)])
    with pytest.raises(ValueError):
        cells.decode([data[:-cut]], cells.CellKind.COUNTER)


def test_big_reads_come_in_chunks() -> None:
    size = cells.CHUNK_CELLS + 10
    at = np.arange(size)
    parts = list(cells.counter_items(7, at, at, at))
    assert len(parts) == 2
    assert cells.decode(parts, cells.CellKind.COUNTER).first.tolist() == at.tolist()


def test_varints_of_every_length_both_ways() -> None:
    values = [0, 1] + [(1 << 7 * k) - 1 for k in range(1, 10)] + [1 << 7 * k for k in range(1, 10)]
    values += [2**64 - 1, 2**63]
    rows = [(v % 2**40, v, values[-1 - i]) for i, v in enumerate(values)]
    for counter_id in (1, 300, 302006785, 2**32 - 1):
        data = _counters(counter_id, rows)
        encoded = b"".join(
            cells.counter_items(
                counter_id,
                [r[0] for r in rows],
                np.array([r[1] for r in rows], dtype=np.uint64),
                np.array([r[2] for r in rows], dtype=np.uint64),
            )
        )
        assert encoded == data
        assert _columns(cells.decode([data], cells.CellKind.COUNTER)) == [
            (counter_id, i, p, b) for i, p, b in rows
        ]


def test_indices_up_to_the_largest_int64() -> None:
    rows = [(2**56 + 5, 1, 2), (2**63 - 1, 0, 0), (0, 3, 0)]
    data = _counters(9, rows)
    at = np.array([r[0] for r in rows], dtype=np.uint64)
    ones = np.array([r[1] for r in rows], dtype=np.uint64)
    twos = np.array([r[2] for r in rows], dtype=np.uint64)
    assert b"".join(cells.counter_items(9, at, ones, twos)) == data
    assert _columns(cells.decode([data], cells.CellKind.COUNTER)) == [(9, *r) for r in rows]


def test_cells_of_several_arrays_in_one_read() -> None:
    first = _counters(302006785, [(i, i, 3 * i) for i in range(100)])
    second = _counters(7, [(i, 2**50 + i, 0) for i in range(100)])
    found = cells.decode([first, second, first], cells.CellKind.COUNTER)
    assert found.ids.tolist() == [302006785] * 100 + [7] * 100 + [302006785] * 100
    assert found.first.tolist()[100:200] == [2**50 + i for i in range(100)]


def test_the_same_cells_encode_again_with_new_values() -> None:
    at = np.arange(1000, dtype=np.uint64)
    for scale in (1, 2**20, 2**45, 0):
        packets = at * np.uint64(scale)
        rows = [(i, i * scale, 2 * i * scale) for i in range(1000)]
        encoded = b"".join(cells.counter_items(5, at, packets, packets * np.uint64(2)))
        assert encoded == _counters(5, rows)
        (registers,) = cells.register_items(5, at, packets)
        assert registers == _registers(5, [(i, i * scale) for i in range(1000)])


def test_register_values_of_every_width() -> None:
    rows = [
        (i, v) for i, v in enumerate([0, 1, 255, 256] + [2 ** (8 * k) - 1 for k in range(2, 9)])
    ]
    values = np.array([v for _, v in rows], dtype=np.uint64)
    (encoded,) = cells.register_items(11, [i for i, _ in rows], values)
    assert encoded == _registers(11, rows)
    found = cells.decode([encoded], cells.CellKind.REGISTER)
    assert _columns(found) == [(11, i, v, 0) for i, v in rows]
