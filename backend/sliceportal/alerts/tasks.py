"""Celery tasks of the alerts: send one webhook delivery (retried with exponential back-off),
and sweep the deliveries whose task was never enqueued or got lost.

As saleor does: tasks take ids, re-read and lock their row, and return early when the work is
done, so running one twice is harmless; only the named transient error is retried.
"""

from __future__ import annotations

import datetime as dt
import logging

import sqlalchemy as sa
from celery import Task

from sliceportal.alerts.notify import enqueue_deliveries
from sliceportal.alerts.webhooks import (
    MAX_RETRIES,
    RETRYING,
    WebhookError,
    WebhookRetry,
    post_event,
)
from sliceportal.core.config import get_settings
from sliceportal.db.models import AlertEvent, WebhookDelivery
from sliceportal.db.session import process_session
from sliceportal.schemas.choices import DeliveryStatus
from sliceportal.taskqueue import celery_app

logger = logging.getLogger(__name__)

NEVER_ATTEMPTED_AFTER = dt.timedelta(seconds=30)
"""A delivery not attempted this long after its event: the broker was down then (or the queue
is backed up, and the extra task finds the delivery done)."""
LOST_AFTER = dt.timedelta(minutes=15)
"""A pending delivery not attempted again for longer than any back-off: its task was lost."""


@celery_app.task(bind=True, **RETRYING)
def send_alert_webhook(self: Task[[int], str], delivery_id: int) -> str:
    """POST one alert event to one webhook; the delivery's final status.

    The row stays locked (FOR UPDATE SKIP LOCKED) during the POST, so a second copy of the
    task (a sweep, a redelivery) skips it instead of sending it twice at once. Nothing else
    locks delivery rows, so a locked row always means another copy is at work.
    """
    settings = get_settings()
    with process_session() as session:
        found = (
            session.execute(
                sa.select(WebhookDelivery, AlertEvent.payload)
                .join(AlertEvent)
                .where(WebhookDelivery.id == delivery_id)
                .with_for_update(of=WebhookDelivery, skip_locked=True)
            )
            .tuples()
            .first()
        )
        if found is None:
            return "absent or busy"
        delivery, payload = found
        if delivery.status is not DeliveryStatus.PENDING:
            return str(delivery.status)
        now = dt.datetime.now(dt.UTC)
        delivery.attempts += 1
        delivery.last_attempt_at = now
        try:
            post_event(delivery.url, payload, delivery.id, settings.alert_webhook_timeout_s)
        except WebhookError as exc:
            delivery.last_error = str(exc)
            retry = exc.transient and self.request.retries < MAX_RETRIES
            if not retry:
                delivery.status = DeliveryStatus.FAILED
                logger.warning("webhook delivery %s failed for good: %s", delivery.id, exc)
            session.commit()
            if retry:
                raise WebhookRetry(str(exc)) from None
            return str(delivery.status)
        delivery.status = DeliveryStatus.DELIVERED
        delivery.delivered_at = now
        delivery.last_error = ""
        session.commit()
        return str(delivery.status)


@celery_app.task
def sweep_alert_webhooks() -> int:
    """Enqueue the pending deliveries nobody is working on (beat, every minute)."""
    now = dt.datetime.now(dt.UTC)
    table = WebhookDelivery
    with process_session() as session:
        ids = session.scalars(
            sa.select(table.id).where(
                table.status == DeliveryStatus.PENDING,
                sa.or_(
                    sa.and_(
                        table.last_attempt_at.is_(None),
                        table.created_at < now - NEVER_ATTEMPTED_AFTER,
                    ),
                    table.last_attempt_at < now - LOST_AFTER,
                ),
            )
        ).all()
    enqueue_deliveries(ids)
    return len(ids)
