"""Run the Alembic migrations from code (tests, `sliceportal migrate`, `sliceportal serve`)."""

from __future__ import annotations

from alembic import command
from alembic.config import Config

from sliceportal.core.paths import MIGRATIONS_DIR, REPO_ROOT


def alembic_config(database_url: str) -> Config:
    """The repository's alembic.ini, pointed at `database_url`."""
    config = Config(str(REPO_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["database_url"] = database_url
    config.attributes["configure_logger"] = False
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str) -> None:
    command.downgrade(alembic_config(database_url), revision)
