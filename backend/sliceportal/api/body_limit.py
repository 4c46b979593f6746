"""Refuse request bodies larger than `max_bytes` with 413 problem+json, before parsing them.

A declared `Content-Length` above the limit is refused before the body is read; a body sent
without one (chunked) is counted as it is read and refused as soon as it passes the limit, so
no more than the limit is ever held. Before, JSON bodies of any size were read and parsed (a
10 MB body was accepted).
"""

from __future__ import annotations

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sliceportal.api.problems import HTTPProblem, Problem, problem_response


def too_large(max_bytes: int) -> Problem:
    return Problem(
        413,
        "content-too-large",
        f"the request body is larger than {max_bytes} bytes, the most this API reads",
        title="Content Too Large",
        headers={"Connection": "close"},  # the rest of the body is not read
    )


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await problem_response(Request(scope), too_large(self.max_bytes))(scope, receive, send)
            return
        received = 0
        started = False

        async def counting() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPProblem(too_large(self.max_bytes))  # `problems` answers it
            return message

        async def watching(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting, watching)
        except HTTPProblem as exc:  # raised where no handler answers it (the gate's queue)
            if started:
                raise
            await problem_response(Request(scope), exc.problem)(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server refuses a malformed one before the app sees it
    return None
