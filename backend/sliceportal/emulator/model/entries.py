"""`domain.dataplane` entries applied straight to a `DeviceState`, as a controller's Write would.

The test vectors and the model's tests install their slices this way: the same messages
the portal's adapter sends (`p4rt.entries.EntryCodec`), checked by the emulator's own
validation (`entities.apply_update`), without a gRPC round trip.
"""

from __future__ import annotations

from collections.abc import Iterable

from sliceportal.domain import dataplane as dp
from sliceportal.domain.reconcile import EntryUpdate, UpdateKind
from sliceportal.emulator import entities
from sliceportal.emulator.state import DeviceState
from sliceportal.p4rt.entries import EntryCodec
from sliceportal.p4rt.p4info import P4InfoIndex


def install(
    state: DeviceState, entries: Iterable[dp.TableEntry], kind: UpdateKind = UpdateKind.INSERT
) -> None:
    """Apply entries to ``state`` (same checks, same errors as over P4Runtime)."""
    codec = EntryCodec(state.program)
    with state.lock:
        for entry in entries:
            entities.apply_update(state, codec.encode_update(EntryUpdate(kind, entry)))


def install_meters(state: DeviceState, configs: Iterable[dp.MeterConfig]) -> None:
    """Write meter cells to ``state`` (a MeterEntry MODIFY each, checked as over P4Runtime)."""
    codec = EntryCodec(state.program)
    with state.lock:
        for config in configs:
            entities.apply_update(state, codec.encode_meter_update(config))


_FUNCTION_TABLES: dict[bytes, DeviceState] = {}
"""A state holding ABC's function tables, per P4Info (by its serialised form)."""


def _function_tables(program: P4InfoIndex) -> DeviceState:
    key = program.message.SerializeToString(deterministic=True)
    state = _FUNCTION_TABLES.get(key)
    if state is None:
        state = _FUNCTION_TABLES[key] = DeviceState(program)
        install(state, (e for t in dp.ABC_LOOKUP_TABLES for e in dp.abc_function_entries(t)))
    return state


def install_switch(state: DeviceState, entries: Iterable[dp.TableEntry]) -> None:
    """`install` for a model that nothing writes afterwards but the caller: ABC's function
    tables (57k rows, the same on every switch, a second to install) are installed once per
    process and shared between such states; the other entries as `install`."""
    entries = tuple(entries)
    shared = set(dp.ABC_LOOKUP_TABLES)
    if any(entry.table in shared for entry in entries):
        for table_id, table in _function_tables(state.program).tables.items():
            if table.info.name in shared:
                state.tables[table_id] = table
    install(state, (entry for entry in entries if entry.table not in shared))
