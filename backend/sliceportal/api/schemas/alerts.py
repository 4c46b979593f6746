from __future__ import annotations

import datetime as dt

from sliceportal.alerts.choices import AlertState
from sliceportal.api.schemas.common import Page, PublicModel
from sliceportal.domain.sla import Rule


class AlertPublic(PublicModel):
    id: int
    slice_id: int
    slice_name: str
    switch_id: int | None
    rule: Rule
    state: AlertState
    message: str
    value: float | None
    threshold: float | None
    started_at: dt.datetime
    resolved_at: dt.datetime | None
    acknowledged_at: dt.datetime | None
    acknowledged_by: int | None


AlertsPublic = Page[AlertPublic]
