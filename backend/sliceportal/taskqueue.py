"""The Celery app every process shares: the API, the CLI and the services publish with it, the
worker and beat (`workers.app`) run it.

Configured from the same `Settings` as the API, lazily: the configuration is read when the app
first needs it, so importing this module reads no environment. Task modules are listed by name
(`INCLUDE`) and imported by the worker and beat only; the application's task modules register
on this app, so nothing below the entry points imports `workers`.

Two queues, each served by workers of its own (`controlplane.supervisor.celery_children`,
docker-compose's `worker` and `slow-worker`): `celery`, the main lane, for every task, and
`slow-switches`, for the reconciliations of switches whose runs outlasted the main lane's time
limit (`controlplane.scheduling.SlowSwitches`). This is what Celery's optimizing guide
advises for a mix of long and short tasks (two workers configured apart, tasks routed by their
run time): the processes of one worker run whatever it took from its queues, so only separate
workers keep slow switches from taking every process the others need.
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from kombu import Exchange, Queue

from sliceportal.core.config import TASK_TIME_LIMIT_GRACE_S, Settings, get_settings

MAIN_QUEUE = "celery"
"""Celery's default queue: every task not routed elsewhere."""
SLOW_SWITCH_QUEUE = "slow-switches"
RECONCILE_SWITCH = "sliceportal.controlplane.tasks.reconcile_switch"

INCLUDE = [
    "sliceportal.controlplane.tasks",
    "sliceportal.telemetry.tasks",
    "sliceportal.alerts.tasks",
    "sliceportal.reporting.tasks",
]


def beat_schedule(settings: Settings) -> dict[str, dict[str, Any]]:
    """The one beat schedule of the portal (entry name -> task, period).

    `options.expires` drops a periodic task that no worker picked up within its period, so a
    stopped worker does not find a backlog of stale passes when it comes back.
    """
    periodic = {
        "reconcile-all-switches": (
            "sliceportal.controlplane.tasks.reconcile_all",
            settings.reconcile_interval_s,
        ),
        "probe-switches": (
            "sliceportal.controlplane.tasks.probe_switches",
            settings.switch_probe_interval_s,
        ),
        "dispatch-outbox": (
            "sliceportal.controlplane.tasks.dispatch_outbox",
            settings.outbox_dispatch_interval_s,
        ),
        "downsample-telemetry": ("sliceportal.telemetry.tasks.downsample_telemetry", 60.0),
        "expire-telemetry": ("sliceportal.telemetry.tasks.expire_telemetry", 3600.0),
        "sweep-alert-webhooks": ("sliceportal.alerts.tasks.sweep_alert_webhooks", 60.0),
    }
    if settings.report_webhook_urls:
        periodic["deliver-capacity-reports"] = (
            "sliceportal.reporting.tasks.schedule_reports",
            settings.report_interval_s,
        )
    return {
        name: {"task": task, "schedule": period, "options": {"expires": period}}
        for name, (task, period) in periodic.items()
    }


def direct_queue(name: str) -> Queue:
    """A queue as Celery declares its default one: its own direct exchange and routing key,
    which a task reads back from its delivery info to know its lane."""
    return Queue(name, Exchange(name, type="direct"), routing_key=name)


def reconcile_time_limits(settings: Settings, *, slow: bool) -> tuple[float, float]:
    """(soft, hard) time limits of a reconciliation on the slow lane or the main one. The
    soft limit raises `SoftTimeLimitExceeded` in the task, which moves the run to the slow
    lane; the hard one kills the pool process, should the task not stop within the grace."""
    soft = settings.slow_reconcile_time_limit_s if slow else settings.reconcile_time_limit_s
    return soft, soft + TASK_TIME_LIMIT_GRACE_S


def celery_config(settings: Settings) -> dict[str, Any]:
    soft, hard = reconcile_time_limits(settings, slow=False)
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
        # A worker started without -Q serves both lanes: nothing waits forever for a slow
        # worker that was never started, but the lanes are kept apart only by -Q.
        "task_default_queue": MAIN_QUEUE,
        "task_queues": [direct_queue(MAIN_QUEUE), direct_queue(SLOW_SWITCH_QUEUE)],
        # The main lane's limits, for every sender (the API publishes by name); the slow lane
        # sends its own with each message (`controlplane.tasks.queue_reconcile`).
        "task_annotations": {RECONCILE_SWITCH: {"soft_time_limit": soft, "time_limit": hard}},
        "timezone": "UTC",
        "beat_schedule": beat_schedule(settings),
    }


celery_app = Celery("sliceportal", include=INCLUDE)
celery_app.add_defaults(lambda: celery_config(get_settings()))
