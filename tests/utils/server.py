"""A real uvicorn server in a thread, for tests that need real concurrent HTTP clients."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import uvicorn
from fastapi import FastAPI
from sqlalchemy import select, text
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.core.embedded import free_tcp_port
from sliceportal.db.models import Link
from utils.factories import slice_body


@contextmanager
def running_server(app: FastAPI, log_level: str = "warning") -> Iterator[str]:
    """Serve `app` on a free loopback port; yield its base URL; stop it afterwards. uvicorn
    logs as it does by default (the access log, at "info", to stdout)."""
    port = free_tcp_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level=log_level)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


_LOCK_WAITERS = text(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
    "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
)


def lock_waiters(session: Session, timeout_s: float = 10) -> list[int]:
    """The backends of this database waiting for a lock, once there is one (AssertionError
    after `timeout_s`): for tests that hold a row lock and let a request wait for it."""
    deadline = time.monotonic() + timeout_s
    while not (pids := list(session.scalars(_LOCK_WAITERS).all())):
        assert time.monotonic() < deadline, "no request waited for the lock"
        session.rollback()  # pg_stat_activity is a snapshot per transaction
        time.sleep(0.02)
    return pids


@dataclass
class WaitingCreation:
    """A slice creation sent in a thread, waiting for a link lock a test holds."""

    answers: list[httpx.Response]
    """Its answer, once it has one."""
    pids: list[int]
    """The backends waiting for the lock (its own among them)."""
    release: Callable[[], None]
    """Release the lock and wait for the creation's answer."""


@contextmanager
def creation_waiting_for_lock(
    db: sessionmaker[Session], base: str, link_id: int, headers: dict[str, str]
) -> Iterator[WaitingCreation]:
    """Lock the link, send a creation on it to `base` and return once it waits for the lock;
    the lock is released on exit if `release` was not called."""
    answers: list[httpx.Response] = []
    with db() as holder:
        holder.execute(select(Link).where(Link.id == link_id).with_for_update())

        def create() -> None:
            body = slice_body([link_id])
            answers.append(
                httpx.post(f"{base}/api/v1/slices", json=body, headers=headers, timeout=30)
            )

        creating = threading.Thread(target=create)
        creating.start()
        with db() as watcher:
            pids = lock_waiters(watcher)

        def release() -> None:
            holder.rollback()
            creating.join(30)

        try:
            yield WaitingCreation(answers, pids, release)
        finally:
            release()
