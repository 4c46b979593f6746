"""Session-wide real services for the tests: a fresh PostgreSQL database and a Redis.

PostgreSQL: the server at 127.0.0.1:5432 when one answers (a new database per run, dropped at
the end), else an embedded server from the wheel. Redis: 127.0.0.1:6379 when it answers, else the
wheel's `redis-server`. `SLICEPORTAL_TEST_REQUIRE_SERVICES=1` (set by CI) forbids the fallbacks.
Unit tests of pure code use none of these fixtures.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sliceportal.core import embedded

SYSTEM_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def _require_services() -> bool:
    return os.environ.get("SLICEPORTAL_TEST_REQUIRE_SERVICES") == "1"


@pytest.fixture(scope="session")
def postgres_server_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a PostgreSQL server's maintenance database."""
    if embedded.tcp_port_answers("127.0.0.1", 5432):
        return SYSTEM_POSTGRES
    if _require_services():
        pytest.fail("PostgreSQL does not answer on 127.0.0.1:5432")
    return embedded.start_embedded_postgres(tmp_path_factory.mktemp("pg") / "data")


@pytest.fixture(scope="session")
def database_url(postgres_server_url: str) -> Iterator[str]:
    """A fresh, empty database for this test run."""
    name = f"sliceportal_test_{uuid.uuid4().hex[:12]}"
    url = embedded.create_database(postgres_server_url, name)
    yield url
    embedded.drop_database(postgres_server_url, name)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a real Redis (database 15 of the system one, flushed at start, or an embedded one).

    `SLICEPORTAL_TEST_REDIS_DB` picks another database, so that two runs on one machine do not
    flush each other's."""
    if embedded.tcp_port_answers("127.0.0.1", 6379):
        import redis

        url = f"redis://127.0.0.1:6379/{os.environ.get('SLICEPORTAL_TEST_REDIS_DB', '15')}"
        redis.Redis.from_url(url).flushdb()
        yield url
        return
    if _require_services():
        pytest.fail("Redis does not answer on 127.0.0.1:6379")
    server = embedded.start_embedded_redis(tmp_path_factory.mktemp("redis"))
    yield server.url
    server.stop()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under CI a skipped test is a failed one: a missing tool must never pass silently."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if os.environ.get("CI") == "true" and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true: {report.longrepr}"
