"""ABC's tables as a switch holds them: decay rows per memory and the three function tables.

`InstalledAbc` reads them out of a `DeviceState`'s tables for the reference model
(`domain.abc`'s `AbcTables`, one per pair of memories) and lays them out as flat arrays for the
compiled kernel (`kernel_arrays`). The two paths find a row differently (bisect over
`DecayRow`s and `MantissaTable`'s dict of cells, against the kernel's bisect over an array and
its dense cells), so the model's equivalence tests hold each to the other.

A function table is resolved per cell of ``mantissa_bits`` below the leading one (what
`domain.abc.MantissaTable` and the control plane's rows use): a row that splits a cell (a
prefix longer than the cell's) is answered for the whole cell, and `finer_rows` counts such
rows, which the portal never writes. A decay table's rows are made disjoint by priority, as a
range lookup picks the highest-priority row that matches.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sliceportal.domain import p4constants as c
from sliceportal.domain.abc import (
    LOG2_MANTISSA_BITS,
    RECIPROCAL_MANTISSA_BITS,
    STATE_WIDTH,
    AbcTables,
    DecayRow,
    LpmRow,
    MantissaTable,
)
from sliceportal.emulator import layout as L
from sliceportal.emulator.tables import Entry, Table

Int64Array = npt.NDArray[np.int64]

MANTISSA_BITS = (LOG2_MANTISSA_BITS, LOG2_MANTISSA_BITS, RECIPROCAL_MANTISSA_BITS)
"""The cell resolution of each function table, in the kernel's lookup order."""


def cell_offsets(mantissa_bits: int, width: int = STATE_WIDTH) -> Int64Array:
    """First cell of each leading-one position: a key with its leading one at ``msb`` and
    mantissa ``m`` (its next ``min(mantissa_bits, msb)`` bits) is cell
    ``offsets[msb] + m``; key 0 is the last cell, ``offsets[width]``."""
    sizes = [1 << min(mantissa_bits, msb) for msb in range(width)]
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


@dataclass(frozen=True)
class InstalledAbc:
    """One switch's ABC tables (empty where nothing is installed)."""

    meter_decay: Mapping[int, tuple[DecayRow, ...]]
    average_decay: Mapping[int, tuple[DecayRow, ...]]
    log2_s: MantissaTable
    log2_n: MantissaTable
    reciprocal: MantissaTable
    finer_rows: int = 0
    """Function-table rows finer than a cell (answered for their whole cell)."""

    @classmethod
    def read(
        cls, meter_decay: Table, average_decay: Table, log2_s: Table, log2_n: Table,
        reciprocal: Table,
    ) -> InstalledAbc:  # fmt: skip
        s, n, inverse = (
            _mantissa_table(table, bits)
            for table, bits in zip((log2_s, log2_n, reciprocal), MANTISSA_BITS, strict=True)
        )
        finer = sum(_finer_rows(table) for table in (s, n, inverse))
        return cls(_decay_rows(meter_decay), _decay_rows(average_decay), s, n, inverse, finer)

    def tables(self, meter_memory: int, average_memory: int) -> AbcTables:
        """`AbcTables` for a slice of these memories (ticks): no rows for a memory the switch
        holds none of, which decays by whole gaps as the P4 table's default does."""
        return AbcTables(
            self.meter_decay.get(meter_memory, ()),
            self.average_decay.get(average_memory, ()),
            self.log2_s,
            self.log2_n,
            self.reciprocal,
        )

    @functools.cached_property
    def kernel_arrays(
        self,
    ) -> tuple[Int64Array, dict[tuple[int, int], tuple[int, int]], Int64Array, Int64Array]:
        """The kernel's decay rows, the [start, end) span of each (table, memory) in them
        (table 0 meter, 1 average), its dense function cells (int64[3, cells]) and their
        offsets (int64[3, STATE_WIDTH + 1]); built once per installed state."""
        rows: list[tuple[int, int, int, int]] = []
        spans: dict[tuple[int, int], tuple[int, int]] = {}
        for which, decay in enumerate((self.meter_decay, self.average_decay)):
            for memory, memory_rows in decay.items():
                start = len(rows)
                rows += [(r.low, r.high, r.factor, _ticks(r)) for r in memory_rows]
                spans[(which, memory)] = (start, len(rows))
        decay_array = np.array(rows, np.int64).reshape(-1, L.DECAY_COLUMNS)
        offsets = np.stack([cell_offsets(bits) for bits in MANTISSA_BITS])
        cells = np.zeros((len(MANTISSA_BITS), int(offsets[:, -1].max()) + 1), np.int64)
        for which, table in enumerate((self.log2_s, self.log2_n, self.reciprocal)):
            _fill_cells(cells[which], offsets[which], table)
        return decay_array, spans, cells, offsets


