from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.security import OAuth2PasswordRequestForm

from sliceportal import security
from sliceportal.api.browser_session import start_session
from sliceportal.api.deps import RedisDep, SessionDep, SettingsDep
from sliceportal.api.problems import Problem, unauthorized
from sliceportal.schemas.login import AccessToken
from sliceportal.services.users import authenticate

router = APIRouter(prefix="/login", tags=["login"])

WINDOW_S = 60


def _rate_limit(redis_client: RedisDep, limit: int, username: str, client: str) -> None:
    """Fixed one-minute window per (username, client address), counted in Redis."""
    now = time.time()
    window = int(now // WINDOW_S)
    key = f"sliceportal:login:{username}:{client}:{window}"
    pipe = redis_client.pipeline()
    pipe.incr(key)
    pipe.expire(key, WINDOW_S)
    attempts, _ = pipe.execute()
    if attempts > limit:
        retry_after = max(1, int((window + 1) * WINDOW_S - now + 0.999))
        raise Problem(
            429,
            "too-many-login-attempts",
            f"more than {limit} login attempts a minute; try again in {retry_after} s",
            title="Too many login attempts",
            headers={"Retry-After": str(retry_after)},
        )


@router.post("/access-token")
def login_access_token(
    form: Annotated[OAuth2PasswordRequestForm, Depends()],
    request: Request,
    response: Response,
    session: SessionDep,
    settings: SettingsDep,
    redis_client: RedisDep,
) -> AccessToken:
    """OAuth2 password login: a short-lived bearer token (`access_token_minutes`), also set as
    the browser's session cookie (HttpOnly) with its CSRF cookie."""
    client = request.client.host if request.client else "unknown"
    _rate_limit(redis_client, settings.login_attempts_per_minute, form.username, client)
    user = authenticate(session, form.username, form.password)
    if user is None:
        raise unauthorized("wrong username or password, or the user is deactivated")
    token, lifetime = security.create_access_token(user.id, settings)
    start_session(request, response, token, lifetime, settings)
    return AccessToken(access_token=token, expires_in=lifetime)
