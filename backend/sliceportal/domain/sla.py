"""SLA rules over telemetry: which rules a sample breaks, and when a breach has lasted long enough
to fire an alert (and a clearance long enough to resolve it).

Delays come from histograms, which know a delay only to its bucket, so a delay rule fires only
when the histogram *proves* the breach: the bucket holding the percentile (or the largest delay)
starts at or above the threshold. Targets on a bucket edge (the paper's 5, 10 and 20 ms) are
therefore checked exactly; a target between two edges fires from the next edge up. Both delay
rules look at the real queue, whose delay the packets experience and the analytics bound; the
virtual queue cannot exceed the burst limit (the switch drops instead, which the loss rule
sees).

Pure: the alert engine (``sliceportal.alerts.engine``) keeps one ``Hold`` per slice, switch and
rule, and stores the transitions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from sliceportal.domain.formatting import format_delay, format_rate
from sliceportal.domain.telemetry import LOWER_S, PERCENTILES, REPORTED_S, BatchMetrics, Floats

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


@dataclass(frozen=True)
class TargetArrays:
    """The targets of a batch's slices as columns, NaN where a rule is off."""

    max_delay_s: Floats
    percentile_column: npt.NDArray[np.intp]
    min_throughput_bps: Floats
    max_loss_ratio: Floats
    max_mark_ratio: Floats
    delay_bound_s: Floats

    @classmethod
    def of(cls, targets: Sequence[Targets]) -> TargetArrays:
        def column(name: str) -> Floats:
            values = [getattr(t, name) for t in targets]
            return np.array([np.nan if v is None else v for v in values], dtype=np.float64)

        return cls(
            max_delay_s=column("max_delay_s"),
            percentile_column=np.array(
                [PERCENTILES.index(t.delay_percentile) for t in targets], dtype=np.intp
            ),
            min_throughput_bps=column("min_throughput_bps"),
            max_loss_ratio=column("max_loss_ratio"),
            max_mark_ratio=column("max_mark_ratio"),
            delay_bound_s=column("delay_bound_s"),
        )


MAX_BUCKET = len(PERCENTILES)
"""The column of the largest delay's bucket in ``BatchMetrics.rq_buckets``."""


def _proven_above(buckets: npt.NDArray[np.int64], threshold: Floats) -> npt.NDArray[np.bool_]:
    """The bucket starts at or above the threshold (False without packets or threshold)."""
    return (buckets >= 0) & (LOWER_S[buckets] >= threshold)


def breaches(metrics: BatchMetrics, targets: TargetArrays) -> npt.NDArray[np.bool_]:
    """(slices, rules): which rule each slice's sample breaks, in ``Rule`` order. A NaN
    threshold compares False, so a rule without a target never fires."""
    rows = np.arange(len(metrics))
    percentile = metrics.rq_buckets[rows, targets.percentile_column]
    minimum = targets.min_throughput_bps
    return np.stack(
        [
            _proven_above(percentile, targets.max_delay_s),
            (metrics.offered_bps >= minimum) & (metrics.throughput_bps < minimum),
            metrics.drop_ratio > targets.max_loss_ratio,
            metrics.mark_ratio > targets.max_mark_ratio,
            _proven_above(metrics.rq_buckets[:, MAX_BUCKET], targets.delay_bound_s),
        ],
        axis=1,
    )


@dataclass(frozen=True)
class Check:
    """What an alert says about a rule on one sample: the measured value against the threshold."""

    rule: Rule
    value: float | None
    threshold: float | None
    message: str


def _delay_range(bucket: int) -> str:
    lower = format_delay(float(LOWER_S[bucket]))
    if bucket == len(LOWER_S) - 1:
        return f"at least {lower}"
    return f"between {lower} and {format_delay(float(LOWER_S[bucket + 1]))}"


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
        message = f"{what} is {_delay_range(bucket)}"
        if threshold is not None:
            message += f", {limit} {format_delay(threshold)}"
        return Check(rule, float(REPORTED_S[bucket]), threshold, message)
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
