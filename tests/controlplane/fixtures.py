"""Fixtures of the control-plane tests (imported by conftest.py): an emulated switch per test
on a free port of 127.0.0.1, a session pool, and a reconciler on the session's database with
its circuit breaker on the tests' Redis."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis
import sqlalchemy as sa

from sliceportal.controlplane.reconciler import Reconciler
from sliceportal.controlplane.scheduling import Breaker
from sliceportal.core.config import Settings
from sliceportal.db.changes import ChangeContext
from sliceportal.db.session import create_db_engine
from sliceportal.emulator.server import EmulatorServer
from sliceportal.p4rt.pipeline import settings_pipeline
from sliceportal.p4rt.session import SessionPool


@pytest.fixture
def device_id() -> int:
    """A device id of its own per test: (address, device id) is unique among switches, and a
    free port may be one an earlier test's switch used."""
    return 2 + uuid.uuid4().int % (2**31)


@pytest.fixture
def emulator(device_id: int) -> Iterator[EmulatorServer]:
    server = EmulatorServer("127.0.0.1:0", device_id)
    server.start()
    yield server
    server.stop(grace=0)


@pytest.fixture(scope="session")
def engine(settings: Settings) -> Iterator[sa.Engine]:
    engine = create_db_engine(settings)
    yield engine
    engine.dispose()


@pytest.fixture
def pool(settings: Settings) -> Iterator[SessionPool]:
    sessions = SessionPool(settings)
    yield sessions
    sessions.close()


@pytest.fixture
def breaker(redis_url: str, settings: Settings) -> Iterator[Breaker]:
    client = redis.Redis.from_url(redis_url)
    yield Breaker(client, settings.switch_backoff_max_s)
    client.close()


@pytest.fixture
def reconciler(
    engine: sa.Engine, pool: SessionPool, settings: Settings, breaker: Breaker
) -> Reconciler:
    context = ChangeContext(user_id=None, request_id=f"worker:test-{uuid.uuid4().hex}")
    return Reconciler(engine, pool, settings_pipeline(settings), context, breaker)
