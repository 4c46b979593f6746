"""Connections for the API's reads answered on the event loop.

A read of one row by key costs PostgreSQL a fraction of a millisecond; through a synchronous
session it also costs a trip to the thread pool (a thread switch each way, contended under
load) and the ORM's loading, several times the statement itself. The hottest reads therefore
run one plain statement on psycopg's own asyncio pool (`psycopg_pool`) in autocommit, with the
guarantees of the engine's connections (`db.session`): a connect timeout, TCP keepalives, the
server's `statement_timeout`, a deadline on every answer (`WatchedAsyncConnection`: a frozen
server is a 503, not a hung request) and a connection the server dropped replaced at checkout.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from psycopg_pool import AsyncConnectionPool

from sliceportal.core.config import Settings
from sliceportal.db.deadline import WatchedAsyncConnection
from sliceportal.db.session import ANSWER_MARGIN_S, TCP_KEEPALIVE, server_spoke

ReadPool = AsyncConnectionPool[WatchedAsyncConnection]


def libpq_conninfo(database_url: str) -> tuple[str, str]:
    """A SQLAlchemy URL as libpq's URI, and the `options` it carries (libpq takes one)."""
    url = sa.engine.make_url(database_url)
    options = url.query.get("options", "")
    url = url.set(drivername="postgresql").difference_update_query(["options"])
    return url.render_as_string(hide_password=False), str(options)


def create_read_pool(settings: Settings, *, statement_timeout_s: float) -> ReadPool:
    """The pool, not yet open (`await pool.open()` on the loop that uses it)."""
    conninfo, options = libpq_conninfo(settings.database_url)
    timeout_ms = round(statement_timeout_s * 1000)

    async def configure(connection: WatchedAsyncConnection) -> None:
        connection.answer_timeout_s = statement_timeout_s + ANSWER_MARGIN_S

    async def check(connection: WatchedAsyncConnection) -> None:
        if server_spoke(connection.fileno()):
            await AsyncConnectionPool.check_connection(connection)

    kwargs: dict[str, Any] = {
        "autocommit": True,
        "connect_timeout": settings.db_connect_timeout_s,
        "options": f"{options} -c statement_timeout={timeout_ms}".strip(),
        **TCP_KEEPALIVE,
    }
    return AsyncConnectionPool(
        conninfo,
        connection_class=WatchedAsyncConnection,
        kwargs=kwargs,
        min_size=0,  # connected on first use, as the engine's: an app that reads nothing holds none
        max_size=settings.db_read_pool_size,
        # A connection not had within the connect timeout is a 503, as for a fresh one of the
        # engine's; attempts given up after two connect timeouts, so that once the server is
        # back the next read tries at once instead of after a backoff grown over the outage.
        timeout=settings.db_connect_timeout_s,
        reconnect_timeout=2 * settings.db_connect_timeout_s,
        configure=configure,
        check=check,
        open=False,
        name="api-reads",
    )
