"""The typed face of the compiled kernel: owns its arrays, feeds it, grows it, reads it out.

An `Engine` runs over one `DeviceState`: it updates the state's registers and counters in
place (under ``state.lock``, one chunk of simulated time at a time, so P4Runtime reads between
chunks see consistent values) and recomputes the header classes when a write changed a table.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain.abc import STATE_WIDTH
from sliceportal.emulator import layout as L
from sliceportal.emulator.model import kernel
from sliceportal.emulator.model.ports import PortConfig, check_port
from sliceportal.emulator.model.program import Classifier, Headers
from sliceportal.emulator.state import DeviceState

Int64Array = npt.NDArray[np.int64]
NEVER_NS = int(np.iinfo(np.int64).max) - 1
"""A ``t_end`` beyond every event: run until nothing is left (open-loop traffic only)."""
_INITIAL_ROWS = 4096
_COUNTERS = (
    dp.VQ_DROPPED,
    dp.FORWARDED,
    dp.REAL_DROPPED,
    dp.ECN_MARKED,
    dp.VQ_DELAY_HIST,
    dp.REAL_DELAY_HIST,
    dp.AQM_DROPPED,
)
_CODEL_REGISTERS = (
    dp.CODEL_DROPPING_REGISTER,
    dp.CODEL_COUNT_REGISTER,
    dp.CODEL_LAST_COUNT_REGISTER,
    dp.CODEL_DROP_NEXT_REGISTER,
    dp.CODEL_FIRST_ABOVE_REGISTER,
)
"""SliceCodel's registers in the order the kernel unpacks them."""
_ABC_REGISTERS = (*dp.ABC_METER_REGISTERS, *dp.ABC_AVERAGE_REGISTERS)
"""SliceAbc's registers in the order the kernel unpacks them."""
_INT64_SPAN = 1 << 64
_NO_ABC = (
    np.zeros((0, L.DECAY_COLUMNS), np.int64),
    np.zeros((L.LOOKUP_TABLES, 1), np.int64),
    np.zeros((L.LOOKUP_TABLES, STATE_WIDTH + 1), np.int64),
)
"""The kernel's ABC tables while no header class is an abc slice's."""


@dataclass(frozen=True)
class FlowSpec:
    """One responsive (TCP-like) flow, greedy: it always has data to send.

    A window's packets leave at ``sender_rate_bps`` (the host's NIC), so they reach the switch
    as line-rate bursts, as the paper's unshaped senders did. ``rtt_ns`` is the base round-trip
    time outside this switch; feedback (an ACK, with CE if marked, or a loss) reaches the
    sender that long after the packet left the switch or was dropped. A lost packet is not
    retransmitted as such: a greedy flow just sends another one, which is the same load.

    ``min_cwnd`` is the floor of a DCTCP flow's window, in packets: Linux's 2 by default, 1 to
    let DCTCP back off further (what experiment 1's "around 5 ms" needs, docs/emulator.md).
    Reno and CUBIC keep Linux's floor of 2 whatever it says.
    """

    headers: Headers
    frame_bytes: int
    ecn: int
    rtt_ns: int
    sender_rate_bps: int
    cc: L.Congestion
    max_cwnd: int = 10_000
    min_cwnd: int = L.DCTCP_MIN_CWND


@dataclass(frozen=True)
class FlowStats:
    sent: int
    delivered: int
    lost: int
    marked: int
    cwnd: float
    inflight: int


@dataclass(frozen=True)
class TapReading:
    """What a capture of one slice's forwarded packets saw: delay histograms in ``bin_us``
    bins (the last bin holds everything beyond), sums and maxima in microseconds."""

    bin_us: int
    vq_hist: Int64Array
    real_hist: Int64Array
    packets: int
    vq_sum_us: int
    real_sum_us: int
    vq_max_us: int
    real_max_us: int


_compiled = threading.Event()
_compiling = threading.Lock()


