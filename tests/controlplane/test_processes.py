"""The fault tests' helpers: a failed wait shows the logs as they are when it fails."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from controlplane.processes import wait_for
from sliceportal.controlplane.supervisor import Child


def test_a_failed_wait_shows_what_was_logged_while_it_waited(tmp_path: Path) -> None:
    log_path = tmp_path / "worker.log"
    log_path.write_text("started\n")
    worker = Child("worker", [sys.executable], log=log_path)

    def log_and_fail() -> bool:
        with log_path.open("a") as log:
            log.write("still working\n")
        return False

    with pytest.raises(AssertionError, match="not within 0.1 s: done\nstarted\nstill working"):
        wait_for(log_and_fail, 0.1, "done", logs=[worker])
