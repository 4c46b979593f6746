"""The transactional outbox: dispatched once committed, coalesced, never lost to a failed send,
and announced by PostgreSQL at commit."""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.core.config import Settings
from sliceportal.db import changes, outbox
from sliceportal.db.models import OutboxMessage


class Sent:
    """A sender that records what it sends (and may refuse, like a broker that is down)."""

    def __init__(self, *, down: bool = False) -> None:
        self.sent: list[tuple[str, list[Any]]] = []
        self.down = down

    def __call__(self, task: str, args: list[Any], task_id: str | None) -> str:
        if self.down:
            raise ConnectionError("broker down")
        self.sent.append((task, args))
        return task_id or f"task-{len(self.sent)}"


def enqueue(session: Session, task: str, *args: Any) -> None:
    changes.write(session, None, messages=[outbox.Message(task, list(args))])


def drain(db: sessionmaker[Session], send: Sent) -> None:
    """Dispatch until nothing is pending (other tests leave rows behind)."""
    while True:
        with db() as session:
            if not outbox.dispatch(session, send):
                return


def test_committed_messages_are_sent_once_and_duplicates_coalesce(
    db: sessionmaker[Session],
) -> None:
    task = f"test.task-{uuid.uuid4().hex}"
    with db() as session:
        for args in ([1], [2], [1], [1]):
            enqueue(session, task, *args)
        session.commit()
    send = Sent()
    drain(db, send)
    mine = [args for name, args in send.sent if name == task]
    assert sorted(mine) == [[1], [2]]
    with db() as session:
        rows = session.scalars(sa.select(OutboxMessage).where(OutboxMessage.task == task)).all()
        assert all(row.dispatched_at is not None and row.task_id for row in rows)
        assert len({row.task_id for row in rows if row.args == [1]}) == 1
    again = Sent()
    drain(db, again)
    assert not [name for name, _ in again.sent if name == task]


def test_a_failed_send_marks_nothing_and_the_next_sweep_sends(db: sessionmaker[Session]) -> None:
    task = f"test.task-{uuid.uuid4().hex}"
    with db() as session:
        enqueue(session, task, 7)
        session.commit()
    with db() as session, pytest.raises(ConnectionError):
        outbox.dispatch(session, Sent(down=True), limit=10**6)
    send = Sent()
    drain(db, send)
    assert (task, [7]) in send.sent


def test_uncommitted_messages_are_not_sent(db: sessionmaker[Session]) -> None:
    task = f"test.task-{uuid.uuid4().hex}"
    with db() as writer:
        enqueue(writer, task, 1)
        writer.flush()
        send = Sent()
        drain(db, send)
        assert not [name for name, _ in send.sent if name == task]
        writer.rollback()


def test_concurrent_dispatchers_skip_each_others_rows(db: sessionmaker[Session]) -> None:
    task = f"test.task-{uuid.uuid4().hex}"
    with db() as session:
        enqueue(session, task, 1)
        session.commit()
    drain(db, Sent())  # everything older is out of the way
    with db() as session:
        enqueue(session, task, 2)
        session.commit()
    with db() as first:
        locked = first.scalars(
            sa.select(OutboxMessage)
            .where(OutboxMessage.task == task, OutboxMessage.dispatched_at.is_(None))
            .with_for_update()
        ).all()
        assert len(locked) == 1
        second = Sent()
        with db() as other:
            outbox.dispatch(other, second)
        assert not [name for name, _ in second.sent if name == task]


def test_old_dispatched_messages_are_purged(db: sessionmaker[Session]) -> None:
    task = f"test.task-{uuid.uuid4().hex}"
    with db() as session:
        enqueue(session, task, 1)
        session.commit()
    drain(db, Sent())
    with db() as session:
        session.execute(
            sa.update(OutboxMessage)
            .where(OutboxMessage.task == task)
            .values(dispatched_at=sa.func.now() - sa.text("interval '2 days'"))
        )
        session.commit()
        assert outbox.purge(session, dt.timedelta(days=1)) >= 1
        count = session.scalar(
            sa.select(sa.func.count()).select_from(OutboxMessage).where(OutboxMessage.task == task)
        )
        assert count == 0


def test_the_listener_dispatches_as_soon_as_a_transaction_commits(
    db: sessionmaker[Session], settings: Settings
) -> None:
    listening, woken = threading.Event(), threading.Event()

    def run_dispatch() -> None:
        (woken if listening.is_set() else listening).set()  # the first call is at start

    listener = outbox.OutboxListener(settings.database_url, run_dispatch, retry_s=0.1)
    listener.start()
    try:
        assert listening.wait(5)
        with db() as session:
            enqueue(session, f"test.task-{uuid.uuid4().hex}", 1)
            session.flush()
            assert not woken.wait(0.3), "notified before the commit"
            session.commit()
        assert woken.wait(2), "no dispatch within 2 s of the commit"
    finally:
        listener.stop()
        listener.join(5)
    assert not listener.is_alive()
