"""The browser-facing defences (docs/security.md, "Browser security"): security headers on every
answer, HSTS only over TLS, and the cookie session with its CSRF check, against the real app,
PostgreSQL and Redis."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.api.main import create_app
from sliceportal.core.config import Settings
from sliceportal.schemas.choices import Role
from utils.factories import PASSWORD, auth_headers, create_user
from utils.fixtures import documented_problem
from utils.server import running_server

LOGIN = "/api/v1/login/access-token"
ASSET = "/assets/index-abc123.js"
HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


@pytest.fixture(scope="module")
def ui_app(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    """The app serving a (minimal) built UI as well."""
    dist = tmp_path_factory.mktemp("dist")
    (dist / "assets").mkdir()
    (dist / "index.html").write_text("<!doctype html><div id=root></div>")
    (dist / ASSET.lstrip("/")).write_text("console.log(1)")
    return create_app(settings.model_copy(update={"ui_dist_dir": dist}))


def browser(app: FastAPI, base_url: str = "http://testserver") -> TestClient:
    """A client with its own cookie jar (the shared `client` must never hold a session)."""
    client = TestClient(app, base_url=base_url, raise_server_exceptions=False)
    client.event_hooks = {"response": [documented_problem]}
    return client


def operations(app: FastAPI) -> Iterator[tuple[str, str]]:
    """(method, path) of every operation in the OpenAPI document, ids filled in."""
    for template, item in app.openapi()["paths"].items():
        for method in item:
            yield method.upper(), re.sub(r"\{[^}]+\}", "1", template)


def assert_security_headers(response: httpx.Response, csp: bool = True) -> None:
    expected = HEADERS if csp else {k: v for k, v in HEADERS.items() if "content-security" not in k}
    where = f"{response.request.method} {response.request.url.path}"
    assert {name: response.headers.get(name) for name in expected} == expected, where
    assert "strict-transport-security" not in response.headers, where


def test_every_answer_carries_the_security_headers(ui_app: FastAPI) -> None:
    client = browser(ui_app)
    checked = 0
    for method, path in operations(ui_app):
        assert_security_headers(client.request(method, path))
        checked += 1
    assert checked >= 46
    for path in ("/", "/slices/7", ASSET, "/api/v1/no-such-thing", "/assets/gone.js"):
        assert_security_headers(client.get(path))
    assert client.get(ASSET).status_code == 200


def test_an_internal_error_carries_the_security_headers(settings: Settings) -> None:
    """A 500 is answered by Starlette's outermost middleware: the headers must still come, and
    the request id the body names."""
    app = create_app(settings)

    def fail() -> None:
        raise RuntimeError("boom")

    app.add_api_route("/api/v1/fail", fail, methods=["POST"])  # GET: the UI's, when built
    response = browser(app).post("/api/v1/fail", headers={"X-Request-ID": "r-500"})
    assert response.status_code == 500
    assert_security_headers(response)
    assert response.headers["x-request-id"] == "r-500"
    assert response.json()["request_id"] == "r-500"


def test_the_api_docs_have_a_policy_of_their_own(ui_app: FastAPI) -> None:
    """Swagger UI comes from its CDN: allowed on /docs only, its inline script by hash."""
    response = browser(ui_app).get("/docs")
    assert response.status_code == 200
    assert_security_headers(response, csp=False)
    policy = dict(
        part.strip().split(" ", 1)
        for part in response.headers["content-security-policy"].split(";")
    )
    assert policy["script-src"].startswith("https://cdn.jsdelivr.net 'sha256-")
    assert "unsafe" not in response.headers["content-security-policy"]
    assert policy["frame-ancestors"] == "'none'"
    assert browser(ui_app).get("/redoc").status_code == 404


@pytest.mark.parametrize(
    ("base_url", "behind_tls_proxy", "hsts"),
    [
        ("http://testserver", False, False),
        ("https://testserver", False, True),
        ("http://testserver", True, True),
    ],
)
def test_hsts_only_over_tls(
    settings: Settings, base_url: str, behind_tls_proxy: bool, hsts: bool
) -> None:
    app = create_app(settings.model_copy(update={"behind_tls_proxy": behind_tls_proxy}))
    response = browser(app, base_url).get("/api/v1/health")
    assert response.headers.get("strict-transport-security") == (
        "max-age=31536000" if hsts else None
    )


def set_cookies(response: httpx.Response) -> dict[str, str]:
    """Each Set-Cookie of `response` by cookie name (attributes lower-cased)."""
    cookies = {}
    for line in response.headers.get_list("set-cookie"):
        name, _, rest = line.partition("=")
        cookies[name] = rest.lower()
    return cookies


@pytest.fixture
def viewer_name(db: sessionmaker[Session]) -> str:
    with db() as session:
        return create_user(session, Role.VIEWER).username


def sign_in(client: httpx.Client, username: str, **headers: str) -> httpx.Response:
    response = client.post(
        LOGIN, data={"username": username, "password": PASSWORD}, headers=headers
    )
    assert response.status_code == 200, response.text
    return response


def test_login_sets_an_httponly_strict_session_cookie(app: FastAPI, viewer_name: str) -> None:
    client = browser(app)
    cookies = set_cookies(sign_in(client, viewer_name))
    session, csrf = cookies["sliceportal_session"], cookies["sliceportal_csrf"]
    for cookie in (session, csrf):
        assert "samesite=strict" in cookie and "max-age=1800" in cookie
        assert "secure" not in cookie  # plain HTTP: a Secure cookie would never come back
    assert "httponly" in session and "path=/api" in session
    assert "httponly" not in csrf and "path=/;" in csrf
    me = client.get("/api/v1/users/me")  # no Authorization header: the cookie
    assert me.status_code == 200 and me.json()["username"] == viewer_name
    over_tls = set_cookies(sign_in(browser(app, "https://testserver"), viewer_name))
    assert all("; secure" in cookie for cookie in over_tls.values())


def test_a_login_from_another_site_sets_no_cookie(app: FastAPI, viewer_name: str) -> None:
    """Login CSRF: a form on another site must not sign the browser into its account."""
    response = sign_in(browser(app), viewer_name, **{"Sec-Fetch-Site": "cross-site"})
    assert response.json()["access_token"]
    assert set_cookies(response) == {}


def test_a_change_by_cookie_needs_the_csrf_token(app: FastAPI, viewer_name: str) -> None:
    client = browser(app)
    sign_in(client, viewer_name)
    body = {"name": "by cookie"}
    forged: list[dict[str, str | bytes]] = [
        {},
        {"X-CSRF-Token": "forged"},
        {"X-CSRF-Token": b"\xff\xfe"},  # not UTF-8
        {"X-CSRF-Token": "x" * 10_000},
    ]
    for headers in forged:
        refused = client.post("/api/v1/tokens", json=body, headers=headers)
        assert refused.status_code == 403
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.json()["type"].endswith("/csrf-failed")
    csrf = client.cookies["sliceportal_csrf"]
    created = client.post("/api/v1/tokens", json=body, headers={"X-CSRF-Token": csrf})
    assert created.status_code == 201, created.text
    assert client.get("/api/v1/tokens").status_code == 200  # reads need no CSRF token


def test_bearer_requests_need_no_csrf_token(
    app: FastAPI, db: sessionmaker[Session], settings: Settings
) -> None:
    with db() as session:
        headers = auth_headers(create_user(session, Role.VIEWER), settings)
    client = browser(app)
    created = client.post("/api/v1/tokens", json={"name": "by bearer"}, headers=headers)
    assert created.status_code == 201, created.text
    assert set_cookies(created) == {}


def test_logout_clears_the_session(app: FastAPI, viewer_name: str) -> None:
    client = browser(app)
    sign_in(client, viewer_name)
    assert client.post("/api/v1/logout").status_code == 403  # no CSRF token: no logout
    csrf = client.cookies["sliceportal_csrf"]
    response = client.post("/api/v1/logout", headers={"X-CSRF-Token": csrf})
    assert response.status_code == 204
    cleared = set_cookies(response)
    assert set(cleared) == {"sliceportal_session", "sliceportal_csrf"}
    assert all("max-age=0" in cookie for cookie in cleared.values())
    assert not client.cookies
    assert client.get("/api/v1/users/me").status_code == 401
    assert browser(app).post("/api/v1/logout").status_code == 204  # no session: nothing to do


def test_the_streams_open_with_the_session_cookie(app: FastAPI, viewer_name: str) -> None:
    """The UI's EventSource sends the cookie: no ticket in the URL."""
    with running_server(app) as url, httpx.Client(base_url=url, timeout=10) as client:
        sign_in(client, viewer_name)
        with client.stream("GET", "/api/v1/stream", params={"events": "alert"}) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
        client.cookies.clear()
        assert client.get("/api/v1/stream").status_code == 401
