"""Build the FastAPI application: one engine, one Redis client, the routers, the problem
handlers, the request-id and security-header middleware, Swagger UI and the built UI. Nothing
connects at build time, so an app can be built (and answer 503) while the database is down.

Each route module's router is included into the app directly, under API_PREFIX, not through
one `/api/v1` router: FastAPI matches an included router by matching its routes, once to pick
it and once more to handle the request, at every level of nesting, so a second level roughly
doubled the cost of routing (up to 0.5 ms of CPU per request, for the last routes).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import redis
from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sliceportal.api import openapi, problems
from sliceportal.api.access_log import redact_access_log
from sliceportal.api.body_limit import BodyLimitMiddleware
from sliceportal.api.docs import mount_docs
from sliceportal.api.gate import (
    GateLimits,
    GateMiddleware,
    RequestGate,
    StreamCounter,
    StreamLimits,
)
from sliceportal.api.principals import PrincipalCache
from sliceportal.api.router import ROUTERS
from sliceportal.api.routes import health, metrics
from sliceportal.api.security_headers import SecurityHeadersMiddleware
from sliceportal.api.spa import mount_spa
from sliceportal.core.config import Settings, get_settings
from sliceportal.db.aio import create_read_pool
from sliceportal.db.session import create_db_engine, create_sessionmaker
from sliceportal.telemetry.exposition import api_registry

API_PREFIX = "/api/v1"
REQUEST_ID_HEADER = "X-Request-ID"
_CLIENT_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def operation_id(route: APIRoute) -> str:
    """`{tag}-{name}`, so generated clients read `SlicesService.createSlice`."""
    return f"{route.tags[0]}-{route.name}" if route.tags else route.name


class RequestIdMiddleware:
    """Take the client's X-Request-ID (if sane) or make one; echo it on every response, a 500
    too (`wrap_outermost`).

    It is stored in `request.state.request_id` and lands in the change log. Pure ASGI, since
    BaseHTTPMiddleware costs a task per request.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = (
            dict(scope["headers"]).get(REQUEST_ID_HEADER.lower().encode(), b"").decode("latin-1")
        )
        request_id = given if _CLIENT_REQUEST_ID.match(given) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        await self.app(scope, receive, send_with_id)


def wrap_outermost(app: FastAPI, wrap: Callable[[ASGIApp], ASGIApp]) -> None:
    """Wrap `app`'s whole middleware stack, Starlette's error middleware included: middleware
    added with `add_middleware` runs inside it, and the 500 it answers would go without."""
    build = app.build_middleware_stack
    app.build_middleware_stack = lambda: wrap(build())  # type: ignore[method-assign]


def gate_limits(settings: Settings) -> GateLimits:
    """One API request holds at most one pooled connection: by default the gate lets in as
    many as the pool can serve, so none waits for a connection."""
    in_flight = settings.api_max_in_flight or settings.db_pool_size + settings.db_max_overflow
    return GateLimits(in_flight, settings.api_max_waiting, settings.api_max_wait_s)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    redact_access_log()
    engine = create_db_engine(settings, statement_timeout_s=settings.api_statement_timeout_s)
    redis_client = redis.Redis.from_url(
        settings.redis_url, socket_connect_timeout=2, socket_timeout=2
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # An executor of its own for each run of the app, the one before back after it (test
        # clients run one app many times, nested too): a shut-down executor does not start
        # again. Its threads start only when a probe runs.
        previous, app.state.probes = app.state.probes, health.probe_executor()
        # The read pool lives on this run's event loop, so each run has its own; a nested
        # run's ends with it and the outer run's is back.
        read_pool = create_read_pool(settings, statement_timeout_s=settings.api_statement_timeout_s)
        outer_pool, app.state.read_pool = getattr(app.state, "read_pool", None), read_pool
        await read_pool.open(wait=False)
        try:
            yield
        finally:
            await read_pool.close()
            app.state.read_pool = outer_pool
        app.state.probes.shutdown(wait=False, cancel_futures=True)
        app.state.probes = previous
        engine.dispose()
        redis_client.close()

    app = FastAPI(
        title="sliceportal",
        summary="Guaranteed-delay network slices on P4 switches",
        version="0.1.0",
        openapi_url=f"{API_PREFIX}/openapi.json",
        # `api.docs` serves Swagger UI with a policy of its own; no ReDoc, no OAuth2 redirect.
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
        generate_unique_id_function=operation_id,
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.sessionmaker = create_sessionmaker(engine)
    app.state.redis = redis_client
    app.state.probes = health.probe_executor()
    app.state.principals = PrincipalCache()
    app.state.streams = StreamCounter(
        StreamLimits(settings.stream_max_per_user, settings.stream_max_total)
    )
    problems.install(app)
    openapi.document(app, API_PREFIX, ROUTERS)
    # Inside the request id and the security headers, which wrap even the error middleware:
    # a 503, 413 or 500 carries them too; the body limit outside the gate, so that a body read
    # while waiting counts.
    app.state.gate = RequestGate(gate_limits(settings))
    app.add_middleware(GateMiddleware, gate=app.state.gate)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.api_max_body_bytes)
    wrap_outermost(
        app,
        lambda inner: RequestIdMiddleware(
            SecurityHeadersMiddleware(inner, behind_tls_proxy=settings.behind_tls_proxy)
        ),
    )
    for router in ROUTERS:
        app.include_router(router, prefix=API_PREFIX, responses=problems.RESPONSES)
    # Prometheus scrapes /metrics, not under the API's prefix; not in the OpenAPI document.
    app.state.metrics = api_registry(app.state.sessionmaker, settings)
    app.include_router(metrics.router, responses=problems.RESPONSES)
    mount_docs(app)
    mount_spa(app, settings.ui_dist_dir)
    return app
