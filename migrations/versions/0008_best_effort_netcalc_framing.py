"""Best effort keeps priority 0 and one queue; netcalc is the default bound; links say what their
capacity counts (`links.frame_overhead_bytes`).

- `links.frame_overhead_bytes` (0 to 64, default 0): bytes a frame costs on the wire beyond
  what the data plane counts. 0: the capacity counts frame bytes as the data plane does; 24:
  the capacity is the line rate (preamble, FCS, inter-frame gap). See `domain.spec.Framing`.
- Links have 2 to 8 queues (best effort keeps one): a link with 1 gets 2.
- Slices use priorities 1 to 7 (0 is unclassified, unpoliced best effort's): a slice at 0
  moves to 1, becomes pending, and its switches are reconciled once this commits (outbox rows,
  as every change of a slice asks): the workers read the desired state from the slices, so the
  next reconciliation writes the new priority to the switches. The level sums of its links
  (`link_level_loads`, migration 0006) are recomputed.
- `links.model` defaults to netcalc, the sound bound; every harkous link moves to netcalc. A
  link whose slices no longer fit under netcalc is changed in nothing else (its slices stay
  deployed): its change-log entry lists them under `after.no_longer_fit` (with the capacity
  netcalc would need, `after.min_capacity_bps`), and the migration logs them as warnings.

Every change gets a change-log entry (request id `migration-0008`, no user) with the changed
fields before and after. Downgrade restores the columns, defaults and constraints, not the data.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 10:00:00
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

REQUEST_ID = "migration-0008"
RECONCILE_SWITCH = "sliceportal.controlplane.tasks.reconcile_switch"
"""`controlplane.outbox.RECONCILE_SWITCH`, as of this migration."""

logger = logging.getLogger("sliceportal.migrations")

_LOG = """
INSERT INTO change_log (user_id, request_id, action, entity_type, entity_id, entity_name,
                        before, after)
"""

_QUEUES = f"""
WITH moved AS (
    UPDATE links SET queue_count = 2, updated_at = now() WHERE queue_count < 2
    RETURNING id, name
)
{_LOG}
SELECT NULL, '{REQUEST_ID}', 'update', 'link', id, name,
       jsonb_build_object('queue_count', 1), jsonb_build_object('queue_count', 2)
FROM moved ORDER BY id
"""

_PRIORITIES = f"""
WITH old AS (
    SELECT id, state FROM slices WHERE priority = 0 FOR UPDATE
), moved AS (
    UPDATE slices SET priority = 1, state = 'pending', updated_at = now()
    FROM old WHERE slices.id = old.id
    RETURNING slices.id, slices.name, old.state AS old_state
), logged AS (
    {_LOG}
    SELECT NULL, '{REQUEST_ID}', 'update', 'slice', id, name,
           jsonb_build_object('priority', 0, 'state', old_state),
           jsonb_build_object('priority', 1, 'state', 'pending')
    FROM moved ORDER BY id
), reconciled AS (
    INSERT INTO outbox (task, args)
    SELECT '{RECONCILE_SWITCH}', jsonb_build_array(switch_id)
    FROM (SELECT DISTINCT switch_id FROM slice_switches
          WHERE slice_id IN (SELECT id FROM moved)) AS crossed
    ORDER BY switch_id
)
SELECT DISTINCT link_id FROM slice_links WHERE slice_id IN (SELECT id FROM moved)
"""
"""Move the slices at priority 0 to 1, log each, reconcile their switches; their links."""

_HARKOUS_LINKS = """
SELECT id, name, capacity_bps, mtu_bytes, frame_overhead_bytes, queue_count
FROM links WHERE model = 'harkous' ORDER BY id FOR UPDATE
"""
_SLICES_OF = """
SELECT slices.id, slices.name, slices.rate_bps, slices.priority, slices.burst_limit_s,
       slices.delay_target_s, slices.max_packet_bytes
FROM slice_links JOIN slices ON slices.id = slice_links.slice_id
WHERE slice_links.link_id = :link ORDER BY slices.id
"""
_TO_NETCALC = f"""
WITH moved AS (
    UPDATE links SET model = 'netcalc', updated_at = now() WHERE id = :link RETURNING id, name
)
{_LOG}
SELECT NULL, '{REQUEST_ID}', 'update', 'link', id, name,
       jsonb_build_object('model', 'harkous'), CAST(:after AS jsonb)
