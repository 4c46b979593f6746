"""`domain.dataplane` entries applied straight to a `SwitchState`, as a controller's Write would.

The test vectors and the model's tests install their slices this way: the same wire encoding
the portal's adapter sends (`p4rt.entries.EntryCodec`), checked by the emulator's own
validation (`entities.apply_update`), without a gRPC round trip.
"""

from __future__ import annotations

from collections.abc import Iterable

from sliceportal.domain import dataplane as dp
from sliceportal.emulator import entities, wire
from sliceportal.emulator.state import SwitchState
from sliceportal.emulator.wire import EntityKind, UpdateType
from sliceportal.p4rt.entries import EntryCodec


def install(
    state: SwitchState, entries: Iterable[dp.TableEntry], kind: UpdateType = UpdateType.INSERT
) -> None:
    """Apply entries to ``state`` (same checks, same errors as over P4Runtime)."""
    codec = EntryCodec(state.program)
    with state.lock:
        for entry in entries:
            body = wire.decode_table_entry(codec.encode(entry))
            entity = wire.Entity(EntityKind.TABLE_ENTRY, body)
            entities.apply_update(state, wire.Update(kind, entity))


def install_meters(state: SwitchState, configs: Iterable[dp.MeterConfig]) -> None:
    """Write meter cells to ``state`` (a MeterEntry MODIFY each, checked as over P4Runtime)."""
    ids = {m.name: m.id for m in state.program.meters.values()}
    with state.lock:
        for config in configs:
            rates = wire.MeterConfig(config.cir, config.cburst, config.pir, config.pburst)
            body = wire.MeterEntry(ids[config.meter], config.index, rates)
            entity = wire.Entity(EntityKind.METER_ENTRY, body)
            entities.apply_update(state, wire.Update(UpdateType.MODIFY, entity))
