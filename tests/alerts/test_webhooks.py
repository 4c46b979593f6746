"""Webhook deliveries through a real Celery worker (in this process, on the test Redis) to a
real local HTTP server: retried with back-off while the receiver fails, given up on a
permanent refusal."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator

import pytest
from sqlalchemy.orm import Session, sessionmaker

from alerts.helpers import BREACHES, TARGETS
from sliceportal.alerts.engine import AlertEngine, Timing
from sliceportal.alerts.events import RecordedEvent
from sliceportal.alerts.notify import enqueue_deliveries
from sliceportal.core.config import Settings
from sliceportal.db.models import WebhookDelivery
from sliceportal.domain.sla import Rule
from sliceportal.schemas.choices import DeliveryStatus
from utils.webhooks import celery_worker, receiver


@pytest.fixture(scope="module")
def worker(settings: Settings) -> Iterator[None]:
    with celery_worker(settings):
        yield


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
