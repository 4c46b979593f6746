"""Liveness and readiness. Neither passes the request gate (`api.gate`): both must answer
however busy the process is."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import redis
import sqlalchemy as sa
from fastapi import APIRouter, FastAPI, Request

from sliceportal.api.problems import server_busy, service_unavailable
from sliceportal.core.config import Settings
from sliceportal.db.session import answering_within
from sliceportal.schemas.common import Message, Readiness

router = APIRouter(prefix="/health", tags=["health"])

PROBE_THREADS = 2


def probe_executor() -> ThreadPoolExecutor:
    """The threads readiness probes run on (`app.state.probes`), not the requests': a flood of
    probes, or a hung one, must not take those."""
    return ThreadPoolExecutor(PROBE_THREADS, thread_name_prefix="readiness")


@router.get("")
async def liveness() -> Message:
    """The process answers (no dependency checked): for restarts by a supervisor."""
    return Message(message="alive")


@router.get("/ready")
async def readiness(request: Request) -> Readiness:
    """The process takes work now, and the database and Redis answer: for load balancers.
    503 problem+json otherwise, within `health_ready_timeout_s` (`server-busy` while a new
    request would wait for a slot or a new stream be refused; `database-unavailable`,
    `redis-unavailable`)."""
    app: FastAPI = request.app
    busy = app.state.gate.saturation() or app.state.streams.saturation()
    if busy:
        raise server_busy(busy)
    settings: Settings = app.state.settings
    deadline = time.monotonic() + settings.health_ready_timeout_s
    engine: sa.Engine = app.state.engine
    redis_client: redis.Redis = app.state.redis

    def database_answers() -> None:
        with engine.connect() as connection:
            with answering_within(connection, settings.health_ready_timeout_s):
                connection.execute(sa.text("SELECT 1"))

    def redis_answers() -> None:
        if not redis_client.ping():
            raise service_unavailable("redis-unavailable", "Redis does not answer PING")

    await _probe(app, database_answers, deadline, "database-unavailable", "the database")
    await _probe(app, redis_answers, deadline, "redis-unavailable", "Redis")
    return Readiness(database="ok", redis="ok")


async def _probe(
    app: FastAPI, probe: Callable[[], None], deadline: float, kind: str, what: str
) -> None:
    """Run `probe` on a probe thread; a 503 `kind` problem when it has not answered by
    `deadline`. A probe left behind then ends at its own timeouts, holding its thread till
    then (the database's: `answering_within`; Redis's: the client's socket timeout)."""
    running = asyncio.get_running_loop().run_in_executor(app.state.probes, probe)
    try:
        await asyncio.wait_for(running, max(0.0, deadline - time.monotonic()))
    except TimeoutError:
        timeout_s: float = app.state.settings.health_ready_timeout_s
        raise service_unavailable(kind, f"{what} did not answer within {timeout_s:g} s") from None
