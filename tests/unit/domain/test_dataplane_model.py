"""The reference model of vqueue.p4 / real_queue.p4: edge cases, enforcement, no overflow."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sliceportal.domain import p4constants as c
from sliceportal.domain.dataplane import (
    SlicePolicy,
    VirtualQueueState,
    byte_time,
    delay_bucket,
    egress_check,
    histogram_edges,
    histogram_target,
    real_delay_units,
    vqueue_step,
)
from sliceportal.domain.units import VQ_UNITS_PER_S, vq_units

TICKS_PER_S = 10**9 // c.TIMESTAMP_TICK_NS
UNITS = c.VQ_UNITS_PER_TICK
TS_MOD = 2**c.TIMESTAMP_WIDTH


def policy(
    rate_bps: float = 48e6, burst_s: float = 0.02, mark_s: float | None = None
) -> SlicePolicy:
    return SlicePolicy(
        priority=7,
        byte_time=byte_time(rate_bps),
        c_delay=vq_units(burst_s, "burst_limit_s"),
        m_delay=None if mark_s is None else vq_units(mark_s, "marking_threshold_s"),
        hist_target=histogram_target(burst_s),
    )


def test_first_packet_drains_nothing_and_is_admitted() -> None:
    p = policy()
    state, passed = vqueue_step(VirtualQueueState(), now=123_456, packet_bytes=1500, policy=p)
    assert passed
    assert state == VirtualQueueState(1500 * p.byte_time, 123_456)


def test_idle_time_drains_the_queue() -> None:
    p = policy()
    full = VirtualQueueState(delay=5 * UNITS, last_seen=1000)
    state, _ = vqueue_step(full, now=1003, packet_bytes=100, policy=p)
    assert state.delay == 2 * UNITS + 100 * p.byte_time
    state, _ = vqueue_step(full, now=1000 + 6, packet_bytes=100, policy=p)
    assert state.delay == 100 * p.byte_time  # drained to empty, never below zero


def test_timestamp_going_backwards_drains_nothing() -> None:
    p = policy()
    queued = VirtualQueueState(delay=5 * UNITS, last_seen=10_000)
    state, passed = vqueue_step(queued, now=9_990, packet_bytes=100, policy=p)
    assert passed
    assert state == VirtualQueueState(5 * UNITS + 100 * p.byte_time, 9_990)


def test_timestamp_wrap_counts_the_right_elapsed_time() -> None:
    p = policy()
    before_wrap = VirtualQueueState(delay=20 * UNITS, last_seen=TS_MOD - 5)
    state, _ = vqueue_step(before_wrap, now=10, packet_bytes=100, policy=p)
    assert state.delay == 5 * UNITS + 100 * p.byte_time  # 15 ticks elapsed across the wrap


def test_long_idle_empties_the_queue_without_multiplying_it_out() -> None:
    p = policy(burst_s=4.0)
    state = VirtualQueueState(delay=p.c_delay, last_seen=1)
    for now in (1 + c.VQ_ELAPSED_CAP_TICKS, TS_MOD // 2):  # the cap, and the largest forward step
        after, _ = vqueue_step(state, now=now, packet_bytes=64, policy=p)
        assert after.delay == 64 * p.byte_time


def test_tail_drop_at_the_burst_limit() -> None:
    p = SlicePolicy(
        priority=0,
        byte_time=1000,
        c_delay=10_000,
        m_delay=None,
        hist_target=c.HIST_BEST_EFFORT_TARGET_VQ,
    )
    state = VirtualQueueState(delay=0, last_seen=7)
    state, passed = vqueue_step(state, now=7, packet_bytes=10, policy=p)  # fills it exactly
    assert passed and state.delay == 10_000
    after, passed = vqueue_step(state, now=7, packet_bytes=1, policy=p)
    assert not passed
    assert after.delay == 10_000  # a dropped packet adds nothing


def test_lowered_burst_limit_drops_without_underflow() -> None:
    p = SlicePolicy(
        priority=0,
        byte_time=1000,
        c_delay=10_000,
        m_delay=None,
        hist_target=c.HIST_BEST_EFFORT_TARGET_VQ,
    )
    state = VirtualQueueState(delay=50_000, last_seen=7)  # stored under an older, larger limit
    after, passed = vqueue_step(state, now=7, packet_bytes=1, policy=p)
    assert not passed and after.delay == 50_000


@pytest.mark.parametrize("rate_bps", [1e6, 48e6, 1e9, 100e9])
def test_greedy_sender_gets_the_rate_limit(rate_bps: float) -> None:
    """Offered at twice the rate, a slice forwards what the rate allows over the time that
    passed, plus at most one burst: elapsed <= forwarded x byte_time <= elapsed + C_DELAY."""
    frame, packets = 1500, 20_000
    p = policy(rate_bps=rate_bps, burst_s=20 * frame * 8 / rate_bps)
    seconds = packets * frame * 8 / (2 * rate_bps)
    state, forwarded = VirtualQueueState(), 0
    arrivals = [1 + round(k * seconds * TICKS_PER_S / packets) for k in range(packets)]
    for now in arrivals:
        state, passed = vqueue_step(state, now, frame, p)
        forwarded += frame * passed
    elapsed = (arrivals[-1] - arrivals[0]) * UNITS
    assert elapsed <= forwarded * p.byte_time <= elapsed + p.c_delay
    throughput = forwarded * 8 / ((arrivals[-1] - arrivals[0]) / TICKS_PER_S)
    assert throughput <= rate_bps * (1 + p.c_delay / elapsed)


def test_one_second_burst_at_100_gbit_never_overflows() -> None:
    """Fill a 1 s burst at 100 Gbit/s, with the largest packet_length a switch can report,
    the largest idle steps, a timestamp wrap and the largest real-queue delay: every
    intermediate is checked against its P4 width by the model (OverflowError otherwise)."""
    p = policy(rate_bps=100e9, burst_s=1.0, mark_s=0.5)
    state = VirtualQueueState()
    now = TS_MOD - 3
    for step in (0, 1, 1, 2, c.VQ_ELAPSED_CAP_TICKS - 1, 2, TS_MOD // 2 - 1):
        now = (now + step) % TS_MOD
        for size in (9216, 65_535 + 22, 2**32 - 1):
            state, _ = vqueue_step(state, now, size, p)
            assert 0 <= state.delay <= p.c_delay
    # Up to the brim with jumbo frames arriving at the same instant.
    state = VirtualQueueState(p.c_delay - 3 * 9216 * p.byte_time + 1, now)
    outcomes = []
    for _ in range(4):
        state, passed = vqueue_step(state, now, 9216, p)
        outcomes.append(passed)
    assert outcomes == [True, True, False, False]
    assert p.c_delay - 9216 * p.byte_time < state.delay <= p.c_delay == VQ_UNITS_PER_S
    assert egress_check(state.delay, 2**32 - 1, p, ecn=2) == (True, False)
    assert real_delay_units(2**32 - 1) < 2**58


def test_model_refuses_values_the_switch_cannot_hold() -> None:
    with pytest.raises(OverflowError):
        real_delay_units(2**32)


@given(
    st.integers(0, 2**48 - 1),
    st.integers(0, 2**48 - 1),
    st.integers(0, 2**48 - 1),
    st.integers(1, 2**32 - 1),
    st.integers(1, 2**32 - 1),
)
def test_vqueue_invariants(delay: int, last: int, now: int, size: int, bt: int) -> None:
    p = SlicePolicy(
        priority=0,
        byte_time=bt,
        c_delay=2**48 - 1,
        m_delay=None,
        hist_target=c.HIST_BEST_EFFORT_TARGET_VQ,
    )
    state, passed = vqueue_step(VirtualQueueState(delay, last), now, size, p)
    assert state.last_seen == now
    if passed:
        assert size * bt <= state.delay <= p.c_delay
    else:
        assert state.delay <= delay  # drained at most, nothing added


def test_egress_decides_on_the_larger_delay() -> None:
    p = policy(burst_s=0.02, mark_s=0.005)
    ms = VQ_UNITS_PER_S // 1000
    ect0, ect1, not_ect, ce = 2, 1, 0, 3
    assert egress_check(1 * ms, 1_000, p, ect0) == (False, False)  # 1 ms both
    assert egress_check(6 * ms, 1_000, p, ect0) == (False, True)  # virtual above M
    assert egress_check(1 * ms, 6_000, p, ect1) == (False, True)  # real above M
    assert egress_check(6 * ms, 0, p, not_ect) == (False, False)  # only ECT is marked
    assert egress_check(6 * ms, 0, p, ce) == (False, False)  # already CE: not counted again
    assert egress_check(1 * ms, 20_001, p, ect0) == (True, False)  # real above C: drop
    tail = policy(burst_s=0.02)
    assert egress_check(19 * ms, 0, tail, ect0) == (False, False)  # tail_drop never marks


@pytest.mark.parametrize("target_s", [0.005, 0.02, 0.03, 0.0123456789, 4.0])
def test_delay_buckets_follow_the_edges_of_the_target(target_s: float) -> None:
    target = histogram_target(target_s)
    edges = histogram_edges(target)
    assert len(edges) == c.HIST_BUCKETS - 1 and edges[-1] == target
    assert list(edges) == sorted(edges)
    assert delay_bucket(0, target) == 0
    for k, edge in enumerate(edges, start=1):
        assert delay_bucket(edge - 1, target) == k - 1
        assert delay_bucket(edge, target) == k
    assert delay_bucket(2**64 - 1, target) == c.HIST_BUCKETS - 1


def test_the_top_bucket_holds_exactly_the_delays_at_or_above_the_target() -> None:
    target = histogram_target(0.03)  # the paper's Peering slice: above the old 20 ms top edge
    assert target == 30 * 10**6 * c.VQ_UNITS_PER_NS
    per_ms = 10**6 * c.VQ_UNITS_PER_NS
    assert delay_bucket(target - 1, target) == c.HIST_BUCKETS - 2
    assert delay_bucket(target, target) == c.HIST_BUCKETS - 1
    assert [delay_bucket(ms * per_ms, target) for ms in (1, 2, 5, 10, 20, 25, 29, 45)] == [
        0,  # below 1.875 ms
        1,  # 1.875-3.75 ms
        2,  # 3.75-7.5 ms
        3,  # 7.5-15 ms
        4,  # 15-22.5 ms
        5,  # 22.5-26.25 ms
        6,  # 26.25-30 ms
        7,  # 30 ms and above
    ]


def test_best_effort_histograms_end_at_20_ms() -> None:
    assert c.HIST_BEST_EFFORT_TARGET_VQ == histogram_target(c.HIST_BEST_EFFORT_TARGET_US / 1e6)
    assert histogram_edges(c.HIST_BEST_EFFORT_TARGET_VQ)[-1] == 20 * 10**6 * c.VQ_UNITS_PER_NS
