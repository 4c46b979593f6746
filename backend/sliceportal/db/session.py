"""Engine and session factory built from `Settings`; one engine per process (or per test app)."""

from __future__ import annotations

import select
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, cast

import psycopg
import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.core.config import Settings, get_settings
from sliceportal.db.deadline import WatchedConnection

ANSWER_MARGIN_S = 1.0
"""How long past `statement_timeout` a silent server is given before its connection is closed:
a server that runs has cancelled the statement and said so by then."""
TCP_KEEPALIVE = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 2,
    "keepalives_count": 3,
    "tcp_user_timeout": 10_000,
}
"""libpq's TCP options: a peer the network lost (no acknowledgement of what is sent for 10 s,
or of 3 keepalive probes after 10 s of silence) ends the connection instead of leaving it
waiting for hours (the kernel's defaults). They do nothing for a server whose kernel still
acknowledges, stopped or hung: `db.deadline` covers that one."""


def create_db_engine(settings: Settings, *, statement_timeout_s: float | None = None) -> sa.Engine:
    """A pooled engine sized for the API's concurrency.

    Connections the server dropped (restart, terminated backend, idle timeout) are replaced at
    checkout instead of failing the next request (see `_dropped_connection_check`);
    `connect_timeout` turns an unreachable server into a prompt OperationalError (answered as
    503) rather than a hung request, and `TCP_KEEPALIVE` a lost one.

    With `statement_timeout_s` (the API's engine), the server cancels a statement that runs
    longer (a lock wait included), and a server silent `ANSWER_MARGIN_S` beyond that, stopped
    or hung, has its connection closed (`db.deadline`): each round trip ends within a bound.
    """
    engine = sa.create_engine(
        settings.database_url,
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        pool_timeout=settings.db_pool_timeout_s,
        connect_args={"connect_timeout": settings.db_connect_timeout_s, **TCP_KEEPALIVE},
    )
    sa.event.listen(engine, "do_connect", _watched_connect(statement_timeout_s))
    sa.event.listen(engine, "checkout", _dropped_connection_check(engine.dialect))
    return engine


def _watched_connect(
    statement_timeout_s: float | None,
) -> Callable[[sa.Dialect, object, list[Any], dict[str, Any]], WatchedConnection]:
    """Connect as `WatchedConnection`s; with a statement timeout, set it on the server (added to
    the URL's own `options`) and give each answer that long and `ANSWER_MARGIN_S`."""

    def connect(
        _dialect: sa.Dialect, _record: object, cargs: list[Any], cparams: dict[str, Any]
    ) -> WatchedConnection:
        if statement_timeout_s is None:
            return WatchedConnection.connect(*cargs, **cparams)
        timeout_ms = round(statement_timeout_s * 1000)
        options = f"{cparams.get('options', '')} -c statement_timeout={timeout_ms}"
        connection = WatchedConnection.connect(*cargs, **cparams | {"options": options.strip()})
        connection.answer_timeout_s = statement_timeout_s + ANSWER_MARGIN_S
        return connection

    return connect


@contextmanager
def answering_within(connection: sa.Connection, timeout_s: float) -> Iterator[None]:
    """`connection`'s round trips inside get `timeout_s` for the server's answer."""
    watched = cast(WatchedConnection, connection.connection.driver_connection)
    with watched.answering_within(timeout_s):
        yield


def _dropped_connection_check(dialect: sa.Dialect) -> Callable[[Any, object, object], None]:
    """`pool_pre_ping`, without its round trip on every checkout.

    A pooled connection is idle, so the server has nothing to say on it unless it closed it:
    then the socket is readable (its last error, then EOF). Only then ping, as pre-ping would;
    a failed ping, or a socket already gone, makes the pool replace this connection and every
    older one, as a failed pre-ping does. Polling costs microseconds, a ping 0.1-0.2 ms of CPU.
    """

    def check(dbapi_connection: Any, _record: object, _proxy: object) -> None:
        try:
            if server_spoke(dbapi_connection.fileno()):
                dialect.do_ping(dbapi_connection)
        except Exception as exc:
            raise sa.exc.InvalidatePoolError(str(exc)) from exc

    return check


def server_spoke(fileno: int) -> bool:
    """Whether an idle connection's socket has something to read: the server closed it (its
    last error, then EOF), since an idle connection is owed nothing."""
    poller = select.poll()
    poller.register(fileno, select.POLLIN)
    return bool(poller.poll(0))


def driver(session: Session) -> psycopg.Connection[Any]:
    """The psycopg connection under the session's transaction, for the plain SQL of the hot
    paths (`db.queries`, `db.changes`)."""
    return cast(psycopg.Connection[Any], session.connection().connection.driver_connection)


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
