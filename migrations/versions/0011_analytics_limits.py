"""Link capacities and slice rates within the analytics' range: 1 bit/s to 1 Pbit/s.

The API took any positive capacity: a link stored with 1e308 bit/s made every report, that
switch's report and the link's analysis answer 422 for every user (`domain.spec` takes at most
`MAX_RATE_BPS`). The API now refuses such values (`domain.spec.MAX_CAPACITY_BPS`,
`MIN_RATE_BPS`), and so does the database: `ck_links_capacity_range` and `ck_slices_rate_range`
replace the checks that only asked for a positive value.

Rows stored before are **clamped** into the range, each with a change-log entry (request id
`migration-0011`, no user) that gives the old and the new value. Clamping changes nothing the
analytics could tell apart: a link faster than 1 Pbit/s carries every slice set the API admits
(their rates are at most 400 Gbit/s each), and a slice rate below 1 bit/s is below the data
plane's 125 kbit/s, so that slice never deployed (it is `failed`) and its owner must change it
anyway. Refusing the upgrade instead would have kept the reports broken until someone fixed
the rows by hand; skipping the rows in every report would have kept them wrong everywhere else.

Downgrade restores the former checks; clamped values stay clamped.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26 17:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MIN_RATE_BPS = 1.0
MAX_RATE_BPS = 1e15
"""`domain.spec`'s values when this was written (a migration keeps its own copy: it must do
the same thing however the code changes later)."""
_COLUMNS = (("links", "link", "capacity_bps"), ("slices", "slice", "rate_bps"))

_CLAMP = """
WITH outside AS (
    SELECT id, {column} AS old FROM {table} WHERE {column} NOT BETWEEN :low AND :high
), clamped AS (
    UPDATE {table} SET {column} = LEAST(GREATEST({column}, :low), :high)
    FROM outside WHERE {table}.id = outside.id
    RETURNING {table}.id, {table}.name, outside.old, {table}.{column} AS new
)
INSERT INTO change_log (user_id, request_id, action, entity_type, entity_id, entity_name,
                        before, after)
SELECT NULL, 'migration-0011', 'update', '{entity}', id, name,
       jsonb_build_object('{column}', old), jsonb_build_object('{column}', new)
FROM clamped
"""


def _replace(table: str, old: str, new: str, condition: str) -> None:
    op.drop_constraint(op.f(f"ck_{table}_{old}"), table, type_="check")
    op.create_check_constraint(op.f(f"ck_{table}_{new}"), table, condition)


def upgrade() -> None:
    bind = op.get_bind()
    for table, entity, column in _COLUMNS:
        bind.execute(
            sa.text(_CLAMP.format(table=table, entity=entity, column=column)),
            {"low": MIN_RATE_BPS, "high": MAX_RATE_BPS},
        )
    _replace(
        "links", "capacity_positive", "capacity_range",
        f"capacity_bps BETWEEN {MIN_RATE_BPS} AND {MAX_RATE_BPS}",
    )  # fmt: skip
    _replace(
        "slices", "rate_positive", "rate_range",
        f"rate_bps BETWEEN {MIN_RATE_BPS} AND {MAX_RATE_BPS}",
    )  # fmt: skip


def downgrade() -> None:
    _replace("links", "capacity_range", "capacity_positive", "capacity_bps > 0")
    _replace("slices", "rate_range", "rate_positive", "rate_bps > 0")
