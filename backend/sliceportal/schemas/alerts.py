from __future__ import annotations

import datetime as dt

from sliceportal.domain.sla import Rule
from sliceportal.schemas.choices import AlertState
from sliceportal.schemas.common import Page, PublicModel


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
