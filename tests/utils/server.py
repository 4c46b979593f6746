"""A real uvicorn server in a thread, for tests that need real concurrent HTTP clients."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.orm import Session

from sliceportal.core.embedded import free_tcp_port


@contextmanager
def running_server(app: FastAPI) -> Iterator[str]:
    """Serve `app` on a free loopback port; yield its base URL; stop it afterwards."""
    port = free_tcp_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
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
