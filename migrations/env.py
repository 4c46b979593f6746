"""Alembic environment: the URL is `config.attributes["database_url"]` when a caller passes one
(tests, `sliceportal.db.migrate`), else the process's Settings.

A transaction-level advisory lock serialises concurrent upgrades (several API workers starting
at once); compare_type/compare_server_default make `alembic check` catch type and default drift.
Partitions are left out of the comparison: the models declare the partitioned tables, and
`db.partitions` makes their partitions as time goes by.
"""

from __future__ import annotations

from collections.abc import Callable
from logging.config import fileConfig
from typing import Any

import sqlalchemy as sa
from alembic import context

from sliceportal.core.config import get_settings
from sliceportal.db.models import Base

MIGRATION_LOCK_KEY = 0x511CE_0001

config = context.config
target_metadata = Base.metadata
if config.config_file_name and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def database_url() -> str:
    url = config.attributes.get("database_url")
    return str(url) if url else get_settings().database_url


_PARTITIONS = sa.text("SELECT relname FROM pg_class WHERE relispartition")


def not_a_partition(partitions: set[str]) -> Callable[[str | None, str, Any], bool]:
    """Alembic's `include_name`: every table but the partitions named in ``partitions``."""

    def include(name: str | None, type_: str, _parents: Any) -> bool:
        return not (type_ == "table" and name in partitions)

    return include


def run_migrations_offline() -> None:
    context.configure(
        url=database_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        compare_type=True,
        compare_server_default=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = sa.create_engine(database_url(), poolclass=sa.pool.NullPool)
    with engine.connect() as connection:
        partitions = set(connection.scalars(_PARTITIONS))
        connection.commit()  # the migrations run in a transaction of their own
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            compare_type=True,
            compare_server_default=True,
            include_name=not_a_partition(partitions),
        )
        with context.begin_transaction():
            connection.execute(sa.select(sa.func.pg_advisory_xact_lock(MIGRATION_LOCK_KEY)))
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
