"""Counter and register cells <-> serialized `ReadResponse` entities, with numpy: the one hot
path that does not go through the generated messages.

Why (`bench/bench_cells.py`, this 2-core machine shared with other jobs: load average 5 when
measured, so only figures of one run compare; protobuf 6.33 on upb; a 1 Hz poll of 4,096
slices reads 81,920 counter cells and 8,192 register cells):

| 81,920 counter cells                 | generated messages | first numpy codec | here    | ratio |
|--------------------------------------|--------------------|-------------------|---------|-------|
| switch side: columns -> ReadResponse | 140 ms             | 30.6 ms           | 10.9 ms | 12.8x |
| client side: ReadResponse -> columns | 134-147 ms         | 21.5 ms           | 12.2 ms | 11.0x |

(8,192 register cells decode in 1.1 ms, 2.4 ms before.) The old numba codec did about 1 ms and
4 to 8 ms; numpy stays above it because a column operation costs ~0.5 ns an element and a
gather or scatter at unaligned offsets ~6 ns an item, and a cell takes about a hundred of the
one and five of the other. How the time is kept down: varints are made and read in uint64
words (no byte loop, no byte masks: `_varint_words`, `_parse_varints`); an entity leaves as
three 32-byte items placed by one scatter (`_entities`); a field is read from 16 bytes gathered
where it starts (`_parse_cells`); the prefix of a read's entities (tags, id, index) is cached
by its ids and indices (`_prefixes`); the client decodes in blocks that stay in the cache.

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

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from threading import Lock

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

    @classmethod
    def joined(cls, parts: list[Cells]) -> Cells:
        """The cells of `parts`, one after the other."""
        if len(parts) == 1:
            return parts[0]
        if not parts:
            empty = np.zeros(0, dtype=np.uint64)
            return cls(empty, empty, empty, empty)
        return cls(*(np.concatenate([getattr(part, name) for part in parts]) for name in _COLUMNS))


_COLUMNS = ("ids", "indices", "first", "second")


# -- word arithmetic shared by both directions ------------------------------------------------
#
# Numpy costs about 0.4 ns an element for arithmetic on a uint64 column but about 6 ns an item
# for a fancy-indexed gather or scatter at unaligned byte offsets, whatever the item's size up
# to 32 bytes. So varints are built and taken apart in uint64 words (8 bytes, little-endian,
# as they sit in the buffer), and bytes move between the buffer and those words in as few
# items as possible: 32-byte items on the way out, 8- and 16-byte windows on the way in.

_U = np.uint64
_LANE_BITS = _U(0x8080808080808080)
_LANE_DATA = _U(0x7F7F7F7F7F7F7F7F)
_CONTINUATION = np.array(
    [0, 0] + [0x8080808080808080 >> (64 - 8 * (n - 1)) for n in range(2, 9)] + [_LANE_BITS] * 2,
    dtype=np.uint64,
)
"""The continuation bits of the first eight bytes of a varint of n bytes (n = 0..10)."""


_BYTE_INDEX = _U(0x0102030405060708)
"""Times a power of 256 (256^k), its top byte is k + 1."""


def _lanes_used(words: U64) -> npt.NDArray[np.int64]:
    """The number of bytes up to the last non-zero one, of words whose bytes are all < 0x80."""
    used = (words + _U(0x7F7F7F7F7F7F7F7F)) & _LANE_BITS  # the top bit of each non-zero byte
    used |= used >> _U(8)
    used |= used >> _U(16)
    used |= used >> _U(32)  # ... and of every byte below the last
    return (((used >> _U(7)) * _U(0x0101010101010101)) >> _U(56)).astype(np.int64)


def _varint_words(values: U64) -> tuple[U64, U64, npt.NDArray[np.int64]]:
    """Each value as a varint: its first eight bytes as a word, the other (up to two) bytes as
    a second word, and its length in bytes (1 to 10)."""
    v = values
    # Spread the low 56 bits 7 to a byte (28 | 28, then 14 | 14, then 7 | 7 per lane).
    w = (v & _U(0x0FFFFFFF)) | ((v << _U(4)) & _U(0x0FFFFFFF00000000))
    w = (w & _U(0x00003FFF00003FFF)) | ((w << _U(2)) & _U(0x3FFF00003FFF0000))
    w = (w & _U(0x007F007F007F007F)) | ((w << _U(1)) & _U(0x7F007F007F007F00))
    length = np.maximum(_lanes_used(w), 1)
    high = v >> _U(56)
    if high.any():
        length = np.where(high != 0, 9 + (v >> _U(63)).astype(np.int64), length)
    w |= _CONTINUATION[length]
    rest = (high & _U(0x7F)) | ((v >> _U(63)) * _U(0x180))  # byte 8 (| 0x80 if 10), byte 9
    return w, rest, length


def _window(buf: Bytes, size: int) -> npt.NDArray[np.void]:
    """`buf` as items of `size` bytes starting at every byte (unaligned, overlapping)."""
    return np.ndarray((len(buf) - size + 1,), dtype=f"V{size}", buffer=buf, strides=(1,))


def _pairs_at(buf: Bytes, pos: npt.NDArray[np.int64]) -> tuple[U64, U64]:
    """The 16 bytes at each position as two words (`buf` padded by 16 bytes)."""
    pairs = _window(buf, 16)[pos].view(np.uint64).reshape(len(pos), 2)
    return pairs[:, 0], pairs[:, 1]


def _byte(word: U64, k: int) -> npt.NDArray[np.int64]:
    return ((word >> _U(8 * k)) & _U(0xFF)).astype(np.int64)


def _parse_varints(words: U64) -> tuple[U64, npt.NDArray[np.int64]]:
    """The varint at the start of each word, and its length; length 0 where it does not end
    within the word's 8 bytes."""
    ends = ~words & _LANE_BITS
    last = ends & (~ends + _U(1))  # the first byte under 0x80: its top bit, 1 << (8k + 7)
    length = (((last >> _U(7)) * _BYTE_INDEX) >> _U(56)).astype(np.int64)  # k + 1, or 0
    x = words & ((last << _U(1)) - _U(1)) & _LANE_DATA
    x = (x & _U(0x007F007F007F007F)) | ((x >> _U(1)) & _U(0x3F803F803F803F80))
    x = (x & _U(0x00003FFF00003FFF)) | ((x >> _U(2)) & _U(0x0FFFC0000FFFC000))
    x = (x & _U(0x000000000FFFFFFF)) | ((x >> _U(4)) & _U(0x00FFFFFFF0000000))
    return x, length


