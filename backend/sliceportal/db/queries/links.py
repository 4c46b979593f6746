"""What admission reads and locks of links: their parameters (locked FOR UPDATE), their slices
as columns, their stored per-level sums, and the slices with an end-to-end target crossing
them. Answers `domain.admission` types.

The one database-side guard of admission lives here, beside the reads that need it: the level
rows (`LEVEL_LOADS`, table `link_level_loads`) are kept by statement triggers (migration 0006),
so a change of a slice reads at most eight rows per link instead of every slice on it. Adding
slices to a link adds to its rows; removing a slice from a link, or changing what the bounds
read of a slice (rate, burst limit, target, priority, packet), recomputes the rows of the links
concerned from their slices, so the sums never drift through subtractions. They are triggers
rather than application code because every path that changes `slice_links` or those columns
(the services, the cascades of a slice deletion, migrations) must keep them, and a trigger
cannot be forgotten. Every such change holds its links' locks (`lock_links`, `LinkLocks`), so
the rows of a link are never written concurrently, and a reader under the same locks sees them
settled. The sums are plain float sums in arrival order; `domain.admission.levels` widens them
by their error bound before certifying anything.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from sliceportal.db.models import Link
from sliceportal.db.session import driver
from sliceportal.domain.admission import (
    LevelLoad,
    LinkLoad,
    LinkParams,
    Loads,
    PathSlice,
    StoredLevels,
)
from sliceportal.domain.paths import PortLink
from sliceportal.domain.spec import Model


def link_params(link: Link, propagation_s: float = 0.0) -> LinkParams:
    return LinkParams(
        link.id,
        link.name,
        link.capacity_bps,
        link.model,
        link.queue_count,
        link.mtu_bytes,
        link.frame_overhead_bytes,
        propagation_s,
    )


_LOADS = """
SELECT slice_links.link_id, slices.name, slices.rate_bps, slices.priority, slices.burst_limit_s,
       slices.delay_target_s, COALESCE(slices.max_packet_bytes, 0), slices.id,
       slices.e2e_delay_target_s,
       CASE WHEN slices.e2e_delay_target_s IS NOT NULL THEN ARRAY(
           SELECT path.link_id FROM slice_links path
           WHERE path.slice_id = slices.id ORDER BY path.position, path.link_id) END
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
    with driver(session).cursor(binary=True) as cursor:
        cursor.execute(_LOADS, (list(frame), exclude_slice_id or 0))
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


_LOCKED_SET = """
id = ANY(%(links)s) OR id IN (
    SELECT path.link_id
    FROM slice_links here JOIN slice_links path ON path.slice_id = here.slice_id
    WHERE here.link_id = ANY(%(changed)s) AND here.has_e2e_target)
"""
"""The links a change of `changed` (and of `links`) locks: them, and the paths of the slices
with an end-to-end target crossing `changed`. Those slices are found on the link rows
(`has_e2e_target`, a partial index: migration 0007), never by reading the links' slices."""
LINK_COLUMNS = """
id, name, capacity_bps, model, queue_count, mtu_bytes, frame_overhead_bytes, switch_id
"""
"""What admission needs of a link (`LinkParams`) and its switch (for the slice rows)."""
LOCK_LINKS = f"""
SELECT {LINK_COLUMNS}
FROM links
WHERE {_LOCKED_SET}
ORDER BY id
FOR UPDATE OF links
"""
_WIRING_OF = """
SELECT links.id, COALESCE(cables.propagation_s, 0), far.switch_id
FROM links
LEFT JOIN cables ON cables.id = links.cable_id
LEFT JOIN links far ON far.cable_id = links.cable_id AND far.id <> links.id
WHERE links.id IN (SELECT id FROM links WHERE {where})
"""
WIRING = _WIRING_OF.format(where=_LOCKED_SET)
"""What paths need of the links `LOCK_LINKS` locks: their cable's propagation delay and the
switch it reaches. A statement of its own, sent after the locks: under READ COMMITTED it reads
a snapshot taken once they are granted, so it sees what a cable change committed before them
(a change of a cable, its ends or its propagation, holds its ends' locks: `services.cables`).
Read in the locking statement, it would see the snapshot from before the wait."""
LEVEL_LOADS = f"""
SELECT link_id, priority, slice_count, rate_bps, burst_bytes, min_delay_target_s,
       max_packet_bytes, default_packet_count
FROM link_level_loads WHERE link_id IN (SELECT id FROM links WHERE {_LOCKED_SET})
"""
CROSSING_PATHS = """
SELECT slices.id, slices.name, slices.priority, slices.e2e_delay_target_s, ARRAY(
           SELECT path.link_id FROM slice_links path
           WHERE path.slice_id = slices.id ORDER BY path.position, path.link_id)
FROM slices
WHERE slices.id <> %(slice)s AND slices.id IN (
    SELECT here.slice_id FROM slice_links here
    WHERE here.link_id = ANY(%(changed)s) AND here.has_e2e_target)
"""
"""The slices with an end-to-end target crossing some links, found as `_LOCKED_SET` finds
them."""


