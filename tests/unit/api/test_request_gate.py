"""The request gate's queue discipline, on the event loop alone (no server, no database)."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from starlette.types import Message, Receive, Scope, Send

from sliceportal.api import gate as gate_module
from sliceportal.api.gate import Busy, GateLimits, GateMiddleware, RequestGate


def on_event_loop(test: Callable[[], Coroutine[Any, Any, None]]) -> Callable[[], None]:
    """Run an async test on a fresh event loop (the gate needs nothing else)."""

    @functools.wraps(test)
    def run() -> None:
        asyncio.run(test())

    return run


async def one_held(
    max_in_flight: int = 1, max_waiting: int = 5, max_wait_s: float = 5
) -> RequestGate:
    """A gate whose slots are all held."""
    gate = RequestGate(GateLimits(max_in_flight, max_waiting, max_wait_s))
    for _ in range(max_in_flight):
        await gate.acquire()
    return gate


async def settle() -> None:
    """Let every ready task run until it blocks again."""
    for _ in range(5):
        await asyncio.sleep(0)


@on_event_loop
async def test_admits_up_to_the_limit_then_queues_in_arrival_order() -> None:
    gate = await one_held(max_in_flight=2, max_waiting=10)
    assert gate.in_flight == 2
    order: list[int] = []

    async def waiter(number: int) -> None:
        await gate.acquire()
        order.append(number)

    tasks = [asyncio.create_task(waiter(number)) for number in range(3)]
    await settle()
    assert gate.waiting == 3 and order == []
    gate.release()
    await settle()
    assert order == [0] and gate.in_flight == 2 and gate.waiting == 2
    gate.release()
    gate.release()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2] and gate.in_flight == 2 and gate.waiting == 0


@on_event_loop
async def test_a_newcomer_never_overtakes_the_queue() -> None:
    gate = await one_held(max_waiting=10)
    first = asyncio.create_task(gate.acquire())
    await settle()
    gate.release()  # handed to `first`, not freed: in_flight stays 1
    assert gate.in_flight == 1
    late = asyncio.create_task(gate.acquire())
    await settle()
    assert first.done() and not late.done()
    gate.release()
    await late
    gate.release()
    assert gate.in_flight == 0


@on_event_loop
async def test_a_full_queue_refuses_at_once() -> None:
    gate = await one_held(max_waiting=1)
    queued = asyncio.create_task(gate.acquire())
    await settle()
    with pytest.raises(Busy, match="1 requests in progress and 1 waiting"):
        await gate.acquire()
    gate.release()
    await queued
    assert gate.in_flight == 1 and gate.waiting == 0


@on_event_loop
async def test_no_queue_refuses_whenever_every_slot_is_taken() -> None:
    gate = await one_held(max_waiting=0)
    with pytest.raises(Busy):
        await gate.acquire()
    gate.release()
    await gate.acquire()


@on_event_loop
async def test_a_wait_that_runs_out_leaves_the_queue() -> None:
    gate = await one_held(max_wait_s=0.05)
    loop = asyncio.get_running_loop()
    start = loop.time()
    with pytest.raises(Busy, match="waited 0.05 s"):
        await gate.acquire()
    assert loop.time() - start >= 0.05
    assert gate.waiting == 0
    gate.release()
    assert gate.in_flight == 0  # nobody was left to hand the slot to


@on_event_loop
async def test_a_cancelled_waiter_leaves_the_queue_and_a_granted_one_passes_its_slot_on() -> None:
    gate = await one_held()
    gone = asyncio.create_task(gate.acquire())
    await settle()
    gone.cancel()
    await settle()
    assert gate.waiting == 0

    granted = asyncio.create_task(gate.acquire())
    behind = asyncio.create_task(gate.acquire())
    await settle()
    gate.release()  # the slot is handed to `granted` ...
    granted.cancel()  # ... which is cancelled before it runs: the slot must reach `behind`
    await settle()
    assert granted.cancelled()  # its wait raised, and the slot went on
    await behind
    assert gate.in_flight == 1 and gate.waiting == 0
    gate.release()
    assert gate.in_flight == 0


@on_event_loop
async def test_a_release_skips_a_waiter_cancelled_before_it_could_leave() -> None:
    gate = await one_held()
    gone = asyncio.create_task(gate.acquire())
    await settle()
    gone.cancel()
    gate.release()  # before `gone` ran its cleanup: its cancelled wait is skipped
    assert gate.in_flight == 0
    await settle()
    assert gone.cancelled() and gate.waiting == 0 and gate.in_flight == 0


def test_refusals_are_logged_first_at_once_then_as_counts_the_last_one_too(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A burst of refusals gives one line at its start and one count per interval, the tail
    of the burst included: before, a count was logged only at a later refusal."""
    monkeypatch.setattr(gate_module, "LOG_INTERVAL_S", 0.2)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("a refused request never reaches the app")

    async def refuse(middleware: GateMiddleware, times: int) -> None:
        sent: list[Message] = []

        async def send(message: Message) -> None:
            sent.append(message)

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        for _ in range(times):
            await middleware(_request_scope(), receive, send)
        assert [m["status"] for m in sent if m["type"] == "http.response.start"] == [503] * times

    def lines() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.name == gate_module.__name__]

    async def scenario() -> None:
        gate = await one_held(max_waiting=0)
        middleware = GateMiddleware(app, gate)
        await refuse(middleware, 1)
        assert len(lines()) == 1 and "answered a request 503" in lines()[0]
        await refuse(middleware, 3)
        assert len(lines()) == 1
        await asyncio.sleep(0.3)  # the burst is over: its tail is counted
        assert len(lines()) == 2 and "answered 3 more requests 503" in lines()[1]
        await asyncio.sleep(0.3)  # nothing refused meanwhile: nothing logged
        assert len(lines()) == 2
        await refuse(middleware, 1)  # a new burst starts with a line of its own
        assert len(lines()) == 3 and "answered a request 503" in lines()[2]

    caplog.set_level(logging.WARNING, logger=gate_module.__name__)
    asyncio.run(scenario())


