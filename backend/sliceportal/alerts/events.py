"""Alert events: one row per step of an alert's life, with the document browsers and webhooks
get, and one delivery row per configured webhook, written in the transaction of the change (an
outbox: a change that commits always has its notifications, one that rolls back has none)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from sliceportal.db.models import Alert, AlertEvent, WebhookDelivery
from sliceportal.schemas.alerts import AlertPublic
from sliceportal.schemas.choices import AlertEventKind


@dataclass(frozen=True)
class RecordedEvent:
    """What to do once the transaction has committed: publish ``message``, send deliveries."""

    message: dict[str, Any]
    delivery_ids: tuple[int, ...]


def record_event(
    session: Session, alert: Alert, kind: AlertEventKind, webhook_urls: list[str]
) -> RecordedEvent:
    """Add the event and its deliveries to the session's transaction (flushed for their ids)."""
    message = {
        "event": kind.value,
        "alert": AlertPublic.model_validate(alert).model_dump(mode="json"),
    }
    event = AlertEvent(alert_id=alert.id, kind=kind, payload=message)
    session.add(event)
    session.flush()
    deliveries = [WebhookDelivery(event_id=event.id, url=url) for url in webhook_urls]
    session.add_all(deliveries)
    session.flush()
    return RecordedEvent(message, tuple(d.id for d in deliveries))
