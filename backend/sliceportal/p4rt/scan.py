"""The compiled scanner behind `wire.counter_cells` and `wire.register_cells`: call those.

A poll of 4,096 slices is answered with ~90,000 `CounterEntry` and `RegisterEntry` entities
(~2 MB). Protobuf objects for them take seconds with the pure-Python protobuf p4runtime-shell
pins, and a decoder with a step of Python per cell ~0.4 s; this one walks the bytes once in
machine code (numba) and fills numpy columns, a few milliseconds.

It reads a concatenation of serialized `ReadResponse`s (which protobuf parses as one message
with all their entities) by protobuf's rules: fields in any order, unknown fields of any wire
type skipped, the last value of a scalar wins, a sub-message given twice is merged, an
`Entity`'s oneof holds its last member. An entity laid out as serializers write it (BMv2, the
emulator, protobuf itself) takes a straight path, 3-4x faster; anything else the general one.
Errors come back as a negative position (`ERRORS`), so that the caller raises with a message;
every read is bounds-checked first (numba does not). `tests/emulator/test_cells.py` checks it
against protobuf.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np
import numpy.typing as npt

Bytes = npt.NDArray[np.uint8]
Num = Any
"""A numba scalar: int64 positions and field numbers, uint64 values."""
Row = tuple[Num, Num, Num, Num]
"""An entry's id, index, packets (or register value) and bytes, as uint64."""

TRUNCATED, VARINT_TOO_LONG, PAST_END, BAD_WIRE_TYPE, TOO_WIDE = -1, -2, -3, -4, -5
ERRORS = {
    TRUNCATED: "message ends inside a field",
    VARINT_TOO_LONG: "varint longer than 10 bytes",
    PAST_END: "length-delimited field runs past the end of its message",
    BAD_WIRE_TYPE: "unsupported wire type",
    TOO_WIDE: "register value wider than 64 bits",
}
ENTITY_ONEOF = range(1, 13)
"""Field numbers of the members of `Entity`'s oneof (extern_entry … digest_entry)."""
COUNTER_ENTRY = 7
"""`wire.EntityKind.COUNTER_ENTRY` (wire imports this module): the member whose `data` is a
`CounterData`; a register's is a `P4Data`."""

F = TypeVar("F", bound=Callable[..., Any])


def jit(function: F) -> F:
    """numba's njit, compiled once per source version (its on-disk cache), without the GIL."""
    return cast(F, numba.njit(cache=True, nogil=True)(function))


_FIRST_MEMBER, _LAST_MEMBER = ENTITY_ONEOF.start, ENTITY_ONEOF.stop - 1
_EMPTY = (np.uint64(0),) * 4
_P4DATA_LAST = 11
"""P4Data's oneof: bitstring = 1 (what BMv2 and the emulator send) … enum_value = 11."""


@jit
def _varint(buf: Bytes, pos: Num, end: Num) -> tuple[Num, Num]:
    """(value, position after it); the position is negative on an error. Bits past the 64th
    are dropped, as protobuf does."""
    value = np.uint64(0)
    for shift in range(0, 70, 7):
        if pos >= end:
            return np.uint64(0), TRUNCATED
        byte = buf[pos]
        pos += 1
        value |= np.uint64(byte & 0x7F) << np.uint64(shift)
        if byte < 0x80:
            return value, pos
    return np.uint64(0), VARINT_TOO_LONG


@jit
def _skip(buf: Bytes, pos: Num, end: Num, wire_type: Num) -> Num:
    """The position after a field's value (negative on an error)."""
    if wire_type == 0:
        return _varint(buf, pos, end)[1]
    if wire_type == 2:
        size, pos = _varint(buf, pos, end)
        if pos < 0:
            return pos
        return pos + np.int64(size) if size <= np.uint64(end - pos) else PAST_END
    width = 8 if wire_type == 1 else 4 if wire_type == 5 else 0
    if width == 0:
        return BAD_WIRE_TYPE  # 3 and 4 (groups), 6 and 7: not proto3
    return pos + width if pos + width <= end else TRUNCATED


