"""Sending one alert event to one webhook: a JSON POST whose failure says whether to retry.

Standard library only (the workers need no HTTP client dependency for one POST). The receiver
gets `X-Sliceportal-Delivery`, the delivery id, to drop duplicates: a delivery is retried until
it succeeds once, so a receiver that answered too late may see it twice.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

RETRYABLE_STATUSES = frozenset({408, 425, 429})
"""4xx answers that mean "later" rather than "never"; every 5xx is retried too."""


MAX_RETRIES = 8
"""With back-off 1, 2, 4 … 128 s (jittered), a receiver gets about four minutes to come back."""


class WebhookRetry(Exception):
    """The receiver may take the delivery later (refused connection, timeout, 5xx, 429)."""


RETRYING: dict[str, Any] = {
    "autoretry_for": (WebhookRetry,),
    "retry_backoff": True,
    "retry_backoff_max": 600,
    "retry_jitter": True,
    "max_retries": MAX_RETRIES,
    "acks_late": True,
}
"""Celery options of a task delivering to a webhook (alerts, reports): retried with back-off
when it raises WebhookRetry, and only then."""


class WebhookError(Exception):
    """The receiver did not take the event; ``transient`` says whether a retry may succeed."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


def post_event(
    url: str,
    document: dict[str, Any],
    delivery_id: int | str,
    timeout_s: float,
    *,
    user_agent: str = "sliceportal-alerts",
) -> None:
    """POST ``document`` as JSON; raise WebhookError unless the receiver answered 2xx/3xx.

    Reports are delivered the same way (`sliceportal.reporting.tasks`), with their own agent."""
    request = urllib.request.Request(
        url,
        data=json.dumps(document).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": user_agent,
            "X-Sliceportal-Delivery": str(delivery_id),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            response.read()
    except urllib.error.HTTPError as exc:
        transient = exc.code >= 500 or exc.code in RETRYABLE_STATUSES
        raise WebhookError(f"HTTP {exc.code} {exc.reason}", transient=transient) from None
    except (urllib.error.URLError, OSError) as exc:  # refused, unreachable, timed out
        reason = getattr(exc, "reason", exc)
        raise WebhookError(f"{type(exc).__name__}: {reason}", transient=True) from None
    except ValueError as exc:  # not an http(s) URL at all
        raise WebhookError(str(exc), transient=False) from None
