"""SLA alerts: the list, one alert, and acknowledging (operators)."""

from __future__ import annotations

from fastapi import APIRouter

from sliceportal.alerts import service
from sliceportal.alerts.notify import enqueue_deliveries, publish_events
from sliceportal.api.deps import (
    ChangeContextDep,
    OperatorUser,
    PageDep,
    RedisDep,
    SessionDep,
    SettingsDep,
    ViewerUser,
    paginate,
)
from sliceportal.core.channels import Channels
from sliceportal.db.models import Alert
from sliceportal.domain.sla import Rule
from sliceportal.schemas.alerts import AlertPublic, AlertsPublic
from sliceportal.schemas.choices import AlertState
from sliceportal.schemas.common import RowId
from sliceportal.services import crud

router = APIRouter(prefix="/alerts", tags=["alerts"])


@router.get("")
def read_alerts(
    session: SessionDep,
    _: ViewerUser,
    page: PageDep,
    state: AlertState | None = None,
    slice_id: RowId | None = None,
    rule: Rule | None = None,
) -> AlertsPublic:
    """Alerts, newest first."""
    rows, count = paginate(session, service.alert_query(state, slice_id, rule), page)
    return AlertsPublic(data=[AlertPublic.model_validate(row) for row in rows], count=count)


@router.get("/{alert_id}")
def read_alert(session: SessionDep, _: ViewerUser, alert_id: RowId) -> AlertPublic:
    return AlertPublic.model_validate(crud.get(session, Alert, alert_id))


@router.post("/{alert_id}/ack")
def acknowledge_alert(
    session: SessionDep,
    _: OperatorUser,
    context: ChangeContextDep,
    settings: SettingsDep,
    redis_client: RedisDep,
    alert_id: RowId,
) -> AlertPublic:
    """Acknowledge an alert, firing or resolved (change-logged; pushed to the streams and the
    webhooks). Acknowledging again changes nothing."""
    alert, event = service.acknowledge(session, context, alert_id, settings.alert_webhook_urls)
    if event is not None:
        publish_events(redis_client, Channels.of(settings.database_url), [event])
        enqueue_deliveries(event.delivery_ids)
    return AlertPublic.model_validate(alert)