FROM moved
"""


# The netcalc analysis as `sliceportal.domain` computed it when this migration was written,
# frozen here: a migration must do tomorrow what it did the day it shipped, whatever the live
# analytics become. Strict priority, non-preemptive: a level-p slice waits at most
# 8·(Σ_{i≥p} b'_i + M_p) / (C - Σ_{i>p} L'_i), with b' = (burst + L·τ/8)·s, L' = L·s,
# s = 1 + overhead/60, τ = 1 µs, and M_p the largest frame below p (best effort's included),
# plus the overhead. Unbounded (a violation) when the rates at and above p exceed C. The
# table constraints of 0001-0007 guarantee the rows are valid slices, so nothing is checked.
_LEVELS = 8
_TICK_S = 1e-6
_MIN_FRAME_BYTES = 60
_HEADERS_BYTES = 18  # Ethernet header and one VLAN tag on top of the IP MTU
_MAX_RATE_BPS = 1e15


class _Slice(NamedTuple):
    id: int
    name: str
    rate_bps: float
    priority: int
    burst_bytes: float
    target_s: float
    packet_bytes: int


class _Levels(NamedTuple):
    """The sound (charged) per-level aggregates of a link's slices."""

    rate: list[float]
    burst: list[float]
    sizes: list[int]
    """Slices per level."""
    target: list[float]
    below: list[float]
    """The largest frame below each level, overhead included."""


def _aggregate(slices: Sequence[_Slice], frame_bytes: int, overhead: int) -> _Levels:
    scale = 1.0 + overhead / _MIN_FRAME_BYTES
    rate, burst, target = [], [], []
    count = [0] * _LEVELS
    packet = [0] * _LEVELS
    for k in range(_LEVELS):
        mine = [s for s in slices if s.priority == k]
        count[k] = len(mine)
        level_rate = math.fsum(s.rate_bps for s in mine)
        rate.append(scale * level_rate)
        level_burst = math.fsum(s.burst_bytes for s in mine)
        burst.append(scale * (level_burst + level_rate * _TICK_S / 8.0))
        target.append(min((s.target_s for s in mine), default=math.inf))
        packet[k] = max(s.packet_bytes for s in mine) + overhead if mine else 0
    packet[0] = max(packet[0], frame_bytes + overhead)  # best effort's largest frame
    below = [float(max(packet[:k], default=0)) for k in range(_LEVELS)]
    return _Levels(rate, burst, count, target, below)


def _bounds(levels: _Levels, capacity: float) -> tuple[list[float], list[float], list[bool]]:
    """Per level: the bound (inf when unbounded or empty), the rate at and above, overflow."""
    bound = [math.inf] * _LEVELS
    cumulative = [0.0] * _LEVELS
    overflow = [False] * _LEVELS
    above = burst = 0.0
    for k in range(_LEVELS - 1, -1, -1):
        residual = capacity - above
        burst += levels.burst[k]
        cumulative[k] = above + levels.rate[k]
        if levels.sizes[k]:
            overflow[k] = cumulative[k] > capacity
            if not overflow[k] and residual > 0:
                bound[k] = 8.0 * (burst + levels.below[k]) / residual
        above = cumulative[k]
    return bound, cumulative, overflow


def _admissible(levels: _Levels, capacity: float) -> bool:
    bound, _, overflow = _bounds(levels, capacity)
    return all(
        not levels.sizes[k] or (not overflow[k] and bound[k] <= levels.target[k])
        for k in range(_LEVELS)
    )


def _min_capacity(levels: _Levels) -> float | None:
    """The least capacity admitting every slice (bisection to 1e-13), None above 1 Pbit/s."""
    low = math.fsum(levels.rate)
    if low > _MAX_RATE_BPS:
        return None
    if _admissible(levels, low):
        return low
    high = low
    for k in range(_LEVELS):
        if levels.sizes[k]:
            work = math.fsum(levels.burst[k:]) + levels.below[k]
            above = math.fsum(levels.rate[k + 1 :])
            if levels.target[k] > 0:
                high = max(high, above + max(levels.rate[k], 8.0 * work / levels.target[k]))
            elif work > 0:
                high = math.inf
    high = min(high * (1.0 + 1e-9), _MAX_RATE_BPS)
    while not _admissible(levels, high):
        if high >= _MAX_RATE_BPS:
            return None
        low, high = high, min(high * 2.0, _MAX_RATE_BPS)
    while high - low > high * 1e-13:
        middle = 0.5 * (low + high)
        low, high = (low, middle) if _admissible(levels, middle) else (middle, high)
    return high


