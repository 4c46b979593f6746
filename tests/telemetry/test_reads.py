"""The adapter's cell reads against the emulator: whole arrays by wildcard when most of their
cells are wanted, cell by cell otherwise (what BMv2 can afford), values in the order asked."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from sliceportal.core.config import Settings
from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain.telemetry import counter_indices, readings, register_indices
from sliceportal.emulator import entities
from sliceportal.emulator.server import EmulatorServer
from sliceportal.emulator.state import DeviceState
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.p4rt.errors import SwitchError
from sliceportal.p4rt.proto import p4r
from sliceportal.p4rt.reads import WILDCARD_SHARE
from sliceportal.p4rt.session import SessionPool, SwitchSession


@pytest.fixture
def session(emulator: EmulatorServer, settings: Settings) -> Iterator[SwitchSession]:
    pool = SessionPool(settings)
    yield pool.get(SwitchTarget(1, emulator.address, 1, 1))
    pool.close()


def _index(entity: p4r.Entity) -> int | None:
    """The cell a counter or register entity names; None for a wildcard."""
    body = getattr(entity, entity.WhichOneof("entity") or "counter_entry")
    return int(body.index.index) if body.HasField("index") else None


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int | None]]:
    """(kind, index) of every entity the emulator is asked to read."""
    seen: list[tuple[str, int | None]] = []
    read = entities.read

    def recording(state: DeviceState, entity: p4r.Entity) -> object:
        kind = entity.WhichOneof("entity")
        assert kind is not None
        seen.append((kind.upper(), _index(entity)))
        return read(state, entity)

    monkeypatch.setattr(entities, "read", recording)
    return seen


def _fill(emulator: EmulatorServer) -> None:
    """Every counter cell holds (index + 1, 10 x (index + 1)) where its unit allows."""
    state = emulator.service.state
    assert state is not None
    with state.lock:
        for array in state.counters.values():
            array.packets[:] = np.arange(1, array.info.size + 1)
            array.bytes[:] = array.packets * 10
        for array in state.registers.values():
            array.values[:] = np.arange(array.info.size, dtype=np.uint64) * 3


def test_most_of_an_array_is_read_by_wildcard(
    emulator: EmulatorServer, session: SwitchSession, asked: list[tuple[str, int | None]]
) -> None:
    _fill(emulator)
    sids = list(range(c.MAX_SLICES - 1, int(c.MAX_SLICES * (1 - WILDCARD_SHARE)) - 1, -1))
    read = session.read_counters(counter_indices(sids))
    assert asked == [("COUNTER_ENTRY", None)] * 7  # one wildcard per counter array
    packets, byte_counts = read[dp.FORWARDED]
    assert packets.tolist() == [sid + 1 for sid in sids]  # in the order asked
    assert byte_counts.tolist() == [10 * (sid + 1) for sid in sids]
    histogram, no_bytes = read[dp.VQ_DELAY_HIST]  # a packets counter: no bytes
    assert histogram[:8].tolist() == [dp.histogram_index(sids[0], b) + 1 for b in range(8)]
    assert not no_bytes.any()
    matrix = readings(read)
    assert matrix.shape == (len(sids), 26) and matrix[0, 0] == sids[0] + 1


def test_few_cells_are_read_one_by_one(
    emulator: EmulatorServer, session: SwitchSession, asked: list[tuple[str, int | None]]
) -> None:
    _fill(emulator)
    session.cells_per_read = 16
    read = session.read_counters(counter_indices([9, 3]))
    assert len(asked) == 2 * 21 and all(index is not None for _, index in asked)
    assert read[dp.ECN_MARKED][0].tolist() == [10, 4]
    assert read[dp.AQM_DROPPED][1].tolist() == [100, 40]
    values = session.read_register_values(register_indices([9, 3]))
    assert values is not None
    assert values[dp.VQ_DELAY_REGISTER].tolist() == [27, 9]
    assert session.read_counter_cells([(dp.REAL_DROPPED, 3), (dp.FORWARDED, 9)]) == {
        (dp.REAL_DROPPED, 3): (4, 40),
        (dp.FORWARDED, 9): (10, 100),
    }


def test_registers_of_every_slice_by_wildcard(
    emulator: EmulatorServer, session: SwitchSession, asked: list[tuple[str, int | None]]
) -> None:
    _fill(emulator)
    sids = range(c.MAX_SLICES)
    values = session.read_register_values(register_indices(sids))
    assert values is not None and asked == [("REGISTER_ENTRY", None)] * 2
    assert values[dp.VQ_LAST_SEEN_REGISTER].tolist() == [3 * sid for sid in sids]


def test_a_cell_the_switch_leaves_out_is_an_error(
    emulator: EmulatorServer, session: SwitchSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = entities.read

    def forgetful(state: DeviceState, entity: p4r.Entity) -> object:
        found = read(state, entity)
        return [] if _index(entity) == 4 else found

    monkeypatch.setattr(entities, "read", forgetful)
    with pytest.raises(SwitchError, match=f"cell 4 of {dp.FORWARDED}"):
        session.read_counters({dp.FORWARDED: np.array([3, 4], dtype=np.int64)})
