"""SLA rules on a sample's statistics, and the hold that turns breaches into alerts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sliceportal.domain.sla import (
    Hold,
    Rule,
    TargetArrays,
    Targets,
    Transition,
    advance,
    breaches,
    check,
)
from sliceportal.domain.telemetry import COLUMNS, BatchMetrics, batch_metrics

BUCKET = {"1ms": 3, "2ms": 4, "5ms": 5, "10ms": 6, "20ms": 7}
"""The histogram bucket starting at each edge."""


def second_counts(
    *,
    forwarded: tuple[int, int] = (1000, 1_250_000),
    dropped: int = 0,
    marked: int = 0,
    rq_bucket: int = 0,
    tail_bucket: int | None = None,
) -> list[int]:
    """One second of one slice: every forwarded packet in ``rq_bucket`` except one in
    ``tail_bucket``; ``dropped`` packets of 1,250 bytes dropped by the virtual queue."""
    values = dict.fromkeys(COLUMNS, 0)
    values |= {"forwarded_packets": forwarded[0], "forwarded_bytes": forwarded[1]}
    values |= {"vq_dropped_packets": dropped, "vq_dropped_bytes": dropped * 1250}
    values |= {"ecn_marked_packets": marked, "vq_hist_0": forwarded[0]}
    values[f"rq_hist_{rq_bucket}"] += forwarded[0]
    if tail_bucket is not None:
        values[f"rq_hist_{rq_bucket}"] -= 1
        values[f"rq_hist_{tail_bucket}"] += 1
    return list(values.values())


def second(**fields: Any) -> BatchMetrics:
    return batch_metrics(np.array([second_counts(**fields)]), np.ones(1))


def verdict(found: BatchMetrics, targets: Targets, rule: Rule) -> tuple[bool, float | None]:
    """Whether ``rule`` is breached, and the value its alert would report."""
    (row,) = breaches(found, TargetArrays.of([targets])).tolist()
    return row[list(Rule).index(rule)], check(found, 0, targets, rule).value


def test_no_rule_fires_without_targets() -> None:
    found = second(dropped=500, rq_bucket=7)
    assert breaches(found, TargetArrays.of([Targets()])).tolist() == [[False] * len(Rule)]


def test_delay_fires_when_the_percentile_bucket_starts_at_the_target() -> None:
    targets = Targets(max_delay_s=0.005)
    assert verdict(second(rq_bucket=BUCKET["2ms"]), targets, Rule.DELAY) == (False, 0.005)
    assert verdict(second(rq_bucket=BUCKET["5ms"]), targets, Rule.DELAY) == (True, 0.010)


def test_delay_between_edges_fires_only_when_proven() -> None:
    targets = Targets(max_delay_s=0.007)
    assert not verdict(second(rq_bucket=BUCKET["5ms"]), targets, Rule.DELAY)[0]  # 5-10 ms: maybe
    assert verdict(second(rq_bucket=BUCKET["10ms"]), targets, Rule.DELAY)[0]


def test_delay_percentile_is_a_target() -> None:
    # 1 packet in 1000 beyond 20 ms: the p99 is fine, the max is not.
    found = second(rq_bucket=0, tail_bucket=BUCKET["20ms"])
    assert not verdict(found, Targets(max_delay_s=0.005), Rule.DELAY)[0]
    assert verdict(found, Targets(max_delay_s=0.005, delay_percentile=50), Rule.DELAY) == (
        False,
        0.0001,
    )
    assert verdict(found, Targets(delay_bound_s=0.01), Rule.DELAY_BOUND) == (True, 0.02)
    with pytest.raises(ValueError):
        Targets(delay_percentile=90)


def test_rules_are_quiet_without_traffic() -> None:
    idle = second(forwarded=(0, 0))
    targets = Targets(max_delay_s=0.001, delay_bound_s=0.001, min_throughput_bps=1e6)
    assert not any(breaches(idle, TargetArrays.of([targets])).tolist()[0])
    assert (
        check(idle, 0, targets, Rule.DELAY).message == "p99 real-queue delay: no packet forwarded"
    )


def test_throughput_fires_only_when_the_demand_was_there() -> None:
    targets = Targets(min_throughput_bps=20e6)  # 20 Mbit/s; 10 Mbit/s forwarded
    assert not verdict(second(), targets, Rule.THROUGHPUT)[0]  # only 10 Mbit/s offered
    assert verdict(second(dropped=1000), targets, Rule.THROUGHPUT) == (True, 10e6)


def test_loss_and_marks_above_their_maximum() -> None:
    targets = Targets(max_loss_ratio=0.01, max_mark_ratio=0.05)
    assert verdict(second(dropped=10), targets, Rule.LOSS)[0] is False  # 10/1010 < 1%
    assert verdict(second(dropped=20), targets, Rule.LOSS)[0] is True
    assert verdict(second(marked=50), targets, Rule.MARKS) == (False, 0.05)
    assert verdict(second(marked=51), targets, Rule.MARKS)[0] is True


def test_targets_differ_per_slice_of_a_batch() -> None:
    one = second_counts(dropped=20, rq_bucket=BUCKET["10ms"])
    batch = batch_metrics(np.array([one, one]), np.ones(2))
    targets = TargetArrays.of(
        [Targets(max_loss_ratio=0.5, delay_percentile=50), Targets(max_loss_ratio=0.01)]
    )
    loss = list(Rule).index(Rule.LOSS)
    assert [row[loss] for row in breaches(batch, targets).tolist()] == [False, True]


def test_messages_say_what_and_against_what() -> None:
    targets = Targets(max_delay_s=0.005, delay_bound_s=0.002, max_loss_ratio=0.01)
    found = second(rq_bucket=BUCKET["5ms"], dropped=100)
    assert check(found, 0, targets, Rule.DELAY).message == (
        "p99 real-queue delay is between 5 ms and 10 ms, the SLA allows 5 ms"
    )
    assert check(found, 0, targets, Rule.DELAY_BOUND).message.endswith(
        "the analytical bound is 2 ms"
    )
    assert check(found, 0, targets, Rule.LOSS).message == "loss 9.09% is above the maximum 1.00%"
    assert check(second(rq_bucket=7), 0, targets, Rule.DELAY).message.startswith(
        "p99 real-queue delay is at least 20 ms"
    )


def run(samples: list[tuple[bool, float]], for_s: float, clear_for_s: float) -> list[str]:
    hold, seen = Hold(), []
    for breached, interval in samples:
        hold, transition = advance(hold, breached, interval, for_s=for_s, clear_for_s=clear_for_s)
        seen.append(transition.value if transition else "-")
    return seen


def test_hold_fires_after_for_s_and_resolves_after_clear_for_s() -> None:
    samples = [(True, 1.0)] * 3 + [(False, 1.0)] * 3 + [(True, 1.0)]
    assert run(samples, 2.0, 3.0) == ["-", "fire", "-", "-", "-", "resolve", "-"]


def test_hold_tolerates_timer_jitter_and_long_effective_intervals() -> None:
    assert run([(True, 0.998)], 1.0, 1.0) == ["fire"]
    assert run([(True, 0.9), (True, 0.9)], 1.5, 1.0) == ["-", "fire"]
    assert run([(True, 4.1)], 3.0, 1.0) == ["fire"]  # one sample of a slice read every 4 s


def test_a_breach_interrupted_starts_over() -> None:
    samples = [(True, 1.0), (False, 1.0), (True, 1.0), (True, 1.0)]
    assert run(samples, 2.0, 1.0) == ["-", "-", "-", "fire"]


@given(st.lists(st.booleans(), max_size=40), st.integers(0, 4), st.integers(0, 4))
def test_transitions_alternate_fire_then_resolve(
    breaches: list[bool], for_n: int, clear_n: int
) -> None:
    seen = [t for t in run([(b, 1.0) for b in breaches], for_n, clear_n) if t != "-"]
    assert seen == ["fire", "resolve"] * (len(seen) // 2) + ["fire"] * (len(seen) % 2)
    assert all(t in (Transition.FIRE, Transition.RESOLVE) for t in seen)
