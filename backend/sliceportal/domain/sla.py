"""SLA rules over telemetry: which rules a sample breaks, and when a breach has lasted long enough
to fire an alert (and a clearance long enough to resolve it).

Delays come from histograms, which know a delay only to its bucket, so a delay rule fires only
when the histogram *proves* the breach: the bucket holding the percentile (or the largest delay)
starts at or above the threshold, on the slice's own edges. Those derive from the slice's delay
target T (``dataplane.histogram_edges``: T/16, T/8, T/4, T/2, 3T/4, 7T/8 and T), so a rule
whose threshold is the delay target is checked exactly, whatever the target: the top bucket
holds exactly the packets at or above it, and "p99 at or above T" is "more than 1 % of the
packets in the top bucket". A threshold between two edges fires from the next edge up; beyond
T, never. Thresholds are held to the data plane's resolution, vq units rounded down as the
target is (``dataplane.histogram_target``), so a target that is no whole number of vq units
still meets its own top edge. Both delay rules look at the real queue, whose delay the packets
experience and the analytics bound; the virtual queue cannot exceed the burst limit (the switch
drops instead, which the loss rule sees).

Pure: the alert engine (``sliceportal.alerts.engine``) keeps one ``Hold`` per slice, switch and
rule, and stores the transitions.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from sliceportal.domain import units
from sliceportal.domain.formatting import format_delay, format_rate
from sliceportal.domain.p4constants import MAX_SLICES
from sliceportal.domain.telemetry import (
    PERCENTILES,
    BatchMetrics,
    Floats,
    Ints,
    lower_edges,
    reported_edges,
)

TIMER_SLACK_S = 0.05
"""Measured intervals jitter around the poll period (0.998 s, 1.003 s): a hold of N seconds is
met by samples covering N seconds give or take this much."""


class Rule(StrEnum):
    """What an alert is about; one open alert per slice and rule."""

    DELAY = "delay"
    """The delay percentile is above the SLA's maximum delay (default: the delay target)."""
    THROUGHPUT = "throughput"
    """Less than the minimum throughput was delivered although at least as much was offered."""
    LOSS = "loss"
    """The share of offered packets dropped is above the maximum loss ratio."""
    MARKS = "marks"
    """The share of forwarded packets ECN-marked is above the maximum mark ratio."""
    DELAY_BOUND = "delay_bound"
    """A packet waited longer than the analytical worst case: the model or the traffic is not
    what was declared."""


@dataclass(frozen=True)
class Targets:
    """A slice's thresholds; ``None`` switches a rule off."""

    max_delay_s: float | None = None
    delay_percentile: int = 99
    min_throughput_bps: float | None = None
    max_loss_ratio: float | None = None
    max_mark_ratio: float | None = None
    delay_bound_s: float | None = None

    def __post_init__(self) -> None:
        if self.delay_percentile not in PERCENTILES:
            raise ValueError(f"delay_percentile must be one of {PERCENTILES}")

    @functools.cached_property
    def max_delay_vq(self) -> float:
        """``max_delay_s`` in vq units (``threshold_vq``), NaN when off."""
        return threshold_vq(self.max_delay_s)

    @functools.cached_property
    def delay_bound_vq(self) -> float:
        """``delay_bound_s`` in vq units (``threshold_vq``), NaN when off."""
        return threshold_vq(self.delay_bound_s)


@functools.lru_cache(maxsize=4 * MAX_SLICES)
def threshold_vq(seconds: float | None) -> float:
    """A delay threshold as the data plane holds a delay target: whole vq units, rounded down
    (``dataplane.histogram_target`` without its cap), as a float for numpy (exact below
    2^53 units, 137 s); NaN for None (no threshold). Kept: the inventory makes new targets
    every few seconds, with the same few thresholds."""
    if seconds is None or math.isnan(seconds):
        return math.nan
    if math.isinf(seconds):
        return seconds
    return float(units.floor_vq_units(float(seconds), "threshold"))


