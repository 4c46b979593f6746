"""Event streams take no request slot, are capped per user and in all, readiness says when the
process takes no new stream, and stream tickets stay out of the access log (a real server,
real streams over HTTP, real Redis)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.api.main import create_app
from sliceportal.core.config import Settings
from sliceportal.schemas.choices import Role
from utils import factories
from utils.server import running_server

Headers = dict[str, str]
GATE_SLOTS = 40
"""The gate's slots by default (the default pool's size and overflow, 20 + 20)."""


@contextmanager
def streams(base: str, paths: list[str], headers: Headers) -> Iterator[None]:
    """Open a stream on each of `paths`, one after the other; keep them open until the exit."""
    with httpx.Client(base_url=base, headers=headers, timeout=10) as http, ExitStack() as opened:
        for path in paths:
            response = http.send(http.build_request("GET", path), stream=True)
            opened.callback(response.close)
            assert response.status_code == 200, response.read()
            assert response.headers["content-type"].startswith("text/event-stream")
        yield


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def stream_paths(app: FastAPI, slice_id: int) -> list[str]:
    """Every operation of the OpenAPI document that answers an event stream, on a slice."""
    return [
        re.sub(r"\{slice_id\}", str(slice_id), path)
        for path, operations in app.openapi()["paths"].items()
        for operation in operations.values()
        if "text/event-stream" in operation["responses"].get("200", {}).get("content", {})
    ]


def test_open_streams_take_no_request_slot(
    settings: Settings,
    app: FastAPI,
    client: TestClient,
    operator_headers: Headers,
    viewer_headers: Headers,
) -> None:
    """A viewer's 45 streams, more than the gate's 40 slots, on every stream route: the
    process serves other requests at once. (Before, each stream held a slot for its whole life:
    the 41st stream and every other request waited 5 s and got 503 `server-busy`.)"""
    link = factories.create_link(client, operator_headers)
    created = client.post(
        "/api/v1/slices", json=factories.slice_body([link["id"]]), headers=operator_headers
    )
    assert created.status_code == 201, created.text
    routes = stream_paths(app, created.json()["id"])
    assert len(routes) == 2  # /stream and /slices/{slice_id}/telemetry/stream
    paths = [routes[n % len(routes)] for n in range(45)]
    served = create_app(
        settings.model_copy(
            update={
                "api_max_in_flight": GATE_SLOTS,
                "stream_max_per_user": 50,
                "stream_max_total": 50,
            }
        )
    )
    with running_server(served) as base, streams(base, paths, viewer_headers):
        assert served.state.streams.total == len(paths) > GATE_SLOTS
        assert served.state.gate.in_flight == 0
        start = time.monotonic()
        answer = httpx.get(f"{base}/api/v1/switches", headers=viewer_headers, timeout=10)
        assert answer.status_code == 200, answer.text
        assert time.monotonic() - start < 1
        assert httpx.get(f"{base}/api/v1/health/ready", timeout=10).status_code == 200
    until(lambda: served.state.streams.total == 0, "closed streams were not counted out")


def assert_problem(response: httpx.Response, status: int, kind: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["retry-after"]
    assert response.json()["type"].endswith(f"/{kind}")


def test_streams_are_capped_per_user_and_in_all_and_readiness_says_so(
    settings: Settings,
    db: sessionmaker[Session],
    viewer_headers: Headers,
    operator_headers: Headers,
    admin_headers: Headers,
) -> None:
    app = create_app(settings.model_copy(update={"stream_max_per_user": 2, "stream_max_total": 3}))
    with db() as session:
        other_viewer = factories.auth_headers(factories.create_user(session, Role.VIEWER), settings)
    with running_server(app) as base:
        ready = f"{base}/api/v1/health/ready"
        with streams(base, ["/api/v1/stream"] * 2, viewer_headers):
            third = httpx.get(f"{base}/api/v1/stream", headers=viewer_headers, timeout=10)
            assert_problem(third, 429, "too-many-streams")
            assert "2 event streams open" in third.json()["detail"]
            assert httpx.get(ready, timeout=10).status_code == 200  # one more would be taken
            with streams(base, ["/api/v1/stream"], other_viewer):
                refused = httpx.get(f"{base}/api/v1/stream", headers=admin_headers, timeout=10)
                assert_problem(refused, 503, "server-busy")
                busy = httpx.get(ready, timeout=10)
                assert_problem(busy, 503, "server-busy")
                assert "3 of 3 event streams open" in busy.json()["detail"]
                # Ordinary requests are still served.
                answer = httpx.get(f"{base}/api/v1/switches", headers=operator_headers)
                assert answer.status_code == 200
            until(lambda: app.state.streams.total == 2, "a closed stream was not counted out")
            assert httpx.get(ready, timeout=10).status_code == 200
            with streams(base, ["/api/v1/stream"], admin_headers):
                pass
        until(lambda: app.state.streams.total == 0, "closed streams were not counted out")


def test_stream_tickets_stay_out_of_the_access_log(
    app: FastAPI, client: TestClient, viewer_headers: Headers, capfd: pytest.CaptureFixture[str]
) -> None:
    """uvicorn logs each request's URL with its query string: a stream's ticket is redacted
    (before, it was in the log, good for 60 s to anyone reading it)."""
    ticket = client.post("/api/v1/stream/ticket", headers=viewer_headers).json()["ticket"]
    params = {"events": "alert", "token": ticket}
    logged: list[str] = []

    def stream_logged() -> bool:
        logged.extend(capfd.readouterr().out.splitlines())
        return any("GET /api/v1/stream?" in line for line in logged)

    with running_server(app, log_level="info") as base:
        with httpx.stream("GET", f"{base}/api/v1/stream", params=params, timeout=10) as stream:
            assert stream.status_code == 200
        until(stream_logged, "the stream's request was not logged")
    (line,) = [line for line in logged if "GET /api/v1/stream?" in line]
    assert "/api/v1/stream?events=alert&token=[redacted] HTTP/1.1" in line
    assert ticket not in "\n".join(logged)
