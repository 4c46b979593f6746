"""The emulator-only HTTP side door."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from emulator.model.conftest import StateFactory, counter, tail_drop
from sliceportal.domain import dataplane as dp
from sliceportal.emulator.control import ControlServer
from sliceportal.emulator.model.switch_model import Clock, PacketModel
from sliceportal.emulator.model.traffic import Profile, SourceSpec
from sliceportal.emulator.state import DeviceState

CBR_1K = 1000 * 1514 * 8


@pytest.fixture
def door(switch_state: StateFactory) -> Iterator[tuple[ControlServer, PacketModel, DeviceState]]:
    state = switch_state([tail_drop(1, 100e6, 0.01), tail_drop(2, 100e6, 0.01)])
    model = PacketModel(
        Profile((SourceSpec("a", "cbr", "10.0.1.1", rate_bps=CBR_1K),)), clock=Clock.MANUAL
    )
    model.attach(state)
    with ControlServer(model, "127.0.0.1:0") as server:
        yield server, model, state


def call(server: ControlServer, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://{server.address}{path}", data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_status_start_stop_add_remove(door: tuple[ControlServer, PacketModel, DeviceState]) -> None:
    server, model, state = door
    status, doc = call(server, "GET", "/traffic")
    assert status == 200 and doc["clock"] == "manual" and doc["sources"][0]["name"] == "a"
    assert call(server, "POST", "/traffic/a/stop")[0] == 200
    source = {"pattern": "cbr", "ipv4_dst": "10.0.2.1", "rate_bps": CBR_1K}
    status, doc = call(server, "PUT", "/traffic/b", source)
    assert status == 200 and [s["name"] for s in doc["sources"]] == ["a", "b"]
    model.advance(0.1)
    packets = counter(state, dp.FORWARDED)[0]
    assert (packets[1], packets[2]) == (0, 100)
    assert call(server, "POST", "/traffic/stop")[0] == 200
    assert all(not s["enabled"] for s in call(server, "GET", "/traffic")[1]["sources"])
    assert call(server, "POST", "/traffic/start")[0] == 200
    assert call(server, "DELETE", "/traffic/b")[0] == 200
    status, doc = call(server, "PUT", "/ports/1", {"rate_bps": 285e6, "queue_depth": 1000})
    assert status == 200 and doc["ports"]["1"] == {
        "rate_bps": 285_000_000,
        "queue_depth": 1000,
        "queued": 0,
    }


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "message"),
    [
        ("POST", "/traffic/nope/start", None, 404, "no source named 'nope'"),
        ("GET", "/elsewhere", None, 404, "no such resource"),
        ("PUT", "/traffic/x", {"pattern": "cbr", "ipv4_dst": "10.0.0.1"}, 400, "rate_bps"),
        ("PUT", "/traffic/x", {"name": "y", "pattern": "cbr"}, 400, "names another source"),
        ("PUT", "/traffic/x", None, 400, "send a JSON body"),
        ("PUT", "/ports/511", {"rate_bps": 1e9}, 400, "not a usable port"),
        ("DELETE", "/traffic/nope", None, 404, "no source named"),
    ],
)
def test_bad_requests_get_a_clear_error(
    door: tuple[ControlServer, PacketModel, DeviceState],
    method: str,
    path: str,
    body: Any,
    status: int,
    message: str,
) -> None:
    server, _, _ = door
    got, doc = call(server, method, path, body)
    assert got == status and message in doc["error"]


def test_the_address_must_be_host_and_port(
    door: tuple[ControlServer, PacketModel, DeviceState],
) -> None:
    _, model, _ = door
    with pytest.raises(ValueError, match="HOST:PORT"):
        ControlServer(model, "localhost")
