"""docker-compose.yml runs what the tests run: the same commands, options and settings."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from sliceportal.cli.main import build_parser
from sliceportal.controlplane.bootstrap import parse_switches
from sliceportal.controlplane.supervisor import celery_children
from sliceportal.core import embedded
from sliceportal.core.config import Settings
from sliceportal.core.embedded import free_tcp_port
from sliceportal.schemas.switches import check_switch_network

ROOT = Path(__file__).resolve().parents[2]


def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return document["services"]


def test_workers_and_beat_run_as_serve_runs_them(tmp_path: Path) -> None:
    services = compose()
    worker, slow_worker, beat = celery_children(tmp_path, tmp_path / "schedule")
    assert ["celery", *worker.argv[3:]] == services["worker"]["command"]
    assert ["celery", *slow_worker.argv[3:]] == services["slow-worker"]["command"]
    expected_beat = ["celery", *beat.argv[3:-1]]
    assert services["beat"]["command"][:-1] == expected_beat
    assert services["beat"]["command"][-1].startswith("--schedule=")


def test_the_api_serves_without_its_own_switch_and_workers_and_registers_bmv2() -> None:
    api = compose()["api"]
    command = api["command"]
    assert command[:2] == ["sliceportal", "serve"]
    args = build_parser().parse_args(command[1:])
    assert args.no_switch and args.no_workers and args.host == "0.0.0.0"
    (switch,) = parse_switches(api["environment"]["SLICEPORTAL_BOOTSTRAP_SWITCHES"])
    assert switch.address == "bmv2:9559" and switch.device_id == 1
    networks = Settings(switch_networks=api["environment"]["SLICEPORTAL_SWITCH_NETWORKS"])
    check_switch_network(switch.address, networks.switch_networks)


def test_the_api_keeps_its_generated_signing_key_on_a_volume() -> None:
    document = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    api = document["services"]["api"]
    assert "SLICEPORTAL_SECRET_KEY" not in api["environment"]
    volume = api["environment"]["SLICEPORTAL_DATA_DIR"]
    assert any(mount.split(":")[1] == volume for mount in api["volumes"])
    assert all(mount.split(":")[0] in document["volumes"] for mount in api["volumes"])


def test_bmv2_answers_where_the_api_looks_with_eight_priority_queues() -> None:
    command = compose()["bmv2"]["command"]
    assert command[0] == "simple_switch_grpc" and "--no-p4" in command
    assert command[command.index("--device-id") + 1] == "1"
    assert command[command.index("--grpc-server-addr") + 1].endswith(":9559")
    assert command[command.index("--priority-queues") + 1] == "8"


def test_every_portal_variable_is_a_setting() -> None:
    fields = {name.upper() for name in Settings.model_fields} | {"DATABASE_URL", "REDIS_URL"}
    for name in ("api", "worker", "slow-worker", "beat", "poller"):
        for variable in compose()[name]["environment"]:
            assert variable.removeprefix("SLICEPORTAL_") in fields, variable


# -- Prometheus and Grafana -------------------------------------------------------------------


def mounted(service: dict[str, Any], target: str) -> Path:
    """The repository directory a service mounts at `target` (`./dir:target[:ro]`)."""
    for volume in service.get("volumes", []):
        source, at = volume.split(":")[:2]
        if at == target:
            assert source.startswith("./"), volume
            return ROOT / source
    raise AssertionError(f"nothing mounted at {target}")


def option(command: list[str], name: str) -> str:
    (value,) = [word.split("=", 1)[1] for word in command if word.startswith(f"{name}=")]
    return value


def prometheus_config() -> tuple[Path, dict[str, Any]]:
    """The Prometheus service's config file in the repository, and its contents."""
    config = Path(option(compose()["prometheus"]["command"], "--config.file"))
    path = mounted(compose()["prometheus"], str(config.parent)) / config.name
    document: dict[str, Any] = yaml.safe_load(path.read_text())
    return path, document


def scrape_job(name: str) -> dict[str, Any]:
    (job,) = [job for job in prometheus_config()[1]["scrape_configs"] if job["job_name"] == name]
    return job


def test_prometheus_scrapes_the_api_with_a_token_file_git_ignores() -> None:
    api_port = compose()["api"]["command"][compose()["api"]["command"].index("--port") + 1]
    job = scrape_job("sliceportal")
    assert job["metrics_path"] == "/metrics"
    assert job["static_configs"] == [{"targets": [f"api:{api_port}"]}]
    assert job["authorization"]["type"] == "Bearer"
    # Relative to the config file: in the mounted directory, never committed.
    path, _ = prometheus_config()
    token = path.parent / job["authorization"]["credentials_file"]
    assert not Path(job["authorization"]["credentials_file"]).is_absolute()
    ignored = subprocess.run(
        ["git", "check-ignore", "--quiet", str(token.relative_to(ROOT))], cwd=ROOT
    )
    assert ignored.returncode == 0, f"{token} is not git-ignored"


