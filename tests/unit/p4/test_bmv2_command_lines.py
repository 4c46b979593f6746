"""The simple_switch_grpc command lines the project runs (the smoke test's, docker-compose's
`bmv2` service) use options BMv2 has, on the right side of `--`, and a log that is written.

BMv2's options (behavioral-model `src/bm_sim/options_parse.cpp` for the switch,
`targets/simple_switch_grpc/main.cpp` for the target's, which follow `--`); no BMv2 here.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
# option -> whether it takes a value
SWITCH_OPTIONS = {
    "--device-id": True,
    "--no-p4": False,
    "-i": True,
    "--interface": True,
    "--thrift-port": True,
    "--log-console": False,
    "--log-file": True,
    "--log-level": True,
    "-L": True,
    "--log-flush": False,
    "--pcap": True,
    "--use-files": True,
}
TARGET_OPTIONS = {
    "--grpc-server-addr": True,
    "--cpu-port": True,
    "--drop-port": True,
    "--priority-queues": True,
    "--dp-grpc-server-addr": True,
    "--disable-swap": False,
}
LOG_LEVELS = {"trace", "debug", "info", "warn", "error", "off"}


def options(words: list[str], known: dict[str, bool]) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    rest = iter(words)
    for word in rest:
        assert word in known, f"{word!r} is not an option of simple_switch_grpc here"
        found[word] = next(rest) if known[word] else None
    return found


def check(command: list[str]) -> tuple[dict[str, str | None], dict[str, str | None]]:
    assert command[0] == "simple_switch_grpc"
    split = command.index("--")
    switch = options(command[1:split], SWITCH_OPTIONS)
    target = options(command[split + 1 :], TARGET_OPTIONS)
    if "--log-file" in switch:  # else BMv2 buffers the log, and the file stays empty
        assert "--log-flush" in switch
    level = switch.get("--log-level")
    assert level is None or level in LOG_LEVELS
    return switch, target


def smoke_command() -> list[str]:
    script = (ROOT / "p4" / "tests" / "bmv2_smoke.sh").read_text().replace("\\\n", " ")
    line = re.search(r"^ip netns exec \"\$NS\" (simple_switch_grpc .*)&$", script, re.MULTILINE)
    assert line is not None
    return shlex.split(line.group(1))


def test_the_smoke_test_switch_writes_its_log() -> None:
    switch, target = check(smoke_command())
    assert switch["--log-file"] and "--log-flush" in switch and switch["--log-level"] == "info"
    assert "--no-p4" in switch and switch["--device-id"] == "0"
    assert target == {"--grpc-server-addr": "127.0.0.1:9559", "--priority-queues": "8"}


def test_the_compose_switch_has_its_target_options_after_the_separator() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    switch, target = check(compose["services"]["bmv2"]["command"])
    assert "--no-p4" in switch
    assert target["--priority-queues"] == "8"
