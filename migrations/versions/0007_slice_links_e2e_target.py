"""`slice_links.has_e2e_target`: whether the row's slice has an end-to-end target, with a
partial index on the rows that do, by link.

Every change of a slice looks up, under its locks, the slices with an end-to-end target crossing
the links it changes (to lock and check their paths). Through `slices` (the partial index of
0006), PostgreSQL must pick between reading every slice of the link and every slice with a
target, and with statistics older than a burst of creations it read every slice of the link.
On the link rows themselves the index holds exactly the rows sought.

Triggers keep the flag: a row takes its slice's when written, and setting or clearing a slice's
target sets or clears it on the slice's rows. (That update fires `slice_links_moved`, which
recomputes the level sums of those links: correct, and only when a target is set or cleared.)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 03:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_FUNCTIONS = [
    """
CREATE FUNCTION slice_links_take_e2e_target() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.has_e2e_target := EXISTS (
        SELECT FROM slices WHERE id = NEW.slice_id AND e2e_delay_target_s IS NOT NULL);
    RETURN NEW;
END $$""",
    """
CREATE FUNCTION slice_links_e2e_target_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (
        SELECT FROM before JOIN after ON after.id = before.id
        WHERE (before.e2e_delay_target_s IS NULL) <> (after.e2e_delay_target_s IS NULL)
    ) THEN
        UPDATE slice_links SET has_e2e_target = after.e2e_delay_target_s IS NOT NULL
        FROM after WHERE slice_links.slice_id = after.id
          AND slice_links.has_e2e_target <> (after.e2e_delay_target_s IS NOT NULL);
    END IF;
    RETURN NULL;
END $$""",
    """CREATE TRIGGER slice_links_e2e_target BEFORE INSERT OR UPDATE OF slice_id ON slice_links
    FOR EACH ROW EXECUTE FUNCTION slice_links_take_e2e_target()""",
    """CREATE TRIGGER slices_e2e_target_changed AFTER UPDATE ON slices
    REFERENCING OLD TABLE AS before NEW TABLE AS after FOR EACH STATEMENT
    EXECUTE FUNCTION slice_links_e2e_target_changed()""",
]

_DROP = [
    "DROP TRIGGER slices_e2e_target_changed ON slices",
    "DROP TRIGGER slice_links_e2e_target ON slice_links",
    "DROP FUNCTION slice_links_e2e_target_changed()",
    "DROP FUNCTION slice_links_take_e2e_target()",
]


def upgrade() -> None:
    op.add_column(
        "slice_links",
        sa.Column("has_e2e_target", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    op.execute(
        "UPDATE slice_links SET has_e2e_target = true FROM slices "
        "WHERE slices.id = slice_links.slice_id AND slices.e2e_delay_target_s IS NOT NULL"
    )
    op.create_index(
        op.f("ix_slice_links_with_e2e_target"),
        "slice_links",
        ["link_id", "slice_id"],
        postgresql_where=sa.text("has_e2e_target"),
    )
    op.drop_index(op.f("ix_slices_e2e_delay_target"), table_name="slices")
    for statement in _FUNCTIONS:
        op.execute(statement)


def downgrade() -> None:
    for statement in _DROP:
        op.execute(statement)
    op.create_index(
        op.f("ix_slices_e2e_delay_target"),
        "slices",
        ["id"],
        postgresql_where=sa.text("e2e_delay_target_s IS NOT NULL"),
    )
    op.drop_index(op.f("ix_slice_links_with_e2e_target"), table_name="slice_links")
    op.drop_column("slice_links", "has_e2e_target")
