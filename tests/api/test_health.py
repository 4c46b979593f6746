"""Health, and the outage answers: a database or Redis that is down, frozen or killed gives 503
problem+json within a bound, and loses nothing it accepted."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from controlplane.processes import TcpProxy, database_proxy, wait_for
from sliceportal.api.main import create_app
from sliceportal.core.config import Settings
from sliceportal.core.embedded import free_tcp_port, start_embedded_redis
from sliceportal.db.models import Slice
from utils.factories import create, create_link, slice_body
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


def timed(request: Callable[[], httpx.Response]) -> tuple[httpx.Response, float]:
    start = time.monotonic()
    response = request()
    return response, time.monotonic() - start


@pytest.fixture
def proxied(settings: Settings, migrated_url: str) -> Iterator[tuple[TcpProxy, FastAPI, str]]:
    """A real server whose database is behind a proxy that can freeze or cut; statements may
    take 1 s (so a silent server is given 2 s), connections 2 s (libpq's least)."""
    proxy, database_url = database_proxy(migrated_url)
    app = create_app(
        settings.model_copy(
            update={
                "database_url": database_url,
                "api_statement_timeout_s": 1.0,
                "db_connect_timeout_s": 2,
            }
        )
    )
    try:
        with running_server(app) as base:
            yield proxy, app, base
    finally:
        proxy.cut()


def test_a_frozen_database_gives_503_within_bounds_and_loses_nothing(
    proxied: tuple[TcpProxy, FastAPI, str],
    db: sessionmaker[Session],
    client: TestClient,
    operator_headers: Headers,
) -> None:
    """PostgreSQL frozen as by SIGSTOP (connections open, nothing answered): readiness says so
    within 1 s, a request on a pooled connection fails after the statement timeout and its
    1 s margin, one needing a new connection after the connect timeout; none hangs (before,
    all of them waited for the server to resume). Nothing accepted is lost, nothing refused
    is half made."""
    proxy, app, base = proxied
    link = create_link(client, operator_headers)
    first, during, after = (slice_body([link["id"]]) for _ in range(3))
    with (
        httpx.Client(base_url=base, headers=operator_headers, timeout=30) as http,
        httpx.Client(base_url=base, headers=operator_headers, timeout=30) as other,
    ):
        accepted = http.post("/api/v1/slices", json=first)
        assert accepted.status_code == 201, accepted.text
        # Routed once before: FastAPI builds a router's routing on its first request (0.9 s).
        assert http.get("/api/v1/health/ready").status_code == 200
        wait_for(lambda: app.state.gate.in_flight == 0, 10, "the creation's session closed")
        proxy.freeze()
        answers: dict[str, tuple[httpx.Response, float]] = {}

        def create() -> None:  # with a client of its own: the two requests run at once
            answers["pooled"] = timed(lambda: other.post("/api/v1/slices", json=during))

        # A request on the pooled connection (the one left idle), and meanwhile readiness.
        in_flight = threading.Thread(target=create)
        in_flight.start()
        pool = app.state.engine.pool
        wait_for(lambda: pool.checkedout() == 1, 10, "the creation has the pooled connection")
        ready, ready_took = timed(lambda: http.get("/api/v1/health/ready"))
        in_flight.join(30)
        refused, refused_took = answers["pooled"]
        fresh, fresh_took = timed(lambda: http.get("/api/v1/switches"))  # needs a connection
        proxy.thaw()
        assert_unavailable(ready, "database-unavailable")
        assert ready.json()["detail"] == "the database did not answer within 0.8 s"
        assert ready_took < 1.5  # its 0.8 s, and the scheduling of a loaded machine (1.1 s seen)
        assert_unavailable(refused, "database-unavailable")
        assert refused.json()["detail"] == "the database did not answer within 2 s"
        assert 2 <= refused_took < 3
        assert_unavailable(fresh, "database-unavailable")
        assert fresh.json()["detail"] == "the database did not accept a connection in time"
        assert fresh_took < 3
        wait_for(lambda: http.get("/api/v1/health/ready").status_code == 200, 10, "ready")
        again = http.post("/api/v1/slices", json=after)
        assert again.status_code == 201, again.text
    with db() as session:
        names = {body["name"] for body in (first, during, after)}
        kept = set(session.scalars(select(Slice.name).where(Slice.name.in_(names))))
    assert kept == {first["name"], after["name"]}


def test_a_stopped_database_gives_503_at_once(
    proxied: tuple[TcpProxy, FastAPI, str], viewer_headers: Headers
) -> None:
    """PostgreSQL gone (connections dropped, new ones refused), after a frozen spell."""
    proxy, _, base = proxied
    with httpx.Client(base_url=base, headers=viewer_headers, timeout=30) as http:
        assert http.get("/api/v1/switches").status_code == 200
        assert http.get("/api/v1/health/ready").status_code == 200  # routed once (see above)
        proxy.cut()
        for path in ("/api/v1/switches", "/api/v1/health/ready", "/api/v1/switches"):
            response, took = timed(partial(http.get, path))
            assert_unavailable(response, "database-unavailable")
            assert took < 1
        proxy.restore()
        wait_for(lambda: http.get("/api/v1/switches").status_code == 200, 10, "served again")


def test_a_killed_redis_gives_503_at_once_and_loses_nothing(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    operator_headers: Headers,
    tmp_path: Path,
) -> None:
    """A Redis of the test's own, SIGKILLed: what needs Redis answers 503 at once, what the
    database alone decides is accepted and kept (the outbox hands it to the workers later,
    tests/controlplane/test_faults.py). Stopped (SIGSTOP), readiness still answers in 1 s."""
    redis_server = start_embedded_redis(tmp_path / "redis")
    app = create_app(settings.model_copy(update={"redis_url": redis_server.url}))
    link = create_link(client, operator_headers)
    try:
        with (
            running_server(app) as base,
            httpx.Client(base_url=base, headers=operator_headers, timeout=30) as http,
        ):
            assert http.get("/api/v1/health/ready").status_code == 200
            redis_server.process.send_signal(signal.SIGSTOP)
            stopped, took = timed(lambda: http.get("/api/v1/health/ready"))
            assert_unavailable(stopped, "redis-unavailable")
            assert took < 1
            redis_server.process.kill()
            redis_server.process.wait()
            for response, took in (
                timed(lambda: http.get("/api/v1/health/ready")),
                timed(
                    lambda: http.post(
                        "/api/v1/login/access-token", data={"username": "x", "password": "y"}
                    )
                ),
                timed(lambda: http.post(f"/api/v1/switches/{link['switch_id']}/deploy")),
            ):
                assert_unavailable(response, "redis-unavailable")
                assert took < 1
            created = http.post("/api/v1/slices", json=slice_body([link["id"]]))
            assert created.status_code == 201, created.text
    finally:
        redis_server.stop()
    with db() as session:
        assert session.get(Slice, created.json()["id"]) is not None


def test_a_read_on_the_event_loop_fails_within_bounds_and_recovers(
    proxied: tuple[TcpProxy, FastAPI, str], client: TestClient, operator_headers: Headers
) -> None:
    """`GET /slices/{id}` runs on the API's asyncio pool (`db.aio`), not the engine: frozen,
    a read is 503 after the statement timeout and its margin (a pooled connection) or the
    connect timeout (a new one); cut, 503 within the connect timeout; back, served
    again within seconds (the pool's reconnection backoff does not grow over an outage)."""
    proxy, _, base = proxied
    link = create_link(client, operator_headers)
    created = create(client, "slices", operator_headers, slice_body([link["id"]]))
    path = f"/api/v1/slices/{created['id']}"
    with httpx.Client(base_url=base, headers=operator_headers, timeout=30) as http:
        assert http.get(path).json()["name"] == created["name"]
        proxy.freeze()
        pooled, pooled_took = timed(lambda: http.get(path))
        fresh, fresh_took = timed(lambda: http.get(path))
        proxy.thaw()
        assert_unavailable(pooled, "database-unavailable")
        assert pooled.json()["detail"] == "the database did not answer within 2 s"
        assert 2 <= pooled_took < 3
        assert_unavailable(fresh, "database-unavailable")
        assert fresh.json()["detail"] in {  # the pool may hold a second connection
            "the database did not accept a connection in time",
            "the database did not answer within 2 s",
        }
        assert fresh_took < 3
        wait_for(lambda: http.get(path).status_code == 200, 10, "served after the thaw")
        proxy.cut()
        cut, cut_took = timed(lambda: http.get(path))
        assert_unavailable(cut, "database-unavailable")
        assert cut_took < 3
        proxy.restore()
        wait_for(lambda: http.get(path).status_code == 200, 10, "served after the cut")
