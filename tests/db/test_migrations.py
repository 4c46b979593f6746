from __future__ import annotations

import uuid

from alembic import command
from sqlalchemy import create_engine, inspect

from sliceportal.core import embedded
from sliceportal.db.migrate import alembic_config, downgrade, upgrade
from sliceportal.db.models import Base


def test_models_and_migrations_agree(migrated_url: str) -> None:
    """`alembic check`: autogenerate finds nothing to add, drop or alter."""
    command.check(alembic_config(migrated_url))


def test_downgrade_and_upgrade_again(postgres_server_url: str) -> None:
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    try:
        upgrade(url)
        downgrade(url, "base")
        engine = create_engine(url)
        assert set(inspect(engine).get_table_names()) == {"alembic_version"}
        upgrade(url)
        assert set(inspect(engine).get_table_names()) == set(Base.metadata.tables) | {
            "alembic_version"
        }
        engine.dispose()
    finally:
        embedded.drop_database(postgres_server_url, name)
