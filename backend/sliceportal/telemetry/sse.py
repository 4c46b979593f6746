"""Server-sent events fed by Redis pub/sub, for the API's telemetry and alert streams.

One Redis subscription per open stream (a browser tab), held by the API process. The stream
outlives Redis: when the subscription fails (Redis restarted, network cut) it says so in an SSE
comment and subscribes again with back-off, while comments keep the HTTP connection alive. No
sample is replayed across a gap: the history endpoint has them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence

import redis
import redis.asyncio as aioredis

RETRY_MS = 2000
"""What the stream asks EventSource to wait before reconnecting after a dropped connection."""
RECONNECT_S = (0.25, 5.0)
"""First and longest wait between two subscription attempts while Redis is away."""

Framer = Callable[[str, str], str]
"""(channel, message) -> one SSE frame."""


def frame(event: str, data: str) -> str:
    """An SSE event; ``data`` is one line of JSON."""
    return f"event: {event}\ndata: {data}\n\n"


async def redis_events(
    redis_url: str,
    channels: Sequence[str],
    framer: Framer,
    *,
    keepalive_s: float,
    max_age_s: float,
    clock: Callable[[], float] = time.monotonic,
) -> AsyncIterator[str]:
    """SSE frames of the messages on ``channels`` until ``max_age_s`` has passed (then the
    client reconnects, and its credentials are checked again)."""
    yield f"retry: {RETRY_MS}\n\n"
    deadline = clock() + max_age_s
    backoff = RECONNECT_S[0]
    last_sent = clock()
    while clock() < deadline:
        try:
            async with (
                aioredis.Redis.from_url(redis_url, socket_connect_timeout=2) as client,
                client.pubsub(ignore_subscribe_messages=True) as pubsub,
            ):
                await pubsub.subscribe(*channels)
                backoff = RECONNECT_S[0]
                while clock() < deadline:
                    message = await pubsub.get_message(timeout=min(1.0, keepalive_s))
                    if message is not None:
                        yield framer(message["channel"].decode(), message["data"].decode())
                        last_sent = clock()
                    elif clock() - last_sent >= keepalive_s:
                        yield ": keep-alive\n\n"
                        last_sent = clock()
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            yield ": telemetry source unavailable, reconnecting\n\n"
            last_sent = clock()
            await asyncio.sleep(backoff)
            backoff = min(2 * backoff, RECONNECT_S[1])
