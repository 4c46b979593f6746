"""Celery tasks of the telemetry: downsampling and retention (beat; see `sliceportal/taskqueue.py`).

Both work by partition (`db.partitions`): a run that overlaps another finds the maintenance
lock taken, one that repeats another finds the partitions gone, so each row is moved or dropped
once. Polling itself is not a task: `telemetry.poller` runs as a long-lived process
(docs/telemetry.md says why).
"""

from __future__ import annotations

import datetime as dt
import logging

from sliceportal.core.config import get_settings
from sliceportal.db import partitions
from sliceportal.db.session import process_engine
from sliceportal.taskqueue import celery_app

logger = logging.getLogger(__name__)


@celery_app.task
def downsample_telemetry() -> int:
    """Fold the raw partitions older than `telemetry_downsample_after_s` into one-minute rows,
    and make the partitions ahead."""
    settings = get_settings()
    written = partitions.downsample(
        process_engine(),
        dt.datetime.now(dt.UTC),
        settings.telemetry_downsample_after_s,
        dt.timedelta(seconds=settings.telemetry_partition_s),
    )
    logger.info("telemetry downsampled into %d one-minute rows", written)
    return written


@celery_app.task
def expire_telemetry() -> int:
    """Drop the partitions older than `telemetry_retention_s`."""
    dropped = partitions.expire(
        process_engine(), dt.datetime.now(dt.UTC), get_settings().telemetry_retention_s
    )
    logger.info("telemetry retention dropped %d partitions", dropped)
    return dropped
