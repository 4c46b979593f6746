"""A GIN index on `slices.ipv4_prefixes`: every slice creation looks, under its switch locks,
for slices sharing a prefix (`&&`) on the switches it crosses (classifier and route clashes);
without the index that is a scan of every slice's prefixes inside the locked section.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 16:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        op.f("ix_slices_ipv4_prefixes"), "slices", ["ipv4_prefixes"], postgresql_using="gin"
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_slices_ipv4_prefixes"), table_name="slices")