@dataclass(frozen=True)
class TargetArrays:
    """The targets of a batch's slices as columns, NaN where a rule is off."""

    max_delay_vq: Floats
    """``Targets.max_delay_vq`` of each slice."""
    percentile_column: npt.NDArray[np.intp]
    min_throughput_bps: Floats
    max_loss_ratio: Floats
    max_mark_ratio: Floats
    delay_bound_vq: Floats

    @classmethod
    def of(cls, targets: Sequence[Targets]) -> TargetArrays:
        def column(name: str) -> Floats:
            values = [getattr(t, name) for t in targets]
            return np.array([np.nan if v is None else v for v in values], dtype=np.float64)

        return cls(
            max_delay_vq=column("max_delay_vq"),
            percentile_column=np.array(
                [PERCENTILES.index(t.delay_percentile) for t in targets], dtype=np.intp
            ),
            min_throughput_bps=column("min_throughput_bps"),
            max_loss_ratio=column("max_loss_ratio"),
            max_mark_ratio=column("max_mark_ratio"),
            delay_bound_vq=column("delay_bound_vq"),
        )


MAX_BUCKET = len(PERCENTILES)
"""The column of the largest delay's bucket in ``BatchMetrics.rq_buckets``."""


def _proven_above(
    lower_vq: Ints, buckets: npt.NDArray[np.int64], threshold_vq: Floats
) -> npt.NDArray[np.bool_]:
    """The bucket of each slice starts at or above its threshold, on the slice's edges (False
    without packets or threshold)."""
    starts = lower_vq[np.arange(len(buckets)), buckets]
    return (buckets >= 0) & (starts >= threshold_vq)


def breaches(metrics: BatchMetrics, targets: TargetArrays) -> npt.NDArray[np.bool_]:
    """(slices, rules): which rule each slice's sample breaks, in ``Rule`` order. A NaN
    threshold compares False, so a rule without a target never fires."""
    rows = np.arange(len(metrics))
    percentile = metrics.rq_buckets[rows, targets.percentile_column]
    minimum = targets.min_throughput_bps
    lower: Ints = lower_edges(metrics.edges_vq)
    return np.stack(
        [
            _proven_above(lower, percentile, targets.max_delay_vq),
            (metrics.offered_bps >= minimum) & (metrics.throughput_bps < minimum),
            metrics.drop_ratio > targets.max_loss_ratio,
            metrics.mark_ratio > targets.max_mark_ratio,
            _proven_above(lower, metrics.rq_buckets[:, MAX_BUCKET], targets.delay_bound_vq),
        ],
        axis=1,
    )


@dataclass(frozen=True)
class ShareAbove:
    """The share of a slice's forwarded packets whose real-queue delay was at or above a
    threshold, as far as its histogram tells: at least ``proven`` (the buckets starting at or
    above it), at most ``possible`` (adding the bucket the threshold falls inside). The two are
    equal, the share exact, when the threshold is one of the slice's edges, its delay target
    above all (the top bucket)."""

    proven: float
    possible: float

    @property
    def exact(self) -> bool:
        return self.proven == self.possible


def share_above(edges_vq: Ints, hist: Ints, threshold_vq: Floats) -> tuple[Floats, Floats]:
    """Per slice, ``ShareAbove``'s proven and possible shares of the delays of histogram
    ``hist`` (slices, 8) at or above the slice's threshold (vq units, ``threshold_vq``; NaN
    gives 0 and 0), on the slice's finite edges ``edges_vq`` (slices, 7). Both 0 without
    packets."""
    lower = lower_edges(edges_vq)
    upper = np.concatenate([edges_vq, np.full((len(edges_vq), 1), np.inf)], axis=1)
    threshold = threshold_vq.reshape(-1, 1)
    total = hist.sum(axis=1).astype(np.float64)
    proven = np.where(lower >= threshold, hist, 0).sum(axis=1).astype(np.float64)
    possible = np.where(upper > threshold, hist, 0).sum(axis=1).astype(np.float64)
    shares = [
        np.divide(part, total, out=np.zeros_like(total), where=total > 0)
        for part in (proven, possible)
    ]
    return shares[0], shares[1]


@dataclass(frozen=True)
class Check:
    """What an alert says about a rule on one sample: the measured value against the threshold."""

    rule: Rule
    value: float | None
    threshold: float | None
    message: str


def _delay_range(lower_s: Sequence[float], bucket: int) -> str:
    lower = format_delay(lower_s[bucket])
    if bucket == len(lower_s) - 1:
        return f"at least {lower}"
    return f"between {lower} and {format_delay(lower_s[bucket + 1])}"


