"""End-to-end worst-case delay of a slice that crosses several links.

Each link is analysed on its own (:mod:`.bounds`), and a slice's end-to-end bound is the sum of
its per-hop bounds plus its links' propagation delays, one model at a time, or the
network-calculus concatenation of its hops where the caller has it and it is tighter: a packet
waits at most the per-hop worst case at every egress it crosses, and the per-hop analyses
already assume the slice arrives with at most its declared burst (the data plane re-polices it
at every hop, see the brief). Summing is the standard pay-bursts-at-every-hop bound; it is
sound for both models and is what the admission check and the reports use.

A slice may carry an end-to-end target besides its per-hop target. The hop that hurts most is
the one with the largest bound: lowering it gains the most, so violations name it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sliceportal.domain.bounds import LevelBounds
from sliceportal.domain.formatting import format_delay


@dataclass(frozen=True, slots=True)
class Hop:
    """One link a slice crosses and the slice's worst-case delay there (``None`` = unbounded)."""

    link_id: int
    link: str
    """A name for humans (e.g. ``s1/eth2``)."""
    bound_s: float | None
    propagation_s: float = 0.0
    """The link's propagation delay to the next switch, which the end-to-end bound adds."""


@dataclass(frozen=True, slots=True)
class PathBound:
    """A slice's end-to-end bound against its end-to-end target: the sum of its hops (and
    their propagation delays), or the concatenation of its hops where that is tighter."""

    hops: tuple[Hop, ...]
    total_s: float | None
    """The end-to-end bound: the smaller of :attr:`per_hop_sum_s` and
    :attr:`concatenation_s`; ``None`` when both are unbounded."""
    target_s: float | None
    """The end-to-end target, if the slice has one."""
    worst_hop: Hop | None
    """The hop with the largest bound (an unbounded one first); ``None`` without hops."""
    per_hop_sum_s: float | None = None
    """Σ per-hop bounds + Σ propagation delays; ``None`` when some hop is unbounded."""
    concatenation_s: float | None = None
    """The pay-bursts-once bound of the concatenated hops (propagation included), where it
    was computed (netcalc, two hops or more) and is finite."""

    @property
    def method(self) -> str:
        """Which result :attr:`total_s` is: ``per-hop sum`` or ``concatenation``."""
        if self.concatenation_s is not None and self.total_s == self.concatenation_s:
            if self.per_hop_sum_s is None or self.concatenation_s < self.per_hop_sum_s:
                return "concatenation"
        return "per-hop sum"

    @property
    def meets_target(self) -> bool:
        """True without a target; else the sum is bounded and within it."""
        if self.target_s is None:
            return True
        return self.total_s is not None and self.total_s <= self.target_s

    @property
    def slack_s(self) -> float | None:
        """Target minus bound; ``None`` without a target or when unbounded."""
        if self.target_s is None or self.total_s is None:
            return None
        return self.target_s - self.total_s

    def reason(self) -> str:
        """Why the target is missed, naming the worst hop (only meaningful when it is)."""
        hop = self.worst_hop
        where = ""
        if hop is not None:
            share = "unbounded" if hop.bound_s is None else format_delay(hop.bound_s)
            where = f"; the worst hop is link {hop.link!r} ({share})"
        target = format_delay(self.target_s or 0.0)
        if self.total_s is None:
            return f"end-to-end worst-case delay is unbounded (target {target}){where}"
        total = format_delay(self.total_s)
        return f"end-to-end worst-case delay {total} exceeds target {target}{where}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "hops": [
                {"link_id": hop.link_id, "link": hop.link, "bound_s": hop.bound_s}
                for hop in self.hops
            ],
            "total_s": self.total_s,
            "target_s": self.target_s,
            "worst_hop_link_id": None if self.worst_hop is None else self.worst_hop.link_id,
            "meets_target": self.meets_target,
            "slack_s": self.slack_s,
        }


def hop_bound(levels: LevelBounds, priority: int) -> float | None:
    """A slice's bound on one link from the link's level bounds (``None`` = unbounded).

    A level whose rates overflow the link counts as unbounded even where the harkous
    equations still give a finite number: its backlog grows forever.
    """
    bound = levels.bound_s[priority]
    if levels.overflow[priority] or not math.isfinite(bound):
        return None
    return bound


def path_bound(
    hops: Iterable[Hop],
    target_s: float | None = None,
    *,
    concatenation_s: float | None = None,
) -> PathBound:
    """The end-to-end bound of one slice from its per-hop bounds (in path order), their
    propagation delays and, when given, the concatenation bound of the same path (which
    includes the propagation delays): the smaller of the two.

    A target of 0 is allowed (a burst limit of 0 defaults to it): only a path without
    queueing could meet it.
    """
    path = tuple(hops)
    if target_s is not None and not (math.isfinite(target_s) and target_s >= 0):
        raise ValueError("an end-to-end target must be a finite number of seconds, at least 0")
    bounded = all(hop.bound_s is not None and math.isfinite(hop.bound_s) for hop in path)
    per_hop = (
        math.fsum(
            [*(hop.bound_s for hop in path if hop.bound_s is not None)]
            + [hop.propagation_s for hop in path]
        )
        if bounded
        else None
    )
    if concatenation_s is not None and not math.isfinite(concatenation_s):
        concatenation_s = None
    candidates = [value for value in (per_hop, concatenation_s) if value is not None]
    total = min(candidates) if candidates else None
    worst = max(
        path,
        key=lambda hop: math.inf if hop.bound_s is None else hop.bound_s,
        default=None,
    )
    return PathBound(
        hops=path,
        total_s=total,
        target_s=target_s,
        worst_hop=worst,
        per_hop_sum_s=per_hop,
        concatenation_s=concatenation_s,
    )
