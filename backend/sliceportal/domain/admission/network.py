"""Admission of a change across a network: the links it changes, and the end-to-end targets of
the slices crossing them.

A change (a slice created, changed or moved; a link's capacity, model, queues or MTU changed)
is admitted when every changed link admits its slices and every slice with an end-to-end
target whose bound the change moves (those crossing a changed link, and the changed slice
itself) still meets it. Two ways to decide, one answer:

- `admits_surely`: from the links' stored level rows (`levels.LevelLoad`), O(levels) per link
  whatever the number of slices; True is certain (`levels` says why), False means "not
  proven": run the full check.
- `breaches`: the full analysis of every slice on the links (`LinkLoad`, O(n) numpy per link);
  `explain` then names the violations and searches the fixes, which may take up to the
  priority planner's time budget.

The caller holds the links locked meanwhile (`db.queries.links`) and reads them with the
slices' paths; a path that is not among the locked links raises `PathsMoved`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from sliceportal.domain.admission.endtoend import Hop, PathBound, hop_bound, path_bound
from sliceportal.domain.admission.levels import LevelLoad, upper_aggregates
from sliceportal.domain.admission.link import admission
from sliceportal.domain.admission.pathcapacity import path_capacity_fix
from sliceportal.domain.admission.reasons import (
    CapacityFix,
    HopViolation,
    LinkRejection,
    PathViolation,
    PriorityPlanFix,
    Rejection,
    TooManyLevels,
)
from sliceportal.domain.bounds import (
    ArrayAnalysis,
    FloatArray,
    LevelBounds,
    SliceArrays,
    analyze_arrays,
    evaluate_levels,
)
from sliceportal.domain.spec import LinkShape, Model, SliceSpec, max_frame_bytes


@dataclass(frozen=True)
class LinkParams(LinkShape):
    """What admission needs of a link: stored, or as a pending update would leave it."""

    id: int
    name: str
    capacity_bps: float
    model: Model
    queue_count: int
    mtu_bytes: int
    frame_overhead_bytes: int
    propagation_s: float = 0.0
    """The propagation delay of the link's cable (0 for a link that faces hosts), which the
    end-to-end bound of a path through it adds."""

    @property
    def max_frame_bytes(self) -> int:
        """The max packet of a slice that gives none: the link's largest frame."""
        return max_frame_bytes(self.mtu_bytes)


@dataclass
class LinkLoad:
    """The slices on one link as columns, the analytics' input.

    Never turned into per-slice objects on the admission path: stored rows were validated when
    admitted, and thousands are read per request.
    """

    names: list[str]
    table: FloatArray
    """One row per slice: rate_bps, priority, burst_bytes, delay_target_s, max_packet_bytes."""

    @classmethod
    def empty(cls) -> LinkLoad:
        return cls([], np.empty((0, 5)))

    def plus(self, spec: SliceSpec) -> LinkLoad:
        row = [
            spec.rate_bps,
            spec.priority,
            spec.burst_bytes,
            spec.delay_target_s,
            spec.max_packet_bytes,
        ]
        return LinkLoad([*self.names, spec.name], np.vstack([self.table, row]))

    @property
    def priorities(self) -> set[int]:
        return {int(p) for p in self.table[:, 1]}

    def arrays(self) -> SliceArrays:
        table = self.table
        return SliceArrays(
            rate_bps=table[:, 0].copy(),
            priority=table[:, 1].astype(np.intp),
            burst_bytes=table[:, 2].copy(),
            delay_target_s=table[:, 3].copy(),
            max_packet_bytes=table[:, 4].copy(),
        )

    def specs(self) -> list[SliceSpec]:
        return [
            SliceSpec(name, rate, int(priority), burst, target, int(packet))
            for name, (rate, priority, burst, target, packet) in zip(
                self.names, self.table.tolist(), strict=True
            )
        ]


@dataclass(frozen=True)
class PathSlice:
    """A slice with an end-to-end target: what its path check needs besides the link loads
    (a proposal's candidate may have none)."""

    id: int
    name: str
    priority: int
    target_s: float | None
    link_ids: tuple[int, ...]
    """Every link it crosses, read or not: in path order (`slice_links.position`), or in
    ascending id for a slice whose links are an unordered set."""


@dataclass
class Loads:
    """The slices of some links, and those of them with an end-to-end target (by id)."""

    links: dict[int, LinkLoad]
    paths: dict[int, PathSlice]


@dataclass(frozen=True)
class StoredLevels:
    """The level rows of the links a change locks, by link, and the slices with an end-to-end
    target crossing the changed links."""

    rows: dict[int, list[LevelLoad]]
    paths: list[PathSlice]