# -- encoding (the emulator's Read responses) ---------------------------------------------------
#
# An entity is laid out in up to three 32-byte items, each a row of four words built column-wise:
#   1. ReadResponse.entities tag and length, the member's tag and length, the id field, and the
#      Index field (its tag, length, and index varint): fixed positions but for the lengths;
#   2. the data field's tag and length and its first field (byte_count; a register's P4Data);
#   3. a counter's packet_count field.
# Each item is written whole, with junk past its real length, in position order by one
# scatter: every item's junk lands where a later item (the next of the entity, or the next
# entity's first) is written over it, or past the end. (A scatter of a 1-d index assigns in
# index order; the tests compare every byte with protobuf's.)

_ITEM = 32


def _varint_bytes(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _optional_field(tag: int, values: U64) -> tuple[U64, U64, npt.NDArray[np.int64]]:
    """A varint field as 16 bytes (two words: the tag, then up to 10 varint bytes) and its
    length, 0 where the value is 0 (proto3 omits it)."""
    low, rest, length = _varint_words(values)
    first = _U(tag) | (low << _U(8))
    second = (low >> _U(56)) | (rest << _U(8))
    return first, second, np.where(values != 0, length + 1, 0)


_LAYOUTS = 32
"""Entity prefixes kept (`_prefixes`): a poll reads the same cells period after period."""
_prefix_cache: OrderedDict[tuple[int, int, bytes], tuple[U64, npt.NDArray[np.int64], int]] = (
    OrderedDict()
)
_prefix_lock = Lock()


def _prefixes(
    kind: CellKind, entry_id: int, indices: U64
) -> tuple[U64, npt.NDArray[np.int64], int]:
    """Each entity's first item, but for its two lengths (bytes 1 and 3): the entities tag,
    the member's tag, the id field, the Index field; the length of the Index message, and the
    id field's. Cached by the ids and indices (40 bytes a cell; read-only: the caller copies
    the words before it writes the lengths in)."""
    key = (kind, entry_id, indices.tobytes())
    with _prefix_lock:
        found = _prefix_cache.get(key)
        if found is not None:
            _prefix_cache.move_to_end(key)
            return found
    id_field = b"\x08" + _varint_bytes(entry_id)
    prefix = bytes([0x0A, 0, kind << 3 | 2, 0]) + id_field + b"\x12\x00"
    index_at = len(prefix)  # the Index message's first byte
    if index_at + 11 > _ITEM:
        raise ValueError(f"an id too large for P4Runtime: {entry_id}")
    index_first, index_second, index_length = _optional_field(0x08, indices)
    words = np.empty((len(indices), _ITEM // 8), dtype=np.uint64)
    words[:] = np.frombuffer(prefix.ljust(_ITEM, b"\0"), dtype=np.uint64)
    word, shift = divmod(8 * (index_at - 1), 64)
    words[:, word] |= index_length.astype(np.uint64) << _U(shift)
    word, shift = divmod(8 * index_at, 64)
    words[:, word] |= index_first << _U(shift)
    if shift:
        words[:, word + 1] |= (index_first >> _U(64 - shift)) | (index_second << _U(shift))
        words[:, word + 2] = index_second >> _U(64 - shift)
    else:
        words[:, word + 1] = index_second
    words.flags.writeable = index_length.flags.writeable = False
    found = (words, index_length, len(id_field))
    with _prefix_lock:
        _prefix_cache[key] = found
        while len(_prefix_cache) > _LAYOUTS:
            _prefix_cache.popitem(last=False)
    return found


def _entities(
    kind: CellKind,
    entry_id: int,
    indices: U64,
    data: list[tuple[U64, U64, npt.NDArray[np.int64]]],
) -> bytes:
    """`ReadResponse.entities` items: Entity{kind: {id, Index{index}, data}}; `data`: the
    fields of the data message, each as two words (up to 11 bytes) and its length."""
    rows = len(indices)
    prefixes, index_length, id_length = _prefixes(kind, entry_id, indices)
    data_length = data[0][2] + data[1][2] if len(data) == 2 else data[0][2]
    entry_length = index_length + data_length + (id_length + 4)
    items = np.empty((rows, 1 + len(data), _ITEM // 8), dtype=np.uint64)
    items[:, 0] = prefixes
    items[:, 0, 0] |= ((entry_length + 2) << 8 | entry_length << 24).astype(np.uint64)
    first, second, _ = data[0]  # after the data field's tag and length
    items[:, 1, 0] = _U(0x1A) | (data_length.astype(np.uint64) << _U(8)) | (first << _U(16))
    items[:, 1, 1] = (first >> _U(48)) | (second << _U(16))
    for k, (first, second, _) in enumerate(data[1:], start=2):
        items[:, k, 0] = first
        items[:, k, 1] = second
    cell_length = entry_length + 4
    positions = np.empty((rows, 1 + len(data)), dtype=np.int64)
    np.cumsum(cell_length, out=positions[:, 0])
    total = int(positions[-1, 0]) if rows else 0
    positions[:, 0] -= cell_length
    positions[:, 1] = positions[:, 0] + (id_length + 6) + index_length
    if len(data) == 2:
        positions[:, 2] = positions[:, 1] + 2 + data[0][2]
    out = np.empty(total + _ITEM, dtype=np.uint8)
    _window(out, _ITEM)[positions.ravel()] = items.view(f"V{_ITEM}").ravel()
    return out[:total].tobytes()


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
        data = [_optional_field(0x08, by[cut]), _optional_field(0x10, pk[cut])]
        yield _entities(CellKind.COUNTER, counter_id, at[cut], data)


def _bitstring_field(values: U64) -> tuple[U64, U64, npt.NDArray[np.int64]]:
    """P4Data{bitstring}: the shortest big-endian bytes of each value (one 0 byte for 0)."""
    width = np.ones(len(values), dtype=np.int64)
    for k in range(1, 8):
        width += values >= _U(1 << 8 * k)
    digits = values.byteswap() >> (8 * (8 - width)).astype(np.uint64)
    first = _U(0x0A) | (width.astype(np.uint64) << _U(8)) | (digits << _U(16))
    return first, digits >> _U(48), width + 2


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
    return [
        _entities(
            CellKind.REGISTER,
            register_id,
            at[start : start + CHUNK_CELLS],
            [_bitstring_field(values[start : start + CHUNK_CELLS])],
        )
        for start in range(0, len(at), CHUNK_CELLS)
    ]


def _generated_registers(register_id: int, indices: list[int], values: list[int]) -> bytes:
    response = p4r.ReadResponse()
    for index, value in zip(indices, values, strict=True):
        entry = response.entities.add().register_entry
        entry.register_id = register_id
        entry.index.index = index
        entry.data.bitstring = value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")
    return response.SerializeToString()


# -- decoding (the client's counter and register reads) ----------------------------------------

_PAD = bytes(16)
"""After the bytes read, so that a 16-byte window can start at any of them."""
_BYTE_MASKS = np.array([(1 << 8 * n) - 1 for n in range(9)], dtype=np.uint64)


class _Irregular(Exception):
    """The bytes are not in the layout the fast path reads: use the generated messages."""


def decode(responses: Iterable[bytes], kind: CellKind) -> Cells:
    """The cells of entity kind `kind` in serialized ReadResponses (one Read's stream; other
    entity kinds are skipped). ValueError on bytes that are not a ReadResponse."""
    padded = b"".join([*responses, _PAD])
    try:
        return _fast_cells(np.frombuffer(padded, dtype=np.uint8), len(padded) - len(_PAD), kind)
    except _Irregular:
        return _generated_cells(padded[: -len(_PAD)], kind)


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


def _check(ok: npt.NDArray[np.bool_] | np.bool_ | bool) -> None:
    if not np.all(ok):
        raise _Irregular


_BLOCK = 16_384
"""Cells decoded per pass: numpy's columns of a block stay in the cache (at 80,000 cells an
operation costs about 4x as much an element; below 8,000, numpy's call overheads tell)."""


def _heads(
    buf: Bytes, found: npt.NDArray[np.int64], kind: CellKind
) -> tuple[npt.NDArray[np.int64], U64, U64]:
    """Of the positions `found`, those that look like the start of an `entities` item of
    `kind` (tag, one-byte length, member tag, its length, id tag), and the 16 bytes there."""
    low, high = _pairs_at(buf, found)
    head = (low & _U(0xFFFFFFFFFF)).astype(np.int64)  # bytes 0 to 4
    length = head >> 8 & 0xFF
    expected = 0x0A | length << 8 | (kind << 3 | 2) << 16 | (length - 2) << 24 | 0x08 << 32
    keep = (head == expected) & (length >= 2) & (length < 0x80)
    if keep.all():
        return found, low, high
    return found[keep], low[keep], high[keep]


def _long_varints(
    buf: Bytes, pos: npt.NDArray[np.int64], values: U64, lengths: npt.NDArray[np.int64]
) -> None:
    """Completes in place the varints at `pos` where `lengths` is 0 (not within the first
    window): up to 10 bytes read from the buffer itself."""
    redo = np.flatnonzero(lengths == 0)
    if not len(redo):
        return
    low, high = _pairs_at(buf, pos[redo])
    value, length = _parse_varints(low)
    short = length > 0
    byte8, byte9 = high & _U(0xFF), high >> _U(8) & _U(0xFF)
    _check(short | (byte8 < 0x80) | (byte9 <= 1))
    tail = (byte8 & _U(0x7F)) << _U(56) | (byte9 & _U(1)) << _U(63)
    values[redo] = np.where(short, value, value | tail)
    lengths[redo] = np.where(short, length, np.where(byte8 < 0x80, 9, 10))


def _fast_cells(buf: Bytes, end: int, kind: CellKind) -> Cells:
    """Cells of `kind` laid out as serializers write them (see the module's docstring). The
    items are found column-wise: the positions that look like the start of one (`_heads`)
    must chain from the first byte to the last, each item ending where the next begins.
    Anything else (another layout, or a count whose bytes happen to look like a start) is
    irregular."""
    found: npt.NDArray[np.int64] = np.flatnonzero(buf[: max(end - 4, 0)] == 0x0A)
    columns = np.empty((4, len(found)), dtype=np.uint64)
    count = 0
    chained = 0  # where the next item must start
    for block in range(0, len(found), _BLOCK):
        starts, low, high = _heads(buf, found[block : block + _BLOCK], kind)
        if not len(starts):
            continue
        ends = starts + 2 + _byte(low, 1)
        if starts[0] != chained or not (ends[:-1] == starts[1:]).all():
            raise _Irregular
        chained = int(ends[-1])
        _parse_cells(buf, starts, ends, low, high, kind, columns[:, count : count + len(starts)])
        count += len(starts)
    if chained != end:
        raise _Irregular
    ids, indices, first, second = columns[:, :count]
    return Cells(ids, indices, first, second)


def _parse_cells(
    buf: Bytes,
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
    low: U64,
    high: U64,
    kind: CellKind,
    out: U64,
) -> None:
    """The id, index, first and second value of the items at `starts` into the rows of `out`.
    `low` and `high`: the items' first 16 bytes. Each field is read out of the 16 bytes
    gathered where it starts (a gather costs about as much as six operations on a column),
    a varint of more than 8 bytes out of the buffer (`_long_varints`)."""
    # Entity{member tag, length, id tag} at 2 to 4, then the id at 5.
    id_word = (low >> _U(40)) | (high << _U(24))
    ids, id_length = _parse_varints(id_word[:1])
    mask = _BYTE_MASKS[min(int(id_length[0]), 8)]
    if id_length[0] and (id_word & mask == id_word[0] & mask).all():  # one array's cells
        out[0], id_length = ids[0], np.full(len(starts), id_length[0])
    else:
        out[0], id_length = _parse_varints(id_word)
        _check(id_length > 0)
    at = starts + 5 + id_length  # Index{index}: 12 length [08 varint]
    low, high = _pairs_at(buf, at)
    index_length = _byte(low, 1)
    _check((low & _U(0xFF) == 0x12) & (index_length < 0x80))
    has_index = index_length > 0
    indices, length = _parse_varints((low >> _U(24)) | (high << _U(40)))
    length[~has_index] = 1
    _long_varints(buf, at + 3, indices, length)
    _check(~has_index | ((_byte(low, 2) == 0x08) & (length == index_length - 1)))
    indices[~has_index] = 0
    out[1] = indices
    at += 2 + index_length  # the data: 1A length ...
    low, high = _pairs_at(buf, at)
    data_length = _byte(low, 1)
    _check((low & _U(0xFF) == 0x1A) & (at + 2 + data_length == ends))
    if kind is CellKind.COUNTER:  # CounterData{byte_count = 1; packet_count = 2}
        values, length = _parse_varints((low >> _U(24)) | (high << _U(40)))
        present = (data_length > 0) & (_byte(low, 2) == 0x08)
        length[~present] = 1
        _long_varints(buf, at + 3, values, length)
        values[~present] = 0
        out[3] = values
        used = np.where(present, 1 + length, 0)
        low, high = _pairs_at(buf, at + 2 + used)
        values, length = _parse_varints((low >> _U(8)) | (high << _U(56)))
        present = (used < data_length) & (low & _U(0xFF) == 0x10)
        length[~present] = 1
        _long_varints(buf, at + 3 + used, values, length)
        values[~present] = 0
        out[2] = values
        _check(used + np.where(present, 1 + length, 0) == data_length)
    else:  # P4Data{bytes bitstring = 1}
        present = data_length > 0
        width = _byte(low, 3)
        _check(~present | ((_byte(low, 2) == 0x0A) & (width <= 8) & (data_length == 2 + width)))
        width[~present] = 0
        digits = ((low >> _U(32)) | (high << _U(32))) & _BYTE_MASKS[width]
        out[2] = digits.byteswap() >> (8 * (8 - np.maximum(width, 1))).astype(np.uint64)
        out[3] = 0
