"""An emulator per test, on a free port of 127.0.0.1, with the tests' own P4Info."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from emulator.p4rt import P4INFO, Controller
from sliceportal.emulator.server import EmulatorServer


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    """A fresh switch: no pipeline, no controller."""
    emulator = EmulatorServer("127.0.0.1:0", 1, P4INFO)
    emulator.start()
    yield emulator
    emulator.stop(grace=0)


@pytest.fixture
def controller(server: EmulatorServer) -> Iterator[Controller]:
    """The primary controller (election id 1), after it has committed the pipeline."""
    primary = Controller(server.address, 1)
    primary.set_pipeline()
    yield primary
    primary.close()
