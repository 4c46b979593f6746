"""ABC's fixed point against the paper's equations in floating point, and its widths."""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sliceportal.domain.abc import (
    ACTIVITY_BIAS,
    ACTIVITY_MAX,
    ACTIVITY_ONE,
    AGGREGATE_SLOTS,
    AVERAGE_EXTRA_BITS,
    COUNT_WIDTH,
    DECAY_FRAC_BITS,
    DECAY_ONE,
    GAMMA_FRAC_BITS,
    MEMORY_MAX_S,
    RECIPROCAL_FRAC_BITS,
    STATE_FRAC_BITS,
    STATE_MAX,
    AbcConfig,
    AbcTables,
    AggregateKey,
    MantissaTable,
    MeterState,
    SliceState,
    abc_decay_table,
    abc_log2_table,
    abc_meter_step,
    abc_slice_step,
    aggregate_slot,
    decay_row,
    decay_step,
    drop_threshold,
)
from sliceportal.domain.units import (
    TICKS_PER_S,
    TIMESTAMP_MOD,
    VQ_UNITS_PER_S,
    DataplaneValueError,
    Verdict,
    floor_vq_units,
)

RATE_BOUND = 0.025
"""|R_fixed / R_float - 1| over any packet sequence: derived 2.03%, measured 1.98%.

S and N are decayed to the arrival less a carried rest under one decay row (under 1/64 of the
gap and M/128). So S's older bytes are decayed by under M/128 too little, and N, exact for an
earlier time, falls short of itself by under ``(rest/M) / (e^x - 1)`` with ``x`` at least the
decayed part of the gap over M; the two together are at most ``(1/128) / (1 - e^-0.49)`` =
0.0201 in log, reached by one gap of M/2 right after ``t_0``."""

ACTIVITY_BOUND = 0.05
"""|A_fixed - A_float| over any packet sequence: the rate's 0.029 in log2, the two log2
lookups' 0.0073 each and the offset's 1/512 rounding make 0.046; measured 0.035."""

AVERAGE_BOUND = 0.1
"""|A_avg fixed - float| for activities in ``RATE_ACTIVITIES`` (28.6 apart): each accepted
packet's weight is off by under 1/512 (the count lags by under 1/128 of M, and ``y/(1+y)^2``
<= 1/4) plus 2^-10 (the 1/N table), 0.084 of the largest jump; measured 0.069. The former
midpoint rows let the count's error grow with a burst's age: 0.099, over the 0.05 stated."""

# The paper's defaults at its 50 Mbit/s bottleneck, 1500-byte packets: one packet is 240 µs.
PACKET_S = 1500 * 8 / 50e6
BURST_S = 24 * PACKET_S
PAPER = AbcConfig.with_paper_thresholds(50e6, BURST_S)
PARAMS = PAPER.params(floor_vq_units(BURST_S, "burst"))
TABLES = AbcTables.for_config(PAPER)


@dataclass
class FloatMeter:
    """TDRM-UTEMA in floating point, measurement start t_0 = 0."""

    memory_s: float
    last_s: float = 0.0
    bytes_: float = 0.0
    time_s: float = 0.0

    def step(self, now_s: float, packet_bytes: int) -> float:
        factor = math.exp(-(now_s - self.last_s) / self.memory_s)
        self.bytes_ = factor * self.bytes_ + packet_bytes
        self.time_s = factor * self.time_s + (1 - factor) * self.memory_s
        self.last_s = now_s
        return self.bytes_ * 8 / self.time_s


@dataclass
class FloatAverage:
    """UTEMA of accepted activities and the drop threshold, in floating point."""

    memory_s: float
    last_s: float = 0.0
    count: float = 0.0
    average: float = 0.0

    def threshold_s(self, config: AbcConfig, burst_s: float, activity: float) -> float:
        base = config.q_base_s - config.gamma_s * (activity - self.average)
        return min(burst_s, max(config.q_min_s, base))

    def step(self, now_s: float, activity: float, accepted: bool) -> None:
        self.count *= math.exp(-(now_s - self.last_s) / self.memory_s)
        self.last_s = now_s
        if accepted:
            self.count += 1
            self.average += (activity - self.average) / self.count