def _share_text(metrics: BatchMetrics, i: int, threshold: float) -> str:
    """How many packets took the threshold or more, exact when it is one of the slice's edges
    (its delay target: the top bucket), else "at least"; empty when nothing is proven."""
    row = slice(i, i + 1)
    proven, possible = share_above(
        metrics.edges_vq[row], metrics.rq_hist[row], np.array([threshold_vq(threshold)])
    )
    found = ShareAbove(float(proven[0]), float(possible[0]))
    if found.exact:
        return f"; {found.proven:.2%} of packets took {format_delay(threshold)} or more"
    if found.proven > 0:
        return f"; at least {found.proven:.2%} of packets took {format_delay(threshold)} or more"
    return ""


def check(metrics: BatchMetrics, i: int, targets: Targets, rule: Rule) -> Check:
    """The value, threshold and sentence of ``rule`` for slice ``i`` of a batch (for the alert
    it opens or resolves; whether it is breached is ``breaches``)."""
    if rule in (Rule.DELAY, Rule.DELAY_BOUND):
        if rule is Rule.DELAY:
            column = PERCENTILES.index(targets.delay_percentile)
            threshold, what = targets.max_delay_s, f"p{targets.delay_percentile} real-queue delay"
            limit = "the SLA allows"
        else:
            column, threshold = MAX_BUCKET, targets.delay_bound_s
            what, limit = "the largest real-queue delay", "the analytical bound is"
        bucket = int(metrics.rq_buckets[i, column])
        if bucket < 0:
            return Check(rule, None, threshold, f"{what}: no packet forwarded")
        edges = metrics.edges_s[i : i + 1]  # the slice's own, as a one-row batch
        message = f"{what} is {_delay_range(lower_edges(edges)[0].tolist(), bucket)}"
        if threshold is not None:
            message += f", {limit} {format_delay(threshold)}"
            message += _share_text(metrics, i, threshold)
        return Check(rule, float(reported_edges(edges)[0, bucket]), threshold, message)
    if rule is Rule.THROUGHPUT:
        value, threshold = float(metrics.throughput_bps[i]), targets.min_throughput_bps
        offered = format_rate(float(metrics.offered_bps[i]))
        message = f"delivered {format_rate(value)} of {offered} offered"
        if threshold is not None:
            message += f", below the minimum {format_rate(threshold)}"
        return Check(rule, value, threshold, message)
    if rule is Rule.LOSS:
        value, threshold, what = float(metrics.drop_ratio[i]), targets.max_loss_ratio, "loss"
    else:
        value, threshold = float(metrics.mark_ratio[i]), targets.max_mark_ratio
        what = "ECN mark ratio"
    message = f"{what} {value:.2%}"
    if threshold is not None:
        message += f" is above the maximum {threshold:.2%}"
    return Check(rule, value, threshold, message)


class Transition(StrEnum):
    FIRE = "fire"
    RESOLVE = "resolve"


@dataclass(frozen=True)
class Hold:
    """How long a rule has been breached (or clear) in a row, in measured seconds."""

    firing: bool = False
    breached_s: float = 0.0
    clear_s: float = 0.0


def advance(
    hold: Hold, breached: bool, interval_s: float, *, for_s: float, clear_for_s: float
) -> tuple[Hold, Transition | None]:
    """The hold after one more sample covering ``interval_s``, and the transition it causes.

    Fires once the breach has lasted ``for_s`` (one sample covering a long effective interval
    may do it alone); resolves once the rule has been clear for ``clear_for_s``, so a rule
    flapping at the threshold does not open an alert a second.
    """
    if breached:
        breached_s = hold.breached_s + interval_s
        fire = not hold.firing and breached_s + TIMER_SLACK_S >= for_s
        return Hold(hold.firing or fire, breached_s, 0.0), Transition.FIRE if fire else None
    clear_s = hold.clear_s + interval_s
    resolve = hold.firing and clear_s + TIMER_SLACK_S >= clear_for_s
    firing = hold.firing and not resolve
    return Hold(firing, 0.0, clear_s), Transition.RESOLVE if resolve else None
