"""`sliceportal report` as a user runs it (the installed command, on the test database), and the
scheduled delivery through a real Celery worker to a real local webhook."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from sliceportal.core.config import Settings
from sliceportal.reporting import tasks
from sliceportal.reporting.render import REPORT
from utils import factories
from utils.factories import MBIT
from utils.webhooks import celery_worker, receiver

COMMAND = str(Path(sys.executable).parent / "sliceportal")


@pytest.fixture(scope="module")
def link(client: TestClient, operator_headers: dict[str, str]) -> dict[str, Any]:
    switch = factories.create(client, "switches", operator_headers, factories.switch_body())
    link: dict[str, Any] = factories.create(
        client, "links", operator_headers, factories.link_body(switch["id"], capacity_bps=50 * MBIT)
    )
    for priority in (7, 6):
        body = factories.slice_body([link["id"]], rate_bps=10 * MBIT, priority=priority)
        factories.create(client, "slices", operator_headers, body)
    return link | {"switch_name": switch["name"]}


def _run(settings: Settings, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = os.environ | {"DATABASE_URL": settings.database_url, "REDIS_URL": settings.redis_url}
    return subprocess.run([COMMAND, "report", *args], env=env, capture_output=True, timeout=120)


def test_the_cli_prints_the_report_the_api_serves(
    client: TestClient,
    viewer_headers: dict[str, str],
    settings: Settings,
    link: dict[str, Any],
) -> None:
    done = _run(settings, "link", f"{link['switch_name']}/{link['name']}", "--window", "0")
    assert done.returncode == 0, done.stderr
    from_cli = REPORT.validate_python(json.loads(done.stdout))
    from_api = REPORT.validate_python(
        client.get(
            f"/api/v1/reports/links/{link['id']}",
            headers=viewer_headers,
            params={"telemetry_window_s": 0},
        ).json()
    )
    assert replace(from_cli, generated_at=from_api.generated_at) == from_api


def test_link_names_with_slashes_are_found_or_called_ambiguous(
    client: TestClient, operator_headers: dict[str, str], settings: Settings
) -> None:
    """SWITCH/LINK where the names contain "/" themselves: every split is tried."""
    suffix = factories.unique("x")
    switch = factories.create(
        client, "switches", operator_headers, factories.switch_body(name=f"core/{suffix}")
    )
    body = factories.link_body(switch["id"], name=f"{suffix}/eth1")
    link = factories.create(client, "links", operator_headers, body)
    done = _run(settings, "link", f"core/{suffix}/{suffix}/eth1", "--window", "0")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scope"]["id"] == link["id"]
    other = factories.create(
        client, "switches", operator_headers, factories.switch_body(name=f"core/{suffix}/{suffix}")
    )
    twin = factories.link_body(other["id"], name="eth1")
    twin_id = factories.create(client, "links", operator_headers, twin)["id"]
    done = _run(settings, "link", f"core/{suffix}/{suffix}/eth1")
    assert done.returncode == 2 and b"is ambiguous" in done.stderr
    # By id, each gets its report; the two display names are told apart by the id.
    done = _run(settings, "link", str(twin_id), "--window", "0")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scope"]["name"].endswith(f"(link {twin_id})")


def test_the_cli_writes_a_pdf_and_a_csv(
    settings: Settings, link: dict[str, Any], tmp_path: Path
) -> None:
    pdf = tmp_path / "link.pdf"
    done = _run(settings, "link", str(link["id"]), "--format", "pdf", "--out", str(pdf))
    assert done.returncode == 0, done.stderr
    assert pdf.read_bytes().startswith(b"%PDF")
    done = _run(settings, "link", str(link["id"]), "--format", "csv", "--table", "links")
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.decode().splitlines()[:2]
    assert "capacity_bps" in header and link["name"] in row


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("switch", "no-such-switch"), "switch 'no-such-switch' does not exist"),
        (("link", "eth0"), "name the link as SWITCH/LINK or by id"),
        (("switch",), "name the switch"),
        (("network", "--growth", "-3"), "--growth must be from 0 to 1000"),
        (("network", "--horizon", "0"), "--horizon must be from 1 to 120"),
        (("network", "--window", "1e9"), "--window must be from 0 to 2.6784e+06 seconds"),
        (("network", "extra"), "a network report takes no name"),
    ],
)
def test_cli_errors_are_one_line_and_exit_2(
    settings: Settings, args: tuple[str, ...], message: str
) -> None:
    done = _run(settings, *args)
    assert done.returncode == 2
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines


def test_an_unreachable_database_is_one_line_and_exit_2(settings: Settings) -> None:
    unreachable = settings.model_copy(
        update={"database_url": "postgresql+psycopg://postgres@127.0.0.1:1/none"}
    )
    done = _run(unreachable, "network")
    assert done.returncode == 2
    (line,) = done.stderr.decode().strip().splitlines()
    assert "cannot reach the database" in line and "127.0.0.1:1" in line


def test_the_scheduled_report_reaches_the_webhook_after_a_failure(
    settings: Settings, link: dict[str, Any]
) -> None:
    with receiver([503]) as (url, received):
        with celery_worker(settings, SLICEPORTAL_REPORT_WEBHOOK_URLS=json.dumps([url])):
            tasks.schedule_reports.delay()
            deadline = time.monotonic() + 60
            while len(received) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
    assert len(received) == 2, "the 503 was not retried"
    first, second = received
    assert first["headers"]["X-Sliceportal-Delivery"] == second["headers"]["X-Sliceportal-Delivery"]
    assert second["headers"]["User-Agent"] == tasks.USER_AGENT
    report = REPORT.validate_python(second["body"])
    assert report.scope.kind == "network"
    assert link["id"] in {section.id for section in report.links}
