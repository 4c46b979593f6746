"""Input the API refused too late or not at all (issue 19, defects 8 and 9): every limit is
checked at the edge, from the one definition in `domain.spec`, so what is stored is what the
analytics take and the data plane can hold."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.problems import assert_refused
from sliceportal.domain import spec
from utils.factories import MBIT, create, create_link, link_body, slice_body, switch_body

Headers = dict[str, str]


def test_a_capacity_beyond_the_analytics_is_refused_and_reports_keep_working(
    client: TestClient, operator_headers: Headers, viewer_headers: Headers
) -> None:
    """Defect 8: `capacity_bps: 1e308` was stored (201) and every report then answered 422."""
    switch = create(client, "switches", operator_headers, switch_body())
    body = link_body(switch["id"], capacity_bps=1e308)
    response = client.post("/api/v1/links", json=body, headers=operator_headers)
    assert f"{spec.MAX_CAPACITY_BPS:.0f}" in assert_refused(response, "body.capacity_bps")
    link = create_link(client, operator_headers, capacity_bps=spec.MAX_CAPACITY_BPS)
    too_fast = client.patch(
        f"/api/v1/links/{link['id']}", json={"capacity_bps": 1e16}, headers=operator_headers
    )
    assert_refused(too_fast, "body.capacity_bps")
    for url in (
        "/api/v1/reports/network?telemetry_window_s=0",
        f"/api/v1/reports/links/{link['id']}?telemetry_window_s=0",
        f"/api/v1/links/{link['id']}/analysis",
    ):
        assert client.get(url, headers=viewer_headers).status_code == 200, url


def test_report_window_as_documented(client: TestClient, viewer_headers: Headers) -> None:
    """Defect 9: a window between 1e6 s and 31 days was documented valid but refused."""
    url = "/api/v1/reports/network"
    window = {"telemetry_window_s": spec.MAX_REPORT_WINDOW_S}
    ok = client.get(url, params=window, headers=viewer_headers)
    assert ok.status_code == 200, ok.text
    assert ok.json()["parameters"]["telemetry_window_s"] == spec.MAX_REPORT_WINDOW_S
    beyond = {"telemetry_window_s": spec.MAX_REPORT_WINDOW_S + 1}
    assert_refused(
        client.get(url, params=beyond, headers=viewer_headers), "query.telemetry_window_s"
    )


@pytest.fixture(scope="module")
def link(client: TestClient, operator_headers: Headers) -> dict[str, Any]:
    return create_link(client, operator_headers, capacity_bps=10_000 * MBIT)


@pytest.mark.parametrize(
    ("overrides", "field", "bound"),
    [
        ({"rate_bps": 1e-320}, "body.rate_bps", f"{spec.MIN_SLICE_RATE_BPS}"),
        ({"rate_bps": 124_999}, "body.rate_bps", f"{spec.MIN_SLICE_RATE_BPS}"),
        ({"burst_limit_s": 1e-320}, "body.burst_limit_s", "0.001215"),  # 1518 B at 10 Mbit/s
        ({"burst_limit_s": None, "burst_bytes": 1e-320}, "body.burst_bytes", "1518"),
        ({"burst_limit_s": None, "burst_bytes": 1517}, "body.burst_bytes", "1518"),
        ({"rate_bps": 4.1e11}, "body.rate_bps", f"{spec.MAX_SLICE_RATE_BPS:.0f}"),
        ({"burst_limit_s": 4.5}, "body.burst_limit_s", f"{spec.MAX_BURST_LIMIT_S:g}"),
        (  # the switch marks below the burst limit only
            {"scheme": "ecn_step", "marking_threshold_s": 0.01},
            "body.marking_threshold_s",
            "below burst_limit_s",
        ),
    ],
)
def test_slices_beyond_what_the_data_plane_holds(
    client: TestClient,
    operator_headers: Headers,
    link: dict[str, Any],
    overrides: dict[str, Any],
    field: str,
    bound: str,
) -> None:
    """Defect 9: slices below the data plane's range (a 10 Mbit/s slice with a 10 ms burst
    limit, and one change) or above it were admitted and failed only when deployed; the 422
    says the bound that works."""
    body = slice_body([link["id"]], rate_bps=10 * MBIT, burst_limit_s=0.01) | overrides
    response = client.post("/api/v1/slices", json=body, headers=operator_headers)
    assert bound in assert_refused(response, field)


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("slices", {"vlan_id": True}, "body.vlan_id"),
        ("slices", {"priority": True}, "body.priority"),
        ("slices", {"rate_bps": True}, "body.rate_bps"),
        ("slices", {"link_ids": [True]}, "body.link_ids.0"),
        ("slices", {"vlan_id": "5"}, "body.vlan_id"),
        ("slices", {"max_packet_bytes": 1500.0}, "body.max_packet_bytes"),
        ("links", {"port": True}, "body.port"),
        ("links", {"capacity_bps": "1e9"}, "body.capacity_bps"),
        ("switches", {"device_id": True}, "body.device_id"),
        ("tokens", {"expires_in_days": True}, "body.expires_in_days"),
        ("users", {"is_active": 1}, "body.is_active"),
    ],
)
def test_numbers_and_booleans_are_strict(
    client: TestClient, admin_headers: Headers, path: str, body: dict[str, Any], field: str
) -> None:
    """Defect 9: `vlan_id: true` was VLAN 1; a boolean is no number, a string no integer."""
    response = client.post(f"/api/v1/{path}", json=body, headers=admin_headers)
    assert response.status_code == 422, response.text
    assert field in [error["field"] for error in response.json()["errors"]]


def test_duplicate_prefixes_areassert_refused(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    """Defect 9: a prefix listed twice was silently merged."""
    body = slice_body([link["id"]], ipv4_prefixes=["10.200.1.0/24", "10.200.1.0/24"])
    response = client.post("/api/v1/slices", json=body, headers=operator_headers)
    assert "10.200.1.0/24" in assert_refused(response, "body.ipv4_prefixes")


@pytest.mark.parametrize("until", ["0.5", "1700000000", "true"])
def test_change_log_times_are_timestamps(
    client: TestClient, operator_headers: Headers, until: str
) -> None:
    """Defect 9: `until=0.5` was read as half a second after 1970."""
    response = client.get(f"/api/v1/changes?until={until}", headers=operator_headers)
    assert_refused(response, "query.until")
    ok = client.get("/api/v1/changes?until=2030-01-01T00:00:00Z", headers=operator_headers)
    assert ok.status_code == 200


def test_skip_is_bounded(client: TestClient, viewer_headers: Headers) -> None:
    """Defect 9: a skip beyond PostgreSQL's bigint reached the database."""
    response = client.get(f"/api/v1/switches?skip={2**63}", headers=viewer_headers)
    assert_refused(response, "query.skip")
    ok = client.get(f"/api/v1/switches?skip={spec.MAX_OFFSET}", headers=viewer_headers)
    assert ok.status_code == 200
    assert ok.json()["data"] == []


def test_a_subnormal_rate_is_refused_by_the_analytics(
    client: TestClient, viewer_headers: Headers
) -> None:
    """The search for the least capacity met floats it could not split and never ended: one
    viewer's request held a worker thread for good (found by the API fuzzing)."""
    slice_ = {"name": "a", "rate_bps": 5e-324, "priority": 1, "burst_limit_s": 999999.0}
    response = client.post(
        "/api/v1/analysis/min-capacity?model=harkous",
        json={"slices": [slice_]},
        headers=viewer_headers,
    )
    message = assert_refused(response, "body.slices[0].rate_bps")
    assert f"{spec.MIN_RATE_BPS:g} bit/s" in message