@cache
def tables_for(meter_memory_s: float) -> AbcTables:
    """The tables depend only on the memories: build each once for the property tests."""
    return AbcTables.for_config(AbcConfig(meter_memory_s=meter_memory_s))


def float_activity(config: AbcConfig, rate_bps: float) -> float:
    return min(max(math.log2(rate_bps / config.reference_rate_bps), -64.0), 64.0)


RATE_ACTIVITIES = tuple(
    ACTIVITY_BIAS + round(math.log2(rate / 1e4) * ACTIVITY_ONE) for rate in (1e3, 4e11)
)
"""Activities of 1 kbit/s .. 400 Gbit/s at R_r = 10 kbit/s, 28.6 apart: the largest jump the
average meets."""


def as_activity(fixed: int) -> float:
    return (fixed - ACTIVITY_BIAS) / ACTIVITY_ONE


def as_average(state: SliceState) -> float:
    return state.average / (1 << AVERAGE_EXTRA_BITS) / ACTIVITY_ONE - ACTIVITY_BIAS / ACTIVITY_ONE


def test_config_rejects_each_field() -> None:
    for field, value in (
        ("meter_memory_s", 0.0),
        ("average_memory_s", 11.0),
        ("reference_rate_bps", 0.5),
        ("q_min_s", 5.0),
        ("gamma_s", -1.0),
        ("key", "destination"),
    ):
        with pytest.raises(DataplaneValueError) as caught:
            AbcConfig(**{field: value})  # type: ignore[arg-type]
        assert caught.value.field == field
    with pytest.raises(DataplaneValueError, match="q_base_s"):
        AbcConfig(q_min_s=0.002, q_base_s=0.001)
    with pytest.raises(DataplaneValueError, match="prefix_length"):
        AbcConfig(prefix_length=24)
    assert AbcConfig(key=AggregateKey.SOURCE_PREFIX, prefix_length=24).prefix_length == 24
    with pytest.raises(DataplaneValueError) as caught:
        AbcConfig(q_base_s=0.01).params(floor_vq_units(0.005, "burst"))
    assert caught.value.field == "q_base_s"


def test_paper_thresholds_default_what_is_not_given_within_the_burst_limit() -> None:
    assert (PAPER.q_min_s, PAPER.q_base_s, PAPER.gamma_s) == pytest.approx(
        (6 * PACKET_S, 20 * PACKET_S, 16 * PACKET_S)
    )
    short = AbcConfig.with_paper_thresholds(50e6, 10 * PACKET_S)
    assert (short.q_min_s, short.q_base_s) == pytest.approx((6 * PACKET_S, 10 * PACKET_S))
    given = AbcConfig.with_paper_thresholds(50e6, BURST_S, q_min_s=0.0, gamma_s=0.001)
    expected = (0, 20 * PACKET_S, 0.001)
    assert (given.q_min_s, given.q_base_s, given.gamma_s) == pytest.approx(expected)


@pytest.mark.parametrize("memory_s", [0.001, 0.3, 3.0, MEMORY_MAX_S])
def test_decay_table_covers_every_elapsed_time_monotonically(memory_s: float) -> None:
    rows = abc_decay_table(memory_s)
    assert rows[0].low == 0 and rows[-1].high == TIMESTAMP_MOD - 1
    assert all(a.high + 1 == b.low for a, b in zip(rows, rows[1:], strict=False))
    assert all(a.factor >= b.factor for a, b in zip(rows, rows[1:], strict=False))
    assert rows[0].factor == DECAY_ONE and rows[-1].factor == 0
    assert len(rows) < 6200
    assert all(0 <= row.factor <= 2**DECAY_FRAC_BITS for row in rows)


