"""Engine and session factory built from `Settings`; one engine per process (or per test app)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.core.config import Settings


def create_db_engine(settings: Settings) -> sa.Engine:
    """A pooled engine sized for the API's concurrency.

    `pool_pre_ping` replaces connections the server dropped (restart, idle timeout) instead of
    failing the next request; `connect_timeout` turns an unreachable server into a prompt
    OperationalError (answered as 503) rather than a hung request.
    """
    return sa.create_engine(
        settings.database_url,
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        pool_timeout=settings.db_pool_timeout_s,
        pool_pre_ping=True,
        connect_args={"connect_timeout": settings.db_connect_timeout_s},
    )


def create_sessionmaker(engine: sa.Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded rows usable after commit (responses are built after it)."""
    return sessionmaker(engine, expire_on_commit=False)
