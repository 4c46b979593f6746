"""The network: cables between switches and the hosts behind host-facing ports.

A cable joins port p of switch A and port q of switch B (netbox's cable); each of its two
directions is an existing link (egress port), which names the cable (`links.cable_id`) and its
end (`links.cable_end`, `a` or `b`). A link that is no cable's end faces hosts: the IPv4
prefixes and VLANs behind it (`links.host_ipv4_prefixes`, `links.host_vlan_ids`), never both.

Constraints: one `a` and one `b` end per cable, on two switches (unique keys), hosts only on
uncabled links, VLANs 1–4094, a propagation delay of 0 to 10^6 s; and a deferred constraint
trigger, `ck_cables_two_ends`, that every cable still has both ends when its transaction
commits (a link that leaves its cable, or is deleted, would leave half a cable).

Downgrade refuses while a cable or a host list is stored (it would drop them). The change log's
entity type keeps `cable`: its entries cannot be rewritten, and must stay readable.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29 06:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ENTITY_TYPES = ("switch", "link", "cable", "slice", "user", "api_token", "alert")
_LINK_CHECKS = (
    ("cable_end", "cable_end IN ('a', 'b')"),
    ("cable_end_with_cable", "(cable_id IS NULL) = (cable_end IS NULL)"),
    (
        "faces_switch_or_hosts",
        "cable_id IS NULL OR (cardinality(host_ipv4_prefixes) = 0"
        " AND cardinality(host_vlan_ids) = 0)",
    ),
    ("host_vlan_id_range", "1 <= ALL(host_vlan_ids) AND 4094 >= ALL(host_vlan_ids)"),
)
_TWO_ENDS = """
CREATE FUNCTION cable_two_ends() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cable integer;
    ends integer;
BEGIN
    IF TG_TABLE_NAME = 'cables' THEN
        cable := NEW.id;
    ELSE
        cable := OLD.cable_id;
    END IF;
    IF cable IS NULL OR NOT EXISTS (SELECT FROM cables WHERE id = cable) THEN
        RETURN NULL;
    END IF;
    SELECT count(*) INTO ends FROM links WHERE cable_id = cable;
    IF ends <> 2 THEN
        RAISE EXCEPTION 'cable % has % ends: a cable joins exactly two ports', cable, ends
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ck_cables_two_ends',
                  TABLE = 'cables';
    END IF;
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER cables_two_ends AFTER INSERT ON cables
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION cable_two_ends();
CREATE CONSTRAINT TRIGGER links_cable_two_ends AFTER UPDATE OF cable_id OR DELETE ON links
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION cable_two_ends();
"""


def upgrade() -> None:
    op.create_table(
        "cables",
        sa.Column("id", sa.Integer(), sa.Identity(always=False), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("description", sa.Text(), server_default="", nullable=False),
        sa.Column("propagation_s", sa.Double(), server_default="0", nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.CheckConstraint(
            "propagation_s BETWEEN 0 AND 1000000.0", name=op.f("ck_cables_propagation_range")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cables")),
        sa.UniqueConstraint("name", name=op.f("uq_cables_name")),
    )
    op.add_column("links", sa.Column("cable_id", sa.Integer(), nullable=True))
    op.add_column("links", sa.Column("cable_end", sa.String(length=32), nullable=True))
    op.add_column(
        "links",
        sa.Column(
            "host_ipv4_prefixes",
            postgresql.ARRAY(postgresql.CIDR()),
            server_default="{}",
            nullable=False,
        ),
    )
    op.add_column(
        "links",
        sa.Column(
            "host_vlan_ids",
            postgresql.ARRAY(sa.SmallInteger()),
            server_default="{}",
            nullable=False,
        ),
    )
    op.create_unique_constraint(
        op.f("uq_links_cable_id_cable_end"), "links", ["cable_id", "cable_end"]
    )
    op.create_unique_constraint(
        op.f("uq_links_cable_id_switch_id"), "links", ["cable_id", "switch_id"]
    )
    op.create_foreign_key(
        op.f("fk_links_cable_id_cables"),
        "links",
        "cables",
        ["cable_id"],
        ["id"],
        ondelete="RESTRICT",
    )
    for name, condition in _LINK_CHECKS:
        op.create_check_constraint(op.f(f"ck_links_{name}"), "links", condition)
    op.execute(_TWO_ENDS)
    _replace_entity_types(ENTITY_TYPES)


def downgrade() -> None:
    bind = op.get_bind()
    held = bind.execute(
        sa.text(
            "SELECT (SELECT count(*) FROM cables), (SELECT count(*) FROM links"
            " WHERE cardinality(host_ipv4_prefixes) + cardinality(host_vlan_ids) > 0)"
        )
    ).one()
    if held[0] or held[1]:
        raise RuntimeError(
            f"cannot downgrade below 0019: {held[0]} cables and {held[1]} links with hosts are "
            "stored; delete the cables and clear the links' hosts first"
        )
    op.execute("DROP TRIGGER links_cable_two_ends ON links")
    op.execute("DROP TRIGGER cables_two_ends ON cables")
    op.execute("DROP FUNCTION cable_two_ends()")
    for name, _ in reversed(_LINK_CHECKS):
        op.drop_constraint(op.f(f"ck_links_{name}"), "links", type_="check")
    op.drop_constraint(op.f("fk_links_cable_id_cables"), "links", type_="foreignkey")
    op.drop_constraint(op.f("uq_links_cable_id_switch_id"), "links", type_="unique")
    op.drop_constraint(op.f("uq_links_cable_id_cable_end"), "links", type_="unique")
    op.drop_column("links", "host_vlan_ids")
    op.drop_column("links", "host_ipv4_prefixes")
    op.drop_column("links", "cable_end")
    op.drop_column("links", "cable_id")
    op.drop_table("cables")


def _replace_entity_types(values: Sequence[str]) -> None:
    listed = ", ".join(f"'{value}'" for value in values)
    op.drop_constraint(op.f("ck_change_log_entity_type"), "change_log", type_="check")
    op.create_check_constraint(
        op.f("ck_change_log_entity_type"), "change_log", f"entity_type IN ({listed})"
    )
