"""A slice's optional end-to-end delay target (`slices.e2e_delay_target_s`): admission checks
the sum of its per-hop worst-case delays against it, and capacity reports read it.

Nullable, so existing slices keep having no end-to-end target; a CHECK keeps it positive.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("slices", sa.Column("e2e_delay_target_s", sa.Double(), nullable=True))
    op.create_check_constraint(
        op.f("ck_slices_e2e_delay_target_positive"), "slices", "e2e_delay_target_s > 0"
    )


def downgrade() -> None:
    op.drop_constraint(op.f("ck_slices_e2e_delay_target_positive"), "slices", type_="check")
    op.drop_column("slices", "e2e_delay_target_s")
