"""Slices have ordered paths: `slice_links.position`, a link's place on its slice's path (0 at
the ingress switch), unique per slice (checked at the end of each statement, so a path can be
reordered in one).

A slice whose rows all have a position has a path (`domain.paths`: each link's cable reaches
the next link's switch, no switch twice); one whose rows have none is an unordered set of
links, as every slice was before (its `path` is null in the API). Stored slices get a position
where their links, in ascending id, form a path — always so for a slice of one link, the usual
case before cables existed; the others stay unordered until a path is given for them.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-29 06:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ORDER_BY_ID = """
WITH ordered AS (
    SELECT rows.slice_id, rows.link_id, link.switch_id, far.switch_id AS far_switch_id,
           row_number() OVER run - 1 AS position,
           lag(far.switch_id) OVER run AS reached,
           last_value(far.switch_id) OVER (run ROWS BETWEEN UNBOUNDED PRECEDING
                                           AND UNBOUNDED FOLLOWING) AS last_reaches
    FROM slice_links AS rows
    JOIN links AS link ON link.id = rows.link_id
    LEFT JOIN links AS far ON far.cable_id = link.cable_id AND far.id <> link.id
    WINDOW run AS (PARTITION BY rows.slice_id ORDER BY rows.link_id)
), paths AS (
    SELECT slice_id FROM ordered GROUP BY slice_id
    HAVING bool_and(position = 0 OR COALESCE(reached = switch_id, false))
       AND count(DISTINCT switch_id) = count(*)
       AND NOT COALESCE(bool_or(switch_id = last_reaches), false)
)
UPDATE slice_links SET position = ordered.position
FROM ordered JOIN paths USING (slice_id)
WHERE slice_links.slice_id = ordered.slice_id AND slice_links.link_id = ordered.link_id
"""


def upgrade() -> None:
    op.add_column("slice_links", sa.Column("position", sa.SmallInteger(), nullable=True))
    op.create_unique_constraint(
        op.f("uq_slice_links_slice_id_position"),
        "slice_links",
        ["slice_id", "position"],
        deferrable=True,
    )
    op.create_check_constraint(
        op.f("ck_slice_links_position_range"), "slice_links", "position >= 0"
    )
    op.execute(_ORDER_BY_ID)


def downgrade() -> None:
    op.drop_constraint(op.f("ck_slice_links_position_range"), "slice_links", type_="check")
    op.drop_constraint(op.f("uq_slice_links_slice_id_position"), "slice_links", type_="unique")
    op.drop_column("slice_links", "position")
