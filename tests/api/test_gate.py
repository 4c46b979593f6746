"""A process that is serving all it can answers the excess 503 `server-busy` at once.

A real server with a gate of one slot; the slot is kept busy by a slice creation waiting for
a link lock this test holds in PostgreSQL.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.api.main import create_app
from sliceportal.core.config import Settings
from sliceportal.db.models import Link
from utils.factories import create_link, slice_body
from utils.server import lock_waiters, running_server

Headers = dict[str, str]


@contextmanager
def one_slot_taken(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    headers: Headers,
    **limits: object,
) -> Iterator[tuple[str, list[httpx.Response]]]:
    """A server whose gate has one slot, held by a creation waiting for a link lock; on exit
    the lock is released. Yields the base URL and (after exit) the creation's answer."""
    link = create_link(client, headers)
    gated = settings.model_copy(update={"api_max_in_flight": 1} | limits)
    answers: list[httpx.Response] = []
    with running_server(create_app(gated)) as base, db() as holder:
        holder.execute(select(Link).where(Link.id == link["id"]).with_for_update())

        def create() -> None:
            answers.append(
                httpx.post(
                    f"{base}/api/v1/slices",
                    json=slice_body([link["id"]]),
                    headers=headers,
                    timeout=30,
                )
            )

        creating = threading.Thread(target=create)
        creating.start()
        with db() as watcher:
            lock_waiters(watcher)
        try:
            yield base, answers
        finally:
            holder.rollback()
            creating.join(30)


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
    with one_slot_taken(settings, db, client, operator_headers, api_max_waiting=0) as (
        base,
        answers,
    ):
        start = time.monotonic()
        refused = httpx.get(f"{base}/api/v1/switches", headers=operator_headers, timeout=10)
        assert time.monotonic() - start < 2  # not after any timeout
        assert_busy(refused)
        assert "1 requests in progress and 0 waiting" in refused.json()["detail"]
        # Liveness is never gated: a supervisor must not restart a busy process.
        assert httpx.get(f"{base}/api/v1/health", timeout=10).status_code == 200
    assert answers[0].status_code == 201, answers[0].text
    with running_server(create_app(settings)) as base:
        served = httpx.get(f"{base}/api/v1/switches", headers=operator_headers, timeout=10)
        assert served.status_code == 200


def test_a_waiting_request_is_served_in_its_turn(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    operator_headers: Headers,
) -> None:
    turn: list[httpx.Response] = []
    with one_slot_taken(
        settings, db, client, operator_headers, api_max_waiting=1, api_max_wait_s=30
    ) as (base, answers):
        waiting = threading.Thread(
            target=lambda: turn.append(
                httpx.get(f"{base}/api/v1/switches", headers=operator_headers, timeout=30)
            )
        )
        waiting.start()
        deadline = time.monotonic() + 10
        while True:  # until the request above is queued: the queue of one is then full
            refused = httpx.get(f"{base}/api/v1/switches", headers=operator_headers, timeout=10)
            assert_busy(refused)
            if "1 waiting" in refused.json()["detail"]:
                break
            assert time.monotonic() < deadline, refused.json()["detail"]
            time.sleep(0.02)
        assert not turn
    waiting.join(30)
    assert answers[0].status_code == 201, answers[0].text
    assert turn[0].status_code == 200, turn[0].text


def test_a_wait_that_runs_out_is_answered_503(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    operator_headers: Headers,
) -> None:
    with one_slot_taken(
        settings, db, client, operator_headers, api_max_waiting=1, api_max_wait_s=0.3
    ) as (base, answers):
        start = time.monotonic()
        late = httpx.get(f"{base}/api/v1/switches", headers=operator_headers, timeout=10)
        assert time.monotonic() - start >= 0.3
        assert_busy(late)
        assert "waited 0.3 s" in late.json()["detail"]
    assert answers[0].status_code == 201, answers[0].text