def _ticks(row: DecayRow) -> int:
    return row.low if row.ticks is None else row.ticks


def _mantissa_table(table: Table, mantissa_bits: int) -> MantissaTable:
    rows = []
    for entry in table.entries.values():
        value, prefix_length = _lpm(entry)
        rows.append(LpmRow(value, prefix_length, _arg(entry)))
    return MantissaTable(STATE_WIDTH, mantissa_bits, tuple(rows))


def _lpm(entry: Entry) -> tuple[int, int]:
    (match,) = entry.match
    if match is None:
        return 0, 0  # a /0 row
    if not isinstance(match, tuple):
        raise TypeError(f"an LPM match value is (value, prefix_len), got {match!r}")
    return match


def _arg(entry: Entry, index: int = 0) -> int:
    return entry.action.args[index] if entry.action is not None else 0


def _finer_rows(table: MantissaTable) -> int:
    """Rows longer than the cells their keys fall in."""
    finer = 0
    for row in table.rows:
        kept = row.prefix >> (table.width - row.prefix_length) if row.prefix_length else 0
        finer += kept != 0 and row.prefix_length > table.cell_length(row.prefix)
    return finer


def _cell(offsets: Int64Array, mantissa_bits: int, key: int) -> int:
    """The cell of ``key``: its leading one's block, then its mantissa (key 0: the last)."""
    if key == 0:
        return int(offsets[-1])
    msb = key.bit_length() - 1
    bits = min(mantissa_bits, msb)
    return int(offsets[msb]) + ((key >> (msb - bits)) & ((1 << bits) - 1))


def _fill_cells(cells: Int64Array, offsets: Int64Array, table: MantissaTable) -> None:
    """Each cell gets its longest matching row's value: rows applied shortest prefix first,
    each over the contiguous cells its key range covers (cells are in key order)."""
    width = table.width
    for row in sorted(table.rows, key=lambda r: r.prefix_length):
        high = row.prefix | ((1 << (width - row.prefix_length)) - 1)
        if row.prefix == 0:
            cells[_cell(offsets, table.mantissa_bits, 0)] = row.value
        low = max(row.prefix, 1)
        if high:
            first = _cell(offsets, table.mantissa_bits, low)
            last = _cell(offsets, table.mantissa_bits, high)
            cells[first : last + 1] = row.value


def _decay_rows(table: Table) -> dict[int, tuple[DecayRow, ...]]:
    """Each memory's rows, sorted by low end and made disjoint by priority."""
    by_memory: dict[int, list[tuple[int, int, DecayRow]]] = {}
    for order, entry in enumerate(table.entries.values()):
        memory, elapsed = entry.match
        if not isinstance(memory, int):
            raise TypeError(f"an exact match value is an int, got {memory!r}")
        low, high = (0, (1 << c.TIMESTAMP_WIDTH) - 1)
        if isinstance(elapsed, tuple):
            low, high = elapsed
        row = DecayRow(low, high, _arg(entry), _arg(entry, 1))
        by_memory.setdefault(memory, []).append((entry.priority, -order, row))
    return {memory: _disjoint(rows) for memory, rows in by_memory.items()}


def _disjoint(rows: list[tuple[int, int, DecayRow]]) -> tuple[DecayRow, ...]:
    """Rows as a range lookup sees them: where rows overlap, the highest priority wins (the
    earliest written among equals), so overlapping rows become disjoint pieces."""
    plain = sorted((r[2] for r in rows), key=lambda r: r.low)
    if all(a.high < b.low for a, b in zip(plain, plain[1:], strict=False)):
        return tuple(plain)
    edges = sorted({r.low for r in plain} | {r.high + 1 for r in plain})
    pieces: list[DecayRow] = []
    for low, end in zip(edges, edges[1:], strict=False):
        covering = [r for r in rows if r[2].low <= low and end - 1 <= r[2].high]
        if covering:
            best = max(covering, key=lambda r: (r[0], r[1]))[2]
            pieces.append(DecayRow(low, end - 1, best.factor, best.ticks))
    return tuple(pieces)
