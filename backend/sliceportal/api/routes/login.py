from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.security import OAuth2PasswordRequestForm

from sliceportal import security
from sliceportal.api.browser_session import start_session
from sliceportal.api.deps import RedisDep, SessionDep, SettingsDep
from sliceportal.api.problems import Problem, unauthorized
from sliceportal.api.throttle import Throttle, address_subject
from sliceportal.core.config import Settings
from sliceportal.schemas.login import AccessToken
from sliceportal.services.users import authenticate

router = APIRouter(prefix="/login", tags=["login"])

TOO_MANY = "too-many-login-attempts"


def _throttles(settings: Settings) -> tuple[Throttle, Throttle]:
    per_address = Throttle("address", settings.login_attempts_per_minute, 60, 60)
    per_account = Throttle(
        "account",
        settings.login_account_max_failures,
        settings.login_account_window_s,
        settings.login_account_lockout_s,
    )
    return per_address, per_account


def _refuse(detail: str, retry_after: int) -> Problem:
    return Problem(
        429,
        TOO_MANY,
        f"{detail}; try again in {retry_after} s",
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
    the browser's session cookie (HttpOnly) with its CSRF cookie.

    429 with `Retry-After` after too many failed logins from the client's address, or for the
    user name from any address (then even the right password waits; docs/api.md)."""
    client = address_subject(request.client.host if request.client else "unknown")
    per_address, per_account = _throttles(settings)
    if retry_after := per_address.attempt(redis_client, client):
        raise _refuse("too many failed logins from this address", retry_after)
    if retry_after := per_account.attempt(redis_client, form.username):
        raise _refuse("too many failed logins for this user name", retry_after)
    user = authenticate(session, form.username, form.password)
    if user is None:
        raise unauthorized("wrong username or password, or the user is deactivated")
    per_address.succeeded(redis_client, client)
    per_account.succeeded(redis_client, form.username)
    token, lifetime = security.create_access_token(user.id, settings)
    start_session(request, response, token, lifetime, settings)
    return AccessToken(access_token=token, expires_in=lifetime)
