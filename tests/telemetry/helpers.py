"""Shared by the telemetry and alert tests: an emulated switch whose counters the tests set
through P4Runtime (MODIFY of CounterEntry, as the primary controller), and slices on it."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from emulator.p4rt import MODIFY, Controller, counter_entry, load_p4info, update
from sliceportal.domain import dataplane as dp
from sliceportal.domain.dataplane import histogram_index
from sliceportal.emulator.defaults import DEFAULT_P4INFO
from sliceportal.emulator.server import EmulatorServer
from utils import factories

MBIT = 1e6
_COUNTER_IDS = {c.preamble.name: c.preamble.id for c in load_p4info(DEFAULT_P4INFO).counters}


@dataclass(frozen=True)
class Cells:
    """One slice's counter values, as the switch would hold them."""

    forwarded: tuple[int, int] = (0, 0)
    vq_dropped: tuple[int, int] = (0, 0)
    real_dropped: tuple[int, int] = (0, 0)
    marked: tuple[int, int] = (0, 0)
    aqm_dropped: tuple[int, int] = (0, 0)
    vq_hist: Sequence[int] = (0,) * 8
    rq_hist: Sequence[int] = (0,) * 8


class SwitchCounters:
    """Sets counter cells of an emulator over P4Runtime, as its primary controller."""

    def __init__(self, address: str) -> None:
        self.controller = Controller(address, election_id=7)

    def set(self, dp_sid: int, cells: Cells) -> None:
        updates = [
            update(MODIFY, counter_entry(_COUNTER_IDS[name], dp_sid, packet_count=p, byte_count=b))
            for name, (p, b) in (
                (dp.FORWARDED, cells.forwarded),
                (dp.VQ_DROPPED, cells.vq_dropped),
                (dp.REAL_DROPPED, cells.real_dropped),
                (dp.ECN_MARKED, cells.marked),
                (dp.AQM_DROPPED, cells.aqm_dropped),
            )
        ]
        for name, hist in ((dp.VQ_DELAY_HIST, cells.vq_hist), (dp.REAL_DELAY_HIST, cells.rq_hist)):
            updates += [
                update(
                    MODIFY,
                    counter_entry(
                        _COUNTER_IDS[name], histogram_index(dp_sid, b), packet_count=count
                    ),
                )
                for b, count in enumerate(hist)
            ]
        self.controller.write(*updates)

    def close(self) -> None:
        self.controller.close()


def _move_off(client: TestClient, headers: dict[str, str], address: str) -> None:
    skip = 0
    while True:
        page = client.get(
            "/api/v1/switches", params={"skip": skip, "limit": 1000}, headers=headers
        ).json()
        for switch in page["data"]:
            if switch["address"] == address:
                moved = factories.switch_body()["address"]
                response = client.patch(
                    f"/api/v1/switches/{switch['id']}", json={"address": moved}, headers=headers
                )
                assert response.status_code == 200, response.text
        skip += len(page["data"])
        if not page["data"] or skip >= page["count"]:
            return


def create_emulator_slices(
    client: TestClient,
    headers: dict[str, str],
    address: str,
    count: int = 1,
    *,
    capacity_bps: float = 1000 * MBIT,
    **slice_fields: Any,
) -> list[dict[str, Any]]:
    """A switch of kind emulator at ``address``, one link, and ``count`` slices on it. A switch
    an earlier test left at the same address (the OS reuses an emulator's port within a run)
    is moved to an address of its own first: (address, device id) is unique."""
    _move_off(client, headers, address)
    switch = factories.create(
        client, "switches", headers, factories.switch_body(address=address, kind="emulator")
    )
    link = factories.create(
        client,
        "links",
        headers,
        factories.link_body(switch["id"], capacity_bps=capacity_bps, port=1),
    )
    return [
        factories.create(
            client,
            "slices",
            headers,
            factories.slice_body(
                [link["id"]], ipv4_prefixes=[f"10.{i // 256}.{i % 256}.0/24"], **slice_fields
            ),
        )
        for i in range(count)
    ]


def next_message(pubsub: redis.client.PubSub, timeout_s: float = 3.0) -> str:
    """The next message published to a subscription (skipping its confirmations)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        message = pubsub.get_message(ignore_subscribe_messages=True, timeout=0.1)
        if message is not None:
            data: bytes = message["data"]
            return data.decode()
    raise AssertionError(f"nothing published within {timeout_s} s")


def dp_sid_of(slice_: dict[str, Any]) -> int:
    (row,) = slice_["dp_sids"]
    dp_sid: int = row["dp_sid"]
    return dp_sid


@pytest.fixture
def emulator() -> Iterator[EmulatorServer]:
    """A fresh emulated switch with the portal's program committed."""
    server = EmulatorServer("127.0.0.1:0", 1, load_pipeline=True)
    server.start()
    yield server
    server.stop(grace=0)


@pytest.fixture
def counters(emulator: EmulatorServer) -> Iterator[SwitchCounters]:
    writer = SwitchCounters(emulator.address)
    yield writer
    writer.close()
