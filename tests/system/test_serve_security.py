"""`sliceportal serve` as an attacker meets it: a default-configured portal (no
SLICEPORTAL_SECRET_KEY) signs with a key of its own, and its login throttle holds against a
forged X-Forwarded-For and against guesses spread over many addresses.

One server for the module, with small limits. Each test talks from a loopback address of its
own (127.0.0.0/8 is all local), so one test's address lock does not touch another's;
127.0.0.2 is the configured reverse proxy, whose X-Forwarded-For is believed.
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import jwt
import pytest

from sliceportal.core.config import Settings
from sliceportal.core.embedded import free_tcp_port
from sliceportal.db.session import create_db_engine, create_sessionmaker
from sliceportal.schemas.choices import Role
from utils.factories import PASSWORD, create_user, unique

SLICEPORTAL = Path(sys.executable).parent / "sliceportal"
PUBLISHED_KEY = "development-only-secret-change-me"
"""The signing key every installation had by default until this was fixed."""
PROXY = "127.0.0.2"
ADDRESS_LIMIT = 3
ACCOUNT_LIMIT = 3
LOCKOUT_S = 2
LOGIN = "/api/v1/login/access-token"
_forwarded = (f"198.51.100.{n}" for n in itertools.count(1))
"""Client addresses (TEST-NET-2) a proxy forwards: one a request, never twice."""


@dataclass(frozen=True)
class Portal:
    base: str
    data_dir: Path
    output: str
    user_id: int
    username: str

    def client(self, source: str) -> httpx.Client:
        """A client whose connections come from `source` (a loopback address)."""
        transport = httpx.HTTPTransport(local_address=source)
        return httpx.Client(base_url=self.base, transport=transport, timeout=10)


@pytest.fixture(scope="module")
def portal(
    tmp_path_factory: pytest.TempPathFactory, database_url: str, redis_url: str
) -> Iterator[Portal]:
    port = free_tcp_port()
    data_dir = tmp_path_factory.mktemp("portal") / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLICEPORTAL_")}
    env |= {
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "SLICEPORTAL_TRUSTED_PROXIES": PROXY,
        "SLICEPORTAL_LOGIN_ATTEMPTS_PER_MINUTE": str(ADDRESS_LIMIT),
        "SLICEPORTAL_LOGIN_ACCOUNT_MAX_FAILURES": str(ACCOUNT_LIMIT),
        "SLICEPORTAL_LOGIN_ACCOUNT_LOCKOUT_S": str(LOCKOUT_S),
    }
    command = [str(SLICEPORTAL), "serve", "--no-switch", "--no-workers", "--port", str(port)]
    proc = subprocess.Popen(
        [*command, "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    output = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            output.append(line)
            if "Application startup complete" in line:
                break
        assert "Application startup complete" in "".join(output), "".join(output)
        settings = Settings(DATABASE_URL=database_url, REDIS_URL=redis_url)
        engine = create_db_engine(settings)
        with create_sessionmaker(engine)() as session:
            user = create_user(session, Role.ADMIN)
        engine.dispose()
        base = f"http://127.0.0.1:{port}"
        yield Portal(base, data_dir, "".join(output), user.id, user.username)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def _token(user_id: int, key: str) -> str:
    claims = {
        "sub": str(user_id),
        "typ": "access",
        "exp": dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5),
    }
    return jwt.encode(claims, key, algorithm="HS256")


def _login(client: httpx.Client, username: str, password: str, **headers: str) -> httpx.Response:
    return client.post(LOGIN, data={"username": username, "password": password}, headers=headers)


def test_a_default_portal_signs_with_a_generated_key_not_the_published_one(portal: Portal) -> None:
    with portal.client("127.0.0.4") as client:
        forged = {"Authorization": f"Bearer {_token(portal.user_id, PUBLISHED_KEY)}"}
        refused = client.get("/api/v1/users/me", headers=forged)
        assert refused.status_code == 401, refused.text
        key_file = portal.data_dir / "secret_key"
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        key = key_file.read_text().strip()
        # the key in the file is the one the server uses: another process can share it
        shared = {"Authorization": f"Bearer {_token(portal.user_id, key)}"}
        assert client.get("/api/v1/users/me", headers=shared).json()["id"] == portal.user_id
    assert len(key) >= 32 and key not in portal.output
    assert f"signing key: generated into {key_file}" in portal.output


def test_a_forwarded_for_header_from_a_client_does_not_reset_its_address_limit(
    portal: Portal,
) -> None:
    with portal.client("127.0.0.1") as client:
        for _ in range(ADDRESS_LIMIT):
            wrong = _login(
                client, unique("guess"), "wrong", **{"X-Forwarded-For": next(_forwarded)}
            )
            assert wrong.status_code == 401, wrong.text
        refused = _login(client, unique("guess"), "wrong", **{"X-Forwarded-For": next(_forwarded)})
    assert refused.status_code == 429, refused.text
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["type"].endswith("/too-many-login-attempts")
    assert "from this address" in refused.json()["detail"]
    assert 1 <= int(refused.headers["retry-after"]) <= 60


def test_an_ipv6_client_counts_by_its_64_block(portal: Portal) -> None:
    """Addresses of one /64, forwarded by the trusted proxy: one address limit."""
    hosts = (f"2001:db8:0:1::{n:x}" for n in itertools.count(1))
    with portal.client(PROXY) as client:
        for _ in range(ADDRESS_LIMIT):
            wrong = _login(client, unique("guess"), "wrong", **{"X-Forwarded-For": next(hosts)})
            assert wrong.status_code == 401, wrong.text
        refused = _login(client, unique("guess"), "wrong", **{"X-Forwarded-For": next(hosts)})
    assert refused.status_code == 429, refused.text
    assert "from this address" in refused.json()["detail"]


def _seconds_blanked(response: httpx.Response) -> str:
    detail: str = response.json()["detail"]
    return re.sub(r"\d+", "N", detail)


def _lock_out(client: httpx.Client, username: str, last_password: str) -> httpx.Response:
    """ACCOUNT_LIMIT wrong passwords, then `last_password`, each from another address behind
    the proxy; the answer to the last."""
    for _ in range(ACCOUNT_LIMIT):
        wrong = _login(client, username, "wrong", **{"X-Forwarded-For": next(_forwarded)})
        assert wrong.status_code == 401, wrong.text
    return _login(client, username, last_password, **{"X-Forwarded-For": next(_forwarded)})


def test_an_account_is_locked_across_addresses_even_for_the_right_password(
    portal: Portal,
) -> None:
    with portal.client(PROXY) as client:
        locked = _lock_out(client, portal.username, PASSWORD)
        refused_at = time.monotonic()
        # through the proxy each attempt came from its own address: the address limit (as
        # low as the account's) did not apply, the account's did
        assert locked.status_code == 429, locked.text
        assert "for this user name" in locked.json()["detail"]
        retry_after = int(locked.headers["retry-after"])
        assert 1 <= retry_after <= LOCKOUT_S
        # a name no user has is throttled alike: the answer does not tell names apart
        unknown = _lock_out(client, unique("nobody"), PASSWORD)
        assert unknown.status_code == 429
        assert _seconds_blanked(unknown) == _seconds_blanked(locked)
        time.sleep(max(0.0, refused_at + retry_after - time.monotonic()))  # as told to
        after = _login(client, portal.username, PASSWORD, **{"X-Forwarded-For": next(_forwarded)})
    assert after.status_code == 200, after.text
