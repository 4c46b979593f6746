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
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from sliceportal.domain import SliceSpec, SpecError, analyze, min_capacity
from sliceportal.domain.formatting import format_rate
from sliceportal.domain.spec import Framing, Model, max_frame_bytes, slice_levels

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


def _netcalc_findings(link: Any, rows: Sequence[Any]) -> dict[str, Any]:
    """What netcalc says of a link's stored slices, as admission builds them
    (`services.admission.read_loads`): the slices outside their targets, and the capacity
    that would admit them all."""
    ids = {row.name: row.id for row in rows}
    try:
        specs = [
            SliceSpec(
                row.name,
                row.rate_bps,
                row.priority,
                row.rate_bps * row.burst_limit_s / 8.0,
                row.delay_target_s,
                row.max_packet_bytes or max_frame_bytes(link.mtu_bytes),
            )
            for row in rows
        ]
        framing = Framing.of_link(link.mtu_bytes, link.frame_overhead_bytes)
        analysis = analyze(specs, link.capacity_bps, Model.NETCALC, framing)
        needed = min_capacity(specs, Model.NETCALC, framing) if not analysis.admissible else None
    except SpecError as exc:  # a row no longer valid as a slice: say so, change nothing else
        return {"no_longer_fit": [], "analysis_error": f"{exc.field}: {exc.message}"}
    unfit = [{"slice_id": ids[v.name], **v.to_dict()} for v in analysis.violations]
    found: dict[str, Any] = {"no_longer_fit": unfit}
    if unfit:
        found["min_capacity_bps"] = needed
    return found


def _harkous_to_netcalc(bind: sa.Connection) -> None:
    for link in bind.execute(sa.text(_HARKOUS_LINKS)).all():
        rows = bind.execute(sa.text(_SLICES_OF), {"link": link.id}).all()
        found = _netcalc_findings(link, rows)
        after = {"model": "netcalc", **found}
        bind.execute(sa.text(_TO_NETCALC), {"link": link.id, "after": json.dumps(after)})
        if found.get("analysis_error"):
            logger.warning(
                "0008: link %r (id %d) moved to netcalc; its slices could not be analysed: %s",
                link.name,
                link.id,
                found["analysis_error"],
            )
        needed = found.get("min_capacity_bps")
        fix = "no capacity would admit them" if needed is None else f"needs {format_rate(needed)}"
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
        if levels > slice_levels(link.queue_count):
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
