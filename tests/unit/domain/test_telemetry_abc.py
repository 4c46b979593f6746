"""An abc slice's busiest aggregates from its registers: register values made by the domain's
reference of ABC's per-packet steps (what the switch's registers hold after that traffic),
read back as rates, activities and the slice's average activity."""

from __future__ import annotations

import ipaddress
import json
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain import units
from sliceportal.domain.abc import (
    AbcConfig,
    AbcTables,
    MeterState,
    SliceState,
    abc_meter_step,
    abc_slice_step,
    aggregate_slot,
)
from sliceportal.domain.telemetry import (
    ABC_REGISTER_CELLS,
    AbcWatch,
    abc_json,
    register_indices,
)

RATE_BPS = 50e6
BURST_S = 0.01
DP_SID = 3
CONFIG = AbcConfig.with_paper_thresholds(RATE_BPS, BURST_S)
WATCH = AbcWatch(CONFIG.reference_rate_bps, CONFIG.meter_memory_s)
PACKET_BYTES = 1000
SOURCES = {  # source address -> (rate bit/s, seconds it sends from the start)
    "10.0.0.1": (4e6, 6.0),
    "10.0.0.2": (1e6, 6.0),
    "10.0.0.3": (PACKET_BYTES * 8 / 0.5, 0.5),  # one packet at 0 and one at 0.5 s, then none
}


@pytest.fixture(scope="module")
def tables() -> AbcTables:
    return AbcTables.for_config(CONFIG)


def arrivals(start: int) -> Iterator[tuple[int, str]]:
    """(tick, source) of every packet, in time order; ticks from ``start``, modulo 2^48."""
    events = []
    for source, (rate, seconds) in SOURCES.items():
        gap = round(PACKET_BYTES * 8 / rate * units.TICKS_PER_S)
        events += [(t, source) for t in range(0, round(seconds * units.TICKS_PER_S) + 1, gap)]
    for t, source in sorted(events):
        yield (start + t) % units.TIMESTAMP_MOD, source


def registers(
    tables: AbcTables, start: int = 1_000
) -> tuple[dict[str, np.ndarray[Any, Any]], SliceState, dict[str, int]]:
    """The slice's 64 meter cells and its average after the traffic of ``SOURCES`` (every
    packet accepted), as one register read of ``register_indices([DP_SID], abc_sids=...)``;
    the final average state; each source's slot."""
    params = CONFIG.params(units.vq_units(BURST_S, "burst"))
    meters = [MeterState(last=start) for _ in range(c.ABC_SLOTS)]
    average = SliceState(last=start)
    slots = {}
    for now, source in arrivals(start):
        cell = aggregate_slot(params.prefix_mask, DP_SID, ipaddress.IPv4Address(source))
        slot = cell - DP_SID * c.ABC_SLOTS
        slots[source] = slot
        meters[slot], activity = abc_meter_step(meters[slot], params, tables, now, PACKET_BYTES)
        average, _ = abc_slice_step(average, params, tables, now, activity, 0)
    assert len(set(slots.values())) == len(SOURCES)  # no two in one slot
    last, s, n = (
        np.array([getattr(m, name) for m in meters], dtype=np.uint64)
        for name in ("last", "bytes_q16", "time_q16")
    )
    stored = (average.average - c.ABC_AVERAGE_ZERO) % (1 << 64)  # as abc.p4 keeps it
    values = dict(zip(dp.ABC_METER_REGISTERS, (last, s, n), strict=True))
    values |= dict(
        zip(
            dp.ABC_AVERAGE_REGISTERS,
            (np.array([v], dtype=np.uint64) for v in (average.last, average.count_q16, stored)),
            strict=True,
        )
    )
    return values, average, slots


def test_an_abc_slice_adds_its_meters_and_average_to_the_register_read() -> None:
    cells = register_indices([1, 2, 5], codel_sids=[1], abc_sids=[2, 5])
    for name in dp.ABC_METER_REGISTERS:
        assert cells[name].tolist() == [*range(128, 192), *range(320, 384)]
    for name in dp.ABC_AVERAGE_REGISTERS:
        assert cells[name].tolist() == [2, 5]
    cells_read = sum(len(v) for k, v in cells.items() if k.rsplit(".", 1)[-1].startswith("abc"))
    assert cells_read == 2 * ABC_REGISTER_CELLS == 2 * 195
    assert not set(dp.ABC_METER_REGISTERS) & set(register_indices([1, 2]))


