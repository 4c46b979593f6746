"""A process that is serving all it can answers the excess 503 `server-busy` at once.

A real server with a gate of one slot; the slot is kept busy by a slice creation waiting for
a link lock this test holds in PostgreSQL.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.api.main import create_app
from sliceportal.core.config import Settings
from utils.factories import create_link, slice_body, whitespace_chunks
from utils.server import WaitingCreation, creation_waiting_for_lock, running_server

Headers = dict[str, str]


@dataclass
class Taken:
    """A running server whose one slot a creation holds while it waits for a link lock."""

    app: FastAPI
    base: str
    creation: WaitingCreation


@contextmanager
def one_slot_taken(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    headers: Headers,
    **limits: object,
) -> Iterator[Taken]:
    """A server whose gate has one slot, taken; `creation.release` (or the exit) frees it."""
    link = create_link(client, headers)
    app = create_app(settings.model_copy(update={"api_max_in_flight": 1} | limits))
    with (
        running_server(app) as base,
        creation_waiting_for_lock(db, base, link["id"], headers) as creation,
    ):
        assert app.state.gate.in_flight == 1
        yield Taken(app, base, creation)


def until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "the gate never reached the expected state"
        time.sleep(0.01)


def in_background(
    request: Callable[[], httpx.Response],
) -> tuple[threading.Thread, list[httpx.Response]]:
    """Send `request` from a thread (it may wait in the gate); its answer lands in the list."""
    answers: list[httpx.Response] = []
    thread = threading.Thread(target=lambda: answers.append(request()))
    thread.start()
    return thread, answers


def assert_busy(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["retry-after"] == "1"
    assert response.headers["x-request-id"]
    problem = response.json()
    assert problem["type"].endswith("/server-busy")
    assert problem["instance"] == response.request.url.path


def test_a_full_process_answers_503_at_once_and_serves_again_when_free(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    operator_headers: Headers,
) -> None:
    with one_slot_taken(settings, db, client, operator_headers, api_max_waiting=0) as taken:
        start = time.monotonic()
        refused = httpx.get(f"{taken.base}/api/v1/switches", headers=operator_headers, timeout=10)
        assert time.monotonic() - start < 2  # not after any timeout
        assert_busy(refused)
        assert "1 requests in progress and 0 waiting" in refused.json()["detail"]
        # Liveness is never gated: a supervisor must not restart a busy process.
        assert httpx.get(f"{taken.base}/api/v1/health", timeout=10).status_code == 200

        taken.creation.release()
        assert taken.creation.answers[0].status_code == 201, taken.creation.answers[0].text
        # The slot is freed once the answer is sent, a moment after the client has it.
        until(lambda: taken.app.state.gate.in_flight == 0)
        served = httpx.get(f"{taken.base}/api/v1/switches", headers=operator_headers, timeout=10)
        assert served.status_code == 200


def test_readiness_is_503_while_a_new_request_would_wait(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    operator_headers: Headers,
) -> None:
    """A load balancer should send new work elsewhere while every slot is taken (before,
    readiness said 200 while every request waited 5 s for a 503)."""
    with one_slot_taken(settings, db, client, operator_headers) as taken:
        ready = f"{taken.base}/api/v1/health/ready"
        busy = httpx.get(ready, timeout=10)
        assert_busy(busy)
        assert "1 of 1 requests in progress, 0 waiting" in busy.json()["detail"]
        taken.creation.release()
        until(lambda: taken.app.state.gate.in_flight == 0)
        assert httpx.get(ready, timeout=10).status_code == 200


def test_a_waiting_request_is_served_in_its_turn(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    operator_headers: Headers,
) -> None:
    with one_slot_taken(
        settings, db, client, operator_headers, api_max_waiting=1, api_max_wait_s=30
    ) as taken:
        waiting, turn = in_background(
            lambda: httpx.get(f"{taken.base}/api/v1/switches", headers=operator_headers, timeout=30)
        )
        until(lambda: taken.app.state.gate.waiting == 1)
        refused = httpx.get(f"{taken.base}/api/v1/switches", headers=operator_headers, timeout=10)
        assert_busy(refused)  # the queue of one is full
        assert "1 requests in progress and 1 waiting" in refused.json()["detail"]
        assert not turn
        taken.creation.release()
        waiting.join(30)
        assert taken.creation.answers[0].status_code == 201, taken.creation.answers[0].text
        assert turn[0].status_code == 200, turn[0].text


def test_a_wait_that_runs_out_is_answered_503(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    operator_headers: Headers,
) -> None:
    with one_slot_taken(
        settings, db, client, operator_headers, api_max_waiting=1, api_max_wait_s=0.3
    ) as taken:
        start = time.monotonic()
        late = httpx.get(f"{taken.base}/api/v1/switches", headers=operator_headers, timeout=10)
        assert time.monotonic() - start >= 0.3
        assert_busy(late)
        assert "waited 0.3 s" in late.json()["detail"]
        assert taken.app.state.gate.waiting == 0


def test_a_waiting_request_keeps_its_body(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    operator_headers: Headers,
) -> None:
    """The gate reads the request while it waits (to see the client leave): the app still
    gets the whole body, here sent in several pieces (200 kB of trailing JSON whitespace)."""
    link = create_link(client, operator_headers)
    body = slice_body([link["id"]], description="x" * 2000)
    padded = json.dumps(body) + " " * 200_000
    with one_slot_taken(
        settings, db, client, operator_headers, api_max_waiting=1, api_max_wait_s=30
    ) as taken:
        waiting, turn = in_background(
            lambda: httpx.post(
                f"{taken.base}/api/v1/slices",
                headers=operator_headers | {"Content-Type": "application/json"},
                content=padded,
                timeout=30,
            )
        )
        until(lambda: taken.app.state.gate.waiting == 1)
        taken.creation.release()
        waiting.join(30)
        assert turn[0].status_code == 201, turn[0].text
        assert turn[0].json()["name"] == body["name"]
        assert turn[0].json()["description"] == body["description"]


def test_a_waiting_request_whose_body_passes_the_cap_is_answered_413(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    operator_headers: Headers,
) -> None:
    """The gate reads a waiting request's body: the body cap counts it there too, and the
    request leaves the queue with its 413 problem (before its wait ran out)."""
    with one_slot_taken(
        settings,
        db,
        client,
        operator_headers,
        api_max_waiting=1,
        api_max_wait_s=5,
        api_max_body_bytes=100_000,
    ) as taken:
        refused = httpx.post(
            f"{taken.base}/api/v1/slices",
            headers=operator_headers | {"Content-Type": "application/json"},
            content=whitespace_chunks(300_000),
            timeout=30,
        )
        assert refused.status_code == 413, refused.text
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.headers["x-request-id"]
        assert refused.json()["type"].endswith("/content-too-large")
        until(lambda: taken.app.state.gate.waiting == 0)
        assert taken.app.state.gate.in_flight == 1  # the creation holding the slot


def test_a_waiting_request_whose_client_left_is_dropped_unserved(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    operator_headers: Headers,
) -> None:
    """Its client saw no answer, so no slice is made; and it leaves the queue at once."""
    link = create_link(client, operator_headers)
    body = slice_body([link["id"]])
    with one_slot_taken(
        settings, db, client, operator_headers, api_max_waiting=1, api_max_wait_s=30
    ) as taken:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(
                f"{taken.base}/api/v1/slices", headers=operator_headers, json=body, timeout=0.5
            )
        until(lambda: taken.app.state.gate.waiting == 0)
        assert taken.app.state.gate.in_flight == 1  # the creation holding the slot
        taken.creation.release()
        assert taken.creation.answers[0].status_code == 201, taken.creation.answers[0].text
        until(lambda: taken.app.state.gate.in_flight == 0)
    found = client.get(f"/api/v1/slices?q={body['name']}", headers=operator_headers)
    assert found.json()["count"] == 0