class PathsMoved(Exception):
    """A slice with an end-to-end target crossing the changed links crosses a link the caller
    did not lock: a concurrent change moved it between reading the paths and locking them."""


def too_many_levels(link: LinkParams, load: LinkLoad) -> TooManyLevels | None:
    """A link with n queues carries at most n - 1 distinct slice priority levels: best effort
    (priority 0) keeps a queue of its own.

    Only the order of the levels matters to the bounds, and the priority planner plans on the
    top n - 1 levels; the workers write priorities to the data plane unchanged.
    """
    levels = sorted(load.priorities, reverse=True)
    if len(levels) <= link.slice_levels:
        return None
    return TooManyLevels(link.name, link.queue_count, tuple(levels))


def _changed_paths(
    paths: Iterable[PathSlice],
    params: Mapping[int, LinkParams],
    changed: Collection[int],
    candidate: PathSlice | None,
) -> list[PathSlice]:
    """The slices with an end-to-end target whose bound a change of `changed` moves, and the
    `candidate`; PathsMoved if one of them crosses a link that is not locked."""
    moved = [path for path in paths if not set(path.link_ids).isdisjoint(changed)]
    if candidate is not None:
        moved.append(candidate)
    if any(not params.keys() >= set(path.link_ids) for path in moved):
        raise PathsMoved()
    return moved


def _path_bound(
    path: PathSlice, params: Mapping[int, LinkParams], levels: Callable[[int], LevelBounds]
) -> PathBound:
    hops = (
        Hop(
            link_id,
            params[link_id].name,
            hop_bound(levels(link_id), path.priority),
            params[link_id].propagation_s,
        )
        for link_id in path.link_ids
    )
    return path_bound(hops, path.target_s)


def admits_surely(
    params: Mapping[int, LinkParams],
    stored: StoredLevels,
    added: Mapping[int, SliceSpec],
    *,
    changed: Collection[int],
    candidate: PathSlice | None,
    removed: Mapping[int, SliceSpec] | None = None,
) -> bool:
    """True when the stored level sums prove that the locked links, with a slice as it was
    taken out (`removed`, by link) and as it will be added (`added`, by link), pass what
    `breaches` checks; False when they do not prove it (then run `breaches` on the full
    loads). O(levels) per link, whatever the number of slices on it.
    """
    paths = _changed_paths(stored.paths, params, changed, candidate)
    levels: dict[int, LevelBounds] = {}
    for link_id, link in params.items():
        aggregates = upper_aggregates(
            stored.rows.get(link_id, ()),
            link.max_frame_bytes,  # what a slice giving no packet size counts as
            added.get(link_id),
            None if removed is None else removed.get(link_id),
        )
        if sum(1 for count in aggregates.count if count) > link.slice_levels:
            return False
        levels[link_id] = evaluate_levels(aggregates, link.capacity_bps, link.model, link.framing)
    if not all(levels[link_id].admissible for link_id in changed):
        return False
    return all(_path_bound(path, params, levels.__getitem__).meets_target for path in paths)


@dataclass(frozen=True)
class Breaches:
    """What the full check found: the changed links that do not admit their slices, and the
    slices with an end-to-end target that miss it (with their bounds)."""

    params: Mapping[int, LinkParams]
    loads: Loads
    rejected: list[LinkParams]
    missed: list[tuple[PathSlice, PathBound]]
    analyses: Mapping[int, ArrayAnalysis]


def breaches(
    params: Mapping[int, LinkParams],
    loads: Loads,
    *,
    changed: Collection[int],
    candidate: PathSlice | None = None,
) -> Breaches | None:
    """None when every `changed` link admits its load and every slice with an end-to-end
    target whose bound changes (those crossing a changed link, and the `candidate`) still
    meets it; else what breaks, for `explain`.

    `params` are the locked links with their parameters as the change leaves them, and `loads`
    their slices, the changed slice included as it will be stored. Each link is analysed once,
    O(n) numpy.
    """
    return _breaches(params, loads, changed, candidate, {})


def _breaches(
    params: Mapping[int, LinkParams],
    loads: Loads,
    changed: Collection[int],
    candidate: PathSlice | None,
    analyses: dict[int, ArrayAnalysis],
) -> Breaches | None:
    """`breaches`, analysing each link once into `analyses` (which may hold some already)."""
    paths = _changed_paths(loads.paths.values(), params, changed, candidate)
    analysis = _analyser(params, loads, analyses)
    rejected = [params[link_id] for link_id in sorted(changed) if not analysis(link_id).admissible]
    missed = []
    for path in paths:
        bound = _path_bound(path, params, lambda link_id: analysis(link_id).levels)
        if not bound.meets_target:
            missed.append((path, bound))
    if not rejected and not missed:
        return None
    return Breaches(params, loads, rejected, missed, analyses)


