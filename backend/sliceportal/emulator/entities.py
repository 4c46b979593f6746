"""Write and Read of each P4Runtime entity kind against a `DeviceState`.

Callers hold `state.lock`. A read validates and snapshots under the lock and returns serialized
`ReadResponse`s (their concatenation is one ReadResponse), possibly as a lazy iterable over the
snapshot: encoding a large counter array then happens after the lock is released and does not
hold up writes. Counter and register cells are encoded column-wise (`p4rt.cells`); everything
else through the generated messages.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain

import numpy as np

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
    DeviceState,
    MeterArray,
    RegisterArray,
)
from sliceportal.emulator.tables import Table, to_int
from sliceportal.p4rt import cells
from sliceportal.p4rt.p4info import CounterUnit
from sliceportal.p4rt.proto import p4r

_INSERT, _MODIFY, _DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


def apply_update(state: DeviceState, update: p4r.Update) -> None:
    """Apply one update of a Write batch, or raise the error to report for it."""
    if update.type not in (_INSERT, _MODIFY, _DELETE):
        raise invalid(f"update type {update.type} is not INSERT, MODIFY or DELETE")
    entity = update.entity
    kind = entity.WhichOneof("entity")
    if kind is None:
        raise invalid("the update has no entity")
    if kind == "table_entry":
        body = entity.table_entry
        table = _table(state, body.table_id)
        if update.type == _INSERT:
            table.insert(body)
        elif update.type == _MODIFY:
            table.modify(body)
        else:
            table.delete(body)
        return
    if update.type != _MODIFY:
        raise invalid(f"{_entity_name(kind)}s can only be modified, not inserted or deleted")
    if kind == "counter_entry":
        _write_counter(state, entity.counter_entry)
    elif kind == "direct_counter_entry":
        _write_direct_counter(state, entity.direct_counter_entry)
    elif kind == "register_entry":
        _write_register(state, entity.register_entry)
    elif kind == "meter_entry":
        _write_meter(state, entity.meter_entry)
    else:
        raise _not_modelled(kind)


def read(state: DeviceState, entity: p4r.Entity) -> Iterable[bytes]:
    """The serialized ReadResponse parts one read request selects; raises if the request is
    invalid."""
    kind = entity.WhichOneof("entity")
    if kind is None:
        raise invalid("the read request has an empty entity")
    if kind == "table_entry":
        return _serialized(
            [p4r.Entity(table_entry=e) for e in _read_tables(state, entity.table_entry)]
        )
    if kind == "counter_entry":
        return _read_counters(state, entity.counter_entry)
    if kind == "direct_counter_entry":
        return _read_direct_counters(state, entity.direct_counter_entry)
    if kind == "register_entry":
        return _read_registers(state, entity.register_entry)
    if kind == "meter_entry":
        return _read_meters(state, entity.meter_entry)
    raise _not_modelled(kind)


ENTITIES_PER_RESPONSE = 4096


def _serialized(entities: list[p4r.Entity]) -> list[bytes]:
    """Serialized ReadResponses of `entities`, a few thousand each."""
    return [
        p4r.ReadResponse(
            entities=entities[start : start + ENTITIES_PER_RESPONSE]
        ).SerializeToString()
        for start in range(0, len(entities), ENTITIES_PER_RESPONSE)
    ]


# -- tables -----------------------------------------------------------------------------------


def _table(state: DeviceState, table_id: int) -> Table:
    table = state.tables.get(table_id)
    if table is None:
        raise invalid(f"unknown table id {table_id}")
    return table


def _read_tables(state: DeviceState, request: p4r.TableEntry) -> list[p4r.TableEntry]:
    if request.table_id:
        return _table(state, request.table_id).read(request)
    if request.match:
        raise invalid("a read of all tables (table_id 0) cannot filter on a match key")
    return [body for table in state.tables.values() for body in table.read(request)]


# -- indirect counters ------------------------------------------------------------------------


def _counter(state: DeviceState, counter_id: int) -> CounterArray:
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


def _check_counter_data(data: p4r.CounterData, what: str) -> None:
    if data.packet_count < 0 or data.byte_count < 0:
        raise invalid(f"{what}: negative counter data")


def _index(msg: p4r.CounterEntry | p4r.RegisterEntry | p4r.MeterEntry) -> int | None:
    """The cell a message names; None (index unset) for every cell."""
    return msg.index.index if msg.HasField("index") else None


def _write_counter(state: DeviceState, msg: p4r.CounterEntry) -> None:
    array = _counter(state, msg.counter_id)
    what = f"counter {array.info.name}"
    index = _cell(_index(msg), array.info.size, what)
    if not msg.HasField("data"):
        return
    _check_counter_data(msg.data, what)
    cells = slice(None) if index is None else index
    array.packets[cells] = msg.data.packet_count
    array.bytes[cells] = msg.data.byte_count


def _counter_cells(array: CounterArray, index: int | None) -> Iterable[bytes]:
    """Snapshots the cells (copies): they are encoded after the lock is released."""
    unit = array.info.unit
    if index is not None:  # one cell: the generated message is cheaper than numpy's set-up
        data = p4r.CounterData(
            packet_count=int(array.packets[index]) if unit != CounterUnit.BYTES else 0,
            byte_count=int(array.bytes[index]) if unit != CounterUnit.PACKETS else 0,
        )
        entry = p4r.CounterEntry(counter_id=array.info.id, index=p4r.Index(index=index), data=data)
        return _serialized([p4r.Entity(counter_entry=entry)])
    at = np.arange(array.info.size)
    zeros = np.zeros(len(at), dtype=np.int64)
    packets = array.packets[at] if unit != CounterUnit.BYTES else zeros
    byte_counts = array.bytes[at] if unit != CounterUnit.PACKETS else zeros
    return cells.counter_items(array.info.id, at, packets, byte_counts)


def _read_counters(state: DeviceState, request: p4r.CounterEntry) -> Iterable[bytes]:
    if request.counter_id == 0:
        if request.HasField("index"):
            raise invalid("an index needs a counter_id")
        return chain.from_iterable([_counter_cells(a, None) for a in state.counters.values()])
    array = _counter(state, request.counter_id)
    return _counter_cells(
        array, _cell(_index(request), array.info.size, f"counter {array.info.name}")
    )


# -- direct counters --------------------------------------------------------------------------


def _direct_counter_table(state: DeviceState, table_id: int) -> Table:
    table = _table(state, table_id)
    if not table.info.direct_counter_id:
        raise invalid(f"table {table.info.name} has no direct counter")
    return table


def _write_direct_counter(state: DeviceState, msg: p4r.DirectCounterEntry) -> None:
    if not msg.HasField("table_entry"):
        raise invalid("a DirectCounterEntry needs its table_entry")
    entry = _direct_counter_table(state, msg.table_entry.table_id).lookup(msg.table_entry)
    if not msg.HasField("data"):
        return
    _check_counter_data(msg.data, "direct counter")
    entry.packet_count = msg.data.packet_count
    entry.byte_count = msg.data.byte_count


def _direct_counter_entity(
    unit: CounterUnit, key: p4r.TableEntry, packets: int, byte_count: int
) -> p4r.Entity:
    data = p4r.CounterData(
        packet_count=packets if unit != CounterUnit.BYTES else 0,
        byte_count=byte_count if unit != CounterUnit.PACKETS else 0,
    )
    return p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(table_entry=key, data=data))


def _read_direct_counters(state: DeviceState, request: p4r.DirectCounterEntry) -> list[bytes]:
    selector = request.table_entry
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
    return _serialized(out)


# -- registers --------------------------------------------------------------------------------


def _register(state: DeviceState, register_id: int) -> RegisterArray:
    array = state.registers.get(register_id)
    if array is None:
        raise invalid(f"unknown register id {register_id}")
    if array.info.bitwidth == 0:
        raise P4RuntimeError(
            Code.UNIMPLEMENTED,
            f"register {array.info.name} does not hold bit<W> values, which the emulator models",
        )
    return array


def _write_register(state: DeviceState, msg: p4r.RegisterEntry) -> None:
    array = _register(state, msg.register_id)
    what = f"register {array.info.name}"
    index = _cell(_index(msg), array.info.size, what)
    if not msg.HasField("data"):
        raise invalid(f"{what}: 'data' must be set")
    if msg.data.WhichOneof("data") != "bitstring":
        raise invalid(f"{what} holds bit<{array.info.bitwidth}>: give a P4Data bitstring")
    value = to_int(msg.data.bitstring, array.info.bitwidth, what)
    array.values[slice(None) if index is None else index] = value


def _register_cells(array: RegisterArray, index: int | None) -> Iterable[bytes]:
    at = np.arange(array.info.size) if index is None else np.array([index])
    return cells.register_items(array.info.id, at, array.values[at])


def _read_registers(state: DeviceState, request: p4r.RegisterEntry) -> Iterable[bytes]:
    if request.register_id == 0:
        if request.HasField("index"):
            raise invalid("an index needs a register_id")
        arrays = [a for a in state.registers.values() if a.info.bitwidth]
        return chain.from_iterable([_register_cells(a, None) for a in arrays])
    array = _register(state, request.register_id)
    index = _cell(_index(request), array.info.size, f"register {array.info.name}")
    return _register_cells(array, index)


# -- indirect meters -------------------------------------------------------------------------


def _meter(state: DeviceState, meter_id: int) -> MeterArray:
    array = state.meters.get(meter_id)
    if array is None:
        hint = " (a direct meter)" if meter_id in state.program.meter_ids else ""
        raise invalid(f"unknown meter id {meter_id}{hint}")
    return array


def _write_meter(state: DeviceState, msg: p4r.MeterEntry) -> None:
    array = _meter(state, msg.meter_id)
    what = f"meter {array.info.name}"
    index = _cell(_index(msg), array.info.size, what)
    if msg.HasField("counter_data"):
        raise P4RuntimeError(Code.UNIMPLEMENTED, f"{what}: meter counters are not modelled")
    config = msg.config
    row = np.zeros(MTR_COLUMNS, dtype=np.int64)  # unset: back to the default, no policing
    if msg.HasField("config"):
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


def _meter_cells(array: MeterArray, index: int | None) -> list[p4r.Entity]:
    cut = slice(None) if index is None else slice(index, index + 1)
    out = []
    for i, row in enumerate(array.cells[cut].tolist(), index or 0):
        entry = p4r.MeterEntry(meter_id=array.info.id, index=p4r.Index(index=i))
        if row[MTR_CONFIGURED]:
            config = entry.config
            config.cir, config.cburst = row[MTR_CIR], row[MTR_CBURST]
            config.pir, config.pburst = row[MTR_PIR], row[MTR_PBURST]
        out.append(p4r.Entity(meter_entry=entry))
    return out


def _read_meters(state: DeviceState, request: p4r.MeterEntry) -> Iterable[bytes]:
    if request.meter_id == 0:
        if request.HasField("index"):
            raise invalid("an index needs a meter_id")
        return _serialized([item for a in state.meters.values() for item in _meter_cells(a, None)])
    array = _meter(state, request.meter_id)
    index = _cell(_index(request), array.info.size, f"meter {array.info.name}")
    return _serialized(_meter_cells(array, index))


# -- the rest ---------------------------------------------------------------------------------


def _entity_name(kind: str) -> str:
    return kind.replace("_", " ")


def _not_modelled(kind: str) -> P4RuntimeError:
    return P4RuntimeError(
        Code.UNIMPLEMENTED, f"{_entity_name(kind)}s are not modelled by the emulator"
    )
