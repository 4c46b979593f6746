"""ABC's tables as the model reads them off a switch: the reference's lookups (`domain.abc`)
and the kernel's arrays agree, on the portal's rows and on rows the portal never writes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.model.conftest import PROGRAM
from sliceportal.domain import dataplane as dp
from sliceportal.domain.abc import abc_decay_table, decay_step
from sliceportal.emulator.layout import DECAY_FACTOR, DECAY_TICKS
from sliceportal.emulator.model import kernel
from sliceportal.emulator.model.abc_tables import (
    MANTISSA_BITS,
    InstalledAbc,
)
from sliceportal.emulator.model.entries import install
from sliceportal.emulator.state import DeviceState

MEMORY = 20_000  # ticks
KEYS = st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 2**20), st.just(0))


def installed(extra: tuple[dp.TableEntry, ...] = ()) -> InstalledAbc:
    state = DeviceState(PROGRAM)
    install(state, dp.abc_decay_entries(dp.ABC_METER_DECAY, MEMORY) + extra)
    install(state, dp.abc_function_entries(dp.ABC_LOG2_S)[:3000])
    names = {t.info.name: t for t in state.tables.values()}
    tables = (dp.ABC_METER_DECAY, dp.ABC_AVERAGE_DECAY, *dp.ABC_LOOKUP_TABLES)
    return InstalledAbc.read(*(names[name] for name in tables))


PORTAL = installed()
LPM = dp.MatchKind.LPM


def lpm(table: str, field: str, prefix: int, length: int, value: int) -> dp.TableEntry:
    return dp.TableEntry(
        table, (dp.FieldMatch(field, LPM, prefix, length),), dp.ABC_LOG2, (("value", value),)
    )


ODD = installed(
    (
        lpm(dp.ABC_LOG2_N, "n", 0, 1, 11),  # keys below 2^63, many cells
        lpm(dp.ABC_LOG2_N, "n", 1 << 40, 30, 22),  # keys 2^40 .. 2^41 - 1, eight cells
        lpm(dp.ABC_LOG2_N, "n", 0, 64, 33),  # key 0 alone
        dp.TableEntry(
            dp.ABC_METER_DECAY,
            (
                dp.FieldMatch("memory", dp.MatchKind.EXACT, MEMORY + 1),
                dp.FieldMatch("elapsed", dp.MatchKind.RANGE, 100, high=199),
            ),
            dp.ABC_DECAY,
            (("factor", 5), ("ticks", 7)),
            priority=1,
        ),
        dp.TableEntry(
            dp.ABC_METER_DECAY,
            (
                dp.FieldMatch("memory", dp.MatchKind.EXACT, MEMORY + 1),
                dp.FieldMatch("elapsed", dp.MatchKind.RANGE, 150, high=300),
            ),
            dp.ABC_DECAY,
            (("factor", 9), ("ticks", 150)),
            priority=2,
        ),
    )
)


def kernel_lookup(abc: InstalledAbc, table: int, key: int) -> int:
    _, _, cells, offsets = abc.kernel_arrays
    value: int = kernel._cell_value(cells, offsets, table, MANTISSA_BITS[table], np.uint64(key))
    return value


@settings(max_examples=300)
@given(KEYS)
def test_function_lookups_agree_on_the_portals_rows_and_on_coarser_ones(key: int) -> None:
    for abc in (PORTAL, ODD):
        tables = (abc.log2_s, abc.log2_n, abc.reciprocal)
        for index, table in enumerate(tables):
            assert kernel_lookup(abc, index, key) == table.lookup(key)
    assert ODD.finer_rows == 0 and PORTAL.finer_rows == 0


def test_coarse_rows_are_longest_prefix_matches() -> None:
    assert ODD.log2_n.lookup(0) == 33 and kernel_lookup(ODD, 1, 0) == 33
    assert ODD.log2_n.lookup(5) == 11 and ODD.log2_n.lookup(2**40 + 9) == 22
    assert ODD.log2_n.lookup(2**63) == 0 and kernel_lookup(ODD, 1, 2**63) == 0


def test_a_row_finer_than_a_cell_is_counted() -> None:
    finer = installed((lpm(dp.ABC_LOG2_N, "n", (1 << 40) | 1, 64, 1),))
    assert finer.finer_rows == 1


@settings(max_examples=300)
@given(st.integers(0, 2**48 - 1), st.sampled_from([MEMORY, MEMORY + 1, MEMORY + 2]))
def test_decay_lookups_agree_and_overlaps_go_to_the_higher_priority(
    elapsed: int, memory: int
) -> None:
    decay, spans, _, _ = ODD.kernel_arrays
    start, end = spans.get((0, memory), (0, 0))
    factor, ticks = kernel._decay_row(decay, start, end, elapsed)
    expected = decay_step(ODD.tables(memory, 0).meter_decay, elapsed)
    reference = (expected[0], 0 if expected[0] == 0 else expected[1])
    assert (int(factor), ticks if factor else 0) == reference
    if memory == MEMORY:
        written = [(r.low, r.high, r.factor, r.low) for r in abc_decay_table(MEMORY / 1e6)]
        assert [(r.low, r.high, r.factor, r.ticks) for r in ODD.meter_decay[MEMORY]] == written
    if memory == MEMORY + 1 and 150 <= elapsed <= 300:
        assert (int(factor), ticks) == (9, 150)
    if memory == MEMORY + 1 and 100 <= elapsed < 150:
        assert (int(factor), ticks) == (5, 7)
    rows = decay[start:end]
    assert all(rows[:-1, DECAY_FACTOR] >= rows[1:, DECAY_FACTOR]) or memory != MEMORY
    assert (rows[:, DECAY_TICKS] >= 0).all()
