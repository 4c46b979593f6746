"""Shared fixtures of the packet-model tests: the compiled kernel, switch states with slices."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from sliceportal.domain import dataplane as dp
from sliceportal.emulator.defaults import DEFAULT_P4INFO
from sliceportal.emulator.model.engine import compile_kernel
from sliceportal.emulator.model.entries import install
from sliceportal.emulator.state import DeviceState
from sliceportal.p4rt.p4info import P4InfoIndex

PROGRAM = P4InfoIndex.from_file(DEFAULT_P4INFO)
ROUTES = (
    dp.Route("10.0.0.0/16", 1, "02:00:00:00:00:01"),
    dp.Route("10.1.0.0/16", 2, "02:00:00:00:00:02"),
)


@pytest.fixture(scope="session", autouse=True)
def compiled_kernel() -> None:
    """Compile (or load from numba's cache) once per session, not in the first test."""
    compile_kernel()


def tail_drop(
    dp_sid: int, rate_bps: float, burst_s: float, priority: int = 7, port: int = 1
) -> dp.DataplaneSlice:
    prefix = f"10.{port - 1}.{dp_sid}.0/24"
    return dp.DataplaneSlice(
        dp_sid, f"s{dp_sid}", None, (prefix,), rate_bps, burst_s, priority,
        dp.Scheme.TAIL_DROP, None, port,
    )  # fmt: skip


def ecn_step(
    dp_sid: int, rate_bps: float, burst_s: float, mark_s: float, priority: int = 7, port: int = 1
) -> dp.DataplaneSlice:
    prefix = f"10.{port - 1}.{dp_sid}.0/24"
    return dp.DataplaneSlice(
        dp_sid, f"s{dp_sid}", None, (prefix,), rate_bps, burst_s, priority,
        dp.Scheme.ECN_STEP, mark_s, port,
    )  # fmt: skip


StateFactory = Callable[[Sequence[dp.DataplaneSlice]], DeviceState]


@pytest.fixture
def switch_state() -> StateFactory:
    """A fresh state of the real program holding the routes and the given slices."""

    def make(slices: Sequence[dp.DataplaneSlice]) -> DeviceState:
        state = DeviceState(PROGRAM)
        install(state, dp.dataplane_entries(slices, ROUTES))
        return state

    return make


def counter(state: DeviceState, name: str) -> tuple[list[int], list[int]]:
    """(packets, bytes) of every cell of a counter, as lists."""
    array = next(state.counters[i.id] for i in PROGRAM.counters.values() if i.name == name)
    return array.packets.tolist(), array.bytes.tolist()
