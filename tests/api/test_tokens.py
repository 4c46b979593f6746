from __future__ import annotations

import datetime as dt
import hashlib
import time
from collections.abc import Callable

from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.core.config import Settings
from sliceportal.db.models import ApiToken, User
from sliceportal.schemas.choices import Role
from utils.factories import auth_headers, create_user, switch_body, unique

URL = "/api/v1/tokens"


def test_create_token_shown_once_stored_hashed(
    client: TestClient, db: sessionmaker[Session], settings: Settings
) -> None:
    with db() as session:
        headers = auth_headers(create_user(session, Role.OPERATOR), settings)
    response = client.post(URL, json={"name": "ci"}, headers=headers)
    assert response.status_code == 201, response.text
    created = response.json()
    secret = created["token"]
    assert secret.startswith("sp_")
    assert created["expires_at"] is None

    listed = client.get(URL, headers=headers).json()
    assert listed["count"] == 1
    assert "token" not in listed["data"][0]
    assert secret not in client.get(URL, headers=headers).text
    with db() as session:
        row = session.scalars(select(ApiToken).where(ApiToken.id == created["id"])).one()
    assert row.token_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret[3:15] == row.prefix

    token_headers = {"Authorization": f"Bearer {secret}"}
    write = client.post("/api/v1/switches", json=switch_body(), headers=token_headers)
    assert write.status_code == 201
    with db() as session:
        assert session.get(ApiToken, created["id"]).last_used_at is not None  # type: ignore[union-attr]


def test_revoke_token(client: TestClient, db: sessionmaker[Session], settings: Settings) -> None:
    with db() as session:
        headers = auth_headers(create_user(session, Role.VIEWER), settings)
    created = client.post(URL, json={"name": "script", "expires_in_days": 30}, headers=headers)
    assert created.json()["expires_at"] is not None
    token_headers = {"Authorization": f"Bearer {created.json()['token']}"}
    assert client.get("/api/v1/users/me", headers=token_headers).status_code == 200
    revoked = client.delete(f"{URL}/{created.json()['id']}", headers=headers)
    assert revoked.status_code == 204
    assert client.get("/api/v1/users/me", headers=token_headers).status_code == 401
    assert client.get(URL, headers=headers).json()["data"][0]["revoked_at"] is not None


def test_token_with_wrong_secret(client: TestClient, operator_headers: dict[str, str]) -> None:
    secret = client.post(URL, json={"name": unique("t")}, headers=operator_headers).json()["token"]
    forged = secret[:-4] + ("AAAA" if not secret.endswith("AAAA") else "BBBB")
    response = client.get("/api/v1/switches", headers={"Authorization": f"Bearer {forged}"})
    assert response.status_code == 401


def test_token_acts_with_its_users_role(client: TestClient, viewer_headers: dict[str, str]) -> None:
    secret = client.post(URL, json={"name": unique("t")}, headers=viewer_headers).json()["token"]
    response = client.post(
        "/api/v1/switches", json=switch_body(), headers={"Authorization": f"Bearer {secret}"}
    )
    assert response.status_code == 403


def test_revoke_token_of_another_user_not_found(
    client: TestClient, operator_headers: dict[str, str], viewer_headers: dict[str, str]
) -> None:
    created = client.post(URL, json={"name": unique("t")}, headers=operator_headers).json()
    assert client.delete(f"{URL}/{created['id']}", headers=viewer_headers).status_code == 404


def test_read_tokens_of_another_user_not_enough_permissions(
    client: TestClient, viewer_headers: dict[str, str]
) -> None:
    response = client.get(URL, params={"user_id": 1}, headers=viewer_headers)
    assert response.status_code == 403


def test_create_token_duplicate_name(client: TestClient, operator_headers: dict[str, str]) -> None:
    name = unique("t")
    client.post(URL, json={"name": name}, headers=operator_headers)
    response = client.post(URL, json={"name": name}, headers=operator_headers)
    assert response.status_code == 409
    assert response.json()["field"] == "body.name"


def test_changes_made_elsewhere_take_effect_within_a_second(
    client: TestClient, db: sessionmaker[Session], settings: Settings
) -> None:
    """Another API process revokes a token, demotes or deactivates a user (here: straight in
    the database, which this process hears nothing of): refused or re-ranked within 1 s."""
    with db() as session:
        admin_headers = auth_headers(create_user(session, Role.ADMIN), settings)
    secret = client.post(URL, json={"name": unique("t")}, headers=admin_headers).json()["token"]
    token_headers = {"Authorization": f"Bearer {secret}"}
    assert client.get("/api/v1/users", headers=token_headers).status_code == 200

    with db() as session:
        row = session.scalars(select(ApiToken).where(ApiToken.prefix == secret[3:15])).one()
        user = session.get(User, row.user_id)
        assert user is not None
        user.role = Role.VIEWER
        session.commit()
    assert_within_a_second(lambda: client.get("/api/v1/users", headers=token_headers), 403)

    with db() as session:
        session.execute(
            update(ApiToken)
            .where(ApiToken.prefix == secret[3:15])
            .values(revoked_at=dt.datetime.now(dt.UTC))
        )
        session.commit()
    assert_within_a_second(lambda: client.get("/api/v1/slices", headers=token_headers), 401)

    jwt_headers = auth_headers(user, settings)
    assert client.get("/api/v1/slices", headers=jwt_headers).status_code == 200
    with db() as session:
        session.execute(update(User).where(User.id == row.user_id).values(is_active=False))
        session.commit()
    assert_within_a_second(lambda: client.get("/api/v1/slices", headers=jwt_headers), 401)


def assert_within_a_second(request: Callable[[], Response], status: int) -> None:
    """`request` answers `status` within one second, and keeps answering it."""
    deadline = time.monotonic() + 1.0
    while (answer := request()).status_code != status:
        assert time.monotonic() < deadline, f"still {answer.status_code} after 1 s"
        time.sleep(0.05)
    assert request().status_code == status