@given(st.sampled_from([0.001, 0.3, 3.0, MEMORY_MAX_S]), st.integers(0, 2**48 - 1))
def test_decay_is_exact_for_the_ticks_it_decays_and_carries_a_small_rest(
    memory_s: float, ticks: int
) -> None:
    memory_ticks = memory_s * TICKS_PER_S
    factor, decayed = decay_step(abc_decay_table(memory_s), ticks)
    assert factor == round(math.exp(-decayed / memory_ticks) * DECAY_ONE)
    carried = ticks - decayed
    if factor:
        # Exact rows below 1024 ticks, then rows at most 1/64 of an octave and 1/128 of the
        # memory wide.
        assert 0 <= carried <= ticks // 64 and carried <= memory_ticks / 128
        assert carried == 0 or ticks >= 1024
    else:
        assert carried == 0 and math.exp(-ticks / memory_ticks) < 2**-DECAY_FRAC_BITS


@given(st.integers(1, 2**64 - 1))
def test_log2_table_is_within_its_mantissa_bound(value: int) -> None:
    assert abs(TABLES.log2_s.lookup(value) / ACTIVITY_ONE - math.log2(value)) <= 0.0075


@given(st.integers(0, 2**12 - 1))
def test_mantissa_lookup_is_the_longest_prefix_match(key: int) -> None:
    table = MantissaTable.build(12, 3, lambda low, span: low * 16 + span)
    matches = [
        row
        for row in table.rows
        if key >> (12 - row.prefix_length) == row.prefix >> (12 - row.prefix_length)
    ]
    expected = max(matches, key=lambda row: row.prefix_length).value if matches else 0
    assert table.lookup(key) == expected


def start_state(
    config: AbcConfig, rate_bps: float, since_s: float
) -> tuple[MeterState, FloatMeter]:
    """A meter measuring since ``since_s`` at ``rate_bps``, in both arithmetics."""
    meter = FloatMeter(config.meter_memory_s, since_s)
    meter.time_s = config.meter_memory_s * -math.expm1(-since_s / config.meter_memory_s)
    meter.bytes_ = rate_bps / 8 * meter.time_s
    fixed = MeterState(
        round(since_s * TICKS_PER_S),
        round(meter.bytes_ * 2**STATE_FRAC_BITS),
        round(meter.time_s * TICKS_PER_S * 2**STATE_FRAC_BITS),
    )
    meter.last_s = fixed.last / TICKS_PER_S
    return fixed, meter