@jit
def _field(buf: Bytes, pos: Num, end: Num) -> tuple[Num, Num, Num, Num]:
    """(field number, wire type, start of the value, end of a length-delimited value) of the
    field at `pos`; the start is negative on an error."""
    tag, pos = _varint(buf, pos, end)
    if pos < 0:
        return 0, 0, pos, 0
    wire_type = np.int64(tag & np.uint64(7))
    number = np.int64(tag >> np.uint64(3))
    if wire_type != 2:
        return number, wire_type, pos, 0
    size, pos = _varint(buf, pos, end)
    if pos < 0:
        return 0, 0, pos, 0
    if size > np.uint64(end - pos):
        return 0, 0, PAST_END, 0
    return number, 2, pos, pos + np.int64(size)


@jit
def _scalar(buf: Bytes, pos: Num, end: Num, wanted: Num) -> tuple[bool, Num, Num]:
    """(found, value, position after) of the field at `pos`: found when it is the varint
    field `wanted`; the position is negative on an error."""
    field, wire_type, start, stop = _field(buf, pos, end)
    if start < 0:
        return False, np.uint64(0), start
    if field == wanted and wire_type == 0:
        value, after = _varint(buf, start, end)
        return True, value, after
    return False, np.uint64(0), stop if wire_type == 2 else _skip(buf, start, end, wire_type)


@jit
def _bitstring(buf: Bytes, start: Num, stop: Num) -> tuple[Num, Num]:
    """(value, status) of a big-endian bitstring: leading zero bytes allowed, at most 64
    significant bits (status TOO_WIDE otherwise)."""
    value = np.uint64(0)
    for pos in range(start, stop):
        if value >> np.uint64(56):
            return np.uint64(0), TOO_WIDE
        value = (value << np.uint64(8)) | np.uint64(buf[pos])
    return value, 0


@jit
def _entry(buf: Bytes, pos: Num, end: Num, kind: Num, row: Row) -> tuple[Num, Row]:
    """(0 or an error, `row` with one CounterEntry's or RegisterEntry's fields merged in)."""
    entry_id, index, first, second = row
    while pos < end:
        number, wire_type, start, stop = _field(buf, pos, end)
        if start < 0:
            return start, row
        if number == 1 and wire_type == 0:
            entry_id, pos = _varint(buf, start, end)
        elif number == 2 and wire_type == 2:  # Index { int64 index = 1; }
            pos = start
            while pos < stop:
                found, value, pos = _scalar(buf, pos, stop, 1)
                if pos < 0:
                    return pos, row
                if found:
                    index = value
        elif number == 3 and wire_type == 2 and kind == COUNTER_ENTRY:
            pos = start  # CounterData { int64 byte_count = 1; int64 packet_count = 2; }
            while pos < stop:
                field, data_type, value_at, data_stop = _field(buf, pos, stop)
                if value_at < 0:
                    return value_at, row
                if data_type == 0 and field == 1:
                    second, pos = _varint(buf, value_at, stop)
                elif data_type == 0 and field == 2:
                    first, pos = _varint(buf, value_at, stop)
                elif data_type == 2:
                    pos = data_stop
                else:
                    pos = _skip(buf, value_at, stop, data_type)
                if pos < 0:
                    return pos, row
        elif number == 3 and wire_type == 2:
            pos = start  # P4Data: a oneof, of which the emulator and BMv2 send bitstring = 1
            while pos < stop:
                field, data_type, value_at, data_stop = _field(buf, pos, stop)
                if value_at < 0:
                    return value_at, row
                if field == 1 and data_type == 2:
                    first, status = _bitstring(buf, value_at, data_stop)
                    if status < 0:
                        return status, row
                elif 2 <= field <= _P4DATA_LAST:
                    first = np.uint64(0)  # another kind of P4Data: no number to show
                pos = data_stop if data_type == 2 else _skip(buf, value_at, stop, data_type)
                if pos < 0:
                    return pos, row
        else:
            pos = stop if wire_type == 2 else _skip(buf, start, end, wire_type)
        if pos < 0:
            return pos, row
    return 0, (entry_id, index, first, second)


