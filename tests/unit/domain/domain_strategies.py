"""Hypothesis strategies for slices and links, shared by the domain property tests."""

from __future__ import annotations

from hypothesis import strategies as st

from sliceportal.domain import SliceSpec

rates = st.floats(min_value=1e3, max_value=1e9, allow_nan=False, allow_infinity=False)
capacities = st.floats(min_value=1e4, max_value=1e11, allow_nan=False, allow_infinity=False)
bursts = st.floats(min_value=0.0, max_value=1e7, allow_nan=False, allow_infinity=False)
targets = st.one_of(
    st.just(0.0), st.floats(min_value=1e-5, max_value=1.0, allow_nan=False, allow_infinity=False)
)
packets = st.integers(min_value=64, max_value=9000)
priorities = st.integers(min_value=1, max_value=7)


@st.composite
def slice_lists(draw: st.DrawFn, min_size: int = 0, max_size: int = 10) -> list[SliceSpec]:
    """Slices with distinct names s0, s1, …"""
    count = draw(st.integers(min_value=min_size, max_value=max_size))
    return [
        SliceSpec(
            name=f"s{i}",
            rate_bps=draw(rates),
            priority=draw(priorities),
            burst_bytes=draw(bursts),
            delay_target_s=draw(targets),
            max_packet_bytes=draw(packets),
        )
        for i in range(count)
    ]


def as_infinite(value: float | None) -> float:
    """Unbounded (None) as +inf, for comparisons."""
    return float("inf") if value is None else value