def compile_kernel() -> None:
    """Compile the kernel (or load it from numba's cache) if this process has not yet.

    A cold compile takes tens of seconds: `Engine.run` calls this before it takes the state's
    lock, so P4Runtime requests are not held up meanwhile.
    """
    if _compiled.is_set():
        return
    with _compiling:
        if _compiled.is_set():
            return
        i64 = np.int64
        counters = tuple(np.zeros(1, i64) for _ in range(12))
        codel = tuple(np.zeros(1, np.uint64) for _ in _CODEL_REGISTERS)
        abc = tuple(np.zeros(1, np.uint64) for _ in _ABC_REGISTERS)
        kernel.run(
            0, np.zeros((0, L.OL_COLUMNS), i64), -1, np.zeros((0, L.CLS_COLUMNS), i64),
            np.zeros((0, L.FI_COLUMNS), i64), np.zeros((0, L.FF_COLUMNS), np.float64),
            np.zeros((1, L.PORT_COLUMNS), i64), np.zeros((1, L.QUEUES, L.Q_COLUMNS), i64),
            np.zeros((1, L.PKT_COLUMNS), i64), np.zeros(1, i64),
            np.zeros((8, L.EV_COLUMNS), i64), np.zeros(L.CUR_COLUMNS, i64),
            np.zeros(1, np.uint64), np.zeros(1, np.uint64),
            np.zeros((1, L.MTR_COLUMNS), i64), codel, np.zeros((0, L.LAW_COLUMNS), i64), abc,
            *_NO_ABC, counters,
            np.zeros((0, L.TR_COLUMNS), i64), np.zeros(1, i64), np.zeros((0, 2, 2), i64),
            np.zeros((0, L.TS_COLUMNS), i64), 1, np.zeros(L.ST_COLUMNS, i64),
        )  # fmt: skip
        _compiled.set()


def _by_name(state: DeviceState, name: str, registers: bool = False) -> int:
    program = state.program
    objects = program.registers.values() if registers else program.counters.values()
    found = [info.id for info in objects if info.name == name]
    if found:
        return found[0]
    raise LookupError(f"the P4Info has no {name}: the model needs sliceportal.p4's")


