"""Admission of the slices stored on links, through the pure analytics in `sliceportal.domain`.

Callers hold the link rows locked (FOR UPDATE) while they check and write, so two requests can
never both admit slices that only fit one at a time. A slice with an end-to-end target is
checked on its whole path, so its bound depends on links the change does not touch: those are
locked too (`lock_links`), or two changes on two of its links could each fit alone and
together miss the target.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from sqlalchemy.orm import Session

from sliceportal.db.models import Link
from sliceportal.domain import (
    ArrayAnalysis,
    LevelBounds,
    Model,
    SliceArrays,
    SliceSpec,
    admission,
    analyze_arrays,
    evaluate_levels,
)
from sliceportal.domain.bounds import FloatArray
from sliceportal.domain.endtoend import Hop, PathBound, hop_bound, path_bound
from sliceportal.domain.formatting import format_rate
from sliceportal.domain.levelloads import LevelLoad, upper_aggregates
from sliceportal.domain.pathcapacity import path_capacity_fix
from sliceportal.domain.spec import LinkShape, max_frame_bytes
from sliceportal.services import crud
from sliceportal.services.errors import AdmissionRejectedError, ConflictError

T = TypeVar("T")
RETRIES = 3
"""A change whose lock set grew under it (see `PathsMoved`) is retried this many times."""


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

    @classmethod
    def of(cls, link: Link) -> LinkParams:
        return cls(
            link.id,
            link.name,
            link.capacity_bps,
            link.model,
            link.queue_count,
            link.mtu_bytes,
            link.frame_overhead_bytes,
        )

    @property
    def max_frame_bytes(self) -> int:
        """The max packet of a slice that gives none: the link's largest frame."""
        return max_frame_bytes(self.mtu_bytes)


@dataclass
class LinkLoad:
    """The slices on one link as columns, the analytics' input.

    Read with one query and never turned into per-slice objects on the admission path: stored
    rows were validated when admitted, and thousands are read per request.
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
    """A slice with an end-to-end target: what its path check needs besides the link loads."""

    id: int
    name: str
    priority: int
    target_s: float
    link_ids: tuple[int, ...]
    """Every link it crosses (ascending id), read or not."""


@dataclass
class Loads:
    """The slices of some links, and those of them with an end-to-end target (by id)."""

    links: dict[int, LinkLoad]
    paths: dict[int, PathSlice]


_LOADS_QUERY = """
SELECT slice_links.link_id, slices.name, slices.rate_bps, slices.priority, slices.burst_limit_s,
       slices.delay_target_s, COALESCE(slices.max_packet_bytes, 0), slices.id,
       slices.e2e_delay_target_s,
       CASE WHEN slices.e2e_delay_target_s IS NOT NULL THEN ARRAY(
           SELECT path.link_id FROM slice_links path
           WHERE path.slice_id = slices.id ORDER BY path.link_id) END
