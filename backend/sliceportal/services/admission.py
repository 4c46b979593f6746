"""Admission of the slices stored on links, through the pure analytics in `sliceportal.domain`.

Callers hold the link rows locked (FOR UPDATE) while they check and write, so two requests can
never both admit slices that only fit one at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import psycopg
from sqlalchemy.orm import Session

from sliceportal.db.models import Link
from sliceportal.domain import Model, SliceArrays, SliceSpec, admission, analyze_arrays
from sliceportal.domain.bounds import FloatArray
from sliceportal.domain.formatting import format_rate
from sliceportal.services.errors import AdmissionRejectedError, ConflictError


@dataclass(frozen=True)
class LinkParams:
    """What admission needs of a link: stored, or as a pending update would leave it."""

    id: int
    name: str
    capacity_bps: float
    model: Model
    queue_count: int
    mtu_bytes: int

    @classmethod
    def of(cls, link: Link) -> LinkParams:
        return cls(
            link.id, link.name, link.capacity_bps, link.model, link.queue_count, link.mtu_bytes
        )


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


_LOADS_QUERY = """
SELECT slice_links.link_id, slices.name, slices.rate_bps, slices.priority, slices.burst_limit_s,
       slices.delay_target_s, COALESCE(slices.max_packet_bytes, 0)
FROM slice_links JOIN slices ON slices.id = slice_links.slice_id
WHERE slice_links.link_id = ANY(%s) AND slices.id <> %s
"""
"""Plain SQL on a binary cursor: this runs under the link locks on every admission and reads
every slice of the link, and binary rows parse several times faster than text ones."""


def stored_loads(
    session: Session, links: Iterable[LinkParams], *, exclude_slice_id: int | None = None
) -> dict[int, LinkLoad]:
    """The stored slices of each link (but `exclude_slice_id`), one query for all links."""
    mtu = {link.id: link.mtu_bytes for link in links}
    connection = cast(psycopg.Connection[Any], session.connection().connection.driver_connection)
    with connection.cursor(binary=True) as cursor:
        cursor.execute(_LOADS_QUERY, (list(mtu), exclude_slice_id or 0))
        rows = cursor.fetchall()
    loads = {link_id: LinkLoad.empty() for link_id in mtu}
    for link_id in mtu:
        mine = [row for row in rows if row[0] == link_id] if len(mtu) > 1 else rows
        if not mine:
            continue
        rate, priority, limit, target, packet = np.array(
            [row[2:] for row in mine], dtype=np.float64
        ).T
        columns = (
            rate,
            priority,
            rate * limit / 8.0,  # SliceSpec's burst, to the bit
            target,
            np.where(packet > 0, packet, mtu[link_id]),  # the link MTU by default
        )
        loads[link_id] = LinkLoad([row[1] for row in mine], np.column_stack(columns))
    return loads


def fits(link: LinkParams, load: LinkLoad) -> bool:
    """The admission verdict alone, vectorised: O(n) numpy, no per-slice objects."""
    return analyze_arrays(load.arrays(), link.capacity_bps, link.model).admissible


def check_queues(link: LinkParams, load: LinkLoad, field: str) -> None:
    """A link with n queues carries at most n distinct priority levels.

    Only the order of the levels matters to the bounds, and the priority planner plans on the
    top n levels; the workers write priorities to the data plane unchanged.
    """
    levels = sorted(load.priorities, reverse=True)
    if len(levels) > link.queue_count:
        raise ConflictError(
            f"link {link.name!r} has {link.queue_count} queues but its slices would use "
            f"{len(levels)} priority levels ({', '.join(map(str, levels))})",
            field=field,
        )


def _rejection(link: LinkParams, load: LinkLoad) -> dict[str, Any]:
    """The violations on `link` and the fixes: minimum capacity, and a priority plan if any."""
    verdict = admission(load.specs(), link.capacity_bps, model=link.model, levels=link.queue_count)
    violations = [
        {
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


def check_links(
    session: Session,
    subject: str,
    links: Sequence[LinkParams],
    loads: dict[int, LinkLoad],
) -> None:
    """Raise AdmissionRejectedError unless every link admits its `loads`.

    The verdict is one O(n) analysis per link under the locks. On a rejection the transaction
    is rolled back (releasing the locks) before the fixes are searched, since priority
    planning may take up to its time budget.
    """
    rejected = [link for link in links if not fits(link, loads[link.id])]
    if not rejected:
        return
    session.rollback()
    found = [_rejection(link, loads[link.id]) for link in rejected]
    count = sum(len(link["violations"]) for link in found)
    names = ", ".join(repr(link.name) for link in rejected)
    raise AdmissionRejectedError(
        f"{subject} would leave {count} slice(s) outside their delay bounds on link {names}",
        found,
    )
