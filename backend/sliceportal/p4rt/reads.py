"""Counter and register reads into numpy columns.

Cells are asked for by array: a whole array by one wildcard entity when a good share of its
cells is wanted, else cell by cell (`plan`). The Read requests of a cell set are built once and
kept (a poller asks for the same cells period after period), and the answer becomes numpy
columns through `p4rt.cells`, the one decoder that bypasses the generated messages (its
docstring says why).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sliceportal.p4rt import cells
from sliceportal.p4rt.errors import SwitchError
from sliceportal.p4rt.pipeline import Pipeline
from sliceportal.p4rt.proto import p4r

CACHED_PLANS = 8
"""Read plans of cell sets kept per session (a poller re-reads the same cells)."""
WILDCARD_SHARE = 0.5
"""An array is read whole (one wildcard entity) when at least this share of its cells is
wanted. On BMv2 (behavioral-model of 2023-11, measured with pre-encoded requests and undecoded
responses) a Read of 4,096 cells named one by one costs 0.53 us a cell, a whole array 0.37 us
a cell (32,768 cells in 12.2 ms; all 81,920 counter cells of 4,096 slices in 31.9 ms): naming
beats the wildcard below about 70% of an array. On the emulator a wildcard costs far less than
named cells (a few ms for a whole array). Either way a read costs microseconds a cell, not the
0.1 ms a cell once assumed (that was the pure-Python protobuf's parsing), so the share only
trims a read that is cheap anyway."""

Cells = Mapping[str, npt.NDArray[np.int64]]
"""Counter or register array name -> the indices of the cells wanted."""
Column = npt.NDArray[np.uint64]


@dataclass(frozen=True)
class ReadPlan:
    """The serialized Read requests of a cell set, and how to find the cells in the answer."""

    requests: list[bytes]
    ids: dict[str, int]
    """Array name -> P4Info id."""
    wanted: dict[str, npt.NDArray[np.int64]]


def by_array(cells_: Sequence[tuple[str, int]]) -> dict[str, npt.NDArray[np.int64]]:
    """(name, index) cells as `Cells`, in order within each array."""
    indices: dict[str, list[int]] = {}
    for name, index in cells_:
        indices.setdefault(name, []).append(index)
    return {name: np.array(found, dtype=np.int64) for name, found in indices.items()}


def plan(
    kind: cells.CellKind,
    wanted: Cells,
    pipeline: Pipeline,
    device_id: int,
    cells_per_read: int,
) -> ReadPlan:
    """The Read requests of `wanted` cells: an array of which at least `WILDCARD_SHARE` of the
    cells are wanted is read whole, by one wildcard entity (BMv2 supports those, one array per
    entity); the others cell by cell. At most `cells_per_read` entities per Read."""
    codec, program = pipeline.codec, pipeline.program
    entities: list[p4r.Entity] = []
    ids: dict[str, int] = {}
    arrays: dict[str, npt.NDArray[np.int64]] = {}
    for name, indices in wanted.items():
        if kind is cells.CellKind.COUNTER:
            entry_id = codec.counter_id(name)
            size = program.counters[entry_id].size
        else:
            entry_id = codec.register_id(name)
            size = program.registers[entry_id].size
        ids[name] = entry_id
        arrays[name] = np.asarray(indices, dtype=np.int64)
        distinct = np.unique(arrays[name])
        at: list[int | None] = [None] if len(distinct) >= WILDCARD_SHARE * size else []
        at = at or distinct.tolist()
        entities += [_cell_entity(kind, entry_id, index) for index in at]
    requests = [
        p4r.ReadRequest(
            device_id=device_id, entities=entities[start : start + cells_per_read]
        ).SerializeToString()
        for start in range(0, len(entities), cells_per_read)
    ]
    return ReadPlan(requests, ids, arrays)


def _cell_entity(kind: cells.CellKind, entry_id: int, index: int | None) -> p4r.Entity:
    cell = None if index is None else p4r.Index(index=index)
    if kind is cells.CellKind.COUNTER:
        return p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=entry_id, index=cell))
    return p4r.Entity(register_entry=p4r.RegisterEntry(register_id=entry_id, index=cell))


def columns(plan_: ReadPlan, read: cells.Cells, count: int) -> dict[str, tuple[Column, ...]]:
    """The first `count` columns (packets, bytes; or a register's value) of the wanted cells
    of each array, in the order asked, out of the cells a Read returned."""
    found = {}
    ids = read.ids.astype(np.int64)
    values = (read.first, read.second)[:count]
    for name, wanted in plan_.wanted.items():
        found[name] = _gather(ids == plan_.ids[name], read.indices, values, wanted, name)
    return found


def _gather(
    mine: npt.NDArray[np.bool_],
    indices: Column,
    values: tuple[Column, ...],
    wanted: npt.NDArray[np.int64],
    name: str,
) -> tuple[Column, ...]:
    """The `values` of the `wanted` cells of one array (`mine`: the cells of this array)."""
    size = int(wanted.max()) + 1 if len(wanted) else 0
    at = indices[mine]
    inside = at < size
    at = at[inside].astype(np.int64)
    seen = np.zeros(size, dtype=np.bool_)
    seen[at] = True
    if not seen[wanted].all():
        missing = int(wanted[~seen[wanted]][0])
        raise SwitchError(f"the switch did not return cell {missing} of {name}")
    gathered = []
    for column in values:
        full = np.zeros(size, dtype=np.uint64)
        full[at] = column[mine][inside]
        gathered.append(full[wanted])
    return tuple(gathered)