FROM slice_links JOIN slices ON slices.id = slice_links.slice_id
WHERE slice_links.link_id = ANY(%s) AND slices.id <> %s
"""
"""Plain SQL on a binary cursor: this runs under the link locks on every admission and reads
every slice of the links, and binary rows parse several times faster than text ones. A slice
with an end-to-end target brings its whole path, so the caller can check that it locked it."""


def read_loads(
    session: Session, links: Iterable[LinkParams], *, exclude_slice_id: int | None = None
) -> Loads:
    """The stored slices of each link (but `exclude_slice_id`), one query for all links."""
    frame = {link.id: link.max_frame_bytes for link in links}
    with crud.driver(session).cursor(binary=True) as cursor:
        cursor.execute(_LOADS_QUERY, (list(frame), exclude_slice_id or 0))
        rows = cursor.fetchall()
    by_link: dict[int, list[Any]] = {}
    paths: dict[int, PathSlice] = {}
    for row in rows:
        by_link.setdefault(row[0], []).append(row)
        if row[8] is not None and row[7] not in paths:
            paths[row[7]] = PathSlice(row[7], row[1], row[3], row[8], tuple(row[9]))
    loads = {link_id: LinkLoad.empty() for link_id in frame}
    for link_id, mine in by_link.items():
        rate, priority, limit, target, packet = np.array(
            [row[2:7] for row in mine], dtype=np.float64
        ).T
        columns = (
            rate,
            priority,
            rate * limit / 8.0,  # SliceSpec's burst, to the bit
            target,
            np.where(packet > 0, packet, frame[link_id]),  # the link's largest frame by default
        )
        loads[link_id] = LinkLoad([row[1] for row in mine], np.column_stack(columns))
    return Loads(loads, paths)


def stored_loads(
    session: Session, links: Iterable[LinkParams], *, exclude_slice_id: int | None = None
) -> dict[int, LinkLoad]:
    """The stored slices of each link (but `exclude_slice_id`), one query for all links."""
    return read_loads(session, links, exclude_slice_id=exclude_slice_id).links


class PathsMoved(ConflictError):
    """A slice with an end-to-end target crossing the changed links crosses a link the caller
    did not lock: a concurrent change moved it between reading the paths and locking them."""

    def __init__(self) -> None:
        super().__init__("a concurrent change moved a slice with an end-to-end target; try again")


def retrying(session: Session, attempt: Callable[[], T]) -> T:
    """`attempt()`, run again in a fresh transaction while it raises PathsMoved.

    Every attempt takes its locks from nothing in ascending order, so retrying cannot
    deadlock; a path keeps moving only under a stream of concurrent re-routes, and then the
    last PathsMoved reaches the caller as a 409 conflict.
    """
    for _ in range(RETRIES):
        try:
            return attempt()
        except PathsMoved:
            session.rollback()
    return attempt()


@dataclass(frozen=True)
class LockedLink:
    """A link locked for admission: its parameters and its switch (for the slice rows)."""

    params: LinkParams
    switch_id: int


_LOCKED_SET = """
id = ANY(%(links)s) OR id IN (
    SELECT path.link_id
    FROM slice_links here JOIN slice_links path ON path.slice_id = here.slice_id
    WHERE here.link_id = ANY(%(changed)s) AND here.has_e2e_target)
"""
"""The links a change of `changed` (and of `links`) locks: them, and the paths of the slices
with an end-to-end target crossing `changed`. Those slices are found on the link rows
(`has_e2e_target`, a partial index: migration 0007), never by reading the links' slices."""
_LOCK_LINKS = f"""
SELECT id, name, capacity_bps, model, queue_count, mtu_bytes, frame_overhead_bytes, switch_id
FROM links
WHERE {_LOCKED_SET}
ORDER BY id
FOR UPDATE OF links
"""


_LEVEL_LOADS_QUERY = f"""
SELECT link_id, priority, slice_count, rate_bps, burst_bytes, min_delay_target_s,
       max_packet_bytes, default_packet_count
FROM link_level_loads WHERE link_id IN (SELECT id FROM links WHERE {_LOCKED_SET})
"""
_CROSSING_PATHS_QUERY = """
SELECT slices.id, slices.name, slices.priority, slices.e2e_delay_target_s, ARRAY(
           SELECT path.link_id FROM slice_links path
           WHERE path.slice_id = slices.id ORDER BY path.link_id)
FROM slices
WHERE slices.id <> %(slice)s AND slices.id IN (
    SELECT here.slice_id FROM slice_links here
    WHERE here.link_id = ANY(%(changed)s) AND here.has_e2e_target)
"""
"""The slices with an end-to-end target crossing some links, found as `_LOCKED_SET` finds
them."""


@dataclass(frozen=True)
class StoredLevels:
    """The level rows (`link_level_loads`) of the links a change locks, by link, and the
    slices with an end-to-end target crossing the changed links."""

    rows: dict[int, list[LevelLoad]]
    paths: list[PathSlice]


