"""After an alert change has committed: publish its events to the browsers (Redis) and hand its
webhook deliveries to the Celery workers. Both are best effort here; the deliveries are durable
rows, and `tasks.sweep_alert_webhooks` enqueues whatever the broker did not take."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence

import redis

from sliceportal.alerts.events import RecordedEvent
from sliceportal.core.channels import Channels
from sliceportal.taskqueue import celery_app

logger = logging.getLogger(__name__)
SEND_ALERT_WEBHOOK = "sliceportal.alerts.tasks.send_alert_webhook"
"""Sent by name: the tasks module imports this one."""


def publish_events(
    client: redis.Redis, channels: Channels, events: Iterable[RecordedEvent]
) -> None:
    """Push alert events to the browser streams; a Redis outage loses only the push (the
    alert is stored and listed by the API)."""
    try:
        with client.pipeline(transaction=False) as pipe:
            for event in events:
                pipe.publish(channels.alerts, json.dumps(event.message))
            pipe.execute()
    except redis.RedisError as exc:
        logger.warning("alert events not pushed, Redis unavailable: %s", exc)


def enqueue_deliveries(delivery_ids: Sequence[int]) -> None:
    """Enqueue one `send_alert_webhook` task per delivery.

    Any error of the broker stops the loop (the next call would hit it too): the deliveries
    not enqueued stay pending, never attempted, and the sweep enqueues them later.
    """
    for delivery_id in delivery_ids:
        try:
            celery_app.send_task(SEND_ALERT_WEBHOOK, (delivery_id,), retry=False)
        except Exception as exc:  # kombu and redis raise many kinds; all mean "not now"
            logger.warning("webhook deliveries left for the sweep, broker unavailable: %s", exc)
            return
