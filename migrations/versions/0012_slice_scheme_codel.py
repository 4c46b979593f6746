"""Slices may use CoDel: `slices.scheme` accepts `codel`, with the slice's CoDel parameters.

Three nullable columns hold them: `codel_target_s` (the sojourn time CoDel holds the slice's
virtual-queue delay to), `codel_interval_s` (how long the delay may stay above the target
before CoDel acts, and the base of its control law) and `codel_ecn_mark` (CE-mark ECN-capable
packets instead of dropping them). Like the ECN threshold, CHECK constraints keep them
consistent with the scheme: all three present exactly when the scheme is `codel`
(`ck_slices_codel_iff_codel_scheme`), the target positive and below the burst limit (at the
burst limit the virtual queue drops first and CoDel never acts) and the interval positive. The
scheme's CHECK constraint (`ck_slices_queue_scheme`) gains `codel`; no row changes.

Downgrade **refuses** while a slice uses `codel` (it raises, naming the slices, and changes
nothing): turning a CoDel slice into a tail_drop one silently would change what the switch
does with its traffic, which is for the slice's owner to decide. Change or delete those slices
first, then downgrade.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SCHEME = "ck_slices_queue_scheme"
_CHECKS = (
    (
        "codel_iff_codel_scheme",
        "num_nonnulls(codel_target_s, codel_interval_s, codel_ecn_mark)"
        " = CASE WHEN scheme = 'codel' THEN 3 ELSE 0 END",
    ),
    (
        "codel_target_within_burst_limit",
        "codel_target_s > 0 AND codel_target_s < burst_limit_s",
    ),
    ("codel_interval_positive", "codel_interval_s > 0"),
)


def _replace_schemes(values: Sequence[str]) -> None:
    listed = ", ".join(f"'{value}'" for value in values)
    op.drop_constraint(op.f(_SCHEME), "slices", type_="check")
    op.create_check_constraint(op.f(_SCHEME), "slices", f"scheme IN ({listed})")


def upgrade() -> None:
    op.add_column("slices", sa.Column("codel_target_s", sa.Double(), nullable=True))
    op.add_column("slices", sa.Column("codel_interval_s", sa.Double(), nullable=True))
    op.add_column("slices", sa.Column("codel_ecn_mark", sa.Boolean(), nullable=True))
    for name, condition in _CHECKS:
        op.create_check_constraint(op.f(f"ck_slices_{name}"), "slices", condition)
    _replace_schemes(("tail_drop", "ecn_step", "meter", "codel"))


def downgrade() -> None:
    names = (
        op.get_bind()
        .execute(sa.text("SELECT name FROM slices WHERE scheme = 'codel' ORDER BY id"))
        .scalars()
        .all()
    )
    if names:
        raise RuntimeError(
            "cannot downgrade below 0012: slices use the codel scheme "
            f"({', '.join(repr(n) for n in names)}); change their scheme or delete them first"
        )
    _replace_schemes(("tail_drop", "ecn_step", "meter"))
    for name, _ in reversed(_CHECKS):
        op.drop_constraint(op.f(f"ck_slices_{name}"), "slices", type_="check")
    for column in ("codel_ecn_mark", "codel_interval_s", "codel_target_s"):
        op.drop_column("slices", column)
