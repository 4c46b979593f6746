"""The three slices of the paper's section V-B (Fig. 15, Table III)."""

from __future__ import annotations

from sliceportal.domain import SliceSpec, slice_spec

MBPS = 1e6


def paper_slices(
    dc: int, enterprise: int, peering: int, *, dc_target_s: float | None = None
) -> list[SliceSpec]:
    """DC 48 Mbit/s / 20 ms, Enterprise 12 Mbit/s / 10 ms, Peering 240 Mbit/s / 30 ms."""
    return [
        slice_spec("DC", 48 * MBPS, dc, burst_limit_s=0.020, delay_target_s=dc_target_s),
        slice_spec("Enterprise", 12 * MBPS, enterprise, burst_limit_s=0.010),
        slice_spec("Peering", 240 * MBPS, peering, burst_limit_s=0.030),
    ]
