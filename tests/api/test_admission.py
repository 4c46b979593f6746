"""Admission on create/update, with the paper's reference slices (Harkous et al., case C).

The paper's figures are its own model's (harkous), so the links of those tests use it; the
default, netcalc, is the sound bound and needs a little more capacity for the same slices."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from utils.factories import MBIT, create, create_link, slice_body, unique

Headers = dict[str, str]
DC = {"rate_bps": 48 * MBIT, "burst_limit_s": 0.02}
ENTERPRISE = {"rate_bps": 12 * MBIT, "burst_limit_s": 0.01}
PEERING = {"rate_bps": 240 * MBIT, "burst_limit_s": 0.03}
CASE_C_MIN_CAPACITY = 329.4 * MBIT
CASE_C_MIN_CAPACITY_NETCALC = 336.4 * MBIT
"""netcalc at the link's largest frame (1518 bytes of a 1500-byte MTU) blocking each level."""
PAPER_MODEL = {"model": "harkous"}


def paper_slice(link: dict[str, Any], params: dict[str, float], priority: int) -> dict[str, Any]:
    return slice_body([link["id"]], priority=priority, **params)


def test_case_c_admitted(client: TestClient, operator_headers: Headers) -> None:
    link = create_link(client, operator_headers, capacity_bps=330 * MBIT, **PAPER_MODEL)
    for params, priority in ((DC, 7), (ENTERPRISE, 7), (PEERING, 6)):
        create(client, "slices", operator_headers, paper_slice(link, params, priority))
    analysis = client.get(f"/api/v1/links/{link['id']}/analysis", headers=operator_headers)
    assert analysis.status_code == 200
    document = analysis.json()
    assert document["admissible"] is True
    assert document["model"] == "harkous"
    assert all(s["meets_target"] for s in document["slices"])
    netcalc = client.get(
        f"/api/v1/links/{link['id']}/analysis",
        params={"model": "netcalc"},
        headers=operator_headers,
    )
    assert netcalc.json()["model"] == "netcalc"
    assert netcalc.json()["admissible"] is False  # harkous is not an upper bound


def test_case_c_under_the_default_model_needs_the_sound_capacity(
    client: TestClient, operator_headers: Headers
) -> None:
    link = create_link(client, operator_headers, capacity_bps=330 * MBIT)
    assert link["model"] == "netcalc"
    create(client, "slices", operator_headers, paper_slice(link, DC, 7))
    create(client, "slices", operator_headers, paper_slice(link, ENTERPRISE, 7))
    peering = paper_slice(link, PEERING, 6)
    response = client.post("/api/v1/slices", json=peering, headers=operator_headers)
    assert response.status_code == 409
    (capacity,) = [f for f in response.json()["fixes"] if f["kind"] == "capacity"]
    assert capacity["capacity_bps"] == pytest.approx(CASE_C_MIN_CAPACITY_NETCALC, rel=1e-3)
    patched = client.patch(
        f"/api/v1/links/{link['id']}",
        json={"capacity_bps": capacity["capacity_bps"]},
        headers=operator_headers,
    )
    assert patched.status_code == 200, patched.text
    create(client, "slices", operator_headers, peering)


def test_create_slice_rejected_then_fits_with_suggested_capacity(
    client: TestClient, operator_headers: Headers
) -> None:
    link = create_link(client, operator_headers, capacity_bps=329 * MBIT, **PAPER_MODEL)
    create(client, "slices", operator_headers, paper_slice(link, DC, 7))
    create(client, "slices", operator_headers, paper_slice(link, ENTERPRISE, 7))
    peering = paper_slice(link, PEERING, 6)
    response = client.post("/api/v1/slices", json=peering, headers=operator_headers)

    assert response.status_code == 409
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"] == "https://sliceportal.dev/problems/admission-rejected"
    assert problem["status"] == 409
    assert problem["title"]
    assert peering["name"] in problem["detail"]
    assert [v["slice"] for v in problem["violations"]] == [peering["name"]]
    violation = problem["violations"][0]
    assert violation["link_id"] == link["id"]
    assert violation["target_s"] > 0
    assert violation["reason"]
    assert set(violation) >= {"slice", "bound_s", "target_s", "excess_s", "reason"}
    (capacity,) = [f for f in problem["fixes"] if f["kind"] == "capacity"]
    assert capacity["capacity_bps"] == pytest.approx(CASE_C_MIN_CAPACITY, rel=1e-3)
    assert not [f for f in problem["fixes"] if f["kind"] == "priority-plan"]
    assert (
        client.get(
            "/api/v1/slices", params={"q": peering["name"]}, headers=operator_headers
        ).json()["count"]
        == 0
    )

    patched = client.patch(
        f"/api/v1/links/{link['id']}",
        json={"capacity_bps": capacity["capacity_bps"]},
        headers=operator_headers,
    )
    assert patched.status_code == 200, patched.text
    create(client, "slices", operator_headers, peering)


