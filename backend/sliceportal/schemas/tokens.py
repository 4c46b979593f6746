from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import Field, Strict

from sliceportal.schemas.common import InputModel, Name, Page, PublicModel

MAX_TOKEN_DAYS = 3650


class ApiTokenCreate(InputModel):
    name: Name
    expires_in_days: Annotated[int, Strict(), Field(ge=1, le=MAX_TOKEN_DAYS)] | None = Field(
        default=None, description="omit for a token that does not expire"
    )


class ApiTokenPublic(PublicModel):
    id: int
    user_id: int
    name: str
    prefix: str
    created_at: dt.datetime
    expires_at: dt.datetime | None
    last_used_at: dt.datetime | None
    revoked_at: dt.datetime | None


class ApiTokenCreated(ApiTokenPublic):
    token: str = Field(description="the secret token; shown in this answer only")


ApiTokensPublic = Page[ApiTokenPublic]
