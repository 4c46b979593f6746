"""A deadline on each answer the database owes: a connection whose server stays silent past it
is closed, and the statement fails with `DatabaseSilent` (an OperationalError, so 503).

PostgreSQL's `statement_timeout` cancels a statement that runs too long on a server that runs.
A server that stops running (SIGSTOP, a hung disk, a paused VM) keeps its TCP connections, and
its kernel acknowledges whatever is sent: neither that timeout nor TCP keepalives nor
`tcp_user_timeout` then fire, and a client waits for an answer for ever (the audit saw every
request, readiness included, hang until the server resumed).

Every round trip of a psycopg connection waits in `Connection.wait` (statements, fetches,
commits, rollbacks); `WatchedConnection` arms a deadline around it, and one watchdog thread per
process shuts down the socket of a connection still waiting at its deadline. The waiting thread
wakes at once (the socket reads EOF), and libpq marks the connection broken, so the pool drops
it. `Connection.wait` is not documented API, though every psycopg 3 release has it: the fault
tests (a frozen PostgreSQL behind a proxy) fail if psycopg stops waiting there.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg.abc import PQGen

WATCHDOG_TICK_S = 0.05
"""How late past its deadline a silent connection may be closed."""

ReturnT = TypeVar("ReturnT")


class DatabaseSilent(psycopg.OperationalError):
    """The server did not answer within the deadline; its connection is closed."""


class Watchdog:
    """Shuts down the sockets of connections waiting for the server past their deadline.

    A deadline is armed and disarmed under the same lock the watchdog fires under, so a socket
    is shut down only while its connection still waits (never one closed and reused since).
    Its thread starts on first use and sleeps while no connection waits.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._deadlines: dict[WatchedConnection, tuple[float, int]] = {}
        """Each waiting connection's deadline (monotonic) and socket."""
        self._thread: threading.Thread | None = None

    @contextmanager
    def watching(self, connection: WatchedConnection, timeout_s: float) -> Iterator[None]:
        with self._changed:
            self._deadlines[connection] = (time.monotonic() + timeout_s, connection.fileno())
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="db-watchdog", daemon=True)
                self._thread.start()
            elif len(self._deadlines) == 1:
                self._changed.notify()
        try:
            yield
        finally:
            with self._changed:
                self._deadlines.pop(connection, None)

    def _run(self) -> None:
        with self._changed:
            while True:
                now = time.monotonic()
                for connection, (deadline, fd) in list(self._deadlines.items()):
                    if deadline <= now:
                        del self._deadlines[connection]
                        connection.silenced = True
                        _shut_down(fd)
                self._changed.wait(WATCHDOG_TICK_S if self._deadlines else None)


def _shut_down(fd: int) -> None:
    """End the connection on socket `fd` (a duplicate is shut down and closed: the waiting
    thread's descriptor stays valid until libpq closes it)."""
    try:
        with socket.socket(fileno=os.dup(fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # gone already: the waiting thread has its error


WATCHDOG = Watchdog()


class WatchedConnection(psycopg.Connection[Any]):
    """A psycopg connection whose every wait for the server ends after `answer_timeout_s`
    (None: no deadline)."""

    answer_timeout_s: float | None = None
    silenced = False
    """Set by the watchdog when it closed this connection."""

    def wait(self, gen: PQGen[ReturnT], *args: Any, **kwargs: Any) -> ReturnT:
        timeout_s = self.answer_timeout_s
        if timeout_s is None:
            return super().wait(gen, *args, **kwargs)
        with WATCHDOG.watching(self, timeout_s):
            try:
                return super().wait(gen, *args, **kwargs)
            except psycopg.OperationalError as exc:
                if self.silenced:
                    raise DatabaseSilent(
                        f"the database did not answer within {timeout_s:g} s"
                    ) from exc
                raise

    @contextmanager
    def answering_within(self, timeout_s: float) -> Iterator[None]:
        """A shorter deadline for the waits inside (a readiness probe's)."""
        before, self.answer_timeout_s = self.answer_timeout_s, timeout_s
        try:
            yield
        finally:
            self.answer_timeout_s = before
