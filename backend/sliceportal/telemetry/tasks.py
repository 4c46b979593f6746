"""Celery tasks of the telemetry: downsampling and retention (beat; see `sliceportal/taskqueue.py`).

Both are single statements over an age cutoff, so a run that overlaps another, or repeats
one, moves or deletes each row once. Polling itself is not a task: `telemetry.poller` runs
as a long-lived process (docs/telemetry.md says why).
"""

from __future__ import annotations

import datetime as dt
import logging

from sliceportal.core.config import get_settings
from sliceportal.db import samples as store
from sliceportal.db.session import process_session
from sliceportal.taskqueue import celery_app

logger = logging.getLogger(__name__)


@celery_app.task
def downsample_telemetry() -> int:
    """Fold raw samples older than `telemetry_downsample_after_s` into one-minute rows."""
    with process_session() as session:
        written = store.downsample(
            session, dt.datetime.now(dt.UTC), get_settings().telemetry_downsample_after_s
        )
        session.commit()
    logger.info("telemetry downsampled into %d one-minute rows", written)
    return written


@celery_app.task
def expire_telemetry() -> int:
    """Delete samples older than `telemetry_retention_s`."""
    with process_session() as session:
        deleted = store.expire(
            session, dt.datetime.now(dt.UTC), get_settings().telemetry_retention_s
        )
        session.commit()
    logger.info("telemetry retention deleted %d rows", deleted)
    return deleted
