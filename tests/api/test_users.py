from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.core.config import Settings
from sliceportal.schemas.choices import Role
from utils.factories import PASSWORD, auth_headers, create_user, unique

URL = "/api/v1/users"


def test_create_user(client: TestClient, admin_headers: dict[str, str]) -> None:
    body = {"username": unique("u"), "password": "long enough", "role": "operator"}
    response = client.post(URL, json=body, headers=admin_headers)
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["role"] == "operator"
    assert "password" not in response.text and "hashed" not in response.text
    login = client.post(
        "/api/v1/login/access-token",
        data={"username": body["username"], "password": "long enough"},
    )
    assert login.status_code == 200


def test_create_user_duplicate_username(client: TestClient, admin_headers: dict[str, str]) -> None:
    body = {"username": unique("u"), "password": "long enough"}
    client.post(URL, json=body, headers=admin_headers)
    response = client.post(URL, json=body, headers=admin_headers)
    assert response.status_code == 409
    assert response.json()["field"] == "body.username"


def test_create_user_short_password(client: TestClient, admin_headers: dict[str, str]) -> None:
    response = client.post(
        URL, json={"username": unique("u"), "password": "short"}, headers=admin_headers
    )
    assert response.status_code == 422
    assert response.json()["field"] == "body.password"


def test_create_user_not_enough_permissions(
    client: TestClient, operator_headers: dict[str, str]
) -> None:
    response = client.post(
        URL, json={"username": unique("u"), "password": "long enough"}, headers=operator_headers
    )
    assert response.status_code == 403
    assert response.json()["title"] == "Not enough permissions"


def test_read_users_filters(client: TestClient, admin_headers: dict[str, str]) -> None:
    tag = unique("team")
    for role in ("viewer", "operator", "operator"):
        client.post(
            URL,
            json={
                "username": f"{tag}-{role}-{unique('x')}",
                "password": "long enough",
                "role": role,
            },
            headers=admin_headers,
        )
    page = client.get(URL, params={"q": tag, "role": "operator"}, headers=admin_headers).json()
    assert page["count"] == 2
    assert {u["role"] for u in page["data"]} == {"operator"}


def test_update_user_me_password(
    client: TestClient, db: sessionmaker[Session], settings: Settings
) -> None:
    with db() as session:
        user = create_user(session, Role.VIEWER)
    headers = auth_headers(user, settings)
    wrong = client.patch(
        f"{URL}/me", json={"password": "new password", "current_password": "x"}, headers=headers
    )
    assert wrong.status_code == 422
    assert wrong.json()["field"] == "body.current_password"
    right = client.patch(
        f"{URL}/me",
        json={"password": "new password", "current_password": PASSWORD},
        headers=headers,
    )
    assert right.status_code == 200
    role = client.patch(f"{URL}/me", json={"role": "admin"}, headers=headers)
    assert role.status_code == 422


def test_delete_user(client: TestClient, admin_headers: dict[str, str]) -> None:
    body = {"username": unique("u"), "password": "long enough"}
    created = client.post(URL, json=body, headers=admin_headers).json()
    assert client.delete(f"{URL}/{created['id']}", headers=admin_headers).status_code == 204
    assert client.get(f"{URL}/{created['id']}", headers=admin_headers).status_code == 404


def test_delete_user_with_changes(
    client: TestClient,
    db: sessionmaker[Session],
    settings: Settings,
    admin_headers: dict[str, str],
) -> None:
    with db() as session:
        user = create_user(session, Role.OPERATOR)
    client.post("/api/v1/tokens", json={"name": "x"}, headers=auth_headers(user, settings))
    response = client.delete(f"{URL}/{user.id}", headers=admin_headers)
    assert response.status_code == 409
    assert "deactivate" in response.json()["detail"]


@pytest.mark.parametrize("change", [{"role": "viewer"}, {"is_active": False}])
def test_an_admin_cannot_lock_themselves_out(
    client: TestClient, db: sessionmaker[Session], settings: Settings, change: dict[str, object]
) -> None:
    """A fuzzer, as admin, demoted its own user and every later call was refused; a portal
    with one admin would have been left without one."""
    with db() as session:
        headers = auth_headers(create_user(session, Role.ADMIN), settings)
    me = client.get(f"{URL}/me", headers=headers).json()
    response = client.patch(f"{URL}/{me['id']}", json=change, headers=headers)
    assert response.status_code == 409, response.text
    assert client.get(f"{URL}/me", headers=headers).json() == me
    with db() as session:
        other = auth_headers(create_user(session, Role.ADMIN), settings)
    assert client.patch(f"{URL}/{me['id']}", json=change, headers=other).status_code == 200