def test_create_slice_rejected_then_fits_with_priority_plan(
    client: TestClient, operator_headers: Headers
) -> None:
    link = create_link(client, operator_headers, capacity_bps=330 * MBIT, **PAPER_MODEL)
    names = {}
    for key, params in (("dc", DC), ("ent", ENTERPRISE)):
        names[key] = create(client, "slices", operator_headers, paper_slice(link, params, 7))[
            "name"
        ]
    peering = paper_slice(link, PEERING, 7)
    response = client.post("/api/v1/slices", json=peering, headers=operator_headers)
    assert response.status_code == 409
    problem = response.json()
    assert {v["slice"] for v in problem["violations"]} == {names["dc"], names["ent"]}
    (plan,) = [f for f in problem["fixes"] if f["kind"] == "priority-plan"]
    assert plan["priorities"] == {names["dc"]: 7, names["ent"]: 7, peering["name"]: 6}
    (capacity,) = [f for f in problem["fixes"] if f["kind"] == "capacity"]
    assert capacity["capacity_bps"] == pytest.approx(828 * MBIT)

    create(
        client,
        "slices",
        operator_headers,
        peering | {"priority": plan["priorities"][peering["name"]]},
    )


def test_update_slice_rejected(client: TestClient, operator_headers: Headers) -> None:
    link = create_link(client, operator_headers, capacity_bps=330 * MBIT, **PAPER_MODEL)
    create(client, "slices", operator_headers, paper_slice(link, DC, 7))
    create(client, "slices", operator_headers, paper_slice(link, ENTERPRISE, 7))
    peering = create(client, "slices", operator_headers, paper_slice(link, PEERING, 6))
    response = client.patch(
        f"/api/v1/slices/{peering['id']}", json={"priority": 7}, headers=operator_headers
    )
    assert response.status_code == 409
    assert response.json()["type"].endswith("/admission-rejected")
    unchanged = client.get(f"/api/v1/slices/{peering['id']}", headers=operator_headers).json()
    assert unchanged["priority"] == 6
    lowered = client.patch(
        f"/api/v1/slices/{peering['id']}", json={"rate_bps": 200 * MBIT}, headers=operator_headers
    )
    assert lowered.status_code == 200


def test_update_link_capacity_breaking_slices(
    client: TestClient, operator_headers: Headers
) -> None:
    link = create_link(client, operator_headers, capacity_bps=330 * MBIT, **PAPER_MODEL)
    for params, priority in ((DC, 7), (ENTERPRISE, 7), (PEERING, 6)):
        create(client, "slices", operator_headers, paper_slice(link, params, priority))
    url = f"/api/v1/links/{link['id']}"
    response = client.patch(url, json={"capacity_bps": 300 * MBIT}, headers=operator_headers)
    assert response.status_code == 409
    problem = response.json()
    assert problem["type"].endswith("/admission-rejected")
    assert problem["violations"]
    assert client.get(url, headers=operator_headers).json()["capacity_bps"] == 330 * MBIT
    netcalc = client.patch(url, json={"model": "netcalc"}, headers=operator_headers)
    assert netcalc.status_code == 409
    renamed = client.patch(url, json={"name": unique("renamed")}, headers=operator_headers)
    assert renamed.status_code == 200
    bigger = client.patch(url, json={"capacity_bps": 400 * MBIT}, headers=operator_headers)
    assert bigger.status_code == 200


def test_priority_levels_limited_by_queue_count(
    client: TestClient, operator_headers: Headers
) -> None:
    """Best effort keeps one queue: a link with n queues carries n - 1 slice levels."""
    link = create_link(client, operator_headers, queue_count=3)
    create(client, "slices", operator_headers, slice_body([link["id"]], priority=7))
    create(client, "slices", operator_headers, slice_body([link["id"]], priority=3))
    create(client, "slices", operator_headers, slice_body([link["id"]], priority=3))
    response = client.post(
        "/api/v1/slices", json=slice_body([link["id"]], priority=5), headers=operator_headers
    )
    assert response.status_code == 409
    assert response.json()["field"] == "body.priority"
    assert "one of them best effort's" in response.json()["detail"]
    fewer = client.patch(
        f"/api/v1/links/{link['id']}", json={"queue_count": 2}, headers=operator_headers
    )
    assert fewer.status_code == 409
    assert fewer.json()["field"] == "body.queue_count"
    one = client.patch(
        f"/api/v1/links/{link['id']}", json={"queue_count": 1}, headers=operator_headers
    )
    assert one.status_code == 422
    assert one.json()["field"] == "body.queue_count"


def test_rates_over_capacity(client: TestClient, operator_headers: Headers) -> None:
    link = create_link(client, operator_headers, capacity_bps=100 * MBIT)
    body = slice_body([link["id"]], rate_bps=150 * MBIT, burst_limit_s=0.001, delay_target_s=1)
    response = client.post("/api/v1/slices", json=body, headers=operator_headers)
    assert response.status_code == 409
    problem = response.json()
    assert "exceed capacity" in problem["violations"][0]["reason"]
    (capacity,) = [f for f in problem["fixes"] if f["kind"] == "capacity"]
    assert capacity["capacity_bps"] >= 150 * MBIT