class Engine:
    """Packets of sliceportal.p4 through one switch, in simulated time from ``now_ns``."""

    def __init__(
        self,
        state: DeviceState,
        ports: Mapping[int, PortConfig],
        default_port: PortConfig,
        *,
        now_ns: int = 0,
        trace_capacity: int = 0,
        tap_bin_us: int = 10,
        tap_bins: int = 10_000,
    ) -> None:
        self.state = state
        self.classifier = Classifier(state)
        self._headers: list[Headers] = []
        self._class_ids: dict[Headers, int] = {}
        self._cls: Int64Array = np.zeros((0, L.CLS_COLUMNS), np.int64)
        self._classes_stale = True
        registers = state.registers
        self._vq_delay = registers[_by_name(state, dp.VQ_DELAY_REGISTER, True)].values
        self._vq_last = registers[_by_name(state, dp.VQ_LAST_SEEN_REGISTER, True)].values
        if self._vq_delay.dtype != np.uint64 or self._vq_last.dtype != np.uint64:
            raise TypeError("the virtual-queue registers must be uint64 arrays")
        meter = [m for m in state.meters.values() if m.info.name == dp.SLICE_METER]
        # Without slice_meter (an older P4Info) no slice is metered: the cells stay unconfigured.
        self._meters: Int64Array = (
            meter[0].cells if meter else np.zeros((c.MAX_SLICES, L.MTR_COLUMNS), np.int64)
        )
        arrays = []
        for name in _COUNTERS:
            counter = state.counters[_by_name(state, name)]
            arrays += [counter.packets, counter.bytes]
        # vq_dropped, forwarded, real_dropped, ecn_marked (packets, bytes); histogram packets;
        # aqm_dropped (packets, bytes).
        self._counters = (*arrays[:8], arrays[8], arrays[10], arrays[12], arrays[13])
        self._codel = tuple(
            registers[_by_name(state, name, True)].values for name in _CODEL_REGISTERS
        )
        if any(values.dtype != np.uint64 for values in self._codel):
            raise TypeError("the CoDel registers must be uint64 arrays")
        self._abc = tuple(registers[_by_name(state, name, True)].values for name in _ABC_REGISTERS)
        if any(values.dtype != np.uint64 for values in self._abc):
            raise TypeError("the ABC registers must be uint64 arrays")
        self._law: Int64Array = np.zeros((0, L.LAW_COLUMNS), np.int64)
        self._abc_arrays = _NO_ABC
        self.default_port = default_port
        self._ports: Int64Array = np.zeros((L.PORTS, L.PORT_COLUMNS), np.int64)
        for port in range(L.PORTS):
            self._configure(port, default_port)
        for port, config in ports.items():
            self.set_port(port, config)
        self._queues: Int64Array = np.zeros((L.PORTS, L.QUEUES, L.Q_COLUMNS), np.int64)
        self._pool: Int64Array = np.zeros((_INITIAL_ROWS, L.PKT_COLUMNS), np.int64)
        self._free: Int64Array = np.arange(_INITIAL_ROWS, dtype=np.int64)
        self._heap: Int64Array = np.zeros((_INITIAL_ROWS, L.EV_COLUMNS), np.int64)
        self._cur: Int64Array = np.zeros(L.CUR_COLUMNS, np.int64)
        self._cur[L.CUR_FREE_N] = _INITIAL_ROWS
        self._cur[L.CUR_NOW] = now_ns
        self._fi: Int64Array = np.zeros((0, L.FI_COLUMNS), np.int64)
        self._ff: npt.NDArray[np.float64] = np.zeros((0, L.FF_COLUMNS), np.float64)
        self._flow_classes: list[int] = []
        self.trace: Int64Array = np.zeros((trace_capacity, L.TR_COLUMNS), np.int64)
        self.stats: Int64Array = np.zeros(L.ST_COLUMNS, np.int64)
        self._tap_bin_us = tap_bin_us
        self._tap_row: Int64Array = np.full(c.MAX_SLICES, -1, np.int64)
        self._tap_hist: Int64Array = np.zeros((0, 2, tap_bins + 1), np.int64)
        self._tap_sum: Int64Array = np.zeros((0, L.TS_COLUMNS), np.int64)

    # -- configuration ----------------------------------------------------------------------

    @property
    def now_ns(self) -> int:
        """Simulated time up to which everything has been processed."""
        return int(self._cur[L.CUR_NOW])

    def set_port(self, port: int, config: PortConfig) -> None:
        """Change a port's rate or depth; frames already on the wire keep their timing."""
        self._configure(check_port(port), config)

    def _configure(self, port: int, config: PortConfig) -> None:
        self._ports[port, L.PORT_RATE_BPS] = config.rate_bps
        self._ports[port, L.PORT_DEPTH] = config.queue_depth

    def port(self, port: int) -> PortConfig:
        row = self._ports[check_port(port)]
        return PortConfig(int(row[L.PORT_RATE_BPS]), int(row[L.PORT_DEPTH]))

    def queued(self, port: int) -> int:
        """Packets waiting in the port's queues."""
        return int(self._ports[check_port(port), L.PORT_QUEUED])

    def header_class(self, headers: Headers) -> int:
        """The id the kernel knows these headers by (registered on first use)."""
        found = self._class_ids.get(headers)
        if found is not None:
            return found
        class_id = len(self._headers)
        self._headers.append(headers)
        self._class_ids[headers] = class_id
        self._classes_stale = True
        return class_id

    def add_flow(self, spec: FlowSpec) -> int:
        """A new responsive flow, stopped; `start_flow` sets it going."""
        if not 0 < spec.frame_bytes <= kernel.MAX_FRAME_BYTES:
            raise ValueError(f"frame_bytes must be in [1, {kernel.MAX_FRAME_BYTES}]")
        if not 1 <= spec.min_cwnd <= spec.max_cwnd:
            raise ValueError(f"min_cwnd must be in [1, max_cwnd = {spec.max_cwnd}]")
        row = np.zeros(L.FI_COLUMNS, np.int64)
        row[L.FI_CLS] = self.header_class(spec.headers)
        row[L.FI_LEN] = spec.frame_bytes
        row[L.FI_ECN] = spec.ecn
        row[L.FI_RTT_NS] = spec.rtt_ns
        row[L.FI_GAP_NS] = max(1, spec.frame_bytes * 8 * 10**9 // spec.sender_rate_bps)
        row[L.FI_CC] = spec.cc
        row[L.FI_RECOVER] = -1
        row[L.FI_MAX_CWND] = spec.max_cwnd
        row[L.FI_MIN_CWND] = spec.min_cwnd
        self._fi = np.vstack([self._fi, row[None, :]])
        self._ff = np.vstack([self._ff, np.zeros((1, L.FF_COLUMNS), np.float64)])
        return len(self._fi) - 1

    def start_flow(self, flow: int, at_ns: int) -> None:
        """Start (or restart, with a fresh window) a flow's first send at ``at_ns``."""
        self._fi[flow, L.FI_ACTIVE] = 1
        self._fi[flow, L.FI_KICK] = 1
        self._fi[flow, L.FI_START_NS] = at_ns

    def stop_flow(self, flow: int) -> None:
        """No new packets; those in flight still get their feedback."""
        self._fi[flow, L.FI_ACTIVE] = 0
        self._fi[flow, L.FI_KICK] = 0

    def flow_stats(self, flow: int) -> FlowStats:
        fi, ff = self._fi[flow], self._ff[flow]
        return FlowStats(
            int(fi[L.FI_SENT]),
            int(fi[L.FI_DELIVERED]),
            int(fi[L.FI_LOST]),
            int(fi[L.FI_MARKED]),
            float(ff[L.FF_CWND]),
            int(fi[L.FI_INFLIGHT]),
        )

    def tap(self, dp_sid: int) -> None:
        """Record the delays of the slice's forwarded packets finely (`tap_reading`), as a
        capture on the outgoing link would: the switch's own histograms have 8 buckets."""
        if self._tap_row[dp_sid] >= 0:
            return
        self._tap_row[dp_sid] = len(self._tap_hist)
        shape = (1, *self._tap_hist.shape[1:])
        self._tap_hist = np.concatenate([self._tap_hist, np.zeros(shape, np.int64)])
        self._tap_sum = np.concatenate([self._tap_sum, np.zeros((1, L.TS_COLUMNS), np.int64)])

    def tap_reading(self, dp_sid: int) -> TapReading:
        row = int(self._tap_row[dp_sid])
        if row < 0:
            raise KeyError(f"slice {dp_sid} is not tapped")
        sums = self._tap_sum[row]
        return TapReading(
            self._tap_bin_us,
            self._tap_hist[row, L.TAP_VQ].copy(),
            self._tap_hist[row, L.TAP_REAL].copy(),
            int(sums[L.TS_PACKETS]),
            int(sums[L.TS_VQ_US]),
            int(sums[L.TS_REAL_US]),
            int(sums[L.TS_MAX_VQ_US]),
            int(sums[L.TS_MAX_REAL_US]),
        )

    # -- running ----------------------------------------------------------------------------

    def run(
        self, t_end_ns: int, arrivals: Int64Array | None = None, trace_offset: int = -1
    ) -> None:
        """Process everything before ``t_end_ns``: ``arrivals`` (int64[n, OL_COLUMNS], sorted
        by time, all in [now, t_end)) and the senders' traffic. ``trace_offset`` >= 0 records
        the fate of arrival i in ``trace[trace_offset + i]``."""
        if t_end_ns < self.now_ns:
            raise ValueError(f"time runs forward: {t_end_ns} < {self.now_ns}")
        ol = np.zeros((0, L.OL_COLUMNS), np.int64) if arrivals is None else arrivals
        times = ol[:, L.OL_TIME]
        if len(times) and (
            times[0] < self.now_ns or times[-1] >= t_end_ns or np.any(np.diff(times) < 0)
        ):
            raise ValueError("arrivals must be sorted and within [now, t_end)")
        self._cur[L.CUR_OL_POS] = 0
        compile_kernel()
        with self.state.lock:
            if self.classifier.refresh() or self._classes_stale:
                self._cls, self._law = self._class_table()
                self._abc_arrays = _NO_ABC
                if np.any(self._cls[:, L.CLS_POLICY] == L.POLICY_ABC):
                    decay, _, cells, offsets = self.classifier.abc.kernel_arrays
                    self._abc_arrays = (decay, cells, offsets)
                self._classes_stale = False
            abc_decay, abc_cells, abc_offsets = self._abc_arrays
            while True:
                status = kernel.run(
                    t_end_ns, ol, trace_offset, self._cls, self._fi, self._ff, self._ports,
                    self._queues, self._pool, self._free, self._heap, self._cur,
                    self._vq_delay, self._vq_last, self._meters, self._codel, self._law,
                    self._abc, abc_decay, abc_cells, abc_offsets, self._counters, self.trace,
                    self._tap_row, self._tap_hist, self._tap_sum, self._tap_bin_us, self.stats,
                )  # fmt: skip
                if status == L.Status.DONE:
                    return
                if status == L.Status.GROW_HEAP:
                    self._heap = np.concatenate([self._heap, np.zeros_like(self._heap)])
                else:
                    self._grow_pool()

    def _grow_pool(self) -> None:
        size = len(self._pool)
        self._pool = np.concatenate([self._pool, np.zeros_like(self._pool)])
        free = np.empty(2 * size, np.int64)
        n = int(self._cur[L.CUR_FREE_N])
        free[:n] = self._free[:n]
        free[n : n + size] = np.arange(size, 2 * size, dtype=np.int64)
        self._free = free
        self._cur[L.CUR_FREE_N] = n + size

    def _class_table(self) -> tuple[Int64Array, Int64Array]:
        """The kernel's header classes, and the control-law rows their codel slices use."""
        table = np.zeros((len(self._headers), L.CLS_COLUMNS), np.int64)
        law_rows: list[tuple[int, int, int]] = []
        law_spans: dict[int, tuple[int, int]] = {}
        for class_id, headers in enumerate(self._headers):
            verdict = self.classifier.verdict(headers)
            row = table[class_id]
            row[L.CLS_PORT] = -1 if verdict.port is None else verdict.port
            row[L.CLS_SID] = verdict.dp_sid
            row[L.CLS_PRIO] = verdict.priority
            policy = verdict.policy
            row[L.CLS_HIST_TARGET] = c.HIST_BEST_EFFORT_TARGET_VQ
            if policy is not None and policy.metered:
                row[L.CLS_POLICY] = L.POLICY_METER
                row[L.CLS_HIST_TARGET] = policy.hist_target
            elif policy is not None:
                ecn_step = policy.m_delay is not None
                row[L.CLS_POLICY] = L.POLICY_ECN_STEP if ecn_step else L.POLICY_TAIL_DROP
                row[L.CLS_BYTE_TIME] = policy.byte_time
                row[L.CLS_C_DELAY] = policy.c_delay
                row[L.CLS_M_DELAY] = policy.m_delay or 0
                row[L.CLS_HIST_TARGET] = policy.hist_target
                codel = policy.codel
                if codel is not None:
                    row[L.CLS_POLICY] = L.POLICY_CODEL
                    row[L.CLS_CODEL_TARGET] = codel.target
                    row[L.CLS_CODEL_INTERVAL] = codel.interval
                    row[L.CLS_CODEL_ECN] = int(codel.ecn_mark)
                    span = law_spans.get(codel.interval)
                    if span is None:
                        start = len(law_rows)
                        law_rows += [(r.value, r.prefix_len, r.spacing) for r in codel.law]
                        span = law_spans[codel.interval] = (start, len(law_rows))
                    row[L.CLS_LAW_START], row[L.CLS_LAW_END] = span
                abc = policy.abc
                if abc is not None:
                    spans = self.classifier.abc.kernel_arrays[1]
                    row[L.CLS_POLICY] = L.POLICY_ABC
                    row[L.CLS_ABC_CELL] = verdict.abc_cell
                    row[L.CLS_ABC_Q_MIN] = abc.q_min
                    row[L.CLS_ABC_Q_BASE] = abc.q_base
                    # gamma is bit<64>: the kernel reads the two's complement back as uint64
                    gamma = abc.gamma
                    row[L.CLS_ABC_GAMMA] = gamma - _INT64_SPAN if gamma >> 63 else gamma
                    row[L.CLS_ABC_OFFSET] = abc.activity_offset
                    row[L.CLS_ABC_METER_MEMORY] = abc.meter_memory
                    meter = spans.get((0, abc.meter_memory), (0, 0))
                    average = spans.get((1, abc.average_memory), (0, 0))
                    row[L.CLS_ABC_METER_START], row[L.CLS_ABC_METER_END] = meter
                    row[L.CLS_ABC_AVERAGE_START], row[L.CLS_ABC_AVERAGE_END] = average
        law = np.array(law_rows, np.int64).reshape(-1, L.LAW_COLUMNS)
        return table, law
