"""The Celery worker and beat processes (`celery -A workers.app worker|beat`).

The app itself is `sliceportal.taskqueue.celery_app`, shared with the processes that only
publish; this entry point adds what the beat process alone runs.
"""

from __future__ import annotations

from celery.signals import beat_init

from sliceportal.core.config import get_settings
from sliceportal.taskqueue import INCLUDE, celery_app

__all__ = ["INCLUDE", "celery_app"]


@beat_init.connect
def _dispatch_outbox_on_commit(sender: object, **kwargs: object) -> None:
    """Beat also runs the outbox's LISTEN/NOTIFY dispatcher (a daemon thread)."""
    from sliceportal.controlplane.tasks import start_outbox_listener

    start_outbox_listener(get_settings())
