from __future__ import annotations

import datetime as dt
from typing import Any

from sliceportal.schemas.choices import ChangeAction, EntityType
from sliceportal.schemas.common import Page, PublicModel


class ChangePublic(PublicModel):
    id: int
    occurred_at: dt.datetime
    user_id: int | None
    request_id: str
    action: ChangeAction
    entity_type: EntityType
    entity_id: int
    entity_name: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None


ChangesPublic = Page[ChangePublic]
