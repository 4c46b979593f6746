"""API fuzzing: schemathesis (pinned in pyproject.toml) against a running portal, a uvicorn
process on a database of its own, as an admin, with a few switches, links and slices for the
routes with ids to find. Every operation of the OpenAPI document is fuzzed but the two event
streams (docs/api.md, "Fuzzing"), with valid and invalid input, seeded and deterministic.
Zero failures of: no 5xx, each answer's status, content type and body as documented."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from sliceportal.core import embedded
from sliceportal.core.config import Settings
from sliceportal.db.migrate import upgrade
from sliceportal.db.session import create_db_engine, create_sessionmaker
from sliceportal.schemas.choices import Role
from utils import factories

SECRET = "fuzzing-secret-key-of-a-decent-length"
CONFIG = Path(__file__).with_name("schemathesis.toml")
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
)
EXCLUDED_PATHS = (
    "/api/v1/stream",
    "/api/v1/slices/{slice_id}/telemetry/stream",
)
"""Event streams never end: each case would last until the request timeout."""
MAX_EXAMPLES = 20
SEED = 19
ADMIN_ID = 1_000_000
"""Far from the small ids a fuzzer tries, so it does not deactivate or demote its own user."""


@pytest.fixture(scope="module")
def settings(postgres_server_url: str, redis_url: str) -> Iterator[Settings]:
    """A database of its own: the fuzzer leaves hundreds of rows behind."""
    name = f"sliceportal_fuzz_{uuid.uuid4().hex[:12]}"
    url = embedded.create_database(postgres_server_url, name)
    upgrade(url)
    yield Settings(
        DATABASE_URL=url,
        REDIS_URL=redis_url,
        secret_key=SECRET,
        access_token_minutes=60,
    )
    embedded.drop_database(postgres_server_url, name)


@pytest.fixture(scope="module")
def admin_headers(settings: Settings) -> dict[str, str]:
    engine = create_db_engine(settings)
    with create_sessionmaker(engine)() as session:
        session.execute(text(f"ALTER SEQUENCE users_id_seq RESTART WITH {ADMIN_ID}"))
        headers = factories.auth_headers(factories.create_user(session, Role.ADMIN), settings)
    engine.dispose()
    return headers


@pytest.fixture(scope="module")
def portal(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`uvicorn --factory sliceportal.api.main:create_app`: the portal as deployed."""
    port = embedded.free_tcp_port()
    environment = os.environ | {
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "SLICEPORTAL_SECRET_KEY": SECRET,
        "SLICEPORTAL_ACCESS_TOKEN_MINUTES": str(settings.access_token_minutes),
    }
    log = tmp_path_factory.mktemp("portal") / "uvicorn.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "sliceportal.api.main:create_app"]
            + ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while not embedded.tcp_port_answers("127.0.0.1", port):
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the portal did not start"
            time.sleep(0.05)
        yield base
    finally:
        server.terminate()
        server.wait(10)
        print(log.read_text()[-5000:])


def seed(base: str, headers: dict[str, str], settings: Settings) -> None:
    """Two switches with two links each, slices on them and an alert: ids 1 and 2 name real
    rows (alerts are raised by the telemetry workers, which do not run here)."""
    with httpx.Client(base_url=f"{base}/api/v1", headers=headers, timeout=30) as client:

        def create(path: str, body: dict[str, object]) -> int:
            response = client.post(path, json=body)
            assert response.status_code == 201, response.text
            created: int = response.json()["id"]
            return created

        for _ in range(2):
            switch_id = create("/switches", factories.switch_body())
            links = [create("/links", factories.link_body(switch_id, port=p)) for p in (1, 2)]
            for link_id in links:
                create("/slices", factories.slice_body([link_id]))
            create(
                "/slices", factories.slice_body(links, ipv4_prefixes=[], vlan_id=100 + switch_id)
            )


def test_fuzz_the_api(
    portal: str, admin_headers: dict[str, str], settings: Settings, tmp_path: Path
) -> None:
    seed(portal, admin_headers, settings)
    command = [
        str(Path(sys.executable).with_name("st")),
        "--config-file",
        str(CONFIG),
        "run",
        f"{portal}/api/v1/openapi.json",
        "--header",
        f"Authorization:{admin_headers['Authorization']}",
        "--checks",
        ",".join(CHECKS),
        "--mode",
        "all",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        str(SEED),
        "--generation-deterministic",
        "--workers",
        "1",
        "--request-timeout",
        "30",
        "--no-color",
        "--report",
        "junit",
        "--report-dir",
        str(tmp_path),
    ]
    for path in EXCLUDED_PATHS:
        command += ["--exclude-path", path]
    started = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    took = time.monotonic() - started
    print(run.stdout[-20000:], run.stderr[-5000:], f"schemathesis took {took:.0f} s", sep="\n")
    assert run.returncode == 0, run.stdout[-20000:]
