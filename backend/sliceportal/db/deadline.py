"""A deadline on each answer the database owes: a connection whose server stays silent past it
is closed, and the statement fails with `DatabaseSilent` (an OperationalError, so 503).

PostgreSQL's `statement_timeout` cancels a statement that runs too long on a server that runs.
A server that stops running (SIGSTOP, a hung disk, a paused VM) keeps its TCP connections, and
its kernel acknowledges whatever is sent: neither that timeout nor TCP keepalives nor
`tcp_user_timeout` then fire, and a client waits for an answer for ever (the audit saw every
request, readiness included, hang until the server resumed).

Every round trip of a psycopg connection waits in `Connection.wait` (statements, fetches,
commits, rollbacks), which takes a `timeout` for the whole round trip (psycopg 3.2 and later;
its poll wakes every 0.1 s anyway to let signals in). `WatchedConnection` passes its deadline
there, and closes the connection when it expires: the pool drops it. `Connection.wait` and its
`_WaitTimeout` are not documented API, though psycopg's own cancellation uses them: the fault
tests (a frozen PostgreSQL behind a proxy) fail if psycopg stops waiting there.
`WatchedAsyncConnection` does the same for the API's event-loop reads (`db.aio`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg.abc import PQGen

ReturnT = TypeVar("ReturnT")


class DatabaseSilent(psycopg.OperationalError):
    """The server did not answer within the deadline; its connection is closed."""


class WatchedConnection(psycopg.Connection[Any]):
    """A psycopg connection whose every wait for the server ends after `answer_timeout_s`
    (None: no deadline)."""

    answer_timeout_s: float | None = None

    def wait(self, gen: PQGen[ReturnT], *args: Any, **kwargs: Any) -> ReturnT:
        timeout_s = self.answer_timeout_s
        if timeout_s is None or args or kwargs:  # psycopg's own timed waits keep theirs
            return super().wait(gen, *args, **kwargs)
        try:
            return super().wait(gen, timeout=timeout_s)
        except psycopg.errors._WaitTimeout as exc:
            self.pgconn.finish()  # mid-protocol: unusable, `broken` for the pool
            raise DatabaseSilent(f"the database did not answer within {timeout_s:g} s") from exc

    @contextmanager
    def answering_within(self, timeout_s: float) -> Iterator[None]:
        """A shorter deadline for the waits inside (a readiness probe's)."""
        before, self.answer_timeout_s = self.answer_timeout_s, timeout_s
        try:
            yield
        finally:
            self.answer_timeout_s = before


class WatchedAsyncConnection(psycopg.AsyncConnection[Any]):
    """`WatchedConnection` for the event loop: every wait for the server ends after
    `answer_timeout_s` (None: no deadline)."""

    answer_timeout_s: float | None = None

    async def wait(self, gen: PQGen[ReturnT], *args: Any, **kwargs: Any) -> ReturnT:
        timeout_s = self.answer_timeout_s
        if timeout_s is None or args or kwargs:
            return await super().wait(gen, *args, **kwargs)
        try:
            return await super().wait(gen, timeout=timeout_s)
        except psycopg.errors._WaitTimeout as exc:
            self.pgconn.finish()
            raise DatabaseSilent(f"the database did not answer within {timeout_s:g} s") from exc