def _request_scope() -> Scope:
    return {
        "type": "http",
        "method": "POST",
        "path": "/api/v1/slices",
        "headers": [],
        "query_string": b"",
    }


async def _ignore(message: Message) -> None:
    return None


@on_event_loop
async def test_a_client_that_leaves_as_its_slot_comes_passes_the_slot_on() -> None:
    """The slot handed to a waiter in the same step its client leaves goes back, and the
    request is not served."""
    gate = await one_held()
    served: list[Scope] = []
    left = asyncio.Event()
    messages: list[Message] = [{"type": "http.request", "body": b"{}", "more_body": False}]

    async def receive() -> Message:
        if messages:
            return messages.pop()
        await left.wait()
        return {"type": "http.disconnect"}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        served.append(scope)

    request = asyncio.create_task(GateMiddleware(app, gate)(_request_scope(), receive, _ignore))
    await settle()
    assert gate.waiting == 1
    left.set()
    gate.release()  # hands the slot to the waiter whose client has just left
    await request
    await settle()
    assert served == [] and gate.in_flight == 0 and gate.waiting == 0


@on_event_loop
async def test_a_waiting_request_gets_what_the_gate_read_then_the_rest() -> None:
    gate = await one_held()
    chunks: list[Message] = [
        {"type": "http.request", "body": b'{"a":', "more_body": True},
        {"type": "http.request", "body": b" 1}", "more_body": False},
        {"type": "http.disconnect"},
    ]
    body_sent = asyncio.Event()

    async def receive() -> Message:
        if len(chunks) == 1:
            body_sent.set()
            await asyncio.sleep(3600)  # the client stays: no disconnect while it waits
        return chunks.pop(0)

    got: list[Message] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        got.extend([await receive(), await receive()])

    request = asyncio.create_task(GateMiddleware(app, gate)(_request_scope(), receive, _ignore))
    await body_sent.wait()
    gate.release()
    await request
    assert [m["body"] for m in got] == [b'{"a":', b" 1}"]
    assert gate.in_flight == 0
