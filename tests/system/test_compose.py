"""docker-compose.yml runs what the tests run: the same commands, options and settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from sliceportal.cli.main import build_parser
from sliceportal.controlplane.bootstrap import parse_switches
from sliceportal.controlplane.supervisor import celery_children
from sliceportal.core.config import Settings
from sliceportal.schemas.switches import check_switch_network

ROOT = Path(__file__).resolve().parents[2]


def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return document["services"]


def test_worker_and_beat_run_as_serve_runs_them(tmp_path: Path) -> None:
    services = compose()
    worker, beat = celery_children(tmp_path, tmp_path / "schedule")
    assert ["celery", *worker.argv[3:]] == services["worker"]["command"]
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
    for name in ("api", "worker", "beat"):
        for variable in compose()[name]["environment"]:
            assert variable.removeprefix("SLICEPORTAL_") in fields, variable


def test_p4c_compiles_as_the_makefile_does_into_the_volume_the_portal_reads() -> None:
    services = compose()
    script = " ".join(services["p4c"]["command"])
    makefile = (ROOT / "p4" / "Makefile").read_text()
    assert "--std p4-16 --arch v1model" in makefile and "--std p4-16 --arch v1model" in script
    device_config = services["api"]["environment"]["SLICEPORTAL_P4_DEVICE_CONFIG_PATH"]
    assert f"-o {device_config}" in script
    assert "diff -u build/sliceportal.p4info.txtpb" in script
