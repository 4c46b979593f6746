"""Concurrent creations never over-commit a link or a path: real server, real concurrent clients."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.api.main import create_app
from sliceportal.core.config import Settings
from sliceportal.db.models import Slice, SliceLink
from sliceportal.db.queries import links as link_queries
from sliceportal.domain.admission import Loads
from utils.factories import MBIT, create_link, slice_body
from utils.server import running_server

CLIENTS = 40
CAPACITY = 100 * MBIT
RATE = 3 * MBIT
BURST_LIMIT_S = 0.01
TARGET_S = 0.005
FITTING = 16
"""All at priority 7: the delay is Σ bursts / C = n × 3 Mbit/s × 10 ms / 100 Mbit/s ≤ 5 ms."""


async def create_all(base: str, headers: dict[str, str], link_id: int) -> list[int]:
    limits = httpx.Limits(max_connections=CLIENTS)
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=60) as http:
        bodies = [
            slice_body(
                [link_id], rate_bps=RATE, burst_limit_s=BURST_LIMIT_S, delay_target_s=TARGET_S
            )
            for _ in range(CLIENTS)
        ]
        responses = await asyncio.gather(*(http.post("/api/v1/slices", json=b) for b in bodies))
    return [response.status_code for response in responses]


def test_concurrent_creations_never_overcommit(
    settings: Settings,
    db: sessionmaker[Session],
    client: TestClient,
    operator_headers: dict[str, str],
) -> None:
    link = create_link(client, operator_headers, capacity_bps=CAPACITY)
    with running_server(create_app(settings)) as base:
        statuses = asyncio.run(create_all(base, operator_headers, link["id"]))

    assert Counter(statuses) == {201: FITTING, 409: CLIENTS - FITTING}
    with db() as session:
        rates = session.scalar(
            select(func.sum(Slice.rate_bps)).join(SliceLink).where(SliceLink.link_id == link["id"])
        )
    assert rates is not None and rates <= CAPACITY
    analysis = client.get(f"/api/v1/links/{link['id']}/analysis", headers=operator_headers).json()
    assert analysis["admissible"] is True
    assert len(analysis["slices"]) == FITTING
    assert all(s["worst_case_delay_s"] <= s["delay_target_s"] for s in analysis["slices"])
    dp_sids = client.get(
        "/api/v1/slices", params={"link_id": link["id"]}, headers=operator_headers
    ).json()["data"]
    assert sorted(s["dp_sids"][0]["dp_sid"] for s in dp_sids) == list(range(1, FITTING + 1))


E2E_CAPACITY = 100 * MBIT
E2E_FITTING = 3
E2E_BURST_LIMIT_S = 0.02
"""On harkous links (Σ bursts / C): the target slice (1 Mbit/s, 20 ms bursts: 0.2 ms per hop)
crosses two links and may take 0.4 ms + 3.5 × 0.3 ms end to end: three more 3 Mbit/s slices
with 10 ms bursts at its priority fit in all, whichever of its two links they are on."""
E2E_TARGET_S = 0.4e-3 + (E2E_FITTING + 0.5) * 0.3e-3
RACE_WINDOW_S = 0.02


async def create_on_either(
    base: str, headers: dict[str, str], link_ids: tuple[int, int]
) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=CLIENTS)
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=60) as http:
        bodies = [
            slice_body(
                [link_ids[i % 2]], rate_bps=RATE, burst_limit_s=BURST_LIMIT_S, delay_target_s=1
            )
            for i in range(CLIENTS)
        ]
        return await asyncio.gather(*(http.post("/api/v1/slices", json=b) for b in bodies))


def test_concurrent_creations_on_two_links_never_overcommit_a_path(
    settings: Settings,
    client: TestClient,
    operator_headers: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each creation alone fits its own link and, seen from that link, the target's path: only
    locking the path's other link too keeps two of them from both taking the last room. The
    server runs in this process, and a pause after reading the loads widens the window in
    which a creation on the other link could slip in."""
    read_loads = link_queries.read_loads

    def slow_read_loads(*args: Any, **kwargs: Any) -> Loads:
        loads = read_loads(*args, **kwargs)
        time.sleep(RACE_WINDOW_S)
        return loads

    monkeypatch.setattr(link_queries, "read_loads", slow_read_loads)
    first = create_link(client, operator_headers, capacity_bps=E2E_CAPACITY, model="harkous")
    second = create_link(client, operator_headers, capacity_bps=E2E_CAPACITY, model="harkous")
    body = slice_body(
        [first["id"], second["id"]],
        rate_bps=1 * MBIT,
        burst_limit_s=E2E_BURST_LIMIT_S,
        e2e_delay_target_s=E2E_TARGET_S,
    )
    response = client.post("/api/v1/slices", json=body, headers=operator_headers)
    assert response.status_code == 201, response.text
    with running_server(create_app(settings)) as base:
        responses = asyncio.run(
            create_on_either(base, operator_headers, (first["id"], second["id"]))
        )

    assert Counter(r.status_code for r in responses) == {
        201: E2E_FITTING,
        409: CLIENTS - E2E_FITTING,
    }
    assert {r.json()["type"] for r in responses if r.status_code == 409} == {
        "https://sliceportal.dev/problems/admission-rejected"
    }
    bounds = [
        bound["worst_case_delay_s"]
        for link in (first, second)
        for bound in client.get(
            f"/api/v1/links/{link['id']}/analysis", headers=operator_headers
        ).json()["slices"]
        if bound["name"] == body["name"]
    ]
    assert len(bounds) == 2
    assert sum(bounds) <= E2E_TARGET_S
