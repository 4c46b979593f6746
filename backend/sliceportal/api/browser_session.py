"""The browser's session: the access token in an HttpOnly cookie, and CSRF protection for it.

Login sets two cookies, both `SameSite=Strict`, `Secure` over TLS, for the token's lifetime:
`sliceportal_session` (HttpOnly, path `/api`: no script of the page can read the token) and
`sliceportal_csrf` (readable by the UI's script, path `/`). A request authenticated by the
session cookie with an unsafe method must send the CSRF cookie's value in `X-CSRF-Token`
(double submit): another site can make the browser send the cookie (SameSite is the first
defence; a sibling subdomain is "same site"), but not read it to copy it into a header. The
value is an HMAC of the session token under the secret key, not a random number the server
trusts because the two copies match: a cookie planted from a sibling subdomain cannot pass.

Requests with `Authorization: Bearer` (the CLI, automation, API tokens) send no cookie and are
not affected. The streams authenticate by the cookie like any GET; the ticket (`?token=`)
stays for clients that can neither send headers nor keep cookies.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Annotated

from fastapi import Depends, Request, Response
from fastapi.security import APIKeyCookie

from sliceportal.api.problems import Problem
from sliceportal.api.security_headers import over_tls
from sliceportal.core.config import Settings

SESSION_COOKIE = "sliceportal_session"
CSRF_COOKIE = "sliceportal_csrf"
CSRF_HEADER = "X-CSRF-Token"
SESSION_COOKIE_PATH = "/api"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CROSS_ORIGIN_FETCH = frozenset({"cross-site", "same-site"})
"""`Sec-Fetch-Site` values of a login posted from another origin: it gets no cookie."""

session_cookie_scheme = APIKeyCookie(
    name=SESSION_COOKIE,
    scheme_name="SessionCookie",
    description=(
        "The browser session set by `POST /login/access-token` (HttpOnly, SameSite=Strict). "
        f"POST, PATCH and DELETE authenticated by it need the `{CSRF_HEADER}` header set to "
        f"the value of the `{CSRF_COOKIE}` cookie, else 403 `csrf-failed`."
    ),
    auto_error=False,
)
SessionCookieDep = Annotated[str | None, Depends(session_cookie_scheme)]


def csrf_token(session_token: str, settings: Settings) -> str:
    """The CSRF token that goes with `session_token`."""
    digest = hmac.new(
        settings.signing_key().encode(), b"csrf:" + session_token.encode(), hashlib.sha256
    ).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def check_csrf(request: Request, session_token: str, settings: Settings) -> None:
    """403 `csrf-failed` when an unsafe request by `session_token` lacks its CSRF token."""
    if request.method in SAFE_METHODS:
        return
    sent = request.headers.get(CSRF_HEADER, "")
    if not hmac.compare_digest(sent.encode(), csrf_token(session_token, settings).encode()):
        raise Problem(
            403,
            "csrf-failed",
            f"a {request.method} authenticated by the session cookie needs the {CSRF_HEADER} "
            f"header set to the value of the {CSRF_COOKIE} cookie",
            title="CSRF check failed",
        )


def _set_cookies(
    request: Request, response: Response, token: str, max_age: int, settings: Settings
) -> None:
    """Both cookies for `token`, kept `max_age` seconds (0: deleted)."""
    secure = over_tls(request.scope, settings.behind_tls_proxy)
    for name, value, path, httponly in (
        (SESSION_COOKIE, token, SESSION_COOKIE_PATH, True),
        (CSRF_COOKIE, csrf_token(token, settings) if token else "", "/", False),
    ):
        response.set_cookie(
            name,
            value,
            max_age=max_age,
            path=path,
            secure=secure,
            httponly=httponly,
            samesite="strict",
        )


def start_session(
    request: Request, response: Response, token: str, lifetime_s: int, settings: Settings
) -> None:
    """Set the session and CSRF cookies for `token` on `response`, unless the login came from
    another origin (a login CSRF would sign the victim's browser into the attacker's
    account: the cookies are not set, and the token in the answer stays unreadable there)."""
    if request.headers.get("Sec-Fetch-Site") not in CROSS_ORIGIN_FETCH:
        _set_cookies(request, response, token, lifetime_s, settings)


def end_session(request: Request, response: Response, settings: Settings) -> None:
    _set_cookies(request, response, "", 0, settings)