class LinkLocks:
    """`link_ids` and the paths of the slices with an end-to-end target crossing `changed`,
    locked FOR UPDATE in ascending id by one statement, sent now (into the caller's pipeline,
    if any) and fetched by `links()`; then the reads of `StoredLevels` for a change of slice
    `slice_id` (0: a slice not stored yet), in the same round trip, fetched by `stored()`.

    The paths are read in the same statement but before its locks are granted, so `admit`
    checks them again under the locks and raises PathsMoved if one left the locked set.
    """

    def __init__(
        self,
        stack: ExitStack,
        session: Session,
        link_ids: Collection[int],
        *,
        changed: Collection[int],
        slice_id: int = 0,
    ) -> None:
        connection = crud.driver(session)
        query = {"links": list(link_ids), "changed": list(changed), "slice": slice_id}
        self._locking, self._levels, self._paths = (
            stack.enter_context(connection.cursor(binary=True)) for _ in range(3)
        )
        self._locking.execute(_LOCK_LINKS, query)
        self._levels.execute(_LEVEL_LOADS_QUERY, query)
        self._paths.execute(_CROSSING_PATHS_QUERY, query)

    def links(self) -> dict[int, LockedLink]:
        return _locked_links(self._locking.fetchall())

    def stored(self) -> StoredLevels:
        rows: dict[int, list[LevelLoad]] = {}
        for link_id, *level in self._levels.fetchall():
            rows.setdefault(link_id, []).append(LevelLoad(*level))
        paths = self._paths.fetchall()
        return StoredLevels(
            rows, [PathSlice(row[0], row[1], row[2], row[3], tuple(row[4])) for row in paths]
        )


def _locked_links(rows: Iterable[Any]) -> dict[int, LockedLink]:
    """The rows `_LOCK_LINKS` returns, by link id."""
    return {
        row[0]: LockedLink(
            LinkParams(row[0], row[1], row[2], Model(row[3]), row[4], row[5], row[6]), row[7]
        )
        for row in rows
    }


def lock_links(
    session: Session, link_ids: Collection[int], *, changed: Collection[int]
) -> dict[int, LockedLink]:
    """Lock `link_ids` and the paths crossing `changed` now, as `LinkLocks` does, for the
    callers that do not admit a slice (link updates, deletions): without its level reads."""
    with crud.driver(session).cursor(binary=True) as cursor:
        cursor.execute(_LOCK_LINKS, {"links": list(link_ids), "changed": list(changed)})
        return _locked_links(cursor.fetchall())


def check_queues(link: LinkParams, load: LinkLoad, field: str) -> None:
    """A link with n queues carries at most n - 1 distinct slice priority levels: best effort
    (priority 0) keeps a queue of its own.

    Only the order of the levels matters to the bounds, and the priority planner plans on the
    top n - 1 levels; the workers write priorities to the data plane unchanged.
    """
    levels = sorted(load.priorities, reverse=True)
    if len(levels) > link.slice_levels:
        raise ConflictError(
            f"link {link.name!r} has {link.queue_count} queues, one of them best effort's, but "
            f"its slices would use {len(levels)} priority levels ({', '.join(map(str, levels))})",
            field=field,
        )


def _rejection(link: LinkParams, load: LinkLoad) -> dict[str, Any]:
    """The violations on `link` and the fixes: minimum capacity, and a priority plan if any."""
    verdict = admission(
        load.specs(),
        link.capacity_bps,
        model=link.model,
        levels=link.slice_levels,
        framing=link.framing,
    )
    violations = [
        {
            "kind": "per-hop",
            "link_id": link.id,
            "link": link.name,
            "slice": v.name,
            "bound_s": v.worst_case_delay_s,
            "target_s": v.delay_target_s,
            "excess_s": v.excess_s,
            "reason": v.reason,
        }
        for v in verdict.violations
    ]
    fixes: list[dict[str, Any]] = []
    if verdict.min_capacity_bps is not None:
        fixes.append(
            {
                "link_id": link.id,
                "kind": "capacity",
                "capacity_bps": verdict.min_capacity_bps,
                "detail": f"raise the capacity of link {link.name!r} to at least "
                f"{format_rate(verdict.min_capacity_bps)}",
            }
        )
    if verdict.plan is not None:
        fixes.append(
            {
                "link_id": link.id,
                "kind": "priority-plan",
                "priorities": dict(verdict.plan.priorities),
                "detail": f"give the slices on link {link.name!r} these priorities",
            }
        )
    return {"link_id": link.id, "violations": violations, "fixes": fixes}


def _changed_paths(
    loads_paths: Iterable[PathSlice],
    params: Mapping[int, LinkParams],
    changed: Collection[int],
    candidate: PathSlice | None,
) -> list[PathSlice]:
    """The slices with an end-to-end target whose bound a change of `changed` moves, and the
    `candidate`; PathsMoved if one of them crosses a link that is not locked."""
    paths = [path for path in loads_paths if not set(path.link_ids).isdisjoint(changed)]
    if candidate is not None:
        paths.append(candidate)
    if any(not params.keys() >= set(path.link_ids) for path in paths):
        raise PathsMoved()
    return paths