packets = st.lists(
    st.tuples(
        st.one_of(st.just(0), st.integers(1, 1000), st.integers(1000, 120 * TICKS_PER_S)),
        st.integers(64, 9000),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(
    st.floats(1e3, 4e11),
    st.floats(0.001, 600.0),
    st.sampled_from([0.01, 0.3, 3.0, MEMORY_MAX_S]),
    st.sampled_from([1.0, 1e4, 1e6]),
    packets,
)
def test_meter_activity_tracks_the_float_reference(
    rate_bps: float,
    since_s: float,
    memory_s: float,
    reference_bps: float,
    sequence: list[tuple[int, int]],
) -> None:
    config = AbcConfig(meter_memory_s=memory_s, reference_rate_bps=reference_bps)
    tables = tables_for(memory_s)
    fixed, meter = start_state(config, rate_bps, since_s)
    now = fixed.last
    for gap, size in sequence:
        now += gap
        fixed, activity = abc_meter_step(fixed, config.params(0), tables, now % TIMESTAMP_MOD, size)
        rate = meter.step(now / TICKS_PER_S, size)
        assert abs(as_activity(activity) - float_activity(config, rate)) <= ACTIVITY_BOUND
        fixed_rate = fixed.bytes_q16 * 8 * TICKS_PER_S / fixed.time_q16
        assert abs(fixed_rate / rate - 1) <= RATE_BOUND


def run_meter(
    memory_s: float, rate_bps: float, since_s: float, sequence: list[tuple[int, int]]
) -> tuple[float, float]:
    """The largest activity and relative rate errors against the float meter."""
    config = AbcConfig(meter_memory_s=memory_s)
    tables = tables_for(memory_s)
    fixed, meter = start_state(config, rate_bps, since_s)
    now, activity_error, rate_error = fixed.last, 0.0, 0.0
    for gap, size in sequence:
        now += gap
        fixed, activity = abc_meter_step(fixed, config.params(0), tables, now % TIMESTAMP_MOD, size)
        rate = meter.step(now / TICKS_PER_S, size)
        error = abs(as_activity(activity) - float_activity(config, rate))
        activity_error = max(activity_error, error)
        fixed_rate = fixed.bytes_q16 * 8 * TICKS_PER_S / fixed.time_q16
        rate_error = max(rate_error, abs(fixed_rate / rate - 1))
    return activity_error, rate_error


@pytest.mark.parametrize("memory_s", [0.01, 3.0, MEMORY_MAX_S])
@pytest.mark.parametrize("edge", ["low", "high"])
def test_meter_error_does_not_build_up_over_a_repeated_gap(memory_s: float, edge: str) -> None:
    """40 gaps at the same edge of one row after 400 Gbit/s: midpoint rows made each gap err
    the same way, 0.19 of activity and 14% of rate at 3 s; the carried rest stops that."""
    row = decay_row(tables_for(memory_s).meter_decay, round(memory_s * TICKS_PER_S / 2))
    gap = row.low if edge == "low" else row.high
    activity_error, rate_error = run_meter(memory_s, 4e11, 600.0, [(gap, 64)] * 40)
    assert activity_error <= ACTIVITY_BOUND and rate_error <= RATE_BOUND


@pytest.mark.parametrize("memories", [18.0, 20.0, 22.25, 30.0])
def test_meter_keeps_a_large_s_through_a_long_gap(memories: float) -> None:
    """400 Gbit/s, then one 64-byte packet ``memories`` later: what is left of S still
    outweighs the packet, and a Q31 factor read it 1.4 of activity off at 22 memories."""
    gap = round(memories * MEMORY_MAX_S * TICKS_PER_S)
    activity_error, rate_error = run_meter(MEMORY_MAX_S, 4e11, 600.0, [(gap, 64)])
    assert activity_error <= ACTIVITY_BOUND and rate_error <= RATE_BOUND


def test_meter_at_the_paper_defaults_reads_40_mbps_cbr() -> None:
    state, now, gap = MeterState(), 0, 1500 * 8 * TICKS_PER_S // 40_000_000
    for _ in range(round(10 * TICKS_PER_S / gap)):
        now += gap
        state, activity = abc_meter_step(state, PARAMS, TABLES, now, 1500)
    assert abs(as_activity(activity) - math.log2(40e6 / 1e4)) <= ACTIVITY_BOUND


def test_meter_widths_hold_400_gbps_at_the_longest_memory() -> None:
    """The largest S is 400 Gbit/s of bytes per tick summed with the 1-tick factor."""
    config = AbcConfig(meter_memory_s=MEMORY_MAX_S, reference_rate_bps=1.0)
    tables = AbcTables.for_config(config)
    per_tick = 400e9 / 8 / TICKS_PER_S
    row = decay_row(tables.meter_decay, 1)
    assert row is not None
    one_tick = row.factor / DECAY_ONE
    bound = math.ceil((per_tick + 9000) * 2**STATE_FRAC_BITS / (1 - one_tick))
    assert bound * DECAY_ONE < 2**128 and bound < STATE_MAX // 64
    params = config.params(0)
    memory = params.meter_memory << STATE_FRAC_BITS
    state = MeterState(5, round(per_tick * memory), memory)  # steady at 400 Gbit/s
    for tick in range(6, 200):
        for _ in range(25):
            state, activity = abc_meter_step(state, params, tables, tick, 2000)
            assert state.bytes_q16 <= bound
    assert state.time_q16 <= params.meter_memory << STATE_FRAC_BITS < 2**64
    assert as_activity(activity) == pytest.approx(math.log2(400e9), abs=ACTIVITY_BOUND)
    assert activity <= ACTIVITY_MAX < 2**15


def test_meter_wraps_the_timestamp_and_starts_at_switch_start() -> None:
    state = MeterState(TIMESTAMP_MOD - 10, 1 << STATE_FRAC_BITS, 1 << STATE_FRAC_BITS)
    wrapped, _ = abc_meter_step(state, PARAMS, TABLES, 5, 100)
    assert wrapped.last == 5 and wrapped.bytes_q16 > 100 << STATE_FRAC_BITS
    _, first = abc_meter_step(MeterState(), PARAMS, TABLES, 0, 1500)
    assert first == ACTIVITY_MAX


def test_drop_threshold_at_the_paper_defaults_in_packets() -> None:
    average = ACTIVITY_BIAS + 10 * ACTIVITY_ONE
    packet = PACKET_S * VQ_UNITS_PER_S

    def packets_at(delta: float) -> float:
        activity = average + round(delta * ACTIVITY_ONE)
        return drop_threshold(PARAMS, activity, average) / packet

    assert packets_at(0) == pytest.approx(20, abs=1e-9)
    assert packets_at(0.5) == pytest.approx(12, abs=1e-9)
    assert packets_at(1) == pytest.approx(6, abs=1e-9)  # 4 packets, raised to Q_min
    assert packets_at(-0.125) == pytest.approx(22, abs=1e-9)
    assert packets_at(-1) == pytest.approx(24, abs=1e-9)  # 36 packets, capped at the burst


@given(
    st.integers(0, ACTIVITY_MAX), st.integers(0, ACTIVITY_MAX), st.floats(0, 0.05), st.floats(0, 1)
)
def test_drop_threshold_is_within_two_units_of_the_float(
    activity: int, average: int, gamma_s: float, share: float
) -> None:
    config = AbcConfig(q_min_s=0.001, q_base_s=0.001 + 0.019 * share, gamma_s=gamma_s)
    reference = FloatAverage(0.3, average=as_activity(average))
    exact = reference.threshold_s(config, 0.02, as_activity(activity)) * VQ_UNITS_PER_S
    params = config.params(floor_vq_units(0.02, "burst"))
    assert abs(drop_threshold(params, activity, average) - exact) <= 2


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.integers(0, 1000), st.integers(1000, 10 * TICKS_PER_S)),
            st.integers(*RATE_ACTIVITIES),
            st.integers(0, round(0.006 * VQ_UNITS_PER_S)),
        ),
        min_size=1,
        max_size=80,
    )
)
def test_activity_average_tracks_the_float_utema(sequence: list[tuple[int, int, int]]) -> None:
    state, reference, now = SliceState(), FloatAverage(PAPER.average_memory_s), 0
    reference.average = as_average(state)
    for gap, activity, queue in sequence:
        now += gap
        threshold = drop_threshold(PARAMS, activity, state.average >> AVERAGE_EXTRA_BITS)
        state, verdict = abc_slice_step(state, PARAMS, TABLES, now, activity, queue)
        assert (verdict is Verdict.FORWARD) == (queue <= threshold)
        reference.step(now / TICKS_PER_S, as_activity(activity), verdict is Verdict.FORWARD)
        assert abs(as_average(state) - reference.average) <= AVERAGE_BOUND
        assert state.count_q16 < 2**COUNT_WIDTH
        assert 0 <= state.average <= ACTIVITY_MAX << AVERAGE_EXTRA_BITS


