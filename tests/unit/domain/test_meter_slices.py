"""Meter slices: the trTCM's arrivals obey the sound bound's curve, and the reconciliation
plans their meter cells."""

from __future__ import annotations

import math
import random

from sliceportal.domain import dataplane as dp
from sliceportal.domain import reconcile as rc
from sliceportal.domain.bounds import TIMESTAMP_TICK_S


def _metered(rate_bps: float = 8e6, burst_s: float = 0.004, dp_sid: int = 5) -> dp.DataplaneSlice:
    return dp.DataplaneSlice(
        dp_sid=dp_sid,
        name="m",
        vlan_id=None,
        ipv4_dst_prefixes=("10.0.0.0/24",),
        rate_bps=rate_bps,
        burst_limit_s=burst_s,
        priority=7,
        scheme=dp.Scheme.METER,
        marking_threshold_s=None,
        egress_port=1,
    )


def test_a_meter_admits_at_most_its_burst_plus_rate_times_time_plus_one_tick() -> None:
    """Whatever the arrivals, the bytes the meter passes in any window [s, t] are at most
    CBS + CIR·(t - s + τ) (ingress timestamps are whole µs ticks, so a window of t - s
    seconds earns tokens for up to one tick more): the vQueue's ``b + L·τ/8``, which the
    sound bound already charges (`bounds.TIMESTAMP_TICK_S`)."""
    slice_ = _metered()
    config = slice_.meter_config()
    assert config is not None and config.pir == config.cir and config.pburst == config.cburst
    rng = random.Random(7)
    for _ in range(20):
        state, now_s, passed = dp.MeterState(), 1.0, []
        for _ in range(3000):
            now_s += rng.choice((0.0, rng.uniform(0, 3e-6), rng.uniform(0, 3e-4)))
            size = rng.choice((64, 600, 1514))
            tick = math.floor(now_s / TIMESTAMP_TICK_S)
            state, colour = dp.meter_step(state, tick, size, config)
            assert colour != dp.METER_YELLOW  # PIR = CIR: the yellow band is empty
            if colour == dp.METER_GREEN:
                passed.append((now_s, size))
        times = [t for t, _ in passed]
        sizes = [s for _, s in passed]
        for i in range(len(passed)):
            total = 0
            for j in range(i, len(passed)):
                total += sizes[j]
                window = times[j] - times[i]
                assert total <= config.cburst + config.cir * (window + TIMESTAMP_TICK_S) + 1e-6
                if window > 0.01:
                    break


def test_meter_cells_are_configured_when_absent_or_different_and_reset_when_unwanted() -> None:
    wanted = _metered().meter_config()
    assert wanted is not None
    intent = rc.slice_intent(1, "m", [_metered()])
    desired = rc.desired_state([intent])
    assert desired.meters == {wanted.key: wanted} and desired.meter_owners == {wanted.key: 1}
    assert rc.plan_meters(desired.meters, []) == rc.MeterPlan((wanted,), ())
    assert not rc.plan_meters(desired.meters, [wanted])
    stale = dp.MeterConfig(dp.SLICE_METER, 9, 1, 1, 1, 1)
    other = dp.MeterConfig("SomeOther.meter", 3, 1, 1, 1, 1)
    slower = _metered(rate_bps=4e6).meter_config()
    assert slower is not None
    assert rc.plan_meters(desired.meters, [slower, stale, other]) == rc.MeterPlan(
        (wanted,), ((dp.SLICE_METER, 9),)
    )
    held = rc.index_entries(intent.entries)
    assert rc.confirmed(intent, held, {wanted.key: wanted})
    assert not rc.confirmed(intent, held, {slower.key: slower})
    assert not rc.confirmed(intent, held)
    assert rc.entries_digest(intent.entries, intent.meters) != rc.entries_digest(
        intent.entries, (slower,)
    )
