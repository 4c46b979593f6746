"""The scheduled capacity planning report: beat asks for it every `report_interval_s`, and one
task per webhook builds the network report and POSTs it (JSON, the API's document).

Each delivery is retried with back-off on transient failures only, like the alert webhooks
(`sliceportal.alerts.webhooks`). A retry builds the report again, so a receiver that was down
gets the network as it is when it comes back, not as it was. The delivery id (schedule time and
URL) lets a receiver drop a duplicate of a delivery it answered too late.
"""

from __future__ import annotations

import datetime as dt
import hashlib

from celery import Task

from sliceportal.alerts.webhooks import (
    MAX_RETRIES,
    RETRYING,
    WebhookError,
    WebhookRetry,
    post_event,
)
from sliceportal.core.config import get_settings
from sliceportal.db.session import process_session
from sliceportal.services.reports import ReportRequest, network_report
from sliceportal.taskqueue import celery_app

USER_AGENT = "sliceportal-reports"


def delivery_id(scheduled_at: str, url: str) -> str:
    return f"report-{scheduled_at}-{hashlib.sha256(url.encode()).hexdigest()[:12]}"


@celery_app.task
def schedule_reports() -> int:
    """One delivery task per configured webhook; how many were enqueued."""
    settings = get_settings()
    scheduled_at = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    for url in settings.report_webhook_urls:
        deliver_report.delay(url, scheduled_at)
    return len(settings.report_webhook_urls)


@celery_app.task(bind=True, **RETRYING)
def deliver_report(self: Task[[str, str], str], url: str, scheduled_at: str) -> str:
    """Build the network report and POST it to ``url``; "delivered" or why not."""
    settings = get_settings()
    request = ReportRequest(
        "network",
        growth_percent_per_month=settings.report_growth_percent,
        horizon_months=settings.report_horizon_months,
    )
    with process_session() as session:
        data = network_report(session, request)
    # Imported here: the renderers (matplotlib, reportlab, the report's pydantic schema) take
    # seconds to load, which every Celery worker would pay at each start, crash or not.
    from sliceportal.reporting.render import document_of

    document = document_of(data)
    try:
        post_event(
            url,
            document,
            delivery_id(scheduled_at, url),
            settings.alert_webhook_timeout_s,
            user_agent=USER_AGENT,
        )
    except WebhookError as exc:
        if exc.transient and self.request.retries < MAX_RETRIES:
            raise WebhookRetry(str(exc)) from exc
        return f"failed: {exc}"
    return "delivered"
