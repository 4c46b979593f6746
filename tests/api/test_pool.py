"""Pooled connections the server dropped are replaced at checkout, not answered with 503.

The engine checks a pooled connection's socket instead of pinging on every checkout (see
`sliceportal.db.session`); these tests hold it to what `pool_pre_ping` guaranteed.
"""

from __future__ import annotations

import time

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, select, text
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.api.main import create_app
from sliceportal.core.config import Settings

Headers = dict[str, str]


def _terminate(db: sessionmaker[Session], pids: set[int]) -> None:
    """Terminate these backends and wait until they are gone (their sockets are closed)."""
    with db() as killer:
        for pid in pids:
            assert killer.scalar(select(func.pg_terminate_backend(pid)))
        alive = text("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(:pids)")
        deadline = time.monotonic() + 10
        while killer.scalar(alive, {"pids": list(pids)}):
            assert time.monotonic() < deadline, "the terminated backends did not exit"
            killer.rollback()  # pg_stat_activity is a snapshot per transaction
            time.sleep(0.02)


def _pooled_pids(app: FastAPI, count: int) -> set[int]:
    """The backend pids of `count` connections checked out of the app's pool at once."""
    engine: Engine = app.state.engine
    connections = [engine.connect() for _ in range(count)]
    try:
        return {c.execute(text("SELECT pg_backend_pid()")).scalar_one() for c in connections}
    finally:
        for connection in connections:
            connection.close()


def test_a_terminated_pooled_connection_is_replaced(
    settings: Settings, db: sessionmaker[Session], viewer_headers: Headers
) -> None:
    app = create_app(settings)
    with TestClient(app) as client:
        assert client.get("/api/v1/switches", headers=viewer_headers).status_code == 200
        pids = _pooled_pids(app, 1)
        _terminate(db, pids)
        response = client.get("/api/v1/switches", headers=viewer_headers)
        assert response.status_code == 200, response.text
        assert _pooled_pids(app, 1).isdisjoint(pids)


def test_every_pooled_connection_dropped_at_once_is_replaced(
    settings: Settings, db: sessionmaker[Session], viewer_headers: Headers
) -> None:
    """What a database restart does to the pool: every request after it still succeeds."""
    app = create_app(settings)
    with TestClient(app) as client:
        pids = _pooled_pids(app, 3)
        _terminate(db, pids)
        for _ in range(4):
            response = client.get("/api/v1/switches", headers=viewer_headers)
            assert response.status_code == 200, response.text
        assert _pooled_pids(app, 3).isdisjoint(pids)
