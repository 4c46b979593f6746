"""An independent brute-force planner for the tests: every assignment of slices to levels.

It evaluates both models vectorised over all ``Q**n`` assignments with its own code (not the
package's evaluator), so agreement with the planner means something. netcalc is the sound bound
as documented: at level ``p``, ``8·(Σ_{i≥p} s·(b_i + L_i·τ/8) + max(F, frames below p) + o)
/ (C − s·Σ_{i>p} L_i)`` with ``s = 1 + o/60``, ``τ`` = 1 µs and ``F`` best effort's largest frame
(which blocks even the lowest slice level).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from sliceportal.domain import Model, SliceSpec

TICK_S = 1e-6
"""The switch's timestamp tick (independent of the package's constant on purpose)."""
BEST_EFFORT_FRAME_BYTES = 1518
MIN_FRAME_BYTES = 60


@dataclass(frozen=True)
class Oracle:
    feasible: bool
    margin: float
    """Best worst relative slack over all assignments (> 0 feasible, < 0 infeasible)."""


def brute_force(
    specs: list[SliceSpec],
    capacity: float,
    levels: int,
    model: Model,
    *,
    best_effort_frame_bytes: int = BEST_EFFORT_FRAME_BYTES,
    overhead_bytes: int = 0,
) -> Oracle:
    n = len(specs)
    rate = np.array([s.rate_bps for s in specs])
    burst = np.array([8.0 * s.burst_bytes for s in specs])
    target = np.array([s.delay_target_s for s in specs])
    packet = np.array([8.0 * s.max_packet_bytes for s in specs])
    offered = rate.sum()
    floor = 0.0
    if model is Model.NETCALC:
        scale = 1.0 + overhead_bytes / MIN_FRAME_BYTES
        burst = scale * (burst + rate * TICK_S)
        rate = scale * rate
        packet = packet + 8.0 * overhead_bytes
        floor = 8.0 * (best_effort_frame_bytes + overhead_bytes)
    assign = np.array(list(itertools.product(range(levels), repeat=n)))  # higher = higher priority
    member = assign[:, :, None] == np.arange(levels)  # A x n x Q
    level_rate = (member * rate[None, :, None]).sum(axis=1)
    level_burst = (member * burst[None, :, None]).sum(axis=1)
    nonempty = member.any(axis=1)
    # Rates of strictly higher levels: reverse exclusive cumulative sum over the level axis.
    above = np.cumsum(level_rate[:, ::-1], axis=1)[:, ::-1] - level_rate
    residual = capacity - above
    with np.errstate(divide="ignore", invalid="ignore"):
        if model is Model.HARKOUS:
            busy = np.where(nonempty, level_burst / residual, 0.0)
            busy = np.where(nonempty & (residual <= 0), np.inf, busy)
            level_bound = np.cumsum(busy[:, ::-1], axis=1)[:, ::-1]
        else:
            burst_at_or_above = np.cumsum(level_burst[:, ::-1], axis=1)[:, ::-1]
            level_packet = np.where(member, packet[None, :, None], 0.0).max(axis=1)
            packet_below = np.maximum(
                np.concatenate(
                    [
                        np.zeros((len(assign), 1)),
                        np.maximum.accumulate(level_packet, axis=1)[:, :-1],
                    ],
                    axis=1,
                ),
                floor,  # best effort sits below every slice level
            )
            level_bound = (burst_at_or_above + packet_below) / residual
            level_bound = np.where(residual < level_rate, np.inf, level_bound)
    bound = np.take_along_axis(level_bound, assign, axis=1)
    slack = (target - bound) / np.maximum(target, 1e-300)
    worst = slack.min(axis=1)
    if max(offered, rate.sum()) > capacity * (1 + 1e-12):
        return Oracle(False, -np.inf)
    margin = float(worst.max())
    return Oracle(margin >= 0, margin)
