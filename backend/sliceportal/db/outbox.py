"""The transactional outbox: Celery tasks enqueued only once the transaction that asked for
them has committed, and never lost between the commit and the enqueue.

A service that changes what a switch should hold adds a message (`reconcile`, `deploy`) to its
own transaction with `changes.write`. The dispatcher (`dispatch`) sends committed, unsent rows as
Celery tasks and marks them dispatched in one transaction: if it dies after sending and before
committing, the rows are sent again — harmless, since the tasks are idempotent — and if the
broker is down nothing is marked, so the next run sends them. Identical messages waiting
together are sent once (ten changes to one switch make one reconciliation).

Two things run the dispatcher: the beat process listens on the PostgreSQL channel
`sliceportal_outbox` (`OutboxListener`; a trigger notifies it on every insert, and PostgreSQL
delivers notifications only at commit), so a change reaches a worker within milliseconds; and
a periodic sweep (beat, every `outbox_dispatch_interval_s`) catches whatever a lost connection
or a restart made the listener miss.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy.orm import Session

from sliceportal.db.models import OutboxMessage

logger = logging.getLogger(__name__)

CHANNEL = "sliceportal_outbox"
"""Notified by the `outbox_notify` trigger (migration 0002) on every insert into `outbox`."""
RECONCILE_SWITCH = "sliceportal.controlplane.tasks.reconcile_switch"
DEPLOY = "deploy"
"""`reconcile_switch`'s second argument for a deploy (any other value reconciles, the `True`
an older version's periodic runs carried there among them)."""
DISPATCH_BATCH = 500

Sender = Callable[[str, list[Any], str | None], str]
"""Sends one task by name with positional arguments and, if given, its task id; returns the
task id it was sent with."""


@dataclass(frozen=True)
class Message:
    """One task to send after the commit: `task(*args)`, with `task_id` when the caller needs
    to know it before it is sent (else the dispatcher's send gives it one)."""

    task: str
    args: list[Any]
    task_id: str | None = None


def reconcile_switch(
    switch_id: int, *, deploy: bool = False, task_id: str | None = None
) -> Message:
    """Reconcile the switch; with `deploy` also replace a foreign pipeline (the task's
    arguments are `switch_id` and, for a deploy, `DEPLOY`)."""
    return Message(RECONCILE_SWITCH, [switch_id, DEPLOY] if deploy else [switch_id], task_id)


def reconcile(switch_ids: Iterable[int]) -> list[Message]:
    """Reconcile each of these switches once the transaction commits."""
    return [reconcile_switch(switch_id) for switch_id in sorted(set(switch_ids))]


def dispatch(session: Session, send: Sender, *, limit: int = DISPATCH_BATCH) -> int:
    """Send up to `limit` committed, undispatched messages (oldest first); the number of tasks
    sent. Rows are locked SKIP LOCKED, so concurrent dispatchers share the work."""
    rows = session.scalars(
        sa.select(OutboxMessage)
        .where(OutboxMessage.dispatched_at.is_(None))
        .order_by(OutboxMessage.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    ).all()
    groups: dict[tuple[str, str, str | None], list[OutboxMessage]] = {}
    for row in rows:
        key = (row.task, json.dumps(row.args, sort_keys=True), row.task_id)
        groups.setdefault(key, []).append(row)
    now = dt.datetime.now(dt.UTC)
    for (task, _, given_id), members in groups.items():
        task_id = send(task, members[0].args, given_id)
        for row in members:
            row.dispatched_at = now
            row.task_id = task_id
    session.commit()
    return len(groups)


def send_now(session: Session, task_id: str, send: Sender) -> None:
    """Send the committed message `task_id` now instead of waiting for a dispatcher (a caller
    that answers with the task id wants it queued before it answers).

    Nothing to do when a dispatcher sent it meanwhile (its lock is waited for). When `send`
    raises, the message is deleted before the error propagates: the caller can then say
    truthfully that nothing was queued. (A dispatcher that sent it and died before its commit
    leaves a task that runs although the caller reports a failure: harmless, tasks are
    idempotent.)"""
    row = session.scalars(
        sa.select(OutboxMessage)
        .where(OutboxMessage.dispatched_at.is_(None), OutboxMessage.task_id == task_id)
        .with_for_update()
    ).one_or_none()
    if row is None:  # sent: a dispatcher's commit took it out of the pending rows
        session.commit()
        return
    try:
        send(row.task, row.args, task_id)
    except BaseException:
        session.delete(row)
        session.commit()
        raise
    row.dispatched_at = dt.datetime.now(dt.UTC)
    session.commit()


def purge(session: Session, keep: dt.timedelta) -> int:
    """Delete messages dispatched longer than `keep` ago; the number deleted."""
    cutoff = dt.datetime.now(dt.UTC) - keep
    result = session.execute(sa.delete(OutboxMessage).where(OutboxMessage.dispatched_at < cutoff))
    session.commit()
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def libpq_url(database_url: str) -> str:
    """A SQLAlchemy URL (`postgresql+psycopg://…`) as psycopg's own connection string."""
    return sa.make_url(database_url).set(drivername="postgresql").render_as_string(False)


class OutboxListener(threading.Thread):
    """LISTENs on `CHANNEL` and runs `run_dispatch` after each notification, at start and
    after every reconnection (notifications sent while disconnected are lost; the rows are
    not). Reconnects every `retry_s` while PostgreSQL is unreachable."""

    def __init__(
        self, database_url: str, run_dispatch: Callable[[], object], *, retry_s: float = 1.0
    ) -> None:
        super().__init__(name="outbox-listener", daemon=True)
        self._conninfo = libpq_url(database_url)
        self._run_dispatch = run_dispatch
        self._retry_s = retry_s
        self._stopping = threading.Event()

    def stop(self) -> None:
        self._stopping.set()

    def run(self) -> None:
        while not self._stopping.is_set():
            try:
                self._listen()
            except Exception:  # a lost connection, a failed dispatch: retry after a pause
                logger.warning("outbox listener: retrying in %.1f s", self._retry_s, exc_info=True)
                self._stopping.wait(self._retry_s)

    def _listen(self) -> None:
        with psycopg.connect(self._conninfo, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f"LISTEN {CHANNEL}")
            self._run_dispatch()
            while not self._stopping.is_set():
                # Wake at least every second to notice stop(); one dispatch per burst.
                if any(True for _ in conn.notifies(timeout=1.0, stop_after=1)):
                    self._run_dispatch()
