"""Admission from stored per-level sums, with a certificate instead of a recomputation.

A link's slices can be kept as one row per priority level (count, sums of rates and bursts,
tightest target, largest packet), updated as slices come and go, so that admitting one more
slice reads eight rows instead of every slice. Those stored sums are plain float sums in
whatever order the slices arrived, while a full analysis uses correctly rounded sums
(:func:`~sliceportal.domain.bounds.aggregate_arrays`), so the two may differ in the last bits.

This module turns stored rows into *upper* aggregates: sums no smaller than the correctly
rounded ones, the exact count, tightest target and largest packet. Every bound in
:func:`~sliceportal.domain.bounds.evaluate_levels` only grows when a rate or a burst grows
(each float operation on the way is monotone), so if the upper aggregates are admissible the
exact ones are too. The converse does not hold: a link within a few ulps of a target is not
certified and the caller must run the full analysis, which also names the violations and the
fixes. So a certified answer is always the full analysis' answer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from sliceportal.domain.bounds import LevelAggregates
from sliceportal.domain.spec import NUM_LEVELS, SliceSpec

_ULP_FACTOR = 2.0**-51
"""Twice 2^-52: a float sum of n positive terms in any order, each term itself rounded once,
is within (n + 1)·2^-53 of the exact sum, relatively; this is generous on purpose."""


@dataclass(frozen=True, slots=True)
class LevelLoad:
    """One stored level row: the slices of one priority level of one link."""

    priority: int
    slice_count: int
    rate_bps: float
    """Float sum of the rates, in any order."""
    burst_bytes: float
    """Float sum of ``rate × burst_limit / 8``, in any order."""
    min_delay_target_s: float
    max_packet_bytes: int | None
    """Largest packet the slices give, None when none gives one."""
    default_packet_count: int
    """Slices that give no packet size: they count as the link's largest frame."""

    def largest_packet(self, default_frame_bytes: int) -> int:
        given = self.max_packet_bytes or 0
        return max(given, default_frame_bytes) if self.default_packet_count else given


def upper_sum(total: float, count: int) -> float:
    """A float no smaller than the correctly rounded exact sum of `count` non-negative terms
    whose float sum, in some order, is `total`."""
    if count == 0:
        return total
    widened = total * (1.0 + (count + 1) * _ULP_FACTOR)
    return math.nextafter(widened, math.inf)


def _upper_plus(upper: float, term: float) -> float:
    """`upper + term`, rounded up: no smaller than the exact sum with `term` added (or, for a
    negative `term` that is one of the summed terms, taken out)."""
    return math.nextafter(upper + term, math.inf)


def upper_aggregates(
    rows: Iterable[LevelLoad],
    default_frame_bytes: int,
    added: SliceSpec | None = None,
    removed: SliceSpec | None = None,
) -> LevelAggregates:
    """Aggregates no better than those of the stored slices without `removed` (one of them)
    and with `added`, for :func:`evaluate_levels` to certify admission: counts exact, sums
    rounded up, and the tightest target and largest packet exact, except that taking a slice
    out keeps its level's (they can only have been tighter with it)."""
    rate = [0.0] * NUM_LEVELS
    burst = [0.0] * NUM_LEVELS
    count = [0] * NUM_LEVELS
    target = [math.inf] * NUM_LEVELS
    packet = [0] * NUM_LEVELS
    for row in rows:
        k = row.priority
        rate[k] = upper_sum(row.rate_bps, row.slice_count)
        burst[k] = upper_sum(row.burst_bytes, row.slice_count)
        count[k] = row.slice_count
        target[k] = row.min_delay_target_s
        packet[k] = row.largest_packet(default_frame_bytes)
    if removed is not None:
        k = removed.priority
        count[k] -= 1
        if count[k]:
            rate[k] = _upper_plus(rate[k], -removed.rate_bps)
            burst[k] = _upper_plus(burst[k], -removed.burst_bytes)
        else:
            rate[k], burst[k], target[k], packet[k] = 0.0, 0.0, math.inf, 0
    if added is not None:
        k = added.priority
        rate[k] = _upper_plus(rate[k], added.rate_bps) if count[k] else added.rate_bps
        burst[k] = _upper_plus(burst[k], added.burst_bytes) if count[k] else added.burst_bytes
        count[k] += 1
        target[k] = min(target[k], added.delay_target_s)
        packet[k] = max(packet[k], added.max_packet_bytes)
    return LevelAggregates.of(rate, burst, count, target, packet)
