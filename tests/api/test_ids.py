"""Ids out of PostgreSQL's `integer` range, in a path or a filter, are a 422 naming the
parameter, not a database error (they were a 500: `integer out of range`)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

Headers = dict[str, str]
BIG = 2**31
"""One past the largest `integer`."""


def test_an_id_in_range_that_names_nothing_is_a_404(
    client: TestClient, admin_headers: Headers
) -> None:
    for url in ("/api/v1/slices/0", f"/api/v1/slices/{BIG - 1}", f"/api/v1/slices/{-BIG}"):
        assert client.get(url, headers=admin_headers).status_code == 404


@pytest.mark.parametrize(
    ("method", "url", "field"),
    [
        ("GET", f"/api/v1/slices/{BIG}", "path.slice_id"),
        ("PATCH", f"/api/v1/slices/{BIG}", "path.slice_id"),
        ("DELETE", f"/api/v1/slices/{BIG}", "path.slice_id"),
        ("GET", f"/api/v1/slices/{BIG}/telemetry", "path.slice_id"),
        ("GET", f"/api/v1/links/{BIG}", "path.link_id"),
        ("GET", f"/api/v1/links/{BIG}/analysis", "path.link_id"),
        ("GET", f"/api/v1/switches/{BIG}", "path.switch_id"),
        ("GET", f"/api/v1/users/{BIG}", "path.user_id"),
        ("GET", f"/api/v1/alerts/{BIG}", "path.alert_id"),
        ("GET", f"/api/v1/reports/links/{BIG}", "path.link_id"),
        ("GET", f"/api/v1/slices/{-BIG - 1}", "path.slice_id"),
        ("GET", f"/api/v1/slices?link_id={BIG}", "query.link_id"),
        ("GET", "/api/v1/slices?vlan_id=5000", "query.vlan_id"),
        ("GET", f"/api/v1/links?switch_id={BIG}", "query.switch_id"),
        ("GET", f"/api/v1/changes?entity_id={BIG}", "query.entity_id"),
        ("GET", f"/api/v1/alerts?slice_id={BIG}", "query.slice_id"),
        ("GET", f"/api/v1/tokens?user_id={BIG}", "query.user_id"),
    ],
)
def test_an_id_out_of_range_is_a_422_naming_it(
    client: TestClient, admin_headers: Headers, method: str, url: str, field: str
) -> None:
    body = {"priority": 1} if method == "PATCH" else None
    response = client.request(method, url, headers=admin_headers, json=body)
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["field"] == field


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        (
            "/api/v1/links",
            {"switch_id": BIG, "name": "x", "port": 1, "capacity_bps": 1e9},
            "body.switch_id",
        ),
        (
            "/api/v1/slices",
            {
                "name": "x",
                "vlan_id": 10,
                "rate_bps": 1e6,
                "burst_limit_s": 0.01,
                "priority": 1,
                "link_ids": [BIG],
            },
            "body.link_ids.0",
        ),
    ],
)
def test_an_id_out_of_range_in_a_body_is_a_422_naming_it(
    client: TestClient, admin_headers: Headers, url: str, body: dict[str, object], field: str
) -> None:
    response = client.post(url, headers=admin_headers, json=body)
    assert response.status_code == 422, response.text
    assert response.json()["field"] == field
