"""The one beat schedule of the portal (task name -> period), read by `workers.app`.

`options.expires` drops a periodic task that no worker picked up within its period, so a
stopped worker does not find a backlog of stale passes when it comes back.
"""

from __future__ import annotations

from typing import Any

from sliceportal.core.config import get_settings

_settings = get_settings()

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "reconcile-all-switches": {
        "task": "sliceportal.controlplane.tasks.reconcile_all",
        "schedule": _settings.reconcile_interval_s,
        "options": {"expires": _settings.reconcile_interval_s},
    },
    "probe-switches": {
        "task": "sliceportal.controlplane.tasks.probe_switches",
        "schedule": _settings.switch_probe_interval_s,
        "options": {"expires": _settings.switch_probe_interval_s},
    },
    "dispatch-outbox": {
        "task": "sliceportal.controlplane.tasks.dispatch_outbox",
        "schedule": _settings.outbox_dispatch_interval_s,
        "options": {"expires": _settings.outbox_dispatch_interval_s},
    },
    "downsample-telemetry": {
        "task": "sliceportal.telemetry.tasks.downsample_telemetry",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    "expire-telemetry": {
        "task": "sliceportal.telemetry.tasks.expire_telemetry",
        "schedule": 3600.0,
        "options": {"expires": 3600.0},
    },
    "sweep-alert-webhooks": {
        "task": "sliceportal.alerts.tasks.sweep_alert_webhooks",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
}

if _settings.report_webhook_urls:
    BEAT_SCHEDULE["deliver-capacity-reports"] = {
        "task": "sliceportal.reporting.tasks.schedule_reports",
        "schedule": _settings.report_interval_s,
        "options": {"expires": _settings.report_interval_s},
    }
