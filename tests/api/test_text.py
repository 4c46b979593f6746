"""Text PostgreSQL cannot hold (a NUL character) and filter values no column can hold are a 422
naming the field, not the driver's error, which names none; nothing is written."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.db.models import ChangeLogEntry, Switch
from utils.factories import create_link, slice_body, switch_body, unique

Headers = dict[str, str]


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/v1/slices?q=a%00b", "query.q"),
        ("/api/v1/links?q=%00", "query.q"),
        ("/api/v1/switches?q=%00", "query.q"),
        ("/api/v1/users?q=%00", "query.q"),
        ("/api/v1/changes?request_id=%00", "query.request_id"),
        ("/api/v1/slices?priority=8", "query.priority"),
        (f"/api/v1/slices?priority={2**63}", "query.priority"),
    ],
)
def test_a_filter_no_column_can_hold_is_a_422_naming_it(
    client: TestClient, admin_headers: Headers, url: str, field: str
) -> None:
    response = client.get(url, headers=admin_headers)
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["field"] == field


def test_text_filters_still_match(client: TestClient, admin_headers: Headers) -> None:
    link = create_link(client, admin_headers)
    name = unique("text-filter")
    created = client.post(
        "/api/v1/slices",
        headers=admin_headers,
        json=slice_body([link["id"]], name=name, priority=3),
    )
    assert created.status_code == 201, created.text
    found = client.get(f"/api/v1/slices?q={name[2:]}&priority=3", headers=admin_headers)
    assert [row["name"] for row in found.json()["data"]] == [name]


def _switch_count_and_changes(db: sessionmaker[Session]) -> tuple[int, int]:
    with db() as session:
        switches = session.scalar(select(func.count()).select_from(Switch))
        changes = session.scalar(select(func.count()).select_from(ChangeLogEntry))
        return switches or 0, changes or 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"description": "a\x00b"}, "body.description"),
        ({"address": "[fe80::1%eth\x00]:9559"}, "body.address"),
    ],
)
def test_a_nul_in_a_body_is_a_422_naming_it_and_writes_nothing(
    client: TestClient,
    admin_headers: Headers,
    db: sessionmaker[Session],
    body: dict[str, Any],
    field: str,
) -> None:
    before = _switch_count_and_changes(db)
    response = client.post("/api/v1/switches", headers=admin_headers, json=switch_body(**body))
    assert response.status_code == 422, response.text
    assert response.json()["field"] == field
    assert _switch_count_and_changes(db) == before


def test_a_nul_in_a_change_is_a_422_naming_it(client: TestClient, admin_headers: Headers) -> None:
    link = create_link(client, admin_headers)
    changed = client.patch(
        f"/api/v1/links/{link['id']}", headers=admin_headers, json={"description": "\x00"}
    )
    assert changed.status_code == 422
    assert changed.json()["field"] == "body.description"
    me = client.patch("/api/v1/users/me", headers=admin_headers, json={"full_name": "x\x00"})
    assert me.status_code == 422
    assert me.json()["field"] == "body.full_name"


def test_a_nul_in_a_login_name_is_an_unknown_user(client: TestClient) -> None:
    response = client.post(
        "/api/v1/login/access-token", data={"username": "admin\x00", "password": "whatever1"}
    )
    assert response.status_code == 401
    assert response.json()["type"].endswith("/unauthorized")
