"""Control plane: what the workers saw on each switch (`switch_sync`), which slices a switch
confirmed (`slice_deployments`), the transactional outbox, and a slice's state detail.

The outbox's NOTIFY trigger is written by hand (autogenerate does not see triggers): every
statement inserting outbox rows notifies `sliceportal_outbox`, and PostgreSQL delivers the
notification only when the transaction commits, which is exactly when the dispatcher may send.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 14:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOTIFY_FUNCTION = """
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('sliceportal_outbox', '');
    RETURN NULL;
END
$$
"""


def upgrade() -> None:
    op.add_column("slices", sa.Column("state_detail", sa.Text(), nullable=True))
    op.create_table(
        "switch_sync",
        sa.Column("switch_id", sa.Integer(), nullable=False),
        sa.Column("pipeline_cookie", sa.String(length=16), nullable=True),
        sa.Column("pipeline_in_sync", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("last_reconcile_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_contact_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("entries_desired", sa.Integer(), server_default="0", nullable=False),
        sa.Column("entries_installed", sa.Integer(), server_default="0", nullable=False),
        sa.CheckConstraint(
            "entries_desired >= 0", name=op.f("ck_switch_sync_entries_desired_non_negative")
        ),
        sa.CheckConstraint(
            "entries_installed >= 0", name=op.f("ck_switch_sync_entries_installed_non_negative")
        ),
        sa.ForeignKeyConstraint(
            ["switch_id"],
            ["switches.id"],
            name=op.f("fk_switch_sync_switch_id_switches"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("switch_id", name=op.f("pk_switch_sync")),
    )
    op.create_table(
        "slice_deployments",
        sa.Column("slice_id", sa.Integer(), nullable=False),
        sa.Column("switch_id", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(length=32), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("confirmed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["slice_id", "switch_id"],
            ["slice_switches.slice_id", "slice_switches.switch_id"],
            name=op.f("fk_slice_deployments_slice_id_switch_id_slice_switches"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("slice_id", "switch_id", name=op.f("pk_slice_deployments")),
    )
    op.create_table(
        "outbox",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("task", sa.String(length=200), nullable=False),
        sa.Column("args", postgresql.JSONB(), server_default="[]", nullable=False),
        sa.Column("dispatched_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("task_id", sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
    )
    op.create_index(op.f("ix_outbox_dispatched_at"), "outbox", ["dispatched_at"], unique=False)
    op.create_index(
        "ix_outbox_pending",
        "outbox",
        ["id"],
        unique=False,
        postgresql_where=sa.text("dispatched_at IS NULL"),
    )
    op.execute(NOTIFY_FUNCTION)
    op.execute(
        "CREATE TRIGGER outbox_notify AFTER INSERT ON outbox "
        "FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER outbox_notify ON outbox")
    op.execute("DROP FUNCTION outbox_notify()")
    op.drop_index(
        "ix_outbox_pending", table_name="outbox", postgresql_where=sa.text("dispatched_at IS NULL")
    )
    op.drop_index(op.f("ix_outbox_dispatched_at"), table_name="outbox")
    op.drop_table("outbox")
    op.drop_table("slice_deployments")
    op.drop_table("switch_sync")
    op.drop_column("slices", "state_detail")