def test_the_busiest_aggregates_are_ranked_by_their_rate_at_the_newest_update(
    tables: AbcTables,
) -> None:
    """Two sources sending on, at 4 and 1 Mbit/s, lead with their rates and activities
    log2(rate / 10 kbit/s); one that stopped 5.5 s (more than a meter memory) ago comes last,
    its rate decayed, and is not counted active; the average is the switch's."""
    values, average, slots = registers(tables)
    found = abc_json(values, np.array([False, True]), [WATCH])
    assert found[0] == "null"
    state = json.loads(found[1])
    assert [a["slot"] for a in state["aggregates"]] == [
        slots["10.0.0.1"],
        slots["10.0.0.2"],
        slots["10.0.0.3"],
    ]
    busy, steady, gone = state["aggregates"]
    assert busy["rate_bps"] == pytest.approx(4e6, rel=0.01)
    assert busy["activity"] == pytest.approx(math.log2(4e6 / 1e4), abs=0.01)
    assert steady["rate_bps"] == pytest.approx(1e6, rel=0.01)
    assert steady["activity"] == pytest.approx(math.log2(1e6 / 1e4), abs=0.01)
    assert busy["idle_s"] < 0.001 and steady["idle_s"] < 0.01
    assert gone["idle_s"] == pytest.approx(5.5, abs=0.01)
    assert gone["rate_bps"] < 0.1 * steady["rate_bps"]
    assert state["active_slots"] == 2
    expected = average.average / 2**32 / 2**8 - 64
    assert state["average_activity"] == pytest.approx(expected, abs=0.001)
    assert 6.6 < state["average_activity"] < 8.7  # between the two sources' activities


def test_a_slice_whose_meters_straddle_the_timestamp_wrap_reads_the_same(
    tables: AbcTables,
) -> None:
    """Ticks are modulo 2^48: traffic that began 2 s before the wrap gives the same state
    as the same traffic anywhere else."""
    plain, _, _ = registers(tables)
    wrapped, _, _ = registers(tables, start=units.TIMESTAMP_MOD - 2 * units.TICKS_PER_S)
    assert wrapped[dp.ABC_METER_REGISTERS[0]].min() < 10 * units.TICKS_PER_S  # some past it
    mask = np.array([True])
    assert abc_json(wrapped, mask, [WATCH]) == abc_json(plain, mask, [WATCH])


def test_an_abc_slice_without_traffic_names_no_aggregate_and_the_average_of_zero() -> None:
    zeros = dict.fromkeys(dp.ABC_METER_REGISTERS, np.zeros(c.ABC_SLOTS, dtype=np.uint64))
    zeros |= dict.fromkeys(dp.ABC_AVERAGE_REGISTERS, np.zeros(1, dtype=np.uint64))
    assert json.loads(abc_json(zeros, np.array([True]), [WATCH])[0]) == {
        "average_activity": 0.0,
        "active_slots": 0,
        "aggregates": [],
    }


def test_at_most_the_top_few_aggregates_are_named_and_activities_stay_in_range() -> None:
    """Eight slots at 1 to 8 x 10 kbit/s (S/N bytes per µs, all updated at one instant):
    the five fastest, in order; a slot far above the reference clamps at +64."""
    n = np.zeros(c.ABC_SLOTS, dtype=np.uint64)
    s = np.zeros(c.ABC_SLOTS, dtype=np.uint64)
    window = 1_000_000 << c.ABC_STATE_FRAC_BITS  # 1 s of µs, Q16
    for slot in range(8):
        n[slot] = window
        s[slot] = round((slot + 1) * 1e4 / 8) << c.ABC_STATE_FRAC_BITS  # bytes in 1 s
    values = dict(zip(dp.ABC_METER_REGISTERS, (np.full(64, 5, np.uint64), s, n), strict=True))
    values |= dict.fromkeys(dp.ABC_AVERAGE_REGISTERS, np.zeros(1, dtype=np.uint64))
    state = json.loads(abc_json(values, np.array([True]), [AbcWatch(1e4, 1.0)])[0])
    assert [a["slot"] for a in state["aggregates"]] == [7, 6, 5, 4, 3]
    assert [a["rate_bps"] for a in state["aggregates"]] == [8e4, 7e4, 6e4, 5e4, 4e4]
    assert state["aggregates"][0]["activity"] == 3.0
    assert state["active_slots"] == 8
    # A slot idle for 40 memories, against a reference rate of 400 Gbit/s: below -64.
    last = np.zeros(c.ABC_SLOTS, dtype=np.uint64)
    last[1] = 40 * units.TICKS_PER_S
    values[dp.ABC_METER_REGISTERS[0]] = last
    s[:2] = 1 << c.ABC_STATE_FRAC_BITS  # one byte each
    s[2:] = n[2:] = 0
    floor = json.loads(abc_json(values, np.array([True]), [AbcWatch(4e11, 1.0)])[0])
    assert [a["slot"] for a in floor["aggregates"]] == [1, 0]
    assert floor["aggregates"][0]["activity"] == pytest.approx(math.log2(8 / 4e11), abs=1e-3)
    assert floor["aggregates"][1]["activity"] == -64.0
    assert floor["aggregates"][1]["idle_s"] == 40.0
    assert floor["aggregates"][1]["rate_bps"] == pytest.approx(8 * math.exp(-40), rel=1e-5)
    assert floor["active_slots"] == 1
