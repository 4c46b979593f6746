"""CoDel's integer reference (domain/codel.py) against a float reference of RFC 8289."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import codel_vectors
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sliceportal.domain import p4constants as c
from sliceportal.domain.codel import (
    COUNT_MAX,
    COUNT_WIDTH,
    LPM_MAX_RELATIVE_ERROR,
    CodelConfig,
    CodelState,
    ControlLawRow,
    codel_sqrt_table,
    codel_step,
)
from sliceportal.domain.units import DataplaneValueError, Verdict

TS_MOD = 1 << c.TIMESTAMP_WIDTH
TICKS_PER_MS = 1_000_000 // c.TIMESTAMP_TICK_NS
UNITS_PER_MS = 1_000_000 * c.VQ_UNITS_PER_NS
DEFAULT = CodelConfig.from_seconds()


@dataclass
class FloatCodel:
    """RFC 8289's dequeue for one packet per call, in unbounded time and float spacings.

    ``spacing`` is interval / sqrt(count) unless a test hands it the table's, to check that
    the integer version differs from the RFC only by its table."""

    target: int
    interval: int
    spacing: Callable[[int], float]
    dropping: bool = False
    count: int = 0
    last_count: int = 0
    drop_next: float = 0.0
    first_above_time: float | None = None

    def step(self, now: int, sojourn: int) -> bool:
        ok_to_drop = False
        if sojourn < self.target:
            self.first_above_time = None
        elif self.first_above_time is None:
            deadline = now + self.interval
            # The switch keeps 0 for "not above": a deadline on 0 modulo 2^48 waits a tick.
            self.first_above_time = deadline + (deadline % TS_MOD == 0)
        else:
            ok_to_drop = now >= self.first_above_time
        if self.dropping:
            if not ok_to_drop:
                self.dropping = False
            elif now >= self.drop_next:
                self.count += 1
                self.drop_next += self.spacing(self.count)
                return True
            return False
        if not ok_to_drop:
            return False
        self.dropping = True
        delta = self.count - self.last_count
        recent = now - self.drop_next < 16 * self.interval
        self.count = delta if delta > 1 and recent else 1
        self.drop_next = now + self.spacing(self.count)
        self.last_count = self.count
        return True


def exact_spacing(interval: int) -> Callable[[int], float]:
    return lambda count: interval / math.sqrt(count)


def lpm_lookup(rows: Sequence[ControlLawRow], count: int) -> int:
    """What a longest-prefix-match table of ``rows`` answers for ``count``."""
    matching = [
        r
        for r in rows
        if count >> (COUNT_WIDTH - r.prefix_len) == r.value >> (COUNT_WIDTH - r.prefix_len)
    ]
    return max(matching, key=lambda r: r.prefix_len).spacing


# --- The control-law table ----------------------------------------------------------------


@pytest.mark.parametrize("interval_ms", [1, 5, 100, 4000])
def test_counts_1_to_16_are_exact_to_the_tick(interval_ms: int) -> None:
    interval = interval_ms * TICKS_PER_MS
    config = CodelConfig.from_seconds(target_s=0.001, interval_s=interval_ms / 1000)
    for count in range(1, 17):
        assert config.spacing(count) == round(interval / math.sqrt(count))
        assert abs(config.spacing(count) - interval / math.sqrt(count)) <= 0.5


def test_count_3_is_57_7_ms_not_70_7() -> None:
    assert DEFAULT.spacing(3) == 57_735  # ticks of 1 us: 100 ms / sqrt(3) = 57,735.03 us
    assert DEFAULT.spacing(2) == 70_711
    assert DEFAULT.spacing(1) == DEFAULT.interval == 100_000


def test_table_rows_are_what_an_lpm_table_answers() -> None:
    rows = codel_sqrt_table(DEFAULT.interval)
    assert len(rows) == 16 + 28
    assert {(r.value, r.prefix_len) for r in rows[:16]} == {(n, 32) for n in range(1, 17)}
    counts = [*range(1, 5000), *(1 << k for k in range(32)), *((2 << k) - 1 for k in range(32))]
    for count in counts:
        assert lpm_lookup(rows, count) == DEFAULT.spacing(count), count


@given(
    st.integers(1000, 4_000_000),
    st.integers(1, COUNT_MAX),
)
def test_lpm_rows_stay_within_the_documented_error(interval: int, count: int) -> None:
    config = CodelConfig.from_units(1, interval, ecn_mark=False)
    exact = interval / math.sqrt(count)
    assert abs(config.spacing(count) - exact) <= LPM_MAX_RELATIVE_ERROR * exact + 1


def test_lpm_error_bound_is_reached() -> None:
    """The stated 17.2% is the worst case, not a loose bound: the top of the last rows
    nearly reach it."""
    interval = 4_000_000
    config = CodelConfig.from_units(1, interval, ecn_mark=False)
    count = (1 << 20) - 1
    error = config.spacing(count) / (interval / math.sqrt(count)) - 1
    assert LPM_MAX_RELATIVE_ERROR - 0.001 < abs(error) <= LPM_MAX_RELATIVE_ERROR + 1e-3


def test_widths_fit_the_switch() -> None:
    config = CodelConfig.from_seconds(target_s=4.0, interval_s=4.0)
    assert config.target < 1 << 48
    assert max(row.spacing for row in config.law) < 1 << 32
    assert min(row.spacing for row in config.law) >= 1


# --- Validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"target_s": 0}, "codel.target_s"),
        ({"target_s": -0.001}, "codel.target_s"),
        ({"target_s": 4.000001}, "codel.target_s"),
        ({"target_s": float("nan")}, "codel.target_s"),
        ({"interval_s": 0.0009}, "codel.interval_s"),
        ({"interval_s": 4.1}, "codel.interval_s"),
        ({"interval_s": "0.1"}, "codel.interval_s"),
        ({"ecn_mark": 1}, "codel.ecn_mark"),
    ],
)
def test_invalid_parameters_name_their_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(DataplaneValueError) as raised:
        CodelConfig.from_seconds(**kwargs)  # type: ignore[arg-type]
    assert raised.value.field == field


def test_units_round_down_like_every_threshold() -> None:
    assert DEFAULT.target == 5 * UNITS_PER_MS
    assert CodelConfig.from_seconds(interval_s=0.0010005).interval == 1000


# --- The state machine ----------------------------------------------------------------------


def run(
    config: CodelConfig, packets: Sequence[tuple[int, int]], ecn: bool = False
) -> tuple[CodelState, list[Verdict]]:
    state, verdicts = CodelState(), []
    for now, sojourn in packets:
        state, verdict = codel_step(state, config, now % TS_MOD, sojourn, ecn)
        verdicts.append(verdict)
    return state, verdicts


ABOVE = 10 * UNITS_PER_MS


def test_first_drop_one_interval_after_the_target_is_exceeded() -> None:
    start = 1_000
    packets = [(start + t, ABOVE) for t in (0, 99_999, 100_000, 100_001)]
    state, verdicts = run(DEFAULT, packets)
    assert verdicts == [Verdict.FORWARD, Verdict.FORWARD, Verdict.DROP, Verdict.FORWARD]
    assert state == CodelState(True, 1, 1, start + 200_000, start + 100_000)


def test_sojourn_exactly_at_target_counts_as_above() -> None:
    at, below = DEFAULT.target, DEFAULT.target - 1
    _, verdicts = run(DEFAULT, [(1, at), (100_001, at)])
    assert verdicts[-1] is Verdict.DROP
    _, verdicts = run(DEFAULT, [(1, at), (100_001, below)])
    assert verdicts[-1] is Verdict.FORWARD


@given(
    st.lists(st.tuples(st.integers(0, 300_000), st.integers(0, DEFAULT.target - 1)), max_size=60),
    st.integers(0, TS_MOD - 1),
)
def test_sojourn_below_target_never_drops(steps: list[tuple[int, int]], start: int) -> None:
    now, packets = start, []
    for gap, sojourn in steps:
        now += gap
        packets.append((now, sojourn))
    state, verdicts = run(DEFAULT, packets)
    assert set(verdicts) <= {Verdict.FORWARD}
    assert state.first_above_time == 0


def test_ecn_capable_packets_are_marked_when_enabled() -> None:
    marking = CodelConfig.from_seconds(ecn_mark=True)
    packets = [(1 + t, ABOVE) for t in range(0, 400_000, 1000)]
    marked_state, marked = run(marking, packets, ecn=True)
    dropped_state, dropped = run(DEFAULT, packets, ecn=True)
    not_capable_state, not_capable = run(marking, packets, ecn=False)
    assert Verdict.DROP not in marked and marked.count(Verdict.MARK) > 3
    assert [v is Verdict.MARK for v in marked] == [v is Verdict.DROP for v in dropped]
    assert not_capable == dropped and marked_state == dropped_state == not_capable_state


def spell(start: int, drops: int, config: CodelConfig = DEFAULT) -> list[tuple[int, int]]:
    """Packets every ms above target from ``start`` until ``drops`` signals, then one below."""
    packets, state, now = [], CodelState(), start
    while True:
        packets.append((now, ABOVE))
        state, verdict = codel_step(state, config, now % TS_MOD, ABOVE, False)
        if verdict is Verdict.DROP and state.count - state.last_count + 1 == drops:
            break
        now += TICKS_PER_MS
    return [*packets, (now + TICKS_PER_MS, 0)]


def reentry(gap_ticks: int, drops: int) -> CodelState:
    """A dropping spell of ``drops`` drops, a pause, then above target until re-entry."""
    first = spell(10, drops)
    left_at = first[-1][0]
    state, verdicts = run(DEFAULT, first)
    assert verdicts.count(Verdict.DROP) == drops and not state.dropping
    again = left_at + gap_ticks
    state, _ = codel_step(state, DEFAULT, again, ABOVE, False)
    state, verdict = codel_step(state, DEFAULT, again + DEFAULT.interval, ABOVE, False)
    assert verdict is Verdict.DROP and state.dropping
    return state


def test_reentry_soon_after_a_spell_resumes_its_drop_rate() -> None:
    """RFC 8289 (the paper's if_3): count = count - last_count, the drops of the last spell."""
    state = reentry(gap_ticks=TICKS_PER_MS, drops=6)
    assert state.count == state.last_count == 5  # 6 drops: count went 1 -> 6, delta 5


def test_reentry_after_16_intervals_starts_over() -> None:
    now_minus_drop_next = 16 * DEFAULT.interval
    state = reentry(gap_ticks=now_minus_drop_next, drops=6)
    assert state.count == 1


def test_reentry_after_a_single_drop_starts_over() -> None:
    assert reentry(gap_ticks=TICKS_PER_MS, drops=2).count == 1  # delta 1 is not > 1


def test_reentry_at_the_16_interval_edge() -> None:
    first = spell(10, 6)
    state, _ = run(DEFAULT, first)
    edge = state.drop_next + 16 * DEFAULT.interval
    for now, count in ((edge - 1, 5), (edge, 1)):
        entered, _ = codel_step(state, DEFAULT, now - DEFAULT.interval, ABOVE, False)
        entered, verdict = codel_step(entered, DEFAULT, now, ABOVE, False)
        assert verdict is Verdict.DROP and entered.count == count


def test_count_saturates_instead_of_wrapping() -> None:
    state = CodelState(True, COUNT_MAX, 1, 5, 1)
    state, verdict = codel_step(state, DEFAULT, 10, ABOVE, False)
    assert verdict is Verdict.DROP and state.count == COUNT_MAX
    assert state.drop_next == 5 + DEFAULT.spacing(COUNT_MAX)


def test_a_timestamp_wrap_changes_nothing() -> None:
    packets = [(t, ABOVE if t < 900_000 else 0) for t in range(0, 1_000_000, 700)]
    _, plain = run(DEFAULT, packets)
    for start in (TS_MOD - 150_000, TS_MOD - DEFAULT.interval, TS_MOD - 1):
        _, wrapped = run(DEFAULT, [(start + t, s) for t, s in packets])
        assert wrapped == plain


def test_first_above_deadline_on_zero_is_kept_as_one() -> None:
    state, _ = codel_step(CodelState(), DEFAULT, TS_MOD - DEFAULT.interval, ABOVE, False)
    assert state.first_above_time == 1
    state, verdict = codel_step(state, DEFAULT, 0, ABOVE, False)
    assert verdict is Verdict.FORWARD and state.first_above_time == 1
    state, verdict = codel_step(state, DEFAULT, 1, ABOVE, False)
    assert verdict is Verdict.DROP


# --- Against the float reference ------------------------------------------------------------

SOJOURNS = st.sampled_from(
    [0, DEFAULT.target - 1, DEFAULT.target, DEFAULT.target + 1, ABOVE, 200 * UNITS_PER_MS]
)
GAPS = st.one_of(
    st.sampled_from([0, 1, 999, 1000]),
    st.integers(0, 20_000),
    st.sampled_from([DEFAULT.interval - 1, DEFAULT.interval, 16 * DEFAULT.interval]),
    st.integers(0, 40 * DEFAULT.interval),
)
STARTS = st.one_of(st.integers(1, TS_MOD - 1), st.integers(TS_MOD - 3_000_000, TS_MOD - 1))


def phases() -> st.SearchStrategy[list[tuple[int, int, int]]]:
    """(packets, gap, sojourn) runs: bursts above or at the target, idle gaps, long spells."""
    return st.lists(st.tuples(st.integers(1, 400), GAPS, SOJOURNS), min_size=1, max_size=12)


def expand(start: int, runs: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    packets, now = [], start
    for n, gap, sojourn in runs:
        for _ in range(n):
            now += gap
            packets.append((now, sojourn))
    return packets


@settings(max_examples=300, deadline=None)
@given(STARTS, phases(), st.sampled_from([1, 5, 100, 400]))
def test_state_and_verdicts_equal_the_rfc_with_the_tables_spacing(
    start: int, runs: list[tuple[int, int, int]], interval_ms: int
) -> None:
    """With the table's spacings the integer version is RFC 8289 exactly, wrap included."""
    config = CodelConfig.from_seconds(target_s=0.005, interval_s=interval_ms / 1000)
    rfc = FloatCodel(config.target, config.interval, config.spacing)
    state = CodelState()
    for now, sojourn in expand(start, runs):
        state, verdict = codel_step(state, config, now % TS_MOD, sojourn, False)
        assert (verdict is Verdict.DROP) == rfc.step(now, sojourn)
        assert (state.dropping, state.count, state.last_count) == (
            rfc.dropping,
            rfc.count,
            rfc.last_count,
        )
        if rfc.count:
            assert state.drop_next == int(rfc.drop_next) % TS_MOD
        above = rfc.first_above_time
        assert state.first_above_time == (0 if above is None else int(above) % TS_MOD)


@settings(max_examples=60, deadline=None)
@given(STARTS, st.sampled_from([5, 100, 400]), st.integers(10, 500))
def test_drop_times_stay_within_the_tables_error(
    start: int, interval_ms: int, gap_per_10k_intervals: int
) -> None:
    """A long dropping spell (30 intervals of overload that never relents, about 200 drops):
    the n-th drop of the integer version and of the RFC with exact square roots are apart by
    no more than the table's accumulated error (half a tick per drop up to count 16, 17.2% +
    1 tick beyond) plus one packet gap."""
    config = CodelConfig.from_seconds(target_s=0.005, interval_s=interval_ms / 1000)
    rfc = FloatCodel(config.target, config.interval, exact_spacing(config.interval))
    gap = max(1, config.interval * gap_per_10k_intervals // 10_000)
    state, ours, theirs = CodelState(), [], []
    for i in range(30 * config.interval // gap):
        now = start + i * gap
        state, verdict = codel_step(state, config, now % TS_MOD, ABOVE, False)
        if verdict is Verdict.DROP:
            ours.append(now)
        if rfc.step(now, ABOVE):
            theirs.append(now)
    assert len(ours) > 16
    allowed = 0.0  # drop n is sum(spacing(k), k < n) after the first
    for n, (a, b) in enumerate(zip(ours, theirs, strict=False), start=1):
        if n > 1:
            k = n - 1
            exact = config.interval / math.sqrt(k)
            allowed += 0.5 if k <= 16 else LPM_MAX_RELATIVE_ERROR * exact + 1
        assert abs(a - b) <= allowed + gap, (n, a, b)


# --- The step vectors (p4/tests/vectors/steps/codel.json) -----------------------------------


def test_vectors_are_current() -> None:
    """The committed file is what the reference generates (rerun codel_vectors.py if not)."""
    assert json.loads(codel_vectors.PATH.read_text()) == codel_vectors.generate()


def test_vectors_replay_through_codel_step() -> None:
    doc = json.loads(codel_vectors.PATH.read_text())
    cfg = doc["config"]
    config = CodelConfig.from_seconds(cfg["target_s"], cfg["interval_s"], cfg["ecn_mark"])
    assert (config.target, config.interval) == (cfg["target"], cfg["interval"])
    rows = [ControlLawRow(**row) for row in doc["control_law"]]
    verdicts = set()
    for sequence in doc["sequences"]:
        state = CodelState(**sequence["initial"])
        for step in sequence["steps"]:
            state, verdict = codel_step(
                state, config, step["now"], step["sojourn"], step["ecn_capable"]
            )
            assert verdict.value == step["expect"], (sequence["name"], step["why"])
            assert state == CodelState(**step["state"]), (sequence["name"], step["why"])
            if verdict is not Verdict.FORWARD:
                assert lpm_lookup(rows, state.count) == config.spacing(state.count)
            verdicts.add(verdict)
    assert verdicts == set(Verdict)
