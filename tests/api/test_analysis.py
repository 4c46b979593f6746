"""The analysis endpoints take the CLI's JSON and answer the CLI's documents."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from utils.factories import MBIT

Headers = dict[str, str]


def case(
    priorities: tuple[int, int, int], capacity_bps: float | None = 330 * MBIT
) -> dict[str, Any]:
    slices = [
        {"name": "DC", "rate_bps": 48 * MBIT, "priority": priorities[0], "burst_limit_s": 0.02},
        {
            "name": "Enterprise",
            "rate_bps": 12 * MBIT,
            "priority": priorities[1],
            "burst_limit_s": 0.01,
        },
        {
            "name": "Peering",
            "rate_bps": 240 * MBIT,
            "priority": priorities[2],
            "burst_limit_s": 0.03,
        },
    ]
    return {"capacity_bps": capacity_bps, "slices": slices}


def test_bounds(client: TestClient, viewer_headers: Headers) -> None:
    """netcalc by default, the sound bound: case C needs a little more than the paper's 330
    Mbit/s there, which the paper's own (harkous) equations admit."""
    document = case((7, 7, 6))
    response = client.post("/api/v1/analysis/bounds", json=document, headers=viewer_headers)
    assert response.status_code == 200
    assert (response.json()["model"], response.json()["admissible"]) == ("netcalc", False)
    response = client.post(
        "/api/v1/analysis/bounds",
        params={"model": "harkous"},
        json=document,
        headers=viewer_headers,
    )
    assert (response.json()["model"], response.json()["admissible"]) == ("harkous", True)
    response = client.post(
        "/api/v1/analysis/bounds", json=case((7, 7, 6), 340 * MBIT), headers=viewer_headers
    )
    assert response.status_code == 200
    document = response.json()
    assert document["admissible"] is True
    assert document["model"] == "netcalc"
    assert [s["name"] for s in document["slices"]] == ["DC", "Enterprise", "Peering"]
    assert set(document["slices"][0]) == {
        "name",
        "priority",
        "burst_bytes",
        "residual_capacity_bps",
        "worst_case_delay_s",
        "delay_target_s",
        "meets_target",
        "slack_s",
    }


def test_min_capacity(client: TestClient, viewer_headers: Headers) -> None:
    for model, expected in (("harkous", 329.44 * MBIT), ("netcalc", None)):
        response = client.post(
            "/api/v1/analysis/min-capacity",
            params={"model": model},
            json=case((7, 7, 6), None),
            headers=viewer_headers,
        )
        assert response.status_code == 200
        assert response.json()["model"] == model
        if expected is not None:
            assert response.json()["min_capacity_bps"] == pytest.approx(expected, rel=1e-4)


def test_priority_plan(client: TestClient, viewer_headers: Headers) -> None:
    response = client.post(
        "/api/v1/analysis/priority-plan",
        params={"levels": 2},
        json=case((7, 7, 7), 340 * MBIT),
        headers=viewer_headers,
    )
    assert response.status_code == 200
    plan = response.json()
    assert plan["model"] == "netcalc"
    assert plan["feasible"] is True
    assert plan["priorities"] == {"DC": 7, "Enterprise": 7, "Peering": 6}


def test_priority_plan_levels_are_the_slices_levels(
    client: TestClient, viewer_headers: Headers
) -> None:
    """Slices may use 7 levels (1 to 7): best effort keeps priority 0."""
    response = client.post(
        "/api/v1/analysis/priority-plan",
        params={"levels": 8},
        json=case((7, 7, 7), 340 * MBIT),
        headers=viewer_headers,
    )
    assert response.status_code == 422
    assert response.json()["field"] == "query.levels"


def test_a_line_rate_capacity_changes_the_bound(
    client: TestClient, viewer_headers: Headers
) -> None:
    """frame_overhead_bytes 24: the capacity is the line rate, every frame costs 24 bytes more
    on the wire, so the same capacity carries less and the bounds grow."""
    bounds = {}
    for overhead in (0, 24):
        response = client.post(
            "/api/v1/analysis/bounds",
            json=case((7, 7, 6), 340 * MBIT) | {"frame_overhead_bytes": overhead},
            headers=viewer_headers,
        )
        assert response.status_code == 200, response.text
        bounds[overhead] = response.json()
    assert bounds[0]["admissible"] is True and bounds[24]["admissible"] is False
    dc = [bounds[overhead]["slices"][0]["worst_case_delay_s"] for overhead in (0, 24)]
    assert dc[1] > dc[0]


def test_curves(client: TestClient, viewer_headers: Headers) -> None:
    response = client.post(
        "/api/v1/analysis/curves",
        params={"start_bps": 300e6, "stop_bps": 900e6, "points": 7},
        json=case((7, 7, 6), None),
        headers=viewer_headers,
    )
    assert response.status_code == 200
    curves = response.json()
    assert curves["capacities_bps"] == [300e6 + i * 100e6 for i in range(7)]
    assert len(curves["delays_s"]["Peering"]) == 7


@pytest.mark.parametrize(
    ("path", "document", "field"),
    [
        ("bounds", {"slices": []}, "body.capacity_bps"),
        (
            "bounds",
            {
                "capacity_bps": 1e9,
                "slices": [{"name": "a", "rate_bps": -1, "priority": 7, "burst_limit_s": 0.1}],
            },
            "body.slices[0].rate_bps",
        ),
        (
            "bounds",
            {
                "capacity_bps": 1e9,
                "slices": [{"name": "a", "rate_bps": 1, "priority": 9, "burst_limit_s": 0.1}],
            },
            "body.slices[0].priority",
        ),
        (
            "bounds",
            {
                "capacity_bps": 1e9,
                "slices": [{"name": "a", "rate_bps": 1, "priority": 0, "burst_limit_s": 0.1}],
            },
            "body.slices[0].priority",
        ),
        (
            "bounds",
            {
                "capacity_bps": 1e9,
                "slices": [
                    {
                        "name": "a",
                        "rate_bps": 8,
                        "priority": 1,
                        "burst_limit_s": 0.1,
                        "burst_bytes": 2,
                    }
                ],
            },
            "body.slices[0].burst_bytes",
        ),
        (
            "bounds",
            {"capacity_bps": 1e9, "frame_overhead_bytes": -1, "slices": []},
            "body.frame_overhead_bytes",
        ),
        ("min-capacity", {"slices": []}, "body.slices"),
        ("priority-plan", {"capacity_bps": 1e9, "slices": [], "extra": 1}, "body.extra"),
    ],
)
def test_analysis_invalid(
    client: TestClient, viewer_headers: Headers, path: str, document: dict[str, Any], field: str
) -> None:
    response = client.post(f"/api/v1/analysis/{path}", json=document, headers=viewer_headers)
    assert response.status_code == 422, response.text
    assert response.json()["field"] == field


def test_analysis_needs_a_token(client: TestClient) -> None:
    assert client.post("/api/v1/analysis/bounds", json=case((7, 7, 6))).status_code == 401
