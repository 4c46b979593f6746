"""End-to-end delay targets: the sum of a slice's per-hop bounds, checked on every change.

All slices here sit at priority 7 on harkous links, so a slice's bound on a link is the sum of
the bursts there over the capacity: 10 Mbit/s with a 10 ms burst limit is 100 kbit, 1 ms on a
100 Mbit/s link and 0.1 ms on a 1 Gbit/s one.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pytest
from fastapi.testclient import TestClient

from sliceportal.db.queries import links as link_queries
from utils.factories import MBIT, create, create_link, slice_body

Headers = dict[str, str]
MS = 1e-3


@pytest.fixture
def path(client: TestClient, operator_headers: Headers) -> tuple[dict[str, Any], dict[str, Any]]:
    """A slow link (100 Mbit/s) and a fast one (1 Gbit/s)."""
    slow = create_link(client, operator_headers, capacity_bps=100 * MBIT, model="harkous")
    fast = create_link(client, operator_headers, capacity_bps=1000 * MBIT, model="harkous")
    return slow, fast


def links_of(*links: dict[str, Any]) -> list[int]:
    return [link["id"] for link in links]


def rejected(response: Any) -> dict[str, Any]:
    assert response.status_code == 409, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem: dict[str, Any] = response.json()
    assert problem["type"] == "https://sliceportal.dev/problems/admission-rejected"
    return problem


def end_to_end(problem: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for v in problem["violations"] if v["kind"] == "end-to-end"]


def test_accepted_stored_shown_and_logged(
    client: TestClient, operator_headers: Headers, path: tuple[dict[str, Any], ...]
) -> None:
    body = slice_body(links_of(*path), e2e_delay_target_s=1.2 * MS)
    created = create(client, "slices", operator_headers, body)
    assert created["e2e_delay_target_s"] == 1.2 * MS
    read = client.get(f"/api/v1/slices/{created['id']}", headers=operator_headers).json()
    assert read["e2e_delay_target_s"] == 1.2 * MS
    entries = client.get(
        "/api/v1/changes",
        params={"entity_type": "slice", "entity_id": created["id"]},
        headers=operator_headers,
    ).json()["data"]
    assert entries[0]["after"]["e2e_delay_target_s"] == 1.2 * MS
    other = create_link(client, operator_headers)
    without = create(client, "slices", operator_headers, slice_body(links_of(other)))
    assert without["e2e_delay_target_s"] is None


@pytest.mark.parametrize("target", [0, -1, 3601])
def test_target_out_of_range(
    client: TestClient, operator_headers: Headers, path: tuple[dict[str, Any], ...], target: float
) -> None:
    body = slice_body(links_of(*path), e2e_delay_target_s=target)
    response = client.post("/api/v1/slices", json=body, headers=operator_headers)
    assert response.status_code == 422
    assert response.json()["field"] == "body.e2e_delay_target_s"


def test_rejected_naming_the_worst_hop_then_fits_with_the_suggested_capacity(
    client: TestClient, operator_headers: Headers, path: tuple[dict[str, Any], ...]
) -> None:
    slow, fast = path
    body = slice_body(links_of(slow, fast), e2e_delay_target_s=1 * MS)  # 1.1 ms
    problem = rejected(client.post("/api/v1/slices", json=body, headers=operator_headers))

    assert body["name"] in problem["detail"]
    assert "end-to-end" in problem["detail"]
    (violation,) = problem["violations"]
    assert violation["kind"] == "end-to-end"
    assert violation["slice"] == body["name"]
    assert violation["link_id"] == slow["id"]
    assert violation["bound_s"] == pytest.approx(1.1 * MS)
    assert violation["target_s"] == 1 * MS
    assert violation["excess_s"] == pytest.approx(0.1 * MS)
    assert f"the worst hop is link {slow['name']!r}" in violation["reason"]
    hops = violation["path"]["hops"]
    assert [h["link_id"] for h in hops] == links_of(slow, fast)
    assert [h["bound_s"] for h in hops] == pytest.approx([1 * MS, 0.1 * MS])
    assert violation["path"]["worst_hop_link_id"] == slow["id"]
    (fix,) = problem["fixes"]
    assert fix["kind"] == "capacity"
    assert fix["link_id"] == slow["id"]
    # the slow hop may take 1 ms − 0.1 ms: 100 kbit in 0.9 ms
    assert fix["capacity_bps"] == pytest.approx(100e3 / 0.9e-3)
    assert (
        client.get("/api/v1/slices", params={"q": body["name"]}, headers=operator_headers).json()[
            "count"
        ]
        == 0
    )

    patched = client.patch(
        f"/api/v1/links/{slow['id']}",
        json={"capacity_bps": fix["capacity_bps"]},
        headers=operator_headers,
    )
    assert patched.status_code == 200, patched.text
    create(client, "slices", operator_headers, body)


def test_a_change_on_one_link_that_breaks_another_slice_s_target(
    client: TestClient, operator_headers: Headers, path: tuple[dict[str, Any], ...]
) -> None:
    slow, fast = path
    target = create(
        client,
        "slices",
        operator_headers,
        slice_body(links_of(slow, fast), e2e_delay_target_s=1.5 * MS),  # 1.1 ms
    )
    # Another 100 kbit burst at priority 7 on the slow link: the target's path becomes 2.1 ms.
    # Its own bound (2 ms) is well within its per-hop target (10 ms).
    breaking = slice_body(links_of(slow))
    problem = rejected(client.post("/api/v1/slices", json=breaking, headers=operator_headers))
    (violation,) = end_to_end(problem)
    assert violation["slice"] == target["name"]
    assert violation["slice_id"] == target["id"]
    assert violation["bound_s"] == pytest.approx(2.1 * MS)
    assert target["name"] in problem["detail"]

    # Below the target's priority the harkous bound at 7 does not change: admitted.
    lower = create(client, "slices", operator_headers, breaking | {"priority": 6})
    raised = client.patch(
        f"/api/v1/slices/{lower['id']}", json={"priority": 7}, headers=operator_headers
    )
    assert end_to_end(rejected(raised))[0]["slice"] == target["name"]
    moved = client.patch(
        f"/api/v1/slices/{lower['id']}",
        json={"priority": 7, "link_ids": links_of(fast)},  # 0.1 ms more on the fast hop: 1.2 ms
        headers=operator_headers,
    )
    assert moved.status_code == 200, moved.text


def test_a_link_capacity_decrease_that_breaks_a_target(
    client: TestClient, operator_headers: Headers, path: tuple[dict[str, Any], ...]
) -> None:
    slow, fast = path
    target = create(
        client,
        "slices",
        operator_headers,
        slice_body(links_of(slow, fast), e2e_delay_target_s=1.5 * MS),
    )
    url = f"/api/v1/links/{fast['id']}"
    # At 200 Mbit/s the fast hop takes 0.5 ms: 1.5 ms in all, exactly the target.
    assert client.patch(url, json={"capacity_bps": 200 * MBIT}, headers=operator_headers).is_success
    problem = rejected(
        client.patch(url, json={"capacity_bps": 100 * MBIT}, headers=operator_headers)
    )
    (violation,) = problem["violations"]
    assert violation["kind"] == "end-to-end"
    assert violation["slice"] == target["name"]
    assert violation["bound_s"] == pytest.approx(2 * MS)
    assert problem["fixes"] and problem["fixes"][0]["kind"] == "capacity"
    assert client.get(url, headers=operator_headers).json()["capacity_bps"] == 200 * MBIT
    renamed = client.patch(url, json={"description": "no analysis"}, headers=operator_headers)
    assert renamed.status_code == 200


def test_the_candidate_s_own_per_hop_target_is_still_checked(
    client: TestClient, operator_headers: Headers, path: tuple[dict[str, Any], ...]
) -> None:
    slow, fast = path
    body = slice_body(links_of(slow, fast), delay_target_s=0.5 * MS, e2e_delay_target_s=1.0)
    problem = rejected(client.post("/api/v1/slices", json=body, headers=operator_headers))
    (violation,) = problem["violations"]
    assert violation["kind"] == "per-hop"
    assert violation["link_id"] == slow["id"]
    assert violation["slice"] == body["name"]


def test_updating_the_target_itself(
    client: TestClient, operator_headers: Headers, path: tuple[dict[str, Any], ...]
) -> None:
    created = create(client, "slices", operator_headers, slice_body(links_of(*path)))
    url = f"/api/v1/slices/{created['id']}"
    tight = client.patch(url, json={"e2e_delay_target_s": 1 * MS}, headers=operator_headers)
    assert end_to_end(rejected(tight))[0]["slice"] == created["name"]
    loose = client.patch(url, json={"e2e_delay_target_s": 2 * MS}, headers=operator_headers)
    assert loose.json()["e2e_delay_target_s"] == 2 * MS
    cleared = client.patch(url, json={"e2e_delay_target_s": None}, headers=operator_headers)
    assert cleared.status_code == 200
    assert cleared.json()["e2e_delay_target_s"] is None


LOCK_WITHOUT_PATHS = """
SELECT id, name, capacity_bps, model, queue_count, mtu_bytes, frame_overhead_bytes, switch_id
FROM links
WHERE id = ANY(%(links)s) ORDER BY id FOR UPDATE OF links
"""
"""The link locks as if the slices with an end-to-end target had been read before one more
arrived: the changed links only."""


def test_a_path_that_moves_while_being_locked_is_retried(
    client: TestClient,
    operator_headers: Headers,
    path: tuple[dict[str, Any], ...],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first attempt locks without the paths (as if a slice with an end-to-end target
    arrived between reading and locking them): the check notices, the transaction starts
    again and the second attempt decides on the whole path."""
    slow, fast = path
    target = create(
        client,
        "slices",
        operator_headers,
        slice_body(links_of(slow, fast), e2e_delay_target_s=1.5 * MS),
    )
    real = link_queries.LinkLocks.__init__
    calls: list[Collection[int]] = []

    def racing(self: link_queries.LinkLocks, *args: Any, **kwargs: Any) -> None:
        calls.append(kwargs["changed"])
        with monkeypatch.context() as first:
            if len(calls) == 1:
                first.setattr(link_queries, "LOCK_LINKS", LOCK_WITHOUT_PATHS)
            real(self, *args, **kwargs)

    monkeypatch.setattr(link_queries.LinkLocks, "__init__", racing)
    response = client.post(
        "/api/v1/slices", json=slice_body(links_of(slow)), headers=operator_headers
    )
    assert end_to_end(rejected(response))[0]["slice"] == target["name"]
    assert len(calls) == 2
