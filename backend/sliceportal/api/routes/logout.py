"""`POST /logout`: the end of a browser session (`api.browser_session`)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from sliceportal.api.browser_session import SessionCookieDep, check_csrf, end_session
from sliceportal.api.deps import SettingsDep

router = APIRouter(tags=["login"])


# `{}`: no credentials needed (FastAPI appends it to the cookie's requirement it documents).
@router.post("/logout", status_code=204, openapi_extra={"security": [{}]})
async def logout(
    request: Request, response: Response, settings: SettingsDep, session_cookie: SessionCookieDep
) -> None:
    """End the browser session: clear the session and CSRF cookies (with the session cookie,
    like any change, it needs `X-CSRF-Token`). Bearer tokens are not affected: an access token
    stays valid until it expires, an API token until it is revoked."""
    if session_cookie:
        check_csrf(request, session_cookie, settings)
    end_session(request, response, settings)
