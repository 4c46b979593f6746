"""The Celery app of the worker and beat processes (`celery -A workers.app worker|beat`).

Configured from the same `Settings` as the API, lazily: the configuration is read when the app
first needs it, so importing this module (the API does, to publish tasks) reads no environment.
Task modules are listed by name and imported by the worker and beat only.
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from celery.signals import beat_init

from sliceportal.core.config import Settings, get_settings

INCLUDE = [
    "sliceportal.controlplane.tasks",
    "sliceportal.telemetry.tasks",
    "sliceportal.alerts.tasks",
    "sliceportal.reporting.tasks",
]


def celery_config(settings: Settings) -> dict[str, Any]:
    from workers.beat import BEAT_SCHEDULE

    return {
        "broker_url": settings.redis_url,
        "broker_connection_retry_on_startup": True,
        # Unacknowledged tasks (acks_late) of a worker that died go back to the queue after
        # this long; keep it above the longest task and the longest retry countdown.
        "broker_transport_options": {"visibility_timeout": settings.task_visibility_timeout_s},
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "worker_prefetch_multiplier": 1,
        "timezone": "UTC",
        "beat_schedule": BEAT_SCHEDULE,
    }


celery_app = Celery("sliceportal", include=INCLUDE)
celery_app.add_defaults(lambda: celery_config(get_settings()))


@beat_init.connect
def _dispatch_outbox_on_commit(sender: object, **kwargs: object) -> None:
    """Beat also runs the outbox's LISTEN/NOTIFY dispatcher (a daemon thread)."""
    from sliceportal.controlplane.tasks import start_outbox_listener

    start_outbox_listener(get_settings())