def test_prometheus_scrapes_the_poller_on_its_metrics_port() -> None:
    poller = compose()["poller"]["environment"]
    settings = Settings(
        poller_metrics_port=poller["SLICEPORTAL_POLLER_METRICS_PORT"],
        poller_metrics_host=poller["SLICEPORTAL_POLLER_METRICS_HOST"],
    )
    assert settings.poller_metrics_host == "0.0.0.0"  # reachable from the prometheus service
    assert "ports" not in compose()["poller"]  # and from nowhere else
    job = scrape_job("sliceportal-poller")
    # each replica of the service its own target (`--scale poller=N`), not whichever one the
    # name resolved to at a scrape
    assert "static_configs" not in job
    assert job["dns_sd_configs"] == [
        {"names": ["poller"], "type": "A", "port": settings.poller_metrics_port}
    ]
    assert "authorization" not in job


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip(
            "promtool is not installed: scripts/setup-test-tools (apt-get install prometheus)"
        )
    return found


def test_promtool_accepts_the_prometheus_config_once_the_token_file_exists(
    tmp_path: Path,
) -> None:
    """`promtool check config` on a copy of the mounted directory: refused while the token
    file is missing (Prometheus would scrape the API without credentials), valid with it."""
    path, document = prometheus_config()
    config = tmp_path / "prometheus"
    shutil.copytree(path.parent, config)
    (config / "sliceportal.token").unlink(missing_ok=True)  # an operator's own, if any

    def check() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [promtool(), "check", "config", str(config / path.name)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip

    refused = check()
    assert refused.returncode == 1 and "sliceportal.token" in refused.stdout + refused.stderr
    credentials = scrape_job("sliceportal")["authorization"]["credentials_file"]
    (config / credentials).write_text("sp_token_of_a_viewer\n")
    checked = check()
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS" in checked.stdout


def test_grafana_provisions_the_prometheus_service_and_the_dashboard() -> None:
    grafana = compose()["grafana"]
    provisioning = mounted(grafana, "/etc/grafana/provisioning")
    (datasources,) = (provisioning / "datasources").glob("*.yml")
    (datasource,) = yaml.safe_load(datasources.read_text())["datasources"]
    assert datasource["type"] == "prometheus"
    # The prometheus service on the port it listens on (its default: no --web.listen-address).
    assert not any(w.startswith("--web.listen-address") for w in compose()["prometheus"]["command"])
    assert datasource["url"] == "http://prometheus:9090"
    assert compose()["prometheus"]["ports"] == ["127.0.0.1:9090:9090"]
    interval = prometheus_config()[1]["global"]["scrape_interval"]
    assert datasource["jsonData"]["timeInterval"] == interval

    (providers,) = (provisioning / "dashboards").glob("*.yml")
    (provider,) = yaml.safe_load(providers.read_text())["providers"]
    assert provider["type"] == "file"
    dashboards = mounted(grafana, provider["options"]["path"])
    assert (dashboards / "sliceportal.json").is_file()
    # Every panel of every dashboard asks the provisioned datasource by its uid.
    for path in dashboards.glob("*.json"):
        for panel in json.loads(path.read_text())["panels"]:
            if panel["type"] != "row":
                assert panel["datasource"]["uid"] == datasource["uid"], (path, panel["title"])
    assert grafana["depends_on"] == {"prometheus": {"condition": "service_started"}}
    document = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for name in ("prometheus", "grafana"):
        for volume in compose()[name]["volumes"]:
            source = volume.split(":")[0]
            assert (
                (ROOT / source).is_dir()
                if source.startswith(".")
                else (source in document["volumes"])
            ), volume


# -- the file against the Compose specification, and its commands run here --------------------

P4C_HEADER = "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n"
"""What p4c releases since 1.2.4.8 write before the text P4Info."""
FAKE_P4C = """#!/bin/sh
# Stands in for p4c-bm2-ss: a BMv2 JSON to -o, and to --p4runtime-files the committed P4Info
# as p4c writes it (with its comment header), edited by the sed script in $FAKE_P4C_EDIT.
while [ $# -gt 0 ]; do
    case $1 in
        -o) json=$2; shift ;;
        --p4runtime-files) p4info=$2; shift ;;
    esac
    shift
done
printf '{"pipelines": []}' > "$json"
{ printf '%s' "$P4C_HEADER"; sed "${FAKE_P4C_EDIT:-}" "$COMMITTED_P4INFO"; } > "$p4info"
"""


def check_compose_schema(path: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema with the Compose specification's schema, which it ships (vendored from
    compose-spec/compose-spec, kept up to date by its releases)."""
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec",
         str(path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_docker_compose_yml_follows_the_compose_specification(tmp_path: Path) -> None:
    checked = check_compose_schema(ROOT / "docker-compose.yml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(
        (ROOT / "docker-compose.yml")
        .read_text()
        .replace("condition: service_completed_successfully", "condition: service_done")
    )
    refused = check_compose_schema(broken)
    assert refused.returncode == 1 and "service_done" in refused.stdout


def interpolate(text: str, variables: dict[str, str]) -> str:
    """Compose's `${NAME}`, `${NAME:-default}` and `${NAME:?error}` against `variables`."""

    def value(match: re.Match[str]) -> str:
        name, operator, rest = match.group(1), match.group(2), match.group(3) or ""
        if name in variables:
            return variables[name]
        assert operator != ":?", f"{name}: {rest}"
        return rest

    return re.sub(r"\$\{(\w+)(?:(:[-?])([^}]*))?\}", value, text)


@dataclass
class RunHere:
    command: list[str]
    environment: dict[str, str]
    cwd: str | None


def as_run_here(name: str, volumes: dict[str, Path], variables: dict[str, str]) -> RunHere:
    """A service's command line, environment and working directory as they run here: each
    volume mounted in the container is the host directory it maps to (`./dir` in the
    repository, a named volume in `volumes`), the environment is interpolated from
    `variables`, and the image's own environment (Dockerfile ENV) comes first for the services
    built from it."""
    service = compose()[name]
    mounts: dict[str, Path] = {}
    for volume in service.get("volumes", []):
        source, target = volume.split(":")[:2]
        mounts[target] = ROOT / source if source.startswith(".") else volumes[source]

    def here(text: str) -> str:
        """`text` with every container path under a mount replaced by the host's (also inside
        a `sh -c` script)."""
        for target, source in mounts.items():
            text = re.sub(rf"(?<![\w./]){re.escape(target)}(?=/|\s|$)", str(source), text)
        return text

    environment = dict(os.environ)
    if service.get("build") == ".":
        dockerfile = (ROOT / "Dockerfile").read_text()
        environment |= dict(re.findall(r"^ENV (\w+)=(\S+)$", dockerfile, re.MULTILINE))
    for key, raw in service.get("environment", {}).items():
        environment[key] = here(interpolate(str(raw), variables))
    cwd = service.get("working_dir")
    return RunHere([here(word) for word in service["command"]], environment, cwd and here(cwd))


def fake_p4c(tmp_path: Path, edit: str = "") -> dict[str, str]:
    """PATH and variables that make `p4c-bm2-ss` the fake above."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "p4c-bm2-ss").write_text(FAKE_P4C)
    (bin_dir / "p4c-bm2-ss").chmod(0o755)
    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "P4C_HEADER": P4C_HEADER,
        "FAKE_P4C_EDIT": edit,
        "COMMITTED_P4INFO": str(ROOT / "p4" / "build" / "sliceportal.p4info.txtpb"),
    }


def test_the_p4c_service_accepts_p4c_s_p4info_with_its_comment_header(tmp_path: Path) -> None:
    volume = tmp_path / "p4build"
    volume.mkdir()
    p4c = as_run_here("p4c", {"p4build": volume}, {})
    run = subprocess.run(
        p4c.command,
        env=p4c.environment | fake_p4c(tmp_path),
        cwd=p4c.cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "OK: p4c's P4Info equals" in run.stdout
    # The BMv2 JSON lands where the portal services look for it.
    device_config = compose()["api"]["environment"]["SLICEPORTAL_P4_DEVICE_CONFIG_PATH"]
    assert device_config.startswith("/p4build/")
    assert json.loads((volume / Path(device_config).name).read_text()) == {"pipelines": []}


def test_the_p4c_service_fails_when_p4c_s_p4info_differs(tmp_path: Path) -> None:
    volume = tmp_path / "p4build"
    volume.mkdir()
    p4c = as_run_here("p4c", {"p4build": volume}, {})
    changed = fake_p4c(tmp_path, edit="s/size: 4096/size: 4095/")
    run = subprocess.run(
        p4c.command, env=p4c.environment | changed, cwd=p4c.cwd, capture_output=True, text=True
    )
    assert run.returncode == 1
    assert "FAILED: p4c's P4Info" in run.stderr and "+  size: 4095" in run.stdout
    # Every portal service waits for it to succeed.
    for name in ("api", "worker", "slow-worker", "beat", "poller"):
        assert compose()[name]["depends_on"]["p4c"] == {
            "condition": "service_completed_successfully"
        }


def test_make_compile_and_the_p4c_service_run_the_same_script() -> None:
    """One compile line and one P4Info comparison (p4/compile.sh, p4/check-p4info) for the
    Makefile, its Docker variant and docker-compose.yml."""
    makefile = (ROOT / "p4" / "Makefile").read_text()
    assert "sh compile.sh build" in makefile
    assert "sh /p4/compile.sh /p4/build" in makefile
    image = re.search(r"^P4C_IMAGE \?= (\S+)$", makefile, re.MULTILINE)
    assert image is not None and image.group(1) == compose()["p4c"]["image"]
    assert compose()["p4c"]["command"][:2] == ["sh", "/p4/compile.sh"]
    assert "check-p4info" in (ROOT / "p4" / "compile.sh").read_text()


class Service:
    """A compose service's command running here, its output collected by a thread."""

    def __init__(self, run: RunHere, environment: dict[str, str]) -> None:
        executable = Path(sys.executable).parent / run.command[0]
        self.process = subprocess.Popen(
            [str(executable), *run.command[1:]],
            env=run.environment | environment,
            cwd=run.cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)

    def wait_for(self, condition: Callable[[], bool], what: str, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            output = "".join(self.lines[-30:])
            assert self.process.poll() is None, f"exited before {what}:\n{output}"
            assert time.monotonic() < deadline, f"no {what} within {timeout_s} s:\n{output}"
            time.sleep(0.2)

    def said(self, text: str) -> Callable[[], bool]:
        return lambda: any(text in line for line in self.lines)

    def terminate(self) -> None:
        """SIGTERM to its process group (celery's pool, serve's children)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)

    def stop(self) -> None:
        """`terminate`, then SIGKILL after 20 s."""
        self.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(5)


@pytest.fixture
def compose_database(postgres_server_url: str) -> Iterator[str]:
    """An empty database of its own: the api service migrates it as on a first `up`."""
    name = f"sliceportal_compose_{uuid.uuid4().hex[:12]}"
    url = embedded.create_database(postgres_server_url, name)
    yield url
    embedded.drop_database(postgres_server_url, name)


def test_the_portal_services_command_lines_run(
    tmp_path: Path, compose_database: str, redis_url: str
) -> None:
    """api (migrates, creates the admin, registers the bmv2 switch, serves), both workers, beat
    and poller (once the database is migrated), each with its compose command and environment (the
    image's production one), pointed at this run's PostgreSQL and Redis."""
    variables: dict[str, str] = {}
    volumes = {"p4build": tmp_path / "p4build", "portal-data": tmp_path / "portal-data"}
    here = {"DATABASE_URL": compose_database, "REDIS_URL": redis_url, "HOME": str(tmp_path)}
    # The poller's metrics on any free loopback port here, not compose's fixed one on all
    # interfaces.
    here |= {"SLICEPORTAL_POLLER_METRICS_PORT": "0", "SLICEPORTAL_POLLER_METRICS_HOST": "127.0.0.1"}
    port = free_tcp_port()

    def start(name: str) -> Service:
        run = as_run_here(name, volumes, variables)
        if name == "api":
            run.command[run.command.index("--port") + 1] = str(port)
            run.command[run.command.index("--host") + 1] = "127.0.0.1"  # as published
        service = Service(run, here)
        started.append(service)
        return service

    def healthy() -> bool:
        with contextlib.suppress(httpx.HTTPError):
            return httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=2).is_success
        return False

    started: list[Service] = []
    try:
        api, worker, beat = start("api"), start("worker"), start("beat")
        slow_worker = start("slow-worker")
        api.wait_for(healthy, "/api/v1/health answering 200")
        assert api.said("created the first admin")()
        poller = start("poller")
        worker.wait_for(worker.said("ready."), "the worker ready")
        slow_worker.wait_for(slow_worker.said("ready."), "the slow lane's worker ready")
        beat.wait_for(beat.said("beat: Starting"), "beat starting")
        poller.wait_for(poller.said("polling switch"), "the poller polling its switch")
        poller.wait_for(poller.said("poller metrics on http://127.0.0.1:"), "its metrics served")
        # One signing key, generated by the first to start, in the volume they all mount.
        assert [path.name for path in volumes["portal-data"].iterdir()] == ["secret_key"]
    finally:
        for service in started:
            service.terminate()
        for service in started:
            service.stop()
