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
from workers.app import celery_app

from sliceportal.alerts.webhooks import WebhookError, post_event
from sliceportal.api.schemas.reports import Report
from sliceportal.core.config import get_settings
from sliceportal.db.session import process_session
from sliceportal.services.reports import ReportRequest, network_report

MAX_RETRIES = 8
"""Back-off 1, 2, 4 … 128 s (jittered): a receiver gets about four minutes to come back."""
USER_AGENT = "sliceportal-reports"


class ReportRetry(Exception):
    """The receiver may take the report later (refused connection, timeout, 5xx, 429)."""


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


@celery_app.task(
    bind=True,
    autoretry_for=(ReportRetry,),
    retry_backoff=True,
    retry_backoff_max=600,
    retry_jitter=True,
    max_retries=MAX_RETRIES,
    acks_late=True,
)
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
    document = Report.model_validate(data.to_dict()).model_dump(mode="json")
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
            raise ReportRetry(str(exc)) from exc
        return f"failed: {exc}"
    return "delivered"