@dataclass(frozen=True)
class LockedLink:
    """A link locked for admission: its parameters, its switch (for the slice rows) and the
    switch its cable reaches (None: no cable's end), what a path through it needs."""

    params: LinkParams
    switch_id: int
    far_switch_id: int | None = None

    @property
    def port(self) -> PortLink:
        return PortLink(self.params.id, self.params.name, self.switch_id, self.far_switch_id)


class LinkLocks:
    """`link_ids` and the paths of the slices with an end-to-end target crossing `changed`,
    locked FOR UPDATE in ascending id by one statement, sent now (into the caller's pipeline,
    if any) and fetched by `links()`; then the reads of `StoredLevels` for a change of slice
    `slice_id` (0: a slice not stored yet), in the same round trip, fetched by `stored()`.

    The paths are read in the same statement but before its locks are granted, so admission
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
        connection = driver(session)
        query = {"links": list(link_ids), "changed": list(changed), "slice": slice_id}
        self._locking, self._wiring, self._levels, self._paths = (
            stack.enter_context(connection.cursor(binary=True)) for _ in range(4)
        )
        self._locking.execute(LOCK_LINKS, query)
        self._wiring.execute(WIRING, query)
        self._levels.execute(LEVEL_LOADS, query)
        self._paths.execute(CROSSING_PATHS, query)

    def links(self) -> dict[int, LockedLink]:
        return _wired_links(self._locking.fetchall(), self._wiring.fetchall())

    def stored(self) -> StoredLevels:
        rows: dict[int, list[LevelLoad]] = {}
        for link_id, *level in self._levels.fetchall():
            rows.setdefault(link_id, []).append(LevelLoad(*level))
        paths = self._paths.fetchall()
        return StoredLevels(
            rows, [PathSlice(row[0], row[1], row[2], row[3], tuple(row[4])) for row in paths]
        )


def _wired_links(rows: Iterable[Any], wiring: Iterable[Any]) -> dict[int, LockedLink]:
    """The rows `LOCK_LINKS` returns, with their `WIRING`, by link id."""
    wired = {link_id: (propagation, far) for link_id, propagation, far in wiring}
    links = {}
    for link_id, name, capacity, model, queues, mtu, overhead, switch_id in rows:
        propagation, far = wired.get(link_id, (0.0, None))
        params = LinkParams(link_id, name, capacity, Model(model), queues, mtu, overhead)
        links[link_id] = LockedLink(replace(params, propagation_s=propagation), switch_id, far)
    return links


_PORTS = """
SELECT id, name, switch_id,
       (SELECT far.switch_id FROM links far WHERE far.cable_id = links.cable_id
                                              AND far.id <> links.id)
FROM links
"""
"""Every link as paths see it (`domain.paths.PortLink`): its switch and its cable's far one."""
_READ_LINKS = f"SELECT {LINK_COLUMNS} FROM links WHERE id = ANY(%(links)s)"
_READ_WIRING = _WIRING_OF.format(where="id = ANY(%(links)s)")


def read_ports(session: Session) -> dict[int, PortLink]:
    """Every link as paths see it (a network has hundreds to thousands: one query)."""
    with driver(session).cursor(binary=True) as cursor:
        cursor.execute(_PORTS)
        return {row[0]: PortLink(*row) for row in cursor.fetchall()}


def read_links(session: Session, link_ids: Collection[int]) -> dict[int, LockedLink]:
    """`link_ids` as `lock_links` reads them, without locking them (for advice: proposals)."""
    connection = driver(session)
    query = {"links": list(link_ids)}
    with connection.pipeline(), connection.cursor(binary=True) as reading:
        with connection.cursor(binary=True) as wiring:
            reading.execute(_READ_LINKS, query)
            wiring.execute(_READ_WIRING, query)
            return _wired_links(reading.fetchall(), wiring.fetchall())


def lock_links(
    session: Session, link_ids: Collection[int], *, changed: Collection[int]
) -> dict[int, LockedLink]:
    """Lock `link_ids` and the paths crossing `changed` now, as `LinkLocks` does, for the
    callers that do not admit a slice (link updates, deletions): without its level reads."""
    connection = driver(session)
    query = {"links": list(link_ids), "changed": list(changed)}
    with connection.pipeline(), connection.cursor(binary=True) as locking:
        with connection.cursor(binary=True) as wiring:
            locking.execute(LOCK_LINKS, query)
            wiring.execute(WIRING, query)
            return _wired_links(locking.fetchall(), wiring.fetchall())
