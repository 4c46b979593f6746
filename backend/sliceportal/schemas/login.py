from __future__ import annotations

from pydantic import BaseModel


class AccessToken(BaseModel):
    """OAuth2 password-flow answer; `expires_in` in seconds."""

    access_token: str
    token_type: str = "bearer"
    expires_in: int
