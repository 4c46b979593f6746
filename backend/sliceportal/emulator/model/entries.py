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