@given(st.integers(0, ACTIVITY_MAX), st.integers(0, ACTIVITY_MAX), st.integers(0, 2**40))
def test_abc_drops_only_between_q_min_and_the_burst_limit(
    activity: int, average: int, queue: int
) -> None:
    state = SliceState(average=average << AVERAGE_EXTRA_BITS)
    _, verdict = abc_slice_step(state, PARAMS, TABLES, 1, activity, queue)
    if queue <= PARAMS.q_min:
        assert verdict is Verdict.FORWARD
    if queue > PARAMS.c_delay:
        assert verdict is Verdict.DROP


@given(st.integers(0, ACTIVITY_MAX - 1), st.integers(0, ACTIVITY_MAX))
def test_a_higher_activity_never_raises_the_threshold(activity: int, average: int) -> None:
    higher = drop_threshold(PARAMS, activity + 1, average)
    assert higher <= drop_threshold(PARAMS, activity, average)


def test_aggregates_hash_into_the_slices_slots_by_key() -> None:
    by_prefix = AbcConfig(key=AggregateKey.SOURCE_PREFIX, prefix_length=24)
    host = ipaddress.IPv4Address

    mask = by_prefix.prefix_mask
    assert aggregate_slot(mask, 3, host("10.0.1.7")) == aggregate_slot(mask, 3, host("10.0.1.200"))
    assert aggregate_slot(mask, 3, host("10.0.1.7")) != aggregate_slot(mask, 3, host("10.0.2.7"))
    mask = PAPER.prefix_mask
    slots = {aggregate_slot(mask, 3, host(f"10.0.{i // 256}.{i % 256}")) for i in range(4096)}
    assert slots == set(range(3 * AGGREGATE_SLOTS, 4 * AGGREGATE_SLOTS))