def _path_bound(
    path: PathSlice, params: Mapping[int, LinkParams], levels: Callable[[int], LevelBounds]
) -> PathBound:
    hops = (
        Hop(link_id, params[link_id].name, hop_bound(levels(link_id), path.priority))
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
    `admit` checks; False when they do not prove it (then run `admit` on the full loads).

    O(levels) per link, whatever the number of slices on it, instead of reading them all.
    `levelloads` explains why a True here is always `admit`'s answer too.
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


def admit(
    session: Session,
    subject: str,
    params: Mapping[int, LinkParams],
    loads: Loads,
    *,
    changed: Collection[int],
    candidate: PathSlice | None = None,
) -> None:
    """Raise AdmissionRejectedError unless every `changed` link admits its load and every slice
    with an end-to-end target whose bound changes (those crossing a changed link, and the
    `candidate`) still meets it.

    `params` are the locked links with their parameters as the change leaves them, and `loads`
    their slices (`read_loads`), the changed slice included as it will be stored. Each link is
    analysed once, O(n) numpy. On a rejection the transaction is rolled back (releasing the
    locks) before the fixes are searched, since priority planning may take up to its budget.
    """
    paths = _changed_paths(loads.paths.values(), params, changed, candidate)
    analyses: dict[int, ArrayAnalysis] = {}

    def analysis(link_id: int) -> ArrayAnalysis:
        if link_id not in analyses:
            link = params[link_id]
            load = loads.links[link_id].arrays()
            analyses[link_id] = analyze_arrays(load, link.capacity_bps, link.model, link.framing)
        return analyses[link_id]

    rejected = [params[link_id] for link_id in sorted(changed) if not analysis(link_id).admissible]
    missed = []
    for path in paths:
        bound = _path_bound(path, params, lambda link_id: analysis(link_id).levels)
        if not bound.meets_target:
            missed.append((path, bound))
    if not rejected and not missed:
        return
    session.rollback()
    found = [_rejection(link, loads.links[link.id]) for link in rejected]
    found += [_path_rejection(path, bound, params, analyses) for path, bound in missed]
    parts = []
    if rejected:
        count = sum(len(link["violations"]) for link in found[: len(rejected)])
        names = ", ".join(repr(link.name) for link in rejected)
        parts.append(f"{count} slice(s) outside their delay bounds on link {names}")
    if missed:
        names = ", ".join(repr(path.name) for path, _ in missed)
        parts.append(f"slice(s) {names} outside their end-to-end delay targets")
    raise AdmissionRejectedError(f"{subject} would leave {' and '.join(parts)}", found)


def _path_rejection(
    path: PathSlice,
    bound: PathBound,
    params: Mapping[int, LinkParams],
    analyses: Mapping[int, ArrayAnalysis],
) -> dict[str, Any]:
    """The end-to-end violation of `path`, and the capacity its worst hop would need."""
    worst = bound.worst_hop
    assert worst is not None  # a path crosses at least one link
    link = params[worst.link_id]
    violation = {
        "kind": "end-to-end",
        "link_id": link.id,
        "link": link.name,
        "slice_id": path.id,
        "slice": path.name,
        "bound_s": bound.total_s,
        "target_s": bound.target_s,
        "excess_s": None if bound.slack_s is None else -bound.slack_s,
        "reason": bound.reason(),
        "path": bound.to_dict(),
    }
    fixes: list[dict[str, Any]] = []
    capacity = path_capacity_fix(
        bound, analyses[link.id].aggregates, path.priority, link.model, link.framing
    )
    if capacity is not None:
        fixes.append(
            {
                "link_id": link.id,
                "kind": "capacity",
                "slice": path.name,
                "capacity_bps": capacity,
                "detail": f"raise the capacity of link {link.name!r} to at least "
                f"{format_rate(capacity)} so that slice {path.name!r} meets its end-to-end "
                "target",
            }
        )
    return {"link_id": link.id, "violations": [violation], "fixes": fixes}
