"""Alembic environment: the URL is `config.attributes["database_url"]` when a caller passes one
(tests, `sliceportal.db.migrate`), else the process's Settings.

A transaction-level advisory lock serialises concurrent upgrades (several API workers starting
at once); compare_type/compare_server_default make `alembic check` catch type and default drift.
"""

from __future__ import annotations

from logging.config import fileConfig

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
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            compare_type=True,
            compare_server_default=True,
        )
        with context.begin_transaction():
            connection.execute(sa.select(sa.func.pg_advisory_xact_lock(MIGRATION_LOCK_KEY)))
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
