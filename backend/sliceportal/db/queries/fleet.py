"""What the fleet holds, per switch and per link, for Prometheus (`telemetry.exposition`):
capacities, the rates reserved by the stored slices, and the names of the slices counted,
each in one statement. The reserved rates come from `link_level_loads` (the rows admission
reads, kept by triggers), so a scrape reads at most eight rows per link, never the slices
themselves."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.orm import Session


@dataclass(frozen=True)
class LinkLoadRow:
    link_id: int
    link: str
    switch_id: int
    switch: str
    capacity_bps: float
    reserved_bps: float
    slices: int


@dataclass(frozen=True)
class SwitchRow:
    switch_id: int
    switch: str
    slices: int
    """Slices holding a DP_SID on the switch (each counted once, whatever its links)."""


@dataclass(frozen=True)
class SliceName:
    slice_id: int
    name: str


_LINKS = sa.text(
    """
SELECT links.id, links.name, switches.id, switches.name, links.capacity_bps,
       coalesce(sum(loads.rate_bps), 0), coalesce(sum(loads.slice_count), 0)
FROM links
JOIN switches ON switches.id = links.switch_id
LEFT JOIN link_level_loads loads ON loads.link_id = links.id
GROUP BY links.id, switches.id
ORDER BY links.id
"""
)
_SWITCHES = sa.text(
    """
SELECT switches.id, switches.name,
       (SELECT count(*) FROM slice_switches held WHERE held.switch_id = switches.id)
FROM switches
ORDER BY switches.id
"""
)
_SLICES = sa.text("SELECT id, name FROM slices WHERE id = ANY(:ids) ORDER BY id")


def link_loads(session: Session) -> list[LinkLoadRow]:
    return [
        LinkLoadRow(r[0], r[1], r[2], r[3], float(r[4]), float(r[5]), int(r[6]))
        for r in session.execute(_LINKS)
    ]


def switch_rows(session: Session) -> list[SwitchRow]:
    return [SwitchRow(r[0], r[1], int(r[2])) for r in session.execute(_SWITCHES)]


def slice_names(session: Session, slice_ids: Collection[int]) -> list[SliceName]:
    """The names of those of ``slice_ids`` still stored (the slices a scrape counted)."""
    return [SliceName(r[0], r[1]) for r in session.execute(_SLICES, {"ids": list(slice_ids)})]
