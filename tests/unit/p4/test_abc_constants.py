"""ABC's P4 constants (p4/constants.json) agree with the reference, domain/abc.py.

abc.py keeps its own fixed-point constants; include/control/abc.p4 takes them from the
generated constants.p4. Here the two are held equal, and the table sizes and parameter widths
the P4 program declares are checked against the rows and values abc.py's builders produce.
"""

from __future__ import annotations

import math

from sliceportal.domain import abc
from sliceportal.domain import p4constants as c
from sliceportal.domain.spec import MAX_BURST_LIMIT_S
from sliceportal.domain.units import TICKS_PER_S, floor_vq_units


def test_fixed_point_constants_equal_the_reference() -> None:
    assert c.ABC_SLOTS == abc.AGGREGATE_SLOTS
    assert c.ABC_DECAY_FRAC_BITS == abc.DECAY_FRAC_BITS
    assert c.ABC_DECAY_ONE == abc.DECAY_ONE
    assert c.ABC_STATE_FRAC_BITS == abc.STATE_FRAC_BITS
    assert c.ABC_STATE_WIDTH == abc.STATE_WIDTH
    assert c.ABC_ACTIVITY_FRAC_BITS == abc.ACTIVITY_FRAC_BITS
    assert c.ABC_ACTIVITY_BIAS == abc.ACTIVITY_BIAS
    assert c.ABC_ACTIVITY_MAX == abc.ACTIVITY_MAX
    assert c.ABC_LOG2_MANTISSA_BITS == abc.LOG2_MANTISSA_BITS
    assert c.ABC_RECIPROCAL_FRAC_BITS == abc.RECIPROCAL_FRAC_BITS
    assert c.ABC_RECIPROCAL_MANTISSA_BITS == abc.RECIPROCAL_MANTISSA_BITS
    assert c.ABC_COUNT_WIDTH == abc.COUNT_WIDTH
    assert c.ABC_AVERAGE_EXTRA_BITS == abc.AVERAGE_EXTRA_BITS
    assert c.ABC_GAMMA_FRAC_BITS == abc.GAMMA_FRAC_BITS
    assert c.ABC_STATE_ONE == 1 << abc.STATE_FRAC_BITS
    assert c.ABC_MEMORY_MAX_US == round(abc.MEMORY_MAX_S * 1_000_000)
    assert c.ABC_REFERENCE_RATE_MIN_BPS == abc.REFERENCE_RATE_MIN_BPS


def test_a_never_written_average_cell_is_the_starting_average() -> None:
    """abc_a_avg holds A_avg - ABC_AVERAGE_ZERO mod 2^64: zero is SliceState()'s average."""
    assert c.ABC_AVERAGE_ZERO == abc.SliceState().average
    assert abc.SliceState().count_q16 == 0 and abc.SliceState().last == 0
    assert abc.MeterState() == abc.MeterState(0, 0, 0)


def test_lookup_table_sizes_are_the_rows_the_reference_writes() -> None:
    log2 = abc.abc_log2_table()
    reciprocal = abc.abc_reciprocal_table()
    assert len(log2.rows) == c.ABC_LOG2_TABLE_SIZE
    assert len(reciprocal.rows) == c.ABC_RECIPROCAL_TABLE_SIZE
    assert log2.width == reciprocal.width == c.ABC_STATE_WIDTH  # the LPM keys' width
    # Values fit the actions' parameters: abc_log2(bit<16>), abc_weight(bit<33>).
    assert max(row.value for row in log2.rows) < 1 << c.ABC_ACTIVITY_WIDTH
    assert max(row.value for row in reciprocal.rows) == 1 << c.ABC_RECIPROCAL_FRAC_BITS
    assert max(row.value for row in reciprocal.rows) < 1 << c.ABC_WEIGHT_WIDTH