def _rate(bps: float) -> str:
    for scale, unit in ((1e12, "Tbit/s"), (1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if abs(bps) >= scale:
            return f"{bps / scale:.4g} {unit}"
    return f"{bps:.4g} bit/s"


def _delay(seconds: float) -> str:
    if seconds == 0 or abs(seconds) >= 1:
        return f"{seconds:.4g} s"
    if abs(seconds) >= 1e-3:
        return f"{seconds * 1e3:.4g} ms"
    return f"{seconds * 1e6:.4g} µs"


def _violation(
    s: _Slice, bound: list[float], cumulative: list[float], overflow: list[bool], capacity: float
) -> dict[str, Any]:
    k = s.priority
    bounded = math.isfinite(bound[k])
    if overflow[k]:
        excess = _rate(cumulative[k] - capacity)
        where = "" if cumulative[k] == cumulative[0] else f" at priority {k} and above"
        reason = f"rate limits{where} exceed capacity by {excess}"
    elif not bounded:
        residual = capacity - (cumulative[k + 1] if k + 1 < _LEVELS else 0.0)
        reason = f"worst-case delay is unbounded (residual capacity {_rate(residual)})"
    else:
        reason = f"worst-case delay {_delay(bound[k])} exceeds target {_delay(s.target_s)}"
    return {
        "slice_id": s.id,
        "name": s.name,
        "worst_case_delay_s": bound[k] if bounded else None,
        "delay_target_s": s.target_s,
        "excess_s": max(0.0, bound[k] - s.target_s) if bounded else None,
        "reason": reason,
    }


def _netcalc_findings(link: Any, rows: Sequence[Any]) -> dict[str, Any]:
    """What netcalc says of a link's stored slices: the slices outside their targets, and the
    capacity that would admit them all."""
    frame = link.mtu_bytes + _HEADERS_BYTES
    slices = [
        _Slice(
            row.id,
            row.name,
            row.rate_bps,
            row.priority,
            row.rate_bps * row.burst_limit_s / 8.0,
            row.delay_target_s,
            row.max_packet_bytes or frame,
        )
        for row in rows
    ]
    levels = _aggregate(slices, frame, link.frame_overhead_bytes)
    bound, cumulative, overflow = _bounds(levels, link.capacity_bps)
    unfit = [
        _violation(s, bound, cumulative, overflow, link.capacity_bps)
        for s in slices
        if overflow[s.priority] or not bound[s.priority] <= s.target_s
    ]
    found: dict[str, Any] = {"no_longer_fit": unfit}
    if unfit:
        found["min_capacity_bps"] = _min_capacity(levels)
    return found


def _harkous_to_netcalc(bind: sa.Connection) -> None:
    for link in bind.execute(sa.text(_HARKOUS_LINKS)).all():
        rows = bind.execute(sa.text(_SLICES_OF), {"link": link.id}).all()
        found = _netcalc_findings(link, rows)
        after = {"model": "netcalc", **found}
        bind.execute(sa.text(_TO_NETCALC), {"link": link.id, "after": json.dumps(after)})
        needed = found.get("min_capacity_bps")
        fix = "no capacity would admit them" if needed is None else f"needs {_rate(needed)}"
        for unfit in found["no_longer_fit"]:
            logger.warning(
                "0008: link %r (id %d) moved from harkous to netcalc: slice %r (id %d) no "
                "longer fits (%s); it stays deployed, the link %s",
                link.name,
                link.id,
                unfit["name"],
                unfit["slice_id"],
                unfit["reason"],
                fix,
            )
        levels = len({row.priority for row in rows})
        if levels > min(link.queue_count, _LEVELS) - 1:  # best effort keeps a queue
            logger.warning(
                "0008: link %r (id %d) has %d queues, one of them best effort's, but its "
                "slices use %d priority levels",
                link.name,
                link.id,
                link.queue_count,
                levels,
            )


def upgrade() -> None:
    bind = op.get_bind()
    op.add_column(
        "links",
        sa.Column("frame_overhead_bytes", sa.SmallInteger(), server_default="0", nullable=False),
    )
    op.create_check_constraint(
        op.f("ck_links_frame_overhead_range"), "links", "frame_overhead_bytes BETWEEN 0 AND 64"
    )

    bind.execute(sa.text(_QUEUES))
    op.drop_constraint(op.f("ck_links_queue_count_range"), "links", type_="check")
    op.create_check_constraint(
        op.f("ck_links_queue_count_range"), "links", "queue_count BETWEEN 2 AND 8"
    )

    moved_links = [row[0] for row in bind.execute(sa.text(_PRIORITIES))]
    # The update's trigger (0006) recomputes these already; once more, so nothing at 0 stays.
    bind.execute(
        sa.text(
            "SELECT recompute_link_level_loads(ARRAY(SELECT DISTINCT link_id FROM "
            "link_level_loads WHERE priority = 0 OR link_id = ANY(:links)))"
        ),
        {"links": moved_links},
    )
    for table in ("slices", "link_level_loads"):
        op.drop_constraint(op.f(f"ck_{table}_priority_range"), table, type_="check")
        op.create_check_constraint(
            op.f(f"ck_{table}_priority_range"), table, "priority BETWEEN 1 AND 7"
        )

    op.alter_column("links", "model", server_default="netcalc")
    _harkous_to_netcalc(bind)


def downgrade() -> None:
    op.alter_column("links", "model", server_default="harkous")
    for table in ("slices", "link_level_loads"):
        op.drop_constraint(op.f(f"ck_{table}_priority_range"), table, type_="check")
        op.create_check_constraint(
            op.f(f"ck_{table}_priority_range"), table, "priority BETWEEN 0 AND 7"
        )
    op.drop_constraint(op.f("ck_links_queue_count_range"), "links", type_="check")
    op.create_check_constraint(
        op.f("ck_links_queue_count_range"), "links", "queue_count BETWEEN 1 AND 8"
    )
    op.drop_constraint(op.f("ck_links_frame_overhead_range"), "links", type_="check")
    op.drop_column("links", "frame_overhead_bytes")