def _analyser(
    params: Mapping[int, LinkParams], loads: Loads, analyses: dict[int, ArrayAnalysis]
) -> Callable[[int], ArrayAnalysis]:
    """A link's analysis with its slices of `loads`, computed once into `analyses`."""

    def analysis(link_id: int) -> ArrayAnalysis:
        if link_id not in analyses:
            link = params[link_id]
            load = loads.links[link_id].arrays()
            analyses[link_id] = analyze_arrays(load, link.capacity_bps, link.model, link.framing)
        return analyses[link_id]

    return analysis


def route(
    params: Mapping[int, LinkParams], loads: Loads, candidate: PathSlice
) -> tuple[PathBound, Breaches | None]:
    """A slice on a candidate path (`loads` hold it on each of its links): its end-to-end
    bound there (propagation included), and what `breaches` finds with the path's links
    changed (its own target too, if it has one)."""
    analyses: dict[int, ArrayAnalysis] = {}
    checked = candidate if candidate.target_s is not None else None
    found = _breaches(params, loads, candidate.link_ids, checked, analyses)
    analysis = _analyser(params, loads, analyses)
    bound = _path_bound(candidate, params, lambda link_id: analysis(link_id).levels)
    return bound, found


def summary(found: Breaches) -> str:
    """What `found` breaks, in one sentence, without the fixes `explain` searches (which may
    take the priority planner's budget): the links and the end-to-end targets."""
    parts = []
    if found.rejected:
        names = ", ".join(repr(link.name) for link in found.rejected)
        parts.append(f"link {names} would not keep its slices' delay bounds")
    for path, bound in found.missed:
        parts.append(f"slice {path.name!r}: {bound.reason()}")
    return "; ".join(parts)


def explain(found: Breaches, subject: str) -> Rejection:
    """The violations of `found` and the fixes: for each rejected link its minimum capacity and
    a priority plan if any; for each missed path the capacity its worst hop would need."""
    links = [_link_rejection(link, found.loads.links[link.id]) for link in found.rejected]
    links += [
        _path_rejection(path, bound, found.params, found.analyses) for path, bound in found.missed
    ]
    parts = []
    if found.rejected:
        count = sum(len(link.violations) for link in links[: len(found.rejected)])
        names = ", ".join(repr(link.name) for link in found.rejected)
        parts.append(f"{count} slice(s) outside their delay bounds on link {names}")
    if found.missed:
        names = ", ".join(repr(path.name) for path, _ in found.missed)
        parts.append(f"slice(s) {names} outside their end-to-end delay targets")
    return Rejection(f"{subject} would leave {' and '.join(parts)}", tuple(links))


def _link_rejection(link: LinkParams, load: LinkLoad) -> LinkRejection:
    verdict = admission(
        load.specs(),
        link.capacity_bps,
        model=link.model,
        levels=link.slice_levels,
        framing=link.framing,
    )
    violations = tuple(
        HopViolation(
            link.id,
            link.name,
            v.name,
            v.worst_case_delay_s,
            v.delay_target_s,
            v.excess_s,
            v.reason,
        )
        for v in verdict.violations
    )
    fixes: list[CapacityFix | PriorityPlanFix] = []
    if verdict.min_capacity_bps is not None:
        fixes.append(CapacityFix(link.id, link.name, verdict.min_capacity_bps))
    if verdict.plan is not None:
        fixes.append(PriorityPlanFix(link.id, link.name, dict(verdict.plan.priorities)))
    return LinkRejection(link.id, violations, tuple(fixes))


def _path_rejection(
    path: PathSlice,
    bound: PathBound,
    params: Mapping[int, LinkParams],
    analyses: Mapping[int, ArrayAnalysis],
) -> LinkRejection:
    """The end-to-end violation of `path`, and the capacity its worst hop would need."""
    worst = bound.worst_hop
    assert worst is not None  # a path crosses at least one link
    link = params[worst.link_id]
    capacity = path_capacity_fix(
        bound, analyses[link.id].aggregates, path.priority, link.model, link.framing
    )
    fixes = () if capacity is None else (CapacityFix(link.id, link.name, capacity, path.name),)
    violation = PathViolation(link.id, link.name, path.id, path.name, bound)
    return LinkRejection(link.id, (violation,), fixes)
