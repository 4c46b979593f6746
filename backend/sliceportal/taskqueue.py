"""The Celery app every process shares: the API, the CLI and the services publish with it, the
worker and beat (`workers.app`) run it.

Configured from the same `Settings` as the API, lazily: the configuration is read when the app
first needs it, so importing this module reads no environment. Task modules are listed by name
(`INCLUDE`) and imported by the worker and beat only; the application's task modules register
on this app, so nothing below the entry points imports `workers`.
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from sliceportal.core.config import Settings, get_settings

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


def celery_config(settings: Settings) -> dict[str, Any]:
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
        "beat_schedule": beat_schedule(settings),
    }


celery_app = Celery("sliceportal", include=INCLUDE)
celery_app.add_defaults(lambda: celery_config(get_settings()))
