"""Server-sent event streams, and the short-lived tickets that open them from an EventSource.

A stream authenticates like any endpoint (bearer header: access or API token; the browser's
session cookie, which the UI's EventSource sends) or with `?token=<ticket>`, for clients that
can send neither a header nor a cookie. A ticket is a JWT of
its own type (it cannot call any other endpoint), valid 60 s so that EventSource's automatic
reconnections work; a URL with a ticket is not worth stealing from a log a minute later.

Authentication uses its own short database session, closed before the stream starts: a stream
may stay open for many minutes and must not hold a pooled connection. A stream ends after the
access-token lifetime, so its user (deactivated since?) is checked again on reconnection.
Open streams are counted per user and in all (`gate.StreamCounter`), from the answer's start
to its end, whatever ends it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, Literal

import jwt
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from sliceportal import security
from sliceportal.api.deps import (
    PrincipalsDep,
    SettingsDep,
    TokenDep,
    ViewerUser,
    admits,
    get_current_user,
)
from sliceportal.api.gate import StreamCounter, leave_gate
from sliceportal.api.principals import Principal
from sliceportal.api.problems import unauthorized
from sliceportal.core.channels import Channels
from sliceportal.core.config import Settings
from sliceportal.db.models import User
from sliceportal.schemas.choices import Role
from sliceportal.schemas.telemetry import StreamTicket
from sliceportal.telemetry.sse import frame, redis_events

router = APIRouter(prefix="/stream", tags=["stream"])

TICKET_TYPE = "stream"
TICKET_LIFETIME = dt.timedelta(seconds=60)
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
SSE_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {}}, "description": "server-sent events"}
}


def create_ticket(user_id: int, settings: Settings) -> str:
    now = dt.datetime.now(dt.UTC)
    claims = {"sub": str(user_id), "typ": TICKET_TYPE, "iat": now, "exp": now + TICKET_LIFETIME}
    return jwt.encode(claims, settings.signing_key(), algorithm=security.JWT_ALGORITHM)


def _ticket_user_id(ticket: str, settings: Settings) -> int:
    try:
        claims = jwt.decode(
            ticket,
            settings.signing_key(),
            algorithms=[security.JWT_ALGORITHM],
            options={"require": ["exp", "sub"]},
        )
        if claims.get("typ") != TICKET_TYPE:
            raise unauthorized("?token= takes a stream ticket (POST /stream/ticket)")
        return int(claims["sub"])
    except (jwt.PyJWTError, ValueError):
        raise unauthorized("the stream ticket is invalid or expired") from None


def _ticket_principal(sessionmaker: Callable[[], Session], user_id: int) -> Principal:
    session: Session
    with sessionmaker() as session:
        user = session.get(User, user_id)
        if user is None or not user.is_active:
            raise unauthorized("the stream ticket's user is unknown or deactivated")
        return Principal(user.id, user.role)


@admits(Role.VIEWER)
async def stream_user(
    request: Request,
    settings: SettingsDep,
    bearer: TokenDep,
    principals: PrincipalsDep,
    token: Annotated[
        str | None, Query(description="a stream ticket, for clients that cannot send headers")
    ] = None,
) -> Principal:
    """Any active user (every role may watch), by bearer token or stream ticket."""
    if bearer:
        return await get_current_user(request, settings, bearer, principals)
    if not token:
        raise unauthorized(
            "a stream needs a bearer token, the session cookie or ?token=<stream ticket>"
        )
    user_id = _ticket_user_id(token, settings)
    return await run_in_threadpool(_ticket_principal, request.app.state.sessionmaker, user_id)


StreamUser = Annotated[Principal, Depends(stream_user)]


class CountedStream(StreamingResponse):
    """An event stream that holds a place in the process's `StreamCounter` (taken here: a
    429/503 problem over a limit) until it ends: its client left, it reached its age, or it
    failed."""

    def __init__(self, events: AsyncIterator[str], streams: StreamCounter, user_id: int) -> None:
        streams.open(user_id)
        super().__init__(events, media_type="text/event-stream", headers=SSE_HEADERS)
        self._streams = streams
        self._user_id = user_id

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._streams.close(self._user_id)


def event_stream(
    request: Request, user: Principal, channels: list[str], framer: Callable[[str, str], str]
) -> StreamingResponse:
    """`user`'s SSE response over ``channels`` of the configured Redis. Its request gives its
    gate slot back: from here on it holds no pooled connection, for minutes."""
    settings: Settings = request.app.state.settings
    events = redis_events(
        settings.redis_url,
        channels,
        framer,
        keepalive_s=settings.stream_keepalive_s,
        max_age_s=settings.access_token_minutes * 60,
    )
    response = CountedStream(events, request.app.state.streams, user.user_id)
    leave_gate(request)
    return response


@router.post("/ticket")
async def create_stream_ticket(user: ViewerUser, settings: SettingsDep) -> StreamTicket:
    """A ticket for `?token=` on the streams, valid for 60 seconds."""
    return StreamTicket(
        ticket=create_ticket(user.user_id, settings),
        expires_in=int(TICKET_LIFETIME.total_seconds()),
    )


StreamEvent = Literal["samples", "alert"]


@router.get("", response_class=StreamingResponse, responses=SSE_RESPONSE)
async def stream_all(
    request: Request,
    user: StreamUser,
    settings: SettingsDep,
    events: Annotated[
        list[StreamEvent] | None,
        Query(description="the events to send (repeat the parameter); default: both"),
    ] = None,
) -> StreamingResponse:
    """Every slice's samples (event `samples`: a JSON list per poll of a switch) and every
    alert event (event `alert`: `{event, alert}`), with keep-alive comments. A page that shows
    only alerts asks for `events=alert` and is spared every switch's samples each second."""
    channels = Channels.of(settings.database_url)
    wanted = set(events or ("samples", "alert"))
    subscribed = [
        channel
        for name, channel in (("samples", channels.samples), ("alert", channels.alerts))
        if name in wanted
    ]

    def framer(channel: str, data: str) -> str:
        return frame("alert" if channel == channels.alerts else "samples", data)

    return event_stream(request, user, subscribed, framer)
