"""Write and Read of each P4Runtime entity kind against a `SwitchState`.

Callers hold `state.lock`. A read validates and snapshots under the lock and returns serialized
`ReadResponse.entities` elements (see `wire.read_item`), possibly as a lazy iterable over the
snapshot: encoding a large counter array then happens after the lock is released and does not
hold up writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from itertools import chain

import numpy as np

from sliceportal.emulator import wire
from sliceportal.emulator.errors import Code, P4RuntimeError, invalid
from sliceportal.emulator.layout import (
    MTR_CBURST,
    MTR_CIR,
    MTR_COLUMNS,
    MTR_CONFIGURED,
    MTR_PBURST,
    MTR_PIR,
)
from sliceportal.emulator.state import (
    METER_BURST_MAX,
    METER_RATE_MAX,
    CounterArray,
    MeterArray,
    RegisterArray,
    SwitchState,
)
from sliceportal.emulator.tables import Table, to_int
from sliceportal.emulator.wire import EntityKind, UpdateType
from sliceportal.p4rt.p4info import CounterUnit


def apply_update(state: SwitchState, update: wire.Update) -> None:
    """Apply one update of a Write batch, or raise the error to report for it."""
    if update.type not in (UpdateType.INSERT, UpdateType.MODIFY, UpdateType.DELETE):
        raise invalid(f"update type {update.type} is not INSERT, MODIFY or DELETE")
    entity = update.entity
    if entity is None or entity.kind is None:
        raise invalid("the update has no entity")
    body = entity.body
    if isinstance(body, wire.TableEntry):
        table = _table(state, body.table_id)
        if update.type == UpdateType.INSERT:
            table.insert(body)
        elif update.type == UpdateType.MODIFY:
            table.modify(body)
        else:
            table.delete(body)
        return
    if update.type != UpdateType.MODIFY:
        raise invalid(f"{_entity_name(entity.kind)}s can only be modified, not inserted or deleted")
    if isinstance(body, wire.CounterEntry):
        _write_counter(state, body)
    elif isinstance(body, wire.DirectCounterEntry):
        _write_direct_counter(state, body)
    elif isinstance(body, wire.RegisterEntry):
        _write_register(state, body)
    elif isinstance(body, wire.MeterEntry):
        _write_meter(state, body)
    else:
        raise _not_modelled(entity.kind)


def read(state: SwitchState, entity: wire.Entity) -> Iterable[bytes]:
    """The `wire.read_item`s one read request selects; raises if the request is invalid."""
    body = entity.body
    if entity.kind is None:
        raise invalid("the read request has an empty entity")
    if isinstance(body, wire.TableEntry):
        return _read_tables(state, body)
    if isinstance(body, wire.CounterEntry):
        return _read_counters(state, body)
    if isinstance(body, wire.DirectCounterEntry):
        return _read_direct_counters(state, body)
    if isinstance(body, wire.RegisterEntry):
        return _read_registers(state, body)
    if isinstance(body, wire.MeterEntry):
        return _read_meters(state, body)
    raise _not_modelled(entity.kind)


# -- tables -----------------------------------------------------------------------------------


def _table(state: SwitchState, table_id: int) -> Table:
    table = state.tables.get(table_id)
    if table is None:
        raise invalid(f"unknown table id {table_id}")
    return table


def _read_tables(state: SwitchState, request: wire.TableEntry) -> list[bytes]:
    if request.table_id:
        return _table(state, request.table_id).read(request)
    if request.match:
        raise invalid("a read of all tables (table_id 0) cannot filter on a match key")
    return [body for table in state.tables.values() for body in table.read(request)]


# -- indirect counters ------------------------------------------------------------------------


def _counter(state: SwitchState, counter_id: int) -> CounterArray:
    array = state.counters.get(counter_id)
    if array is None:
        hint = (
            " (a direct counter: use DirectCounterEntry)"
            if (counter_id in state.program.direct_counters)
            else ""
        )
        raise invalid(f"unknown counter id {counter_id}{hint}")
    return array


def _cell(index: int | None, size: int, what: str) -> int | None:
    """A validated array index; None (index unset) means every cell."""
    if index is None:
        return None
    if index < 0:
        raise invalid(f"{what}: index {index} is negative")
    if index >= size:
        raise P4RuntimeError(Code.OUT_OF_RANGE, f"{what}: index {index} is not below {size}")
    return index


def _check_counter_data(data: wire.CounterData, what: str) -> None:
    if data.packet_count < 0 or data.byte_count < 0:
        raise invalid(f"{what}: negative counter data")


def _write_counter(state: SwitchState, msg: wire.CounterEntry) -> None:
    array = _counter(state, msg.counter_id)
    what = f"counter {array.info.name}"
    index = _cell(msg.index, array.info.size, what)
    if msg.data is None:
        return
    _check_counter_data(msg.data, what)
    cells = slice(None) if index is None else index
    array.packets[cells] = msg.data.packet_count
    array.bytes[cells] = msg.data.byte_count


@lru_cache(maxsize=32)
def _cell_prefixes(entry_id: int, size: int) -> wire.CellPrefixes:
    return wire.cell_prefixes(entry_id, size)


def _counter_cells(array: CounterArray, index: int | None) -> Iterable[bytes]:
    """Snapshots the cells (copies): they are encoded after the lock is released."""
    cells = slice(None) if index is None else slice(index, index + 1)
    prefixes = _cell_prefixes(array.info.id, array.info.size)[cells]
    unit = array.info.unit
    zeros = np.zeros(len(prefixes), dtype=np.int64)
    packets = array.packets[cells].copy() if unit != CounterUnit.BYTES else zeros
    byte_counts = array.bytes[cells].copy() if unit != CounterUnit.PACKETS else zeros
    return wire.counter_items(prefixes, packets, byte_counts)


def _read_counters(state: SwitchState, request: wire.CounterEntry) -> Iterable[bytes]:
    if request.counter_id == 0:
        if request.index is not None:
            raise invalid("an index needs a counter_id")
        return chain.from_iterable([_counter_cells(a, None) for a in state.counters.values()])
    array = _counter(state, request.counter_id)
    return _counter_cells(
        array, _cell(request.index, array.info.size, f"counter {array.info.name}")
    )


# -- direct counters --------------------------------------------------------------------------


def _direct_counter_table(state: SwitchState, table_id: int) -> Table:
    table = _table(state, table_id)
    if not table.info.direct_counter_id:
        raise invalid(f"table {table.info.name} has no direct counter")
    return table


def _write_direct_counter(state: SwitchState, msg: wire.DirectCounterEntry) -> None:
    if msg.table_entry is None:
        raise invalid("a DirectCounterEntry needs its table_entry")
    entry = _direct_counter_table(state, msg.table_entry.table_id).lookup(msg.table_entry)
    if msg.data is None:
        return
    _check_counter_data(msg.data, "direct counter")
    entry.packet_count = msg.data.packet_count
    entry.byte_count = msg.data.byte_count


def _direct_counter_entity(unit: CounterUnit, key: bytes, packets: int, byte_count: int) -> bytes:
    data = wire.encode_counter_data(
        packets if unit != CounterUnit.BYTES else 0,
        byte_count if unit != CounterUnit.PACKETS else 0,
    )
    body = wire.len_field(1, key) + wire.len_field(2, data)
    return wire.read_item(EntityKind.DIRECT_COUNTER_ENTRY, body)


def _read_direct_counters(state: SwitchState, request: wire.DirectCounterEntry) -> list[bytes]:
    selector = request.table_entry or wire.TableEntry()
    if selector.table_id:
        tables = [_direct_counter_table(state, selector.table_id)]
    elif selector.match:
        raise invalid("a read of all direct counters (table_id 0) cannot filter on a match key")
    else:
        tables = [t for t in state.tables.values() if t.info.direct_counter_id]
    out = []
    for table in tables:
        unit = state.program.direct_counters[table.info.direct_counter_id].unit
        if selector.is_default_action:
            key = table.key_entry(table.default, is_default=True)
            entries = [(key, table.default)]
        elif selector.match:
            entry = table.lookup(selector)
            entries = [(table.key_entry(entry), entry)]
        else:
            entries = [(table.key_entry(e), e) for e in table.entries.values()]
        for key, entry in entries:
            out.append(_direct_counter_entity(unit, key, entry.packet_count, entry.byte_count))
    return out


# -- registers --------------------------------------------------------------------------------


def _register(state: SwitchState, register_id: int) -> RegisterArray:
    array = state.registers.get(register_id)
    if array is None:
        raise invalid(f"unknown register id {register_id}")
    if array.info.bitwidth == 0:
        raise P4RuntimeError(
            Code.UNIMPLEMENTED,
            f"register {array.info.name} does not hold bit<W> values, which the emulator models",
        )
    return array


def _write_register(state: SwitchState, msg: wire.RegisterEntry) -> None:
    array = _register(state, msg.register_id)
    what = f"register {array.info.name}"
    index = _cell(msg.index, array.info.size, what)
    if not msg.has_data:
        raise invalid(f"{what}: 'data' must be set")
    if msg.bitstring is None:
        raise invalid(f"{what} holds bit<{array.info.bitwidth}>: give a P4Data bitstring")
    value = to_int(msg.bitstring, array.info.bitwidth, what)
    array.values[slice(None) if index is None else index] = value


def _register_cells(array: RegisterArray, index: int | None) -> Iterable[bytes]:
    cells = slice(None) if index is None else slice(index, index + 1)
    values = array.values[cells].copy()
    prefixes = _cell_prefixes(array.info.id, array.info.size)[cells]
    return wire.register_items(prefixes, values)


def _read_registers(state: SwitchState, request: wire.RegisterEntry) -> Iterable[bytes]:
    if request.register_id == 0:
        if request.index is not None:
            raise invalid("an index needs a register_id")
        arrays = [a for a in state.registers.values() if a.info.bitwidth]
        return chain.from_iterable([_register_cells(a, None) for a in arrays])
    array = _register(state, request.register_id)
    index = _cell(request.index, array.info.size, f"register {array.info.name}")
    return _register_cells(array, index)


# -- indirect meters -------------------------------------------------------------------------


def _meter(state: SwitchState, meter_id: int) -> MeterArray:
    array = state.meters.get(meter_id)
    if array is None:
        hint = " (a direct meter)" if meter_id in state.program.meter_ids else ""
        raise invalid(f"unknown meter id {meter_id}{hint}")
    return array


def _write_meter(state: SwitchState, msg: wire.MeterEntry) -> None:
    array = _meter(state, msg.meter_id)
    what = f"meter {array.info.name}"
    index = _cell(msg.index, array.info.size, what)
    if msg.has_counter_data:
        raise P4RuntimeError(Code.UNIMPLEMENTED, f"{what}: meter counters are not modelled")
    config = msg.config
    row = np.zeros(MTR_COLUMNS, dtype=np.int64)  # unset: back to the default, no policing
    if config is not None:
        values = (config.cir, config.cburst, config.pir, config.pburst)
        if any(v < 0 for v in values):
            raise invalid(f"{what}: negative rate or burst")
        if config.pir < config.cir:
            raise invalid(f"{what}: pir {config.pir} is below cir {config.cir} (RFC 2698)")
        if max(config.cburst, config.pburst) > METER_BURST_MAX:
            raise invalid(f"{what}: a burst above {METER_BURST_MAX}")
        if config.pir > METER_RATE_MAX:
            raise invalid(f"{what}: a rate above {METER_RATE_MAX}")
        row[MTR_CONFIGURED] = 1
        row[[MTR_CIR, MTR_CBURST, MTR_PIR, MTR_PBURST]] = values
    array.cells[slice(None) if index is None else index] = row


def _meter_cells(array: MeterArray, index: int | None) -> list[bytes]:
    cells = range(array.info.size) if index is None else range(index, index + 1)
    rows = array.cells.tolist()
    out = []
    for i in cells:
        row = rows[i]
        config = None
        if row[MTR_CONFIGURED]:
            config = wire.MeterConfig(row[MTR_CIR], row[MTR_CBURST], row[MTR_PIR], row[MTR_PBURST])
        body = wire.encode_meter_entry(array.info.id, i, config)
        out.append(wire.read_item(EntityKind.METER_ENTRY, body))
    return out


def _read_meters(state: SwitchState, request: wire.MeterEntry) -> Iterable[bytes]:
    if request.meter_id == 0:
        if request.index is not None:
            raise invalid("an index needs a meter_id")
        return [item for a in state.meters.values() for item in _meter_cells(a, None)]
    array = _meter(state, request.meter_id)
    index = _cell(request.index, array.info.size, f"meter {array.info.name}")
    return _meter_cells(array, index)


# -- the rest ---------------------------------------------------------------------------------


def _entity_name(kind: EntityKind) -> str:
    return kind.name.lower().replace("_", " ")


def _not_modelled(kind: EntityKind) -> P4RuntimeError:
    return P4RuntimeError(
        Code.UNIMPLEMENTED, f"{_entity_name(kind)}s are not modelled by the emulator"
    )
