"""Every read needs viewer, every change operator, user management admin (netbox-style: one
table of endpoints, the same checks for each)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

Headers = dict[str, str]

READS = [
    "/api/v1/switches",
    "/api/v1/links",
    "/api/v1/slices",
    "/api/v1/switches/999999999",
    "/api/v1/links/999999999",
    "/api/v1/slices/999999999",
    "/api/v1/links/999999999/analysis",
]
CHANGES: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "/api/v1/switches", {}),
    ("PATCH", "/api/v1/switches/999999999", {}),
    ("DELETE", "/api/v1/switches/999999999", {}),
    ("POST", "/api/v1/links", {}),
    ("PATCH", "/api/v1/links/999999999", {}),
    ("DELETE", "/api/v1/links/999999999", {}),
    ("POST", "/api/v1/slices", {}),
    ("PATCH", "/api/v1/slices/999999999", {}),
    ("DELETE", "/api/v1/slices/999999999", {}),
]
USER_MANAGEMENT: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/api/v1/users", {}),
    ("POST", "/api/v1/users", {"username": "x", "password": "long enough"}),
    ("GET", "/api/v1/users/999999999", {}),
    ("PATCH", "/api/v1/users/999999999", {}),
    ("DELETE", "/api/v1/users/999999999", {}),
]


def call(client: TestClient, method: str, url: str, body: dict[str, Any], headers: Headers) -> int:
    json = body if method in {"POST", "PATCH"} else None
    return client.request(method, url, json=json, headers=headers).status_code


@pytest.mark.parametrize("url", READS)
def test_read_needs_a_token(client: TestClient, url: str) -> None:
    assert client.get(url).status_code == 401


@pytest.mark.parametrize("url", READS)
def test_read_as_viewer(client: TestClient, viewer_headers: Headers, url: str) -> None:
    assert client.get(url, headers=viewer_headers).status_code in {200, 404}


@pytest.mark.parametrize(("method", "url", "body"), CHANGES)
def test_change_not_enough_permissions(
    client: TestClient, viewer_headers: Headers, method: str, url: str, body: dict[str, Any]
) -> None:
    assert call(client, method, url, body, viewer_headers) == 403


@pytest.mark.parametrize(("method", "url", "body"), CHANGES)
def test_change_as_operator_passes_permissions(
    client: TestClient, operator_headers: Headers, method: str, url: str, body: dict[str, Any]
) -> None:
    assert call(client, method, url, body, operator_headers) not in {401, 403}


@pytest.mark.parametrize(("method", "url", "body"), USER_MANAGEMENT)
def test_user_management_not_enough_permissions(
    client: TestClient, operator_headers: Headers, method: str, url: str, body: dict[str, Any]
) -> None:
    assert call(client, method, url, body, operator_headers) == 403


@pytest.mark.parametrize(("method", "url", "body"), USER_MANAGEMENT)
def test_user_management_as_admin(
    client: TestClient, admin_headers: Headers, method: str, url: str, body: dict[str, Any]
) -> None:
    assert call(client, method, url, body, admin_headers) not in {401, 403}


def test_read_changes_not_enough_permissions(client: TestClient, viewer_headers: Headers) -> None:
    assert client.get("/api/v1/changes", headers=viewer_headers).status_code == 403
