from __future__ import annotations

import datetime as dt

import jwt
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from sliceportal import security
from sliceportal.core.config import Settings
from sliceportal.schemas.choices import Role
from utils.factories import PASSWORD, create_user

URL = "/api/v1/login/access-token"


def login(client: TestClient, username: str, password: str) -> tuple[int, dict[str, object]]:
    response = client.post(URL, data={"username": username, "password": password})
    return response.status_code, response.json()


def test_login_access_token(client: TestClient, db: sessionmaker[Session]) -> None:
    with db() as session:
        user = create_user(session, Role.VIEWER)
    status, body = login(client, user.username, PASSWORD)
    assert status == 200
    assert body["token_type"] == "bearer"
    assert body["expires_in"] == 30 * 60
    me = client.get("/api/v1/users/me", headers={"Authorization": f"Bearer {body['access_token']}"})
    assert me.status_code == 200
    assert me.json()["username"] == user.username


def test_login_wrong_password(client: TestClient, db: sessionmaker[Session]) -> None:
    with db() as session:
        user = create_user(session, Role.VIEWER)
    response = client.post(URL, data={"username": user.username, "password": "wrong-password"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["type"].endswith("/unauthorized")
    status, _ = login(client, "nobody-of-that-name", PASSWORD)
    assert status == 401


def test_login_inactive_user(client: TestClient, db: sessionmaker[Session]) -> None:
    with db() as session:
        user = create_user(session, Role.ADMIN, active=False)
    status, _ = login(client, user.username, PASSWORD)
    assert status == 401


def test_access_token_expired(
    client: TestClient, db: sessionmaker[Session], settings: Settings
) -> None:
    with db() as session:
        user = create_user(session, Role.ADMIN)
    past = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
    claims = {"sub": str(user.id), "exp": past, "typ": "access"}
    token = jwt.encode(claims, settings.signing_key(), algorithm=security.JWT_ALGORITHM)
    response = client.get("/api/v1/users/me", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 401
    assert "expired" in response.json()["detail"]


def test_access_token_forged(client: TestClient, db: sessionmaker[Session]) -> None:
    with db() as session:
        user = create_user(session, Role.ADMIN)
    future = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)
    token = jwt.encode(
        {"sub": str(user.id), "exp": future, "typ": "access"}, "guessed-secret-key-value-32-bytes"
    )
    response = client.get("/api/v1/users/me", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 401


def test_no_token(client: TestClient) -> None:
    response = client.get("/api/v1/switches")
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.headers["content-type"] == "application/problem+json"


def test_deactivated_user_token_refused(
    client: TestClient, db: sessionmaker[Session], settings: Settings, admin_headers: dict[str, str]
) -> None:
    with db() as session:
        user = create_user(session, Role.OPERATOR)
    headers = {"Authorization": f"Bearer {security.create_access_token(user.id, settings)[0]}"}
    assert client.get("/api/v1/switches", headers=headers).status_code == 200
    deactivate = client.patch(
        f"/api/v1/users/{user.id}", json={"is_active": False}, headers=admin_headers
    )
    assert deactivate.status_code == 200
    assert client.get("/api/v1/switches", headers=headers).status_code == 401
