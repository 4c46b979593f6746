"""Counter and register cells <-> serialized `ReadResponse` entities, with numpy: the one hot
path that does not go through the generated messages.

Why (`bench/bench_cells.py`, this 2-core machine shared with other jobs, protobuf 6.33 on upb;
a 1 Hz poll of 4,096 slices reads 81,920 counter cells and 8,192 register cells):

| 81,920 counter cells                 | generated messages | here (numpy) | ratio |
|--------------------------------------|--------------------|--------------|-------|
| switch side: columns -> ReadResponse | 212 ms             | 31 ms        | 6.9x  |
| client side: ReadResponse -> columns | 200 ms             | 39 ms        | 5.2x  |

Parsing is fast in upb, but taking 81,920 cells out of the parsed messages costs a Python
attribute access per field (~1.6 us a cell), and building them as much again: more than 10x the
1 Hz poll's budget (the poll benchmark's p95 was 28 ms with the numba codec this replaces). So
cells are encoded and decoded here, column-wise, for the layout every protobuf serializer writes
(fields in order, each once, defaults omitted, `index` present even when 0 — protobuf-c++ on
BMv2, upb, and the encoder below). A response in any other layout is decoded by the generated
messages instead (`_generated_cells`), so this module only ever makes the common case fast,
never a wrong answer; `tests/emulator/test_cells.py` holds both directions to the generated
messages.

Values are the 64 bits sent: P4Runtime's int64 counters hold a switch's uint64 ones, so a count
past 2^63 arrives as a negative int64 and is read back here as the uint64 it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import numpy.typing as npt
from google.protobuf.message import DecodeError

from sliceportal.p4rt.proto import p4r

U64 = npt.NDArray[np.uint64]
Bytes = npt.NDArray[np.uint8]


class CellKind(IntEnum):
    """The `Entity` oneof members this module encodes and decodes (their field numbers)."""

    COUNTER = 7
    REGISTER = 11


@dataclass(frozen=True, slots=True)
class Cells:
    """Cells of a Read, one element per entity in the order received: the entry's id, the
    index, and `first`/`second`: packets and bytes of a counter, the value (and 0) of a
    register (a `P4Data` other than a bitstring of at most 64 bits reads as 0)."""

    ids: U64
    indices: U64
    first: U64
    second: U64

    def __len__(self) -> int:
        return len(self.ids)


# -- encoding (the emulator's Read responses) ---------------------------------------------------

_SHIFTS = np.arange(10, dtype=np.uint64) * np.uint64(7)


def _varints(values: U64) -> tuple[Bytes, npt.NDArray[np.int64]]:
    """Each value as a varint: a row of 10 bytes (the used ones first) and its length."""
    out = np.zeros((len(values), 10), dtype=np.uint8)
    length = np.ones(len(values), dtype=np.int64)
    rest = values.copy()
    for k in range(10):
        more = rest >= 0x80
        out[:, k] = (rest & np.uint64(0x7F)).astype(np.uint8) | (more.astype(np.uint8) << 7)
        if not more.any():
            break
        length += more
        rest >>= np.uint64(7)
    return out, length


def _field(tag: int, values: U64, *, omit_zero: bool) -> tuple[Bytes, npt.NDArray[np.int64]]:
    """A varint field per row (tag, value): 11 bytes wide, its length (0 where omitted)."""
    encoded, length = _varints(values)
    rows = np.empty((len(values), 11), dtype=np.uint8)
    rows[:, 0] = tag
    rows[:, 1:] = encoded
    length = length + 1
    if omit_zero:
        length[values == 0] = 0
    return rows, length


def _constant(data: bytes, rows: int) -> tuple[Bytes, npt.NDArray[np.int64]]:
    block = np.broadcast_to(np.frombuffer(data, dtype=np.uint8), (rows, len(data)))
    return block, np.full(rows, len(data), dtype=np.int64)


def _lengths(*parts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    return np.sum(parts, axis=0)  # type: ignore[no-any-return]


def _pack(segments: list[tuple[Bytes, npt.NDArray[np.int64]]]) -> bytes:
    """The rows of every segment laid side by side, each cut to its length, row after row."""
    matrix = np.concatenate([block for block, _ in segments], axis=1)
    mask = np.concatenate(
        [np.arange(block.shape[1]) < length[:, None] for block, length in segments], axis=1
    )
    packed: bytes = matrix[mask].tobytes()
    return packed


def _varint_bytes(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _one_byte(length: npt.NDArray[np.int64]) -> Bytes:
    if len(length) and int(length.max()) >= 0x80:
        raise ValueError("an entity this module encodes is under 128 bytes")
    return length.astype(np.uint8)[:, None]


def _entities(
    kind: CellKind, entry_id: int, indices: U64, data: list[tuple[Bytes, npt.NDArray[np.int64]]]
) -> bytes:
    """`ReadResponse.entities` items: Entity{kind: {id, Index{index}, data}}."""
    rows = len(indices)
    id_field = _constant(b"\x08" + _varint_bytes(entry_id), rows)
    index_field = _field(0x08, indices, omit_zero=True)
    data_length = _lengths(*(length for _, length in data))
    entry_length = id_field[1] + 2 + index_field[1] + 2 + data_length
    ones = np.ones(rows, dtype=np.int64)
    head = np.empty((rows, 4), dtype=np.uint8)
    head[:, 0] = 0x0A  # ReadResponse.entities
    head[:, 1:2] = _one_byte(entry_length + 2)
    head[:, 2] = kind << 3 | 2
    head[:, 3:4] = _one_byte(entry_length)
    index_head = np.empty((rows, 2), dtype=np.uint8)
    index_head[:, 0] = 0x12
    index_head[:, 1:2] = _one_byte(index_field[1])
    data_head = np.empty((rows, 2), dtype=np.uint8)
    data_head[:, 0] = 0x1A
    data_head[:, 1:2] = _one_byte(data_length)
    return _pack(
        [
            (head, 4 * ones),
            id_field,
            (index_head, 2 * ones),
            index_field,
            (data_head, 2 * ones),
            *data,
        ]
    )


CHUNK_CELLS = 16_384
"""Cells per bytes object out of the encoders: about half a megabyte."""


def _as_u64(values: Iterable[int]) -> U64:
    if isinstance(values, np.ndarray):
        return values.astype(np.uint64, copy=False)
    return np.fromiter(values, dtype=np.uint64)


def counter_items(
    counter_id: int, indices: Iterable[int], packets: Iterable[int], byte_counts: Iterable[int]
) -> Iterator[bytes]:
    """Serialized `ReadResponse.entities` items of counter cells, `CHUNK_CELLS` per bytes
    object (a concatenation of items is a ReadResponse)."""
    at, pk, by = _as_u64(indices), _as_u64(packets), _as_u64(byte_counts)
    if not len(at) == len(pk) == len(by):
        raise ValueError("one index, one packet and one byte count per cell")
    for start in range(0, len(at), CHUNK_CELLS):
        cut = slice(start, start + CHUNK_CELLS)
        data = [_field(0x08, by[cut], omit_zero=True), _field(0x10, pk[cut], omit_zero=True)]
        yield _entities(CellKind.COUNTER, counter_id, at[cut], data)


def register_items(register_id: int, indices: Iterable[int], values: Iterable[int]) -> list[bytes]:
    """Serialized `ReadResponse.entities` items of register cells, each value a `P4Data`
    bitstring (the shortest big-endian bytes, one 0 byte for 0). Values wider than 64 bits
    (registers of bit<65> and more) go through the generated messages."""
    at = _as_u64(indices)
    if not (isinstance(values, np.ndarray) and values.dtype == np.uint64):
        numbers = [int(value) for value in values]
        if len(numbers) != len(at):
            raise ValueError("one value per cell")
        if any(n >> 64 for n in numbers):
            return [_generated_registers(register_id, at.tolist(), numbers)]
        values = np.array(numbers, dtype=np.uint64)
    if len(values) != len(at):
        raise ValueError("one value per cell")
    out = []
    for start in range(0, len(at), CHUNK_CELLS):
        cut = slice(start, start + CHUNK_CELLS)
        chunk = values[cut]
        big_endian = chunk.astype(">u8").view(np.uint8).reshape(len(chunk), 8)
        width = 8 - (big_endian != 0).argmax(axis=1)
        width[chunk == 0] = 1
        head = np.empty((len(chunk), 2), dtype=np.uint8)
        head[:, 0] = 0x0A  # P4Data.bitstring
        head[:, 1] = width
        # The value's last `width` bytes, moved to the front of the row.
        taken = np.take_along_axis(
            big_endian, np.minimum((8 - width)[:, None] + np.arange(8), 7), axis=1
        )
        data = [(head, np.full(len(chunk), 2, dtype=np.int64)), (taken, width)]
        out.append(_entities(CellKind.REGISTER, register_id, at[cut], data))
    return out


def _generated_registers(register_id: int, indices: list[int], values: list[int]) -> bytes:
    response = p4r.ReadResponse()
    for index, value in zip(indices, values, strict=True):
        entry = response.entities.add().register_entry
        entry.register_id = register_id
        entry.index.index = index
        entry.data.bitstring = value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")
    return response.SerializeToString()


# -- decoding (the client's counter and register reads) ----------------------------------------


class _Irregular(Exception):
    """The bytes are not in the layout the fast path reads: use the generated messages."""


def decode(responses: Iterable[bytes], kind: CellKind) -> Cells:
    """The cells of entity kind `kind` in serialized ReadResponses (one Read's stream; other
    entity kinds are skipped). ValueError on bytes that are not a ReadResponse."""
    data = b"".join(responses)
    try:
        return _fast_cells(data, kind)
    except _Irregular:
        return _generated_cells(data, kind)


def _generated_cells(data: bytes, kind: CellKind) -> Cells:
    try:
        response = p4r.ReadResponse.FromString(data)
    except DecodeError as exc:
        raise ValueError(f"not a ReadResponse: {exc}") from None
    member = "counter_entry" if kind is CellKind.COUNTER else "register_entry"
    rows: list[tuple[int, int, int, int]] = []
    for entity in response.entities:
        if entity.WhichOneof("entity") != member:
            continue
        if kind is CellKind.COUNTER:
            counter = entity.counter_entry
            cell = counter.data
            rows.append(
                (counter.counter_id, counter.index.index, cell.packet_count, cell.byte_count)
            )
        else:
            register = entity.register_entry
            value = 0
            if register.data.WhichOneof("data") == "bitstring":
                value = int.from_bytes(register.data.bitstring, "big")
                if value >> 64:
                    raise ValueError("a register value wider than 64 bits")
            rows.append((register.register_id, register.index.index, value, 0))
    table = np.array(rows, dtype=np.int64).astype(np.uint64).reshape(len(rows), 4)
    columns = [np.ascontiguousarray(table[:, i]) for i in range(4)]
    return Cells(*columns)


def _starts(buf: Bytes, kind: CellKind) -> npt.NDArray[np.int64]:
    """Where each `entities` item begins, found column-wise: the positions that look like the
    start of an item of `kind` (tag, one-byte length, member tag, its length, id tag) must
    chain from the first byte to the last, each item ending where the next begins. Anything
    else (another layout, or a count whose bytes happen to look like a start) is irregular."""
    end = len(buf)
    found: npt.NDArray[np.int64] = np.flatnonzero(buf[: max(end - 4, 0)] == 0x0A)
    found = found[
        (buf[found + 1] < 0x80)
        & (buf[found + 2] == (kind << 3 | 2))
        & (buf[found + 3].astype(np.int64) == buf[found + 1].astype(np.int64) - 2)
        & (buf[found + 4] == 0x08)
    ]
    if not len(found) or found[0] != 0:
        raise _Irregular
    after = found + 2 + buf[found + 1]
    if after[-1] != end or not (after[:-1] == found[1:]).all():
        raise _Irregular
    return found


def _varint_at(buf: Bytes, pos: npt.NDArray[np.int64]) -> tuple[U64, npt.NDArray[np.int64]]:
    """The varint at each position of `buf`, and the position after it."""
    last = len(buf) - 1
    value = np.zeros(len(pos), dtype=np.uint64)
    length = np.zeros(len(pos), dtype=np.int64)
    going = np.ones(len(pos), dtype=np.bool_)
    for k in range(10):
        byte = buf[np.minimum(pos + k, last)]
        value |= (byte & 0x7F).astype(np.uint64) * going << np.uint64(7 * k)
        length += going
        going &= byte >= 0x80
        if not going.any():
            return value, pos + length
    raise _Irregular


def _expect(buf: Bytes, pos: npt.NDArray[np.int64], byte: int) -> None:
    if not (buf[pos] == byte).all():
        raise _Irregular


def _fast_cells(data: bytes, kind: CellKind) -> Cells:
    """Cells of `kind` laid out as serializers write them (see the module's docstring)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    if not len(buf):
        empty = np.zeros(0, dtype=np.uint64)
        return Cells(empty, empty, empty, empty)
    starts = _starts(buf, kind)
    ends = starts + 2 + buf[starts + 1]
    ids, pos = _varint_at(buf, starts + 5)
    _expect(buf, pos, 0x12)
    index_end = pos + 2 + buf[np.minimum(pos + 1, len(buf) - 1)]
    pos = pos + 2
    indices = np.zeros(len(starts), dtype=np.uint64)
    has_index = pos < index_end
    if has_index.any():
        _expect(buf, pos[has_index], 0x08)
        indices[has_index], pos[has_index] = _varint_at(buf, pos[has_index] + 1)
    if not (pos == index_end).all():
        raise _Irregular
    _expect(buf, np.minimum(pos, len(buf) - 1), 0x1A)
    if not (pos + 2 + buf[np.minimum(pos + 1, len(buf) - 1)] == ends).all():
        raise _Irregular  # the data is not the entry's last field
    pos = pos + 2
    first = np.zeros(len(starts), dtype=np.uint64)
    second = np.zeros(len(starts), dtype=np.uint64)
    if kind is CellKind.COUNTER:  # CounterData{byte_count = 1; packet_count = 2}
        for tag, column in ((0x08, second), (0x10, first)):
            present = (pos < ends) & (buf[np.minimum(pos, len(buf) - 1)] == tag)
            if present.any():
                column[present], pos[present] = _varint_at(buf, pos[present] + 1)
    else:  # P4Data{bytes bitstring = 1}
        present = pos < ends
        if present.any():
            at = pos[present]
            _expect(buf, at, 0x0A)
            length = buf[at + 1].astype(np.int64)
            if (length > 8).any():
                raise _Irregular
            digits = np.arange(8)
            picked = buf[np.minimum(at[:, None] + 2 + digits, len(buf) - 1)].astype(np.uint64)
            shift = ((length[:, None] - 1 - digits) * 8).clip(0).astype(np.uint64)
            picked = picked << shift
            picked[digits >= length[:, None]] = 0
            first[present] = np.bitwise_or.reduce(picked, axis=1)
            pos[present] = at + 2 + length
    if not (pos == ends).all():
        raise _Irregular
    return Cells(ids, indices, first, second)
