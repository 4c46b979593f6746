"""Health, and the outage answers: a database or Redis that is down gives 503 problem+json."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.api.main import create_app
from sliceportal.core.config import Settings
from sliceportal.core.embedded import free_tcp_port
from utils.factories import create_link
from utils.server import creation_waiting_for_lock, running_server

Headers = dict[str, str]


def assert_unavailable(response: httpx.Response, kind: str) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["retry-after"]
    assert response.json()["type"].endswith(f"/{kind}")
    assert "Traceback" not in response.text


def test_health(client: TestClient) -> None:
    assert client.get("/api/v1/health").json() == {"message": "alive"}
    assert client.get("/api/v1/health/ready").json() == {"database": "ok", "redis": "ok"}


@pytest.fixture(scope="module")
def database_down(settings: Settings) -> Any:
    down = settings.model_copy(
        update={"database_url": f"postgresql+psycopg://postgres@127.0.0.1:{free_tcp_port()}/x"}
    )
    with TestClient(create_app(down)) as client:
        yield client


def test_database_down_gives_503(database_down: TestClient, viewer_headers: Headers) -> None:
    assert database_down.get("/api/v1/health").status_code == 200
    assert_unavailable(database_down.get("/api/v1/health/ready"), "database-unavailable")
    assert_unavailable(
        database_down.get("/api/v1/switches", headers=viewer_headers), "database-unavailable"
    )
    login = database_down.post(
        "/api/v1/login/access-token", data={"username": "someone", "password": "whatever"}
    )
    assert_unavailable(login, "database-unavailable")


def test_redis_down_gives_503(settings: Settings) -> None:
    down = settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{free_tcp_port()}/0"})
    with TestClient(create_app(down)) as client:
        assert_unavailable(client.get("/api/v1/health/ready"), "redis-unavailable")
        login = client.post(
            "/api/v1/login/access-token", data={"username": "someone", "password": "whatever"}
        )
        assert_unavailable(login, "redis-unavailable")


def test_connection_killed_mid_request_gives_503(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    operator_headers: Headers,
) -> None:
    """Hold the link lock, let a creation wait for it, kill that request's connection."""
    link = create_link(client, operator_headers)
    with (
        running_server(create_app(settings)) as base,
        creation_waiting_for_lock(db, base, link["id"], operator_headers) as waiting,
        db() as killer,
    ):
        killer.execute(select(func.pg_terminate_backend(waiting.pids[0])))
        waiting.release()
        answers = waiting.answers
        assert_unavailable(answers[0], "database-unavailable")
        after = httpx.get(f"{base}/api/v1/links/{link['id']}", headers=operator_headers)
        assert after.status_code == 200
