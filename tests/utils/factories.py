"""Rows and request bodies for tests; every name is unique, so tests share one database."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from functools import cache
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from sliceportal import security
from sliceportal.core.config import Settings
from sliceportal.db.models import User
from sliceportal.domain.spec import MAX_LINK_PORT
from sliceportal.schemas.choices import Role

PASSWORD = "correct horse battery"
MBIT = 1e6


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@cache
def password_hash() -> str:
    """One argon2 hash for every test user: hashing is deliberately slow."""
    return security.hash_password(PASSWORD)


def create_user(session: Session, role: Role, *, active: bool = True) -> User:
    user = User(
        username=unique(role.value), hashed_password=password_hash(), role=role, is_active=active
    )
    session.add(user)
    session.commit()
    return user


def auth_headers(user: User, settings: Settings) -> dict[str, str]:
    token, _ = security.create_access_token(user.id, settings)
    return {"Authorization": f"Bearer {token}"}


_switch_numbers = itertools.count(1)


def switch_body(**overrides: Any) -> dict[str, Any]:
    """A switch on its own loopback address (nothing listens on port 9): (address, device id) is
    unique in the database, and random ports collided within one run."""
    number = next(_switch_numbers)
    address = f"127.1.{number >> 8 & 255}.{number & 255}:9"
    return {"name": unique("sw"), "address": address, "kind": "emulator"} | overrides


def link_body(switch_id: int, /, **overrides: Any) -> dict[str, Any]:
    return {
        "switch_id": switch_id,
        "name": unique("eth"),
        "port": uuid.uuid4().int % (MAX_LINK_PORT + 1),  # 511 is BMv2's drop port, refused
        "capacity_bps": 1000 * MBIT,
    } | overrides


_prefix_numbers = itertools.count(1)


def unique_prefix() -> str:
    """A /24 no other test slice uses: a switch refuses two slices with the same classifier
    key (port, prefix)."""
    number = next(_prefix_numbers)
    return f"10.{number >> 8 & 255}.{number & 255}.0/24"


def slice_body(link_ids: list[int], /, **overrides: Any) -> dict[str, Any]:
    return {
        "name": unique("slice"),
        "ipv4_prefixes": [unique_prefix()],
        "rate_bps": 10 * MBIT,
        "burst_limit_s": 0.01,
        "priority": 7,
        "link_ids": link_ids,
    } | overrides


def create(client: TestClient, path: str, headers: dict[str, str], body: dict[str, Any]) -> Any:
    response = client.post(f"/api/v1/{path}", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


def create_link(client: TestClient, headers: dict[str, str], **overrides: Any) -> dict[str, Any]:
    """A link on a new switch."""
    switch = create(client, "switches", headers, switch_body())
    link: dict[str, Any] = create(client, "links", headers, link_body(switch["id"], **overrides))
    return link


def whitespace_chunks(size: int, piece: int = 64 * 1024) -> Iterator[bytes]:
    """A body of `size` bytes of JSON whitespace, which httpx sends chunked (no length)."""
    for start in range(0, size, piece):
        yield b" " * min(piece, size - start)
