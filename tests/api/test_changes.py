from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from utils.factories import create, create_link, slice_body, switch_body, unique

Headers = dict[str, str]


def changes(client: TestClient, headers: Headers, **params: Any) -> list[dict[str, Any]]:
    response = client.get("/api/v1/changes", params=params, headers=headers)
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


def test_request_id_echoed_and_generated(client: TestClient, viewer_headers: Headers) -> None:
    given = client.get("/api/v1/switches", headers=viewer_headers | {"X-Request-ID": "abc-123"})
    assert given.headers["x-request-id"] == "abc-123"
    made = client.get("/api/v1/switches", headers=viewer_headers)
    assert len(made.headers["x-request-id"]) == 32
    hostile = client.get("/api/v1/switches", headers=viewer_headers | {"X-Request-ID": "a b\t<"})
    assert hostile.headers["x-request-id"] != "a b\t<"
    not_found = client.get("/api/v1/nowhere", headers={"X-Request-ID": "r-404"})
    assert not_found.status_code == 404
    assert not_found.headers["x-request-id"] == "r-404"


def test_changes_record_user_request_and_snapshots(
    client: TestClient, operator_headers: Headers
) -> None:
    me = client.get("/api/v1/users/me", headers=operator_headers).json()
    link = create_link(client, operator_headers)
    request_id = unique("req")
    headers = operator_headers | {"X-Request-ID": request_id}
    created = client.post("/api/v1/slices", json=slice_body([link["id"]]), headers=headers).json()
    client.patch(f"/api/v1/slices/{created['id']}", json={"priority": 5}, headers=headers)
    client.delete(f"/api/v1/slices/{created['id']}", headers=headers)

    entries = changes(client, operator_headers, request_id=request_id)
    assert [e["action"] for e in entries] == ["delete", "update", "create"]
    assert {e["user_id"] for e in entries} == {me["id"]}
    assert {e["entity_type"] for e in entries} == {"slice"}
    assert {e["entity_name"] for e in entries} == {created["name"]}
    deleted, updated, inserted = entries
    assert inserted["before"] is None
    assert inserted["after"]["link_ids"] == [link["id"]]
    assert inserted["after"]["dp_sids"] == {str(link["switch_id"]): created["dp_sids"][0]["dp_sid"]}
    assert updated["before"]["priority"] == 7
    assert updated["after"]["priority"] == 5
    assert deleted["after"] is None
    assert deleted["before"]["priority"] == 5


def test_changes_filters(client: TestClient, operator_headers: Headers) -> None:
    switch = create(client, "switches", operator_headers, switch_body())
    client.patch(
        f"/api/v1/switches/{switch['id']}", json={"description": "x"}, headers=operator_headers
    )
    entries = changes(client, operator_headers, entity_type="switch", entity_id=switch["id"])
    assert [e["action"] for e in entries] == ["update", "create"]
    only_updates = changes(
        client, operator_headers, entity_type="switch", entity_id=switch["id"], action="update"
    )
    assert len(only_updates) == 1
    since = changes(
        client,
        operator_headers,
        entity_id=switch["id"],
        entity_type="switch",
        since=entries[0]["occurred_at"],
    )
    assert [e["id"] for e in since] == [entries[0]["id"]]


def test_user_changes_never_log_password_hash(client: TestClient, admin_headers: Headers) -> None:
    created = client.post(
        "/api/v1/users",
        json={"username": unique("u"), "password": "long enough"},
        headers=admin_headers,
    ).json()
    (entry,) = changes(client, admin_headers, entity_type="user", entity_id=created["id"])
    assert "hashed_password" not in entry["after"]
    assert entry["after"]["username"] == created["username"]


def test_failed_change_leaves_no_entry(client: TestClient, operator_headers: Headers) -> None:
    request_id = unique("req")
    link = create_link(client, operator_headers, capacity_bps=1e6)
    response = client.post(
        "/api/v1/slices",
        json=slice_body([link["id"]], rate_bps=2e6),
        headers=operator_headers | {"X-Request-ID": request_id},
    )
    assert response.status_code == 409
    assert changes(client, operator_headers, request_id=request_id) == []
