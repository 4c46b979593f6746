"""Per-level sums of every link's slices (`link_level_loads`), kept by triggers, so admitting a
slice reads at most eight rows per link instead of every slice on it; a partial index on the
slices with an end-to-end target, which admission looks up on every change; and an index on
`slices.vlan_id`, which the clash check looks up on every creation of a slice with a VLAN.

Adding slices to a link adds to its rows; removing a slice from a link, or changing what the
bounds read of a slice (rate, burst, target, priority, packet), recomputes the rows of the
links concerned from their slices, so the sums never drift through subtractions. Every change
of a slice's load holds its links' locks (`services.slices`), so the rows are never written
concurrently for one link.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22 18:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_LEVELS_OF = """
SELECT here.link_id, slices.priority, count(*), sum(slices.rate_bps),
       sum(slices.rate_bps * slices.burst_limit_s / 8.0), min(slices.delay_target_s),
       max(slices.max_packet_bytes), count(*) FILTER (WHERE slices.max_packet_bytes IS NULL)
FROM {rows} here JOIN slices ON slices.id = here.slice_id
"""
_COLUMNS = """(link_id, priority, slice_count, rate_bps, burst_bytes, min_delay_target_s,
 max_packet_bytes, default_packet_count)"""

_FUNCTIONS = [
    f"""
CREATE FUNCTION recompute_link_level_loads(link_ids integer[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM link_level_loads WHERE link_id = ANY(link_ids);
    INSERT INTO link_level_loads {_COLUMNS}
    {_LEVELS_OF.format(rows="slice_links")}
    WHERE here.link_id = ANY(link_ids)
    GROUP BY here.link_id, slices.priority;
END $$""",
    f"""
CREATE FUNCTION link_level_loads_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO link_level_loads AS stored {_COLUMNS}
    {_LEVELS_OF.format(rows="added")}
    GROUP BY here.link_id, slices.priority
    ON CONFLICT (link_id, priority) DO UPDATE SET
        slice_count = stored.slice_count + excluded.slice_count,
        rate_bps = stored.rate_bps + excluded.rate_bps,
        burst_bytes = stored.burst_bytes + excluded.burst_bytes,
        min_delay_target_s = least(stored.min_delay_target_s, excluded.min_delay_target_s),
        max_packet_bytes = greatest(stored.max_packet_bytes, excluded.max_packet_bytes),
        default_packet_count = stored.default_packet_count + excluded.default_packet_count;
    RETURN NULL;
END $$""",
    """
CREATE FUNCTION link_level_loads_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM recompute_link_level_loads(ARRAY(SELECT DISTINCT link_id FROM removed));
    RETURN NULL;
END $$""",
    """
CREATE FUNCTION link_level_loads_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM recompute_link_level_loads(ARRAY(
        SELECT DISTINCT link_id FROM removed UNION SELECT DISTINCT link_id FROM added));
    RETURN NULL;
END $$""",
    """
CREATE FUNCTION link_level_loads_slices_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM recompute_link_level_loads(ARRAY(
        SELECT DISTINCT slice_links.link_id
        FROM before JOIN after ON after.id = before.id
        JOIN slice_links ON slice_links.slice_id = after.id
        WHERE (before.rate_bps, before.burst_limit_s, before.delay_target_s, before.priority,
               before.max_packet_bytes)
          IS DISTINCT FROM (after.rate_bps, after.burst_limit_s, after.delay_target_s,
                            after.priority, after.max_packet_bytes)));
    RETURN NULL;
END $$""",
    """CREATE TRIGGER slice_links_added AFTER INSERT ON slice_links
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION link_level_loads_added()""",
    """CREATE TRIGGER slice_links_removed AFTER DELETE ON slice_links
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT
    EXECUTE FUNCTION link_level_loads_removed()""",
    """CREATE TRIGGER slice_links_moved AFTER UPDATE ON slice_links
    REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT
    EXECUTE FUNCTION link_level_loads_moved()""",
    """CREATE TRIGGER slices_load_changed AFTER UPDATE ON slices
    REFERENCING OLD TABLE AS before NEW TABLE AS after FOR EACH STATEMENT
    EXECUTE FUNCTION link_level_loads_slices_changed()""",
]

_DROP = [
    "DROP TRIGGER slices_load_changed ON slices",
    "DROP TRIGGER slice_links_moved ON slice_links",
    "DROP TRIGGER slice_links_removed ON slice_links",
    "DROP TRIGGER slice_links_added ON slice_links",
    "DROP FUNCTION link_level_loads_slices_changed()",
    "DROP FUNCTION link_level_loads_moved()",
    "DROP FUNCTION link_level_loads_removed()",
    "DROP FUNCTION link_level_loads_added()",
    "DROP FUNCTION recompute_link_level_loads(integer[])",
]


def upgrade() -> None:
    op.create_table(
        "link_level_loads",
        sa.Column("link_id", sa.Integer(), nullable=False),
        sa.Column("priority", sa.SmallInteger(), nullable=False),
        sa.Column("slice_count", sa.Integer(), nullable=False),
        sa.Column("rate_bps", sa.Double(), nullable=False),
        sa.Column("burst_bytes", sa.Double(), nullable=False),
        sa.Column("min_delay_target_s", sa.Double(), nullable=False),
        sa.Column("max_packet_bytes", sa.Integer(), nullable=True),
        sa.Column("default_packet_count", sa.Integer(), nullable=False),
        sa.CheckConstraint(
            "priority BETWEEN 0 AND 7", name=op.f("ck_link_level_loads_priority_range")
        ),
        sa.CheckConstraint(
            "slice_count > 0", name=op.f("ck_link_level_loads_slice_count_positive")
        ),
        sa.ForeignKeyConstraint(
            ["link_id"],
            ["links.id"],
            name=op.f("fk_link_level_loads_link_id_links"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("link_id", "priority", name=op.f("pk_link_level_loads")),
    )
    op.create_index(op.f("ix_slices_vlan_id"), "slices", ["vlan_id"])
    op.create_index(
        op.f("ix_slices_e2e_delay_target"),
        "slices",
        ["id"],
        postgresql_where=sa.text("e2e_delay_target_s IS NOT NULL"),
    )
    for statement in _FUNCTIONS:
        op.execute(statement)
    op.execute("SELECT recompute_link_level_loads(ARRAY(SELECT id FROM links))")


def downgrade() -> None:
    for statement in _DROP:
        op.execute(statement)
    op.drop_index(op.f("ix_slices_e2e_delay_target"), table_name="slices")
    op.drop_index(op.f("ix_slices_vlan_id"), table_name="slices")
    op.drop_table("link_level_loads")
