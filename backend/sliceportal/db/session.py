"""Engine and session factory built from `Settings`; one engine per process (or per test app)."""

from __future__ import annotations

from functools import lru_cache

import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.core.config import Settings, get_settings


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


@lru_cache
def process_engine() -> sa.Engine:
    """The engine of a worker or poller process, built on first use (so after a fork)."""
    return create_db_engine(get_settings())


def process_session() -> Session:
    """A session on `process_engine()`, for Celery tasks."""
    return create_sessionmaker(process_engine())()