@jit
def _canonical(buf: Bytes, pos: Num, stop: Num, kind: Num) -> tuple[bool, Row]:
    """The entry of an `Entity` body laid out as serializers write it (one member; fields in
    order, each once; every length one byte); not ok for anything else."""
    failed = (False, _EMPTY)
    if stop - pos < 6 or buf[pos] != (kind << 3 | 2) or buf[pos + 1] != stop - pos - 2:
        return failed
    if buf[pos + 2] != 0x08:
        return failed
    entry_id, pos = _varint(buf, pos + 3, stop)
    if pos < 0 or pos + 2 > stop or buf[pos] != 0x12 or buf[pos + 1] >= 0x80:
        return failed
    index_end = pos + 2 + buf[pos + 1]
    index = np.uint64(0)
    if index_end > pos + 2:
        if buf[pos + 2] != 0x08:
            return failed
        index, pos = _varint(buf, pos + 3, stop)
        if pos != index_end:
            return failed
    else:
        pos += 2
    if pos + 2 > stop or buf[pos] != 0x1A or pos + 2 + buf[pos + 1] != stop:
        return failed
    pos += 2
    first = second = np.uint64(0)
    if kind == COUNTER_ENTRY:
        if pos < stop and buf[pos] == 0x08:
            second, pos = _varint(buf, pos + 1, stop)
        if 0 <= pos < stop and buf[pos] == 0x10:
            first, pos = _varint(buf, pos + 1, stop)
    elif pos + 2 <= stop and buf[pos] == 0x0A and pos + 2 + buf[pos + 1] == stop:
        first, status = _bitstring(buf, pos + 2, stop)
        pos = stop if status == 0 else -1
    if pos != stop:
        return failed
    return True, (entry_id, index, first, second)


@jit
def scan(buf: Bytes, kind: Num, out: Any) -> tuple[Num, Num]:
    """Fill `out` (a uint64 matrix with a row per possible entity: [id, index, first, second])
    with the entities of oneof member `kind` in `buf`; (rows, 0), or (at, error)."""
    rows = 0
    pos = 0
    end = len(buf)
    row = _EMPTY
    while pos < end:
        number, wire_type, start, stop = _field(buf, pos, end)
        if start < 0:
            return pos, start
        if number != 1 or wire_type != 2:  # not ReadResponse.entities
            after = stop if wire_type == 2 else _skip(buf, start, end, wire_type)
            if after < 0:
                return pos, after
            pos = after
            continue
        fast, found = _canonical(buf, start, stop, kind)
        if fast:
            out[rows, 0], out[rows, 1], out[rows, 2], out[rows, 3] = found
            rows += 1
            pos = stop
            continue
        member = 0
        entity_at = start
        while entity_at < stop:
            field, member_type, value_at, value_stop = _field(buf, entity_at, stop)
            if value_at < 0:
                return entity_at, value_at
            if member_type == 2 and _FIRST_MEMBER <= field <= _LAST_MEMBER:
                if field == kind:
                    if member != kind:  # a oneof member set anew starts empty
                        row = _EMPTY
                    status, row = _entry(buf, value_at, value_stop, kind, row)
                    if status < 0:
                        return value_at, status
                member = field
                entity_at = value_stop
            elif member_type == 2:
                entity_at = value_stop
            else:
                entity_at = _skip(buf, value_at, stop, member_type)
                if entity_at < 0:
                    return value_at, entity_at
        if member == kind:
            out[rows, 0], out[rows, 1], out[rows, 2], out[rows, 3] = row
            rows += 1
        pos = stop
    return rows, 0
