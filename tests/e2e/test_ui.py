"""The web UI end to end: a real backend (uvicorn in a subprocess, a fresh migrated database,
Redis) serving the built UI, driven by `frontend/e2e/run.mjs` with playwright-core and
Debian's Chromium. Screenshots of the main pages go to `test-results/screenshots/`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from sliceportal.core.config import Environment, Settings
from sliceportal.core.embedded import free_tcp_port
from sliceportal.db.choices import Role
from sliceportal.db.migrate import upgrade
from sliceportal.db.session import create_db_engine, create_sessionmaker
from sliceportal.services.users import create_user, system_context

from .frontend_tools import FRONTEND, ROOT, build_if_stale, require_chromium, require_node

SECRET = "e2e-secret-key-of-a-decent-length"
PASSWORD = "e2e correct horse battery"
USERS = {"e2e-admin": Role.ADMIN, "e2e-operator": Role.OPERATOR, "e2e-viewer": Role.VIEWER}
MBIT = 1e6


def _create_users(settings: Settings) -> None:
    from sliceportal.api.schemas.users import UserCreate

    engine = create_db_engine(settings)
    try:
        with create_sessionmaker(engine)() as session:
            for username, role in USERS.items():
                create_user(
                    session,
                    system_context("e2e test users"),
                    UserCreate(username=username, password=PASSWORD, role=role),
                )
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def ui_server(
    database_url: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    require_node()
    require_chromium()
    dist = build_if_stale()
    upgrade(database_url)
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "SLICEPORTAL_ENVIRONMENT": Environment.TEST.value,
        "SLICEPORTAL_SECRET_KEY": SECRET,
        "SLICEPORTAL_LOGIN_ATTEMPTS_PER_MINUTE": "1000",
        "SLICEPORTAL_UI_DIST_DIR": str(dist),
    }
    _create_users(Settings(DATABASE_URL=database_url, REDIS_URL=redis_url, secret_key=SECRET))
    port = free_tcp_port()
    log = tmp_path_factory.mktemp("ui-server") / "uvicorn.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--factory",
                "sliceportal.api.main:create_app",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                "warning",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the API did not start:\n{log.read_text()}")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _seed(base: str) -> dict[str, int]:
    """A switch and a 400 Mbit/s link holding the paper's DC and Enterprise slices at
    priority 7: adding Peering (240 Mbit/s, 30 ms) at priority 7 breaks Enterprise's 10 ms."""
    with httpx.Client(base_url=f"{base}/api/v1", timeout=30) as client:
        token = client.post(
            "/login/access-token", data={"username": "e2e-operator", "password": PASSWORD}
        ).json()["access_token"]
        client.headers["Authorization"] = f"Bearer {token}"

        def post(path: str, body: dict[str, object]) -> dict[str, object]:
            response = client.post(path, json=body)
            assert response.status_code == 201, response.text
            result: dict[str, object] = response.json()
            return result

        switch = post(
            "/switches", {"name": "edge-1", "address": "127.0.0.1:9559", "kind": "emulator"}
        )
        link = post(
            "/links",
            {
                "switch_id": switch["id"],
                "name": "edge-1/eth1",
                "port": 1,
                "capacity_bps": 400 * MBIT,
            },
        )
        for name, rate, burst, prefix in (
            ("DC", 48, 0.02, "10.1.0.0/16"),
            ("Enterprise", 12, 0.01, "10.2.0.0/16"),
        ):
            post(
                "/slices",
                {
                    "name": name,
                    "rate_bps": rate * MBIT,
                    "burst_limit_s": burst,
                    "priority": 7,
                    "ipv4_prefixes": [prefix],
                    "link_ids": [link["id"]],
                },
            )
        return {"switch": int(str(switch["id"])), "link": int(str(link["id"]))}


def test_ui_end_to_end(ui_server: str) -> None:
    node = require_node()
    chromium = require_chromium()
    ids = _seed(ui_server)
    screenshots = ROOT / "test-results" / "screenshots"
    env = {
        **os.environ,
        "E2E_BASE_URL": ui_server,
        "E2E_ADMIN": f"e2e-admin:{PASSWORD}",
        "E2E_OPERATOR": f"e2e-operator:{PASSWORD}",
        "E2E_VIEWER": f"e2e-viewer:{PASSWORD}",
        "E2E_LINK_ID": str(ids["link"]),
        "E2E_SWITCH_ID": str(ids["switch"]),
        "E2E_SCREENSHOTS": str(screenshots),
        "CHROMIUM_PATH": chromium,
    }
    result = subprocess.run(
        [node, "e2e/run.mjs"],
        cwd=FRONTEND,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    print(result.stdout)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    assert (screenshots / "08-link-view.png").is_file()