def test_decay_rows_fit_per_memory() -> None:
    """Every memory from 1 ms to 10 s fits ABC_DECAY_ROWS rows, each row's data fits the
    abc_decay action's parameters (factor bit<49> in Q48, ticks bit<48>), and the row's ticks
    are its low end: what abc.py's decay_step decays by, except on the last row."""
    memories = {abc.MEMORY_MIN_S, abc.MEMORY_MAX_S}
    memories |= {10 ** (-3 + 4 * i / 60) for i in range(61)}
    largest = 0
    for memory_s in sorted(memories):
        rows = abc.abc_decay_table(min(memory_s, abc.MEMORY_MAX_S))
        largest = max(largest, len(rows))
        assert len(rows) <= c.ABC_DECAY_ROWS, memory_s
        assert rows[0].low == 0 and rows[-1].high == (1 << c.TIMESTAMP_WIDTH) - 1
        assert rows[0].factor == c.ABC_DECAY_ONE  # 1.0 needs the 49th bit
        assert all(row.factor < 1 << c.ABC_DECAY_WIDTH for row in rows)
        assert all(row.low < 1 << c.TIMESTAMP_WIDTH for row in rows)
    # The bound is tight enough to matter: BMv2 scans every installed range row per lookup.
    assert c.ABC_DECAY_ROWS - 100 < largest <= c.ABC_DECAY_ROWS
    assert c.ABC_DECAY_TABLE_SIZE == c.ABC_DECAY_ROWS * c.ABC_DECAY_MEMORIES


def test_factor_zero_marks_the_row_that_decays_by_the_whole_gap() -> None:
    """abc.p4 decays by the row's ticks unless the factor is 0, then by all of elapsed: the
    rule of abc.py's decay_step, which holds only if the last row, and no other, has factor 0.
    The tables' const default (no row installed), abc_decay(0, 0), then restarts the state."""
    for memory_s in (abc.MEMORY_MIN_S, 0.3, 3.0, abc.MEMORY_MAX_S):
        rows = abc.abc_decay_table(memory_s)
        assert rows[-1].factor == 0
        assert all(row.factor > 0 for row in rows[:-1])
        for row in (rows[0], rows[1500], rows[-2]):
            assert abc.decay_step(rows, row.high) == (row.factor, row.low)
        last = rows[-1]
        assert abc.decay_step(rows, last.low + 12_345) == (0, last.low + 12_345)


def test_action_parameters_fit_their_widths() -> None:
    """The abc action's data at the extremes AbcConfig accepts."""
    low = abc.AbcConfig(reference_rate_bps=abc.REFERENCE_RATE_MIN_BPS)
    high = abc.AbcConfig(reference_rate_bps=abc.REFERENCE_RATE_MAX_BPS)
    for config in (low, high):
        assert 0 <= config.params(0).activity_offset < 1 << c.ABC_ACTIVITY_WIDTH
    burst = floor_vq_units(MAX_BURST_LIMIT_S, "burst")
    steep = abc.AbcConfig(gamma_s=MAX_BURST_LIMIT_S, q_base_s=MAX_BURST_LIMIT_S).params(burst)
    assert steep.gamma < 1 << c.ABC_GAMMA_WIDTH
    assert steep.q_base < 1 << c.VQ_PARAM_WIDTH  # q_min, q_base and c_delay: bit<48>
    longest = abc.AbcConfig(meter_memory_s=abc.MEMORY_MAX_S, average_memory_s=abc.MEMORY_MAX_S)
    assert longest.params(0).meter_memory < 1 << c.ABC_MEMORY_WIDTH
    assert round(abc.MEMORY_MAX_S * TICKS_PER_S) << c.ABC_STATE_FRAC_BITS < 1 << c.ABC_STATE_WIDTH


def test_meter_cells_and_index_fit_bit32() -> None:
    assert c.ABC_METER_CELLS == c.MAX_SLICES * c.ABC_SLOTS
    assert c.ABC_SLOTS == 1 << c.ABC_SLOT_BITS
    assert (c.MAX_SLICES - 1) * c.ABC_SLOTS + c.ABC_SLOTS - 1 < 2**32
    assert math.log2(c.ABC_SLOTS) == c.ABC_SLOT_BITS
