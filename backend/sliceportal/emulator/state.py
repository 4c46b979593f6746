"""The switch's forwarding state: table entries, counters and registers of one pipeline.

The P4Runtime service writes and reads it on behalf of controllers; the packet model (see
`pipeline.py`) reads the tables and updates counters and registers. Both hold `lock` while they
touch it. A new `DeviceState` is created whenever a pipeline is committed, so nothing survives a
pipeline change or a restart, as on a real switch.
"""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt

from sliceportal.emulator.layout import MTR_COLUMNS
from sliceportal.emulator.tables import Table
from sliceportal.p4rt.p4info import CounterInfo, MeterInfo, P4InfoIndex, RegisterInfo


class CounterArray:
    """One indirect counter: a packet count and a byte count per cell.

    numpy arrays, so that a model can update many cells at once (`np.add.at`) and a wildcard
    read can snapshot the whole array cheaply.
    """

    def __init__(self, info: CounterInfo) -> None:
        self.info = info
        self.packets: npt.NDArray[np.int64] = np.zeros(info.size, dtype=np.int64)
        self.bytes: npt.NDArray[np.int64] = np.zeros(info.size, dtype=np.int64)


class RegisterArray:
    """One register: an unsigned value per cell, at most `info.bitwidth` bits wide.

    uint64 cells for registers up to 64 bits; wider ones hold Python ints (dtype object).
    """

    def __init__(self, info: RegisterInfo) -> None:
        self.info = info
        dtype = np.uint64 if 0 < info.bitwidth <= 64 else object
        self.values: npt.NDArray[np.generic] = np.zeros(info.size, dtype=dtype)


METER_BURST_MAX = 1 << 40
"""Largest burst accepted (about 1.1e12 bytes): a full bucket, burst x 10^6 tokens, fits int64."""
METER_RATE_MAX = 1 << 50
"""Largest rate accepted (about 1.1e15 units/s, 9 Pbit/s in bytes)."""


class MeterArray:
    """One indirect trTCM meter (RFC 2698): per cell its configuration and the packet model's
    state of its two buckets (`dataplane.MeterState`), one int64 row of `layout.MTR_COLUMNS`.
    Writing a cell's configuration refills its buckets."""

    def __init__(self, info: MeterInfo) -> None:
        self.info = info
        self.cells: npt.NDArray[np.int64] = np.zeros((info.size, MTR_COLUMNS), dtype=np.int64)


class DeviceState:
    def __init__(self, program: P4InfoIndex) -> None:
        self.program = program
        self.lock = threading.RLock()
        self.tables = {tid: Table(info, program.actions) for tid, info in program.tables.items()}
        self.counters = {cid: CounterArray(info) for cid, info in program.counters.items()}
        self.registers = {rid: RegisterArray(info) for rid, info in program.registers.items()}
        self.meters = {mid: MeterArray(info) for mid, info in program.meters.items()}
