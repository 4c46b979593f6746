"""Slices may use ABC: `slices.scheme` accepts `abc`, with the slice's ABC parameters.

P4-ABC (activity-based congestion management) meters each aggregate of a slice (a source
address or prefix) and drops its packets at a queue threshold that falls with the aggregate's
activity. Eight nullable columns hold the parameters, resolved (the API fills in the paper's
defaults at the slice's rate before it stores them, so the row says what the switch holds):

- `abc_meter_memory_s`, `abc_average_memory_s`: the memories of the aggregates' rate meters
  and of the slice's average activity (seconds, 1 ms to 10 s: the decay tables' range);
- `abc_reference_rate_bps`: the rate of activity 0 (bit/s, 1 to 400 Gbit/s);
- `abc_q_min_s`, `abc_q_base_s`, `abc_gamma_s`: the drop threshold
  `max(Q_min, Q_base - gamma * (A - A_avg))` (seconds of the slice's queueing delay, Q_min
  at most Q_base at most the burst limit, gamma seconds per unit of activity, 0 to 4 s);
- `abc_key`, `abc_prefix_length`: what an aggregate is (`source_address`, or
  `source_prefix` of the given length; 32 for source_address).

CHECK constraints keep them consistent with the scheme, like CoDel's (0012): all eight exactly
when the scheme is `abc` (`ck_slices_abc_iff_abc_scheme`), each within its range, the
thresholds ordered and within the burst limit. The scheme's CHECK (`ck_slices_queue_scheme`)
gains `abc`; no row changes.

Downgrade **refuses** while a slice uses `abc` (it raises, naming the slices, and changes
nothing), as 0012's does for CoDel: change or delete those slices first, then downgrade.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-29 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SCHEME = "ck_slices_queue_scheme"
_COLUMNS = (
    ("abc_meter_memory_s", sa.Double()),
    ("abc_average_memory_s", sa.Double()),
    ("abc_reference_rate_bps", sa.Double()),
    ("abc_q_min_s", sa.Double()),
    ("abc_q_base_s", sa.Double()),
    ("abc_gamma_s", sa.Double()),
    ("abc_key", sa.String(32)),
    ("abc_prefix_length", sa.SmallInteger()),
)
_CHECKS = (
    (
        "abc_iff_abc_scheme",
        f"num_nonnulls({', '.join(name for name, _ in _COLUMNS)})"
        f" = CASE WHEN scheme = 'abc' THEN {len(_COLUMNS)} ELSE 0 END",
    ),
    ("abc_meter_memory_range", "abc_meter_memory_s BETWEEN 0.001 AND 10.0"),
    ("abc_average_memory_range", "abc_average_memory_s BETWEEN 0.001 AND 10.0"),
    ("abc_reference_rate_range", "abc_reference_rate_bps BETWEEN 1.0 AND 400000000000.0"),
    ("abc_q_min_range", "abc_q_min_s >= 0 AND abc_q_min_s <= abc_q_base_s"),
    ("abc_q_base_within_burst_limit", "abc_q_base_s <= burst_limit_s"),
    ("abc_gamma_range", "abc_gamma_s BETWEEN 0 AND 4.0"),
    ("abc_key", "abc_key IN ('source_address', 'source_prefix')"),
    (
        "abc_prefix_length_range",
        "abc_prefix_length BETWEEN 0 AND 32"
        " AND (abc_key = 'source_prefix' OR abc_prefix_length = 32)",
    ),
)


def _replace_schemes(values: Sequence[str]) -> None:
    listed = ", ".join(f"'{value}'" for value in values)
    op.drop_constraint(op.f(_SCHEME), "slices", type_="check")
    op.create_check_constraint(op.f(_SCHEME), "slices", f"scheme IN ({listed})")


def upgrade() -> None:
    for name, type_ in _COLUMNS:
        op.add_column("slices", sa.Column(name, type_, nullable=True))
    for name, condition in _CHECKS:
        op.create_check_constraint(op.f(f"ck_slices_{name}"), "slices", condition)
    _replace_schemes(("tail_drop", "ecn_step", "meter", "codel", "abc"))


def downgrade() -> None:
    names = (
        op.get_bind()
        .execute(sa.text("SELECT name FROM slices WHERE scheme = 'abc' ORDER BY id"))
        .scalars()
        .all()
    )
    if names:
        raise RuntimeError(
            "cannot downgrade below 0015: slices use the abc scheme "
            f"({', '.join(repr(n) for n in names)}); change their scheme or delete them first"
        )
    _replace_schemes(("tail_drop", "ecn_step", "meter", "codel"))
    for name, _ in reversed(_CHECKS):
        op.drop_constraint(op.f(f"ck_slices_{name}"), "slices", type_="check")
    for name, _ in reversed(_COLUMNS):
        op.drop_column("slices", name)
