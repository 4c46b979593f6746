"""Concurrent creations never over-commit a link: real server, real concurrent clients."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.api.main import create_app
from sliceportal.core.config import Settings
from sliceportal.db.models import Slice, SliceLink
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
