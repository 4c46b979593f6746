"""Telemetry samples keep the histogram target their delay histograms were counted with
(`telemetry_samples.hist_target`, part of the primary key).

The data plane no longer counts delays on one global set of edges (0.1, 0.5, 1, 2, 5, 10 and
20 ms): each slice's edges derive from its delay target T (T/16, T/8, T/4, T/2, 3T/4, 7T/8, T;
`dataplane.histogram_edges`). A stored histogram means something only with the edges it was
counted on, so each row now says which: `hist_target`, in vq units.

The rows already stored were counted on the old global edges, which no target reproduces (the
old buckets do not split into the new ones, nor the new into the old), so they can be neither
relabelled nor converted. They are **kept, as legacy rows**: `hist_target = -1`
(`domain.telemetry.LEGACY_HIST_TARGET`), read on the old edges (`LEGACY_EDGES_US`). Their
throughput, drops and marks are as valid as ever, their delays as exact as they were; deleting
them would throw away up to the retention (7 days) of history for nothing. A NULL would say
"unknown" where the edges are known, and could not be part of the primary key.

The target joins the primary key because histograms of different targets must never be summed:
downsampling writes one minute row per slice, switch, minute *and target*, so a minute in which
a slice's target changed (or the minute of this upgrade) keeps two rows, which the old key
would merge. Adding the column with a default is instant; rebuilding the primary key index
reads the table once (about a minute per 10 M rows).

Downgrade: the rows counted on per-slice edges cannot be read on the old global edges, so they
are deleted (their traffic counts with them); the legacy rows stay, and the key and column go.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LEGACY_HIST_TARGET = -1
"""`domain.telemetry.LEGACY_HIST_TARGET`, as of this migration."""

_KEY = ["slice_id", "t", "switch_id", "downsampled"]


def upgrade() -> None:
    op.add_column(
        "telemetry_samples",
        sa.Column(
            "hist_target",
            sa.BigInteger(),
            server_default=str(LEGACY_HIST_TARGET),
            nullable=False,
        ),
    )
    # Every row written from now on says its target: no default.
    op.alter_column("telemetry_samples", "hist_target", server_default=None)
    op.create_check_constraint(
        op.f("ck_telemetry_samples_hist_target_known"),
        "telemetry_samples",
        f"hist_target >= {LEGACY_HIST_TARGET}",
    )
    op.drop_constraint(op.f("pk_telemetry_samples"), "telemetry_samples", type_="primary")
    op.create_primary_key(op.f("pk_telemetry_samples"), "telemetry_samples", [*_KEY, "hist_target"])


def downgrade() -> None:
    op.execute(f"DELETE FROM telemetry_samples WHERE hist_target <> {LEGACY_HIST_TARGET}")
    op.drop_constraint(op.f("pk_telemetry_samples"), "telemetry_samples", type_="primary")
    op.create_primary_key(op.f("pk_telemetry_samples"), "telemetry_samples", _KEY)
    op.drop_constraint(
        op.f("ck_telemetry_samples_hist_target_known"), "telemetry_samples", type_="check"
    )
    op.drop_column("telemetry_samples", "hist_target")
