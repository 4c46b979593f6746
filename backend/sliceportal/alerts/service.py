"""Alerts for the API: the list and acknowledging (change-logged, with its event)."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Session

from sliceportal.alerts.events import RecordedEvent, record_event
from sliceportal.db import changes
from sliceportal.db.changes import Change, ChangeContext
from sliceportal.db.models import Alert
from sliceportal.domain.sla import Rule
from sliceportal.schemas.choices import AlertEventKind, AlertState, ChangeAction
from sliceportal.services import crud


def alert_query(
    state: AlertState | None, slice_id: int | None, rule: Rule | None
) -> sa.Select[tuple[Alert]]:
    """Alerts newest first, filtered (None = not filtered)."""
    query = sa.select(Alert).order_by(Alert.id.desc())
    for column, value in ((Alert.state, state), (Alert.slice_id, slice_id), (Alert.rule, rule)):
        if value is not None:
            query = query.where(column == value)
    return query


def acknowledge(
    session: Session, context: ChangeContext, alert_id: int, webhook_urls: list[str]
) -> tuple[Alert, RecordedEvent | None]:
    """Record that the operator of ``context`` has seen the alert, firing or resolved.

    Acknowledging twice keeps the first acknowledgement and records nothing new. Returns the
    alert and, when it changed, the event to publish once committed.
    """
    alert = crud.get(session, Alert, alert_id, lock=True)
    if alert.acknowledged_at is not None:
        session.commit()
        return alert, None
    before = alert.snapshot()
    alert.acknowledged_at = dt.datetime.now(dt.UTC)
    alert.acknowledged_by = context.user_id
    changes.write(session, context, [Change.of(ChangeAction.UPDATE, alert, before)])
    event = record_event(session, alert, AlertEventKind.ACKNOWLEDGED, webhook_urls)
    session.commit()
    return alert, event
