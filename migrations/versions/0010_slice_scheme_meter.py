"""Slices may use the meter baseline: `slices.scheme` accepts `meter`.

The scheme column is not a native PostgreSQL enum but a VARCHAR(32) with the CHECK constraint
`ck_slices_queue_scheme` (`db.base.choice_type`: adding a value is a CHECK change, not an
`ALTER TYPE ... ADD VALUE`, which could not run inside the migration's transaction). The
upgrade replaces the constraint with one that also allows `meter`; no row changes.

Downgrade **refuses** while a slice uses `meter` (it raises, naming the slices, and changes
nothing): turning a meter slice into a tail_drop one silently would change what the switch does
with its traffic (a virtual queue and an egress real-queue check where a policer was), which
is for the slice's owner to decide. Change or delete those slices first, then downgrade.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 13:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CONSTRAINT = "ck_slices_queue_scheme"


def _replace(values: Sequence[str]) -> None:
    listed = ", ".join(f"'{value}'" for value in values)
    op.drop_constraint(op.f(_CONSTRAINT), "slices", type_="check")
    op.create_check_constraint(op.f(_CONSTRAINT), "slices", f"scheme IN ({listed})")


def upgrade() -> None:
    _replace(("tail_drop", "ecn_step", "meter"))


def downgrade() -> None:
    names = (
        op.get_bind()
        .execute(sa.text("SELECT name FROM slices WHERE scheme = 'meter' ORDER BY id"))
        .scalars()
        .all()
    )
    if names:
        raise RuntimeError(
            "cannot downgrade below 0010: slices use the meter scheme "
            f"({', '.join(repr(n) for n in names)}); change their scheme or delete them first"
        )
    _replace(("tail_drop", "ecn_step"))