def test_a_collision_merges_rates_and_only_raises_activity() -> None:
    """Two aggregates in one slot meter their sum: each sees at least its own activity."""
    alone, shared = MeterState(), MeterState()
    for tick in range(1, 20_000, 100):
        alone, own = abc_meter_step(alone, PARAMS, TABLES, tick, 1500)
        shared, merged = abc_meter_step(shared, PARAMS, TABLES, tick, 1500)
        shared, _ = abc_meter_step(shared, PARAMS, TABLES, tick + 50, 1500)
        assert merged >= own - 1
    assert as_activity(merged) - as_activity(own) == pytest.approx(1, abs=ACTIVITY_BOUND)


def test_threshold_and_average_widths() -> None:
    """gamma*dA takes bit<80> at the largest gamma; the average's step fits bit<64>."""
    widest = AbcConfig(gamma_s=4.0).params(floor_vq_units(4.0, "burst"))
    assert widest.gamma * ACTIVITY_MAX < 2**80
    assert widest.gamma >> GAMMA_FRAC_BITS < 2**64 and widest.c_delay < 2**48
    assert max(row.value for row in TABLES.reciprocal.rows) <= 2**RECIPROCAL_FRAC_BITS
    assert len(abc_log2_table().rows) < 2**13
    assert DECAY_FRAC_BITS + 64 <= 128


def test_average_keeps_moving_when_each_weight_is_tiny() -> None:
    """At 200,000 packets/s the count nears 60,000: a step of 1/60,000 of a 10-activity jump
    is 0.04 Q8 units, which a Q8 register would round away forever."""
    state = SliceState(count_q16=60_000 << STATE_FRAC_BITS)
    reference = FloatAverage(PAPER.average_memory_s, count=60_000, average=as_average(state))
    activity, now = ACTIVITY_BIAS + 10 * ACTIVITY_ONE, 0
    for _ in range(10_000):
        now += 5
        state, verdict = abc_slice_step(state, PARAMS, TABLES, now, activity, 0)
        reference.step(now / TICKS_PER_S, as_activity(activity), verdict is Verdict.FORWARD)
    assert reference.average > 1
    assert abs(as_average(state) - reference.average) <= AVERAGE_BOUND
