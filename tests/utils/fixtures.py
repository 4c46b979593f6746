"""Session fixtures shared by tests/api and tests/db (imported by their conftest files)."""

from __future__ import annotations

from collections.abc import Iterator
from http.cookiejar import CookieJar, DefaultCookiePolicy

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.api import problems
from sliceportal.api.main import create_app
from sliceportal.core.config import Settings
from sliceportal.db.migrate import upgrade
from sliceportal.db.session import create_db_engine, create_sessionmaker
from sliceportal.schemas.choices import Role
from sliceportal.schemas.problems import PROBLEM_DETAILS
from utils import factories


@pytest.fixture(scope="session")
def migrated_url(database_url: str) -> str:
    upgrade(database_url)
    return database_url


@pytest.fixture(scope="session")
def settings(
    migrated_url: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Settings:
    """The test portal's settings. Every TestClient request comes from one address: its login
    throttle is out of the way (tests/system/test_login_throttle.py tests it on a server)."""
    return Settings(
        DATABASE_URL=migrated_url,
        REDIS_URL=redis_url,
        secret_key="test-secret-key-of-a-decent-length",
        login_attempts_per_minute=10_000,
        tls_dirs=(tmp_path_factory.mktemp("tls"),),
        db_pool_size=10,
        db_max_overflow=40,
    )


@pytest.fixture(scope="session")
def db(settings: Settings) -> Iterator[sessionmaker[Session]]:
    """Sessions on the test database, for arranging and checking rows directly."""
    engine = create_db_engine(settings)
    yield create_sessionmaker(engine)
    engine.dispose()


@pytest.fixture(scope="session")
def app(settings: Settings) -> FastAPI:
    return create_app(settings)


def documented_problem(response: httpx.Response) -> None:
    """Fail on an error answer that is not the documented `ProblemDetails` (a closed schema):
    every API test then checks the OpenAPI document's promise on each error it provokes."""
    if response.headers.get("content-type", "").startswith(problems.MEDIA_TYPE):
        PROBLEM_DETAILS.validate_json(response.read())


@pytest.fixture(scope="session")
def client(app: FastAPI) -> Iterator[TestClient]:
    """A client like the CLI's: bearer tokens only, no cookie jar. A login's session cookie
    would otherwise authenticate every later request of every test that means to be
    anonymous."""
    no_cookies = CookieJar(DefaultCookiePolicy(allowed_domains=[]))
    with TestClient(app, cookies=no_cookies) as test_client:
        test_client.event_hooks = {"response": [documented_problem]}
        yield test_client


def _headers(db: sessionmaker[Session], settings: Settings, role: Role) -> dict[str, str]:
    with db() as session:
        return factories.auth_headers(factories.create_user(session, role), settings)


@pytest.fixture(scope="session")
def admin_headers(db: sessionmaker[Session], settings: Settings) -> dict[str, str]:
    return _headers(db, settings, Role.ADMIN)


@pytest.fixture(scope="session")
def operator_headers(db: sessionmaker[Session], settings: Settings) -> dict[str, str]:
    return _headers(db, settings, Role.OPERATOR)


@pytest.fixture(scope="session")
def viewer_headers(db: sessionmaker[Session], settings: Settings) -> dict[str, str]:
    return _headers(db, settings, Role.VIEWER)
