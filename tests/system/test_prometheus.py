"""A real Prometheus (Debian's `prometheus`) scrapes a live portal (emulated switch carrying
constant-rate traffic through a slice, worker, poller, API) with an API token, and a PromQL
`rate()` of the slice's byte counter agrees with the portal's own chart figure within 5 %.

A missing `prometheus` skips, and under CI=true fails (tests/conftest.py);
`scripts/setup-test-tools` installs it where it may.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sliceportal.core import embedded
from sliceportal.core.config import Settings
from sliceportal.core.embedded import free_tcp_port
from sliceportal.db.migrate import upgrade
from sliceportal.db.session import create_db_engine, create_sessionmaker
from sliceportal.schemas.choices import Role
from sliceportal.schemas.users import UserCreate
from sliceportal.services.users import create_user, system_context
from telemetry.test_dashboard import expressions, label_values_query, load_dashboard
from utils.live import start_process, stop_process, wait_for_port

SECRET = "prometheus-test-secret-key-of-a-decent-length"
PASSWORD = "prometheus correct horse battery"
MBIT = 1e6
OFFERED_BPS = 10 * MBIT
"""A constant-rate source into a 20 Mbit/s slice: all of it is forwarded."""
WINDOW_S = 10
POLL_S = 0.1
"""The poll period: a sample every 0.1 s, so a 10 s window holds 100 of them and where the
window cuts them matters little (the rate's quantisation is one sample, 1 % of the window)."""
SCRAPE = "500ms"
VENV_BIN = Path(sys.executable).parent


def require_prometheus() -> str:
    found = shutil.which("prometheus")
    if found is None:
        pytest.skip(
            "prometheus is not installed: scripts/setup-test-tools (apt-get install prometheus)"
        )
    return found


@pytest.fixture
def database_url(postgres_server_url: str) -> Iterator[str]:
    """A database of its own: the poller polls every switch of its database."""
    name = f"sliceportal_prom_{uuid.uuid4().hex[:12]}"
    url = embedded.create_database(postgres_server_url, name)
    upgrade(url)
    yield url
    embedded.drop_database(postgres_server_url, name)


def _create_users(settings: Settings) -> None:
    engine = create_db_engine(settings)
    try:
        with create_sessionmaker(engine)() as session:
            for username, role in (("operator", Role.OPERATOR), ("scraper", Role.VIEWER)):
                create_user(
                    session,
                    system_context("prometheus test users"),
                    UserCreate(username=username, password=PASSWORD, role=role),
                )
    finally:
        engine.dispose()


def _until(check: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"{what} within {timeout_s} s")
        time.sleep(0.2)


def _login(client: httpx.Client, username: str) -> dict[str, str]:
    answer = client.post("/login/access-token", data={"username": username, "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


def _post(client: httpx.Client, path: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
    answer = client.post(path, json=body, headers=headers)
    assert answer.status_code == 201, answer.text
    return answer.json()


def _prometheus_config(path: Path, portal_port: int, token: str) -> None:
    config = {
        "global": {"scrape_interval": SCRAPE, "scrape_timeout": SCRAPE},
        "scrape_configs": [
            {
                "job_name": "sliceportal",
                "metrics_path": "/metrics",
                "authorization": {"type": "Bearer", "credentials": token},
                "static_configs": [{"targets": [f"127.0.0.1:{portal_port}"]}],
            }
        ],
    }
    path.write_text(json.dumps(config))  # YAML is a superset of JSON


def _query(prometheus: str, promql: str, at: dt.datetime) -> list[dict[str, Any]]:
    answer = httpx.get(
        f"{prometheus}/api/v1/query", params={"query": promql, "time": at.timestamp()}, timeout=5
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["status"] == "success", body
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


def test_prometheus_rate_matches_the_portal_chart(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    binary = require_prometheus()
    began = time.monotonic()
    _create_users(Settings(DATABASE_URL=database_url, REDIS_URL=redis_url, secret_key=SECRET))
    logs = tmp_path / "logs"
    logs.mkdir()
    profile = tmp_path / "traffic.json"
    source = {"name": "s", "pattern": "cbr", "ipv4_dst": "10.1.0.10", "rate_bps": OFFERED_BPS}
    profile.write_text(
        json.dumps({"seed": 1, "ports": {"1": {"rate_bps": 100 * MBIT}}, "sources": [source]})
    )
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "SLICEPORTAL_SECRET_KEY": SECRET,
        "SLICEPORTAL_TELEMETRY_REFRESH_S": "0.5",
        "SLICEPORTAL_TELEMETRY_POLL_INTERVAL_S": str(POLL_S),
    }
    grpc_port, port, prometheus_port = free_tcp_port(), free_tcp_port(), free_tcp_port()
    switch_command = [str(VENV_BIN / "sliceportal"), "switch", "--grpc", f"127.0.0.1:{grpc_port}"]
    switch_command += ["--traffic", str(profile), "--clock", "realtime"]
    worker = [str(VENV_BIN / "celery"), "-A", "workers.app", "worker", "--pool", "threads"]
    worker += ["-c", "2", "--loglevel", "warning"]
    beat = [str(VENV_BIN / "celery"), "-A", "workers.app", "beat", "--loglevel", "warning"]
    beat += ["--schedule", str(tmp_path / "beat-schedule")]  # beat dispatches the deploys
    api = [sys.executable, "-m", "uvicorn", "--factory", "sliceportal.api.main:create_app"]
    api += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        switch = start_process("switch", switch_command, env, logs)
        procs.append(switch)
        procs.append(start_process("worker", worker, env, logs))
        procs.append(start_process("beat", beat, env, logs))
        procs.append(start_process("poller", [str(VENV_BIN / "sliceportal"), "poller"], env, logs))
        procs.append(start_process("api", api, env, logs))
        wait_for_port(port, procs[-1], logs / "api.log", 60)
        wait_for_port(grpc_port, switch, logs / "switch.log", 60)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}/api/v1", timeout=30) as portal:
            operator = _login(portal, "operator")
            made = _post(
                portal,
                "/switches",
                {"name": "edge-1", "address": f"127.0.0.1:{grpc_port}", "kind": "emulator"},
                operator,
            )
            link = _post(
                portal,
                "/links",
                {"switch_id": made["id"], "name": "eth1", "port": 1, "capacity_bps": 100 * MBIT},
                operator,
            )
            slice_ = _post(
                portal,
                "/slices",
                {
                    "name": "Metered",
                    "rate_bps": 20 * MBIT,
                    "burst_limit_s": 0.01,
                    "priority": 7,
                    "ipv4_prefixes": ["10.1.0.0/16"],
                    "link_ids": [link["id"]],
                },
                operator,
            )
            # Prometheus scrapes with a viewer's API token
            viewer = _login(portal, "scraper")
            token = _post(portal, "/tokens", {"name": "prometheus"}, viewer)["token"]
            config = tmp_path / "prometheus.yml"
            _prometheus_config(config, port, token)
            prometheus_command = [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{prometheus_port}",
                "--log.level=warn",
            ]
            prometheus_proc = start_process("prometheus", prometheus_command, env, logs)
            procs.append(prometheus_proc)
            prometheus = f"http://127.0.0.1:{prometheus_port}"
            wait_for_port(prometheus_port, prometheus_proc, logs / "prometheus.log", 30)

            def flowing() -> bool:
                now = dt.datetime.now(dt.UTC)
                answer = portal.get(
                    f"/slices/{slice_['id']}/telemetry",
                    params={"start": (now - dt.timedelta(seconds=1)).isoformat(), "resolution": 1},
                    headers=viewer,
                )
                data = answer.json()["data"]
                return bool(data) and data[-1]["throughput_bps"] > OFFERED_BPS / 2

            _until(flowing, 40, "no traffic through the slice")
            counter = f'sliceportal_slice_forwarded_bytes_total{{slice_id="{slice_["id"]}"}}'
            # the window starts once Prometheus has scraped the slice's counter with traffic
            _until(
                lambda: _query(prometheus, counter, dt.datetime.now(dt.UTC)),
                20,
                "Prometheus has not scraped the slice's counter",
            )
            traffic_from = dt.datetime.now(dt.UTC)
            time.sleep(WINDOW_S + 1.5)
            end = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
            start = end - dt.timedelta(seconds=WINDOW_S)
            assert start >= traffic_from
            (up,) = _query(prometheus, 'up{job="sliceportal"}', end)
            assert up["value"][1] == "1"
            promql = f"rate({counter}[{WINDOW_S}s]) * 8"
            (series,) = _query(prometheus, promql, end)
            assert series["metric"]["slice"] == "Metered" and series["metric"]["switch"] == "edge-1"
            scraped = float(series["value"][1])
            history = portal.get(
                f"/slices/{slice_['id']}/telemetry",
                params={"start": start.isoformat(), "end": end.isoformat(), "resolution": 1},
                headers=viewer,
            ).json()["data"]
            seconds = sum(s["interval_s"] for s in history)
            chart = sum(s["throughput_bps"] * s["interval_s"] for s in history) / seconds
            print(
                f"\nslice throughput over {WINDOW_S} s: portal chart {chart / MBIT:.4f} Mbit/s "
                f"({len(history)} samples), PromQL {scraped / MBIT:.4f} Mbit/s, "
                f"difference {(scraped - chart) / chart:+.2%}; "
                f"test {time.monotonic() - began:.1f} s"
            )
            assert chart == pytest.approx(OFFERED_BPS, rel=0.1)
            assert scraped == pytest.approx(chart, rel=0.05)
            # The Grafana dashboard (deploy/grafana) over the same window: its throughput panel
            # is this query, and every panel and variable on the API's metrics shows the slice.
            variables = {"$__rate_interval": f"{WINDOW_S}s", "$__range": f"{WINDOW_S}s"}
            variables |= {"$slice": "Metered", "$switch": ".*"}
            panels = expressions(load_dashboard(), variables)
            chosen = '{slice=~"Metered", switch=~".*"}'
            throughput = f"rate(sliceportal_slice_forwarded_bytes_total{chosen}[{WINDOW_S}s]) * 8"
            assert throughput in panels
            (series,) = _query(prometheus, throughput, end)
            assert float(series["value"][1]) == pytest.approx(scraped, rel=1e-9)
            for expr in panels:
                if "sliceportal_poller_" in expr:
                    continue  # the poller's own metrics: this Prometheus does not scrape it
                query = label_values_query(expr)
                answer = _query(prometheus, query[0] if query else expr, end)
                assert answer, f"the dashboard's {expr} is empty"
                if query is not None:
                    assert {series["metric"][query[1]] for series in answer} == (
                        {"Metered"} if query[1] == "slice" else {"edge-1"}
                    )
    except BaseException:
        for log in sorted(logs.glob("*.log")):
            print(
                f"--- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-30:])
            )
        raise
    finally:
        for proc in reversed(procs):
            stop_process(proc)
