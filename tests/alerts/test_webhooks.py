"""Webhook deliveries through a real Celery worker (in this process, on the test Redis) to a
real local HTTP server: retried with back-off while the receiver fails, given up on a
permanent refusal."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker
from sqlalchemy.orm import Session, sessionmaker
from workers.app import celery_app

from alerts.helpers import BREACHES, TARGETS
from sliceportal.alerts.choices import DeliveryStatus
from sliceportal.alerts.engine import AlertEngine, Timing
from sliceportal.alerts.events import RecordedEvent
from sliceportal.alerts.notify import enqueue_deliveries
from sliceportal.core.config import Settings, get_settings
from sliceportal.db.models import WebhookDelivery
from sliceportal.db.session import process_engine
from sliceportal.domain.sla import Rule


def reconnect() -> None:
    """Make the app build its queues and broker connections again from its configuration (it
    builds them once per process; `_after_fork` is its own hook for starting afresh)."""
    celery_app._after_fork()
    celery_app.__dict__.pop("amqp", None)


@pytest.fixture(scope="module")
def worker(settings: Settings) -> Iterator[None]:
    """A Celery worker thread on the test Redis, on a queue of this run's own (other test
    runs may share the Redis: their workers would take our tasks and not find our rows)."""
    queue = celery_app.conf.task_default_queue
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DATABASE_URL", settings.database_url)
        patch.setenv("REDIS_URL", settings.redis_url)
        get_settings.cache_clear()
        process_engine.cache_clear()
        celery_app.conf.update(
            broker_url=settings.redis_url, task_default_queue=f"test-{uuid.uuid4().hex}"
        )
        reconnect()
        try:
            with start_worker(
                celery_app, pool="solo", perform_ping_check=False, loglevel="WARNING"
            ):
                yield
        finally:
            celery_app.conf.task_default_queue = queue
            reconnect()
            get_settings.cache_clear()
            process_engine.cache_clear()


@contextmanager
def receiver(statuses: list[int]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An HTTP server answering `statuses` in turn (then 200); yields its URL and requests."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append({"headers": dict(self.headers), "body": json.loads(body)})
            self.send_response(statuses.pop(0) if statuses else 200)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/hook", received
    finally:
        server.shutdown()
        server.server_close()


def fire_with_webhook(db: sessionmaker[Session], slice_id: int, url: str) -> int:
    """Open a loss alert with `url` configured; enqueue its delivery as the poller does."""
    events: list[RecordedEvent] = []
    engine = AlertEngine(db, Timing(1.0, 1.0), [url], events.extend)
    slices = [(slice_id, TARGETS[Rule.LOSS])]
    engine.observe(1, dt.datetime.now(dt.UTC), slices, BREACHES[Rule.LOSS])
    (event,) = events
    (delivery_id,) = event.delivery_ids
    enqueue_deliveries(event.delivery_ids)
    return delivery_id


def settled(db: sessionmaker[Session], delivery_id: int, timeout_s: float = 30) -> WebhookDelivery:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with db() as session:
            delivery = session.get_one(WebhookDelivery, delivery_id)
        if delivery.status is not DeliveryStatus.PENDING:
            return delivery
        time.sleep(0.1)
    raise AssertionError(f"delivery {delivery_id} still pending after {timeout_s} s")


def test_a_webhook_failing_twice_gets_the_alert_on_the_third_attempt(
    db: sessionmaker[Session], slice_id: int, worker: None
) -> None:
    with receiver([503, 503]) as (url, received):
        delivery_id = fire_with_webhook(db, slice_id, url)
        delivery = settled(db, delivery_id)
    assert delivery.status is DeliveryStatus.DELIVERED
    assert delivery.attempts == 3 and delivery.last_error == ""
    assert delivery.last_attempt_at is not None and delivery.delivered_at is not None
    assert len(received) == 3
    assert {r["headers"]["X-Sliceportal-Delivery"] for r in received} == {str(delivery_id)}
    body = received[-1]["body"]
    assert body["event"] == "firing"
    assert body["alert"]["slice_id"] == slice_id and body["alert"]["rule"] == "loss"


def test_a_webhook_refusing_for_good_is_not_retried(
    db: sessionmaker[Session], slice_id: int, worker: None
) -> None:
    with receiver([404]) as (url, received):
        delivery = settled(db, fire_with_webhook(db, slice_id, url))
    assert delivery.status is DeliveryStatus.FAILED
    assert delivery.attempts == 1 and delivery.last_error.startswith("HTTP 404")
    assert len(received) == 1
