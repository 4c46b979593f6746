"""The per-packet pipeline in plain Python, on `domain.dataplane`'s reference arithmetic.

Slow and obviously right: ingress is `vqueue_step`, egress `egress_check`, the monitor
`delay_bucket` and `histogram_index`, the egress port a heap of dequeue times. The compiled
path (`engine`) must decide every packet and leave every register and counter exactly as this
does; the shared test vectors and a property test hold them to it. Open-loop packets only:
the responsive senders exist only in the compiled path.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain.abc import (
    AbcParams,
    MeterState,
    SliceState,
    abc_meter_step,
    abc_slice_step,
)
from sliceportal.domain.codel import CodelState, codel_step
from sliceportal.domain.units import Verdict
from sliceportal.emulator import layout as L
from sliceportal.emulator.layout import QUEUES, Outcome
from sliceportal.emulator.model.ports import PortConfig, tx_time_ns
from sliceportal.emulator.model.program import Classifier, Headers
from sliceportal.emulator.state import DeviceState

_TS_MODULUS = 1 << c.TIMESTAMP_WIDTH
_STATE_MODULUS = 1 << c.ABC_STATE_WIDTH
_TD_MAX = (1 << 32) - 1
_ECN_CE = 3


@dataclass(frozen=True)
class Packet:
    """One packet offered to the switch at ``time_ns`` (simulated time)."""

    time_ns: int
    headers: Headers
    frame_bytes: int
    ecn: int = 0


@dataclass(frozen=True)
class Decision:
    """The fate of one packet; fields that do not apply to its outcome are None.

    ``vq_delay`` is the virtual-queue delay the program computed (vq units: with this packet
    when it passed, the drained delay when it was dropped, 0 without a virtual queue);
    ``deq_timedelta`` the real queuing delay in ticks; ``ecn`` the ECN field as it left.
    """

    outcome: Outcome
    dp_sid: int | None = None
    port: int | None = None
    priority: int | None = None
    vq_delay: int | None = None
    deq_timedelta: int | None = None
    ecn: int | None = None


@dataclass
class _Queued:
    index: int
    enqueued_ns: int
    dp_sid: int
    policy: dp.SlicePolicy | None
    frame_bytes: int
    ecn: int
    vq_delay: int
    marked: bool = False
    """CE-marked by this switch in ingress (CoDel)."""


class ReferenceSwitch:
    """Runs packets through one `DeviceState`, updating its registers and counters."""

    def __init__(
        self, state: DeviceState, ports: Mapping[int, PortConfig], default_port: PortConfig
    ) -> None:
        self.state = state
        self.classifier = Classifier(state)
        self._ports = dict(ports)
        self._default_port = default_port
        names = {i.name: i for i in state.program.counters.values()}
        self._counters = {name: state.counters[names[name].id] for name in names}
        registers = {i.name: i.id for i in state.program.registers.values()}
        self._vq_delay = state.registers[registers[dp.VQ_DELAY_REGISTER]].values
        self._vq_last = state.registers[registers[dp.VQ_LAST_SEEN_REGISTER]].values
        self._codel = [
            state.registers[registers[name]].values
            for name in (
                dp.CODEL_DROPPING_REGISTER,
                dp.CODEL_COUNT_REGISTER,
                dp.CODEL_LAST_COUNT_REGISTER,
                dp.CODEL_DROP_NEXT_REGISTER,
                dp.CODEL_FIRST_ABOVE_REGISTER,
            )
        ]
        self._abc_meter = [state.registers[registers[n]].values for n in dp.ABC_METER_REGISTERS]
        self._abc_average = [state.registers[registers[n]].values for n in dp.ABC_AVERAGE_REGISTERS]
        meters = [m for m in state.meters.values() if m.info.name == dp.SLICE_METER]
        self._meters = meters[0].cells if meters else None
        self._queues: dict[int, list[deque[_Queued]]] = {}
        self._free_at: dict[int, int] = {}
        self._dequeues: list[tuple[int, int, int]] = []  # (time, order, port)
        self._order = 0
        self.decisions: list[Decision] = []

    def set_port(self, port: int, config: PortConfig) -> None:
        self._ports[port] = config

    def run(self, packets: Sequence[Packet], until_ns: int | None = None) -> None:
        """Offer ``packets`` (in time order, after any offered before, before ``until_ns``)
        and run the ports up to ``until_ns`` (None: until they have sent everything);
        `decisions` gets one entry per packet, in offer order."""
        for packet in packets:
            self._dequeue_until(packet.time_ns, inclusive=True)
            self.decisions.append(Decision(Outcome.PENDING))
            self._ingress(len(self.decisions) - 1, packet)
        self._dequeue_until(until_ns, inclusive=False)

    def _count(self, name: str, index: int, frame_bytes: int) -> None:
        counter = self._counters[name]
        counter.packets[index] += 1
        counter.bytes[index] += frame_bytes

    def _ingress(self, index: int, packet: Packet) -> None:
        self.classifier.refresh()
        verdict = self.classifier.verdict(packet.headers)
        if verdict.port is None:
            self.decisions[index] = Decision(Outcome.UNROUTED)
            return
        sid, policy, port, prio = verdict.dp_sid, verdict.policy, verdict.port, verdict.priority
        vq = 0
        ecn, marked = packet.ecn, False
        if policy is not None and policy.metered:
            if self._meter_color(sid, packet) == dp.METER_RED:
                self._count(dp.VQ_DROPPED, sid, packet.frame_bytes)
                self.decisions[index] = Decision(Outcome.VQ_DROPPED, sid, port, prio, 0)
                return
        elif policy is not None:
            now = packet.time_ns // c.TIMESTAMP_TICK_NS % _TS_MODULUS
            before = dp.VirtualQueueState(int(self._vq_delay[sid]), int(self._vq_last[sid]))
            after, passed = dp.vqueue_step(before, now, packet.frame_bytes, policy)
            self._vq_delay[sid] = after.delay
            self._vq_last[sid] = after.last_seen
            if not passed:
                self._count(dp.VQ_DROPPED, sid, packet.frame_bytes)
                self.decisions[index] = Decision(Outcome.VQ_DROPPED, sid, port, prio, after.delay)
                return
            vq = after.delay
            if policy.codel is not None:
                # SliceCodel, on the delay ahead of the packet (the drained virtual queue)
                sojourn = after.delay - packet.frame_bytes * policy.byte_time
                cells = self._codel
                dropping, *registers = (int(cell[sid]) for cell in cells)
                state = CodelState(bool(dropping), *registers)
                state, signal = codel_step(state, policy.codel, now, sojourn, ecn in (1, 2))
                for cell, value in zip(cells, dataclasses.astuple(state), strict=True):
                    cell[sid] = int(value)
                if signal is Verdict.DROP:
                    self._aqm_drop(index, sid, port, prio, sojourn, packet)
                    return
                if signal is Verdict.MARK:
                    ecn, marked = _ECN_CE, True
            if policy.abc is not None:
                queue_ahead = after.delay - packet.frame_bytes * policy.byte_time
                if self._abc(verdict.abc_cell, sid, policy.abc, now, packet, queue_ahead):
                    self._aqm_drop(index, sid, port, prio, queue_ahead, packet)
                    return
        config = self._ports.get(port, self._default_port)
        queues = self._queues.setdefault(port, [deque() for _ in range(QUEUES)])
        if len(queues[prio]) >= config.queue_depth:
            self.decisions[index] = Decision(Outcome.QUEUE_FULL, sid, port, prio, vq)
            return
        item = _Queued(index, packet.time_ns, sid, policy, packet.frame_bytes, ecn, vq, marked)
        self.decisions[index] = Decision(Outcome.PENDING, sid, port, prio, vq)
        free_at = self._free_at.get(port, 0)
        if not any(queues) and free_at <= packet.time_ns:
            self._egress(port, item, packet.time_ns)
            return
        queues[prio].append(item)
        if sum(map(len, queues)) == 1:  # the port's first waiting packet: it waits for the link
            self._schedule(port, free_at)

    def _aqm_drop(
        self, index: int, sid: int, port: int, prio: int, queue_ahead: int, packet: Packet
    ) -> None:
        """AqmDrop: the packet is dropped, counted, and taken back out of the slice's virtual
        queue, which then holds the delay ahead of it, as before it arrived (drained)."""
        self._vq_delay[sid] = queue_ahead
        self._count(dp.AQM_DROPPED, sid, packet.frame_bytes)
        self.decisions[index] = Decision(Outcome.AQM_DROPPED, sid, port, prio, queue_ahead)

    def _abc(
        self, cell: int, sid: int, params: AbcParams, now: int, packet: Packet, queue: int
    ) -> bool:
        """SliceAbc: the aggregate's meter, then the slice's decision on the delay ahead of
        the packet; True when it drops the packet."""
        tables = self.classifier.abc.tables(params.meter_memory, params.average_memory)
        meter = MeterState(*(int(r[cell]) for r in self._abc_meter))
        meter, activity = abc_meter_step(meter, params, tables, now, packet.frame_bytes)
        for registers, value in zip(self._abc_meter, dataclasses.astuple(meter), strict=True):
            registers[cell] = value
        last, count, stored = (int(r[sid]) for r in self._abc_average)
        average = SliceState(last, count, (stored + c.ABC_AVERAGE_ZERO) % _STATE_MODULUS)
        average, verdict = abc_slice_step(average, params, tables, now, activity, queue)
        stored = (average.average - c.ABC_AVERAGE_ZERO) % _STATE_MODULUS
        for registers, value in zip(
            self._abc_average, (average.last, average.count_q16, stored), strict=True
        ):
            registers[sid] = value
        return verdict is Verdict.DROP

    def _meter_color(self, sid: int, packet: Packet) -> int:
        """slice_meter.execute_meter on the slice's cell (GREEN while it is unconfigured)."""
        cells = self._meters
        if cells is None or not cells[sid, L.MTR_CONFIGURED]:
            return dp.METER_GREEN
        row = [int(v) for v in cells[sid]]
        config = dp.MeterConfig(
            dp.SLICE_METER,
            sid,
            row[L.MTR_CIR],
            row[L.MTR_CBURST],
            row[L.MTR_PIR],
            row[L.MTR_PBURST],
        )
        before = dp.MeterState(row[L.MTR_COMMITTED], row[L.MTR_PEAK], row[L.MTR_LAST])
        now = packet.time_ns // c.TIMESTAMP_TICK_NS % _TS_MODULUS
        after, color = dp.meter_step(before, now, packet.frame_bytes, config)
        cells[sid, L.MTR_COMMITTED] = after.committed
        cells[sid, L.MTR_PEAK] = after.peak
        cells[sid, L.MTR_LAST] = after.last_seen
        return color

    def _schedule(self, port: int, time_ns: int) -> None:
        heapq.heappush(self._dequeues, (time_ns, self._order, port))
        self._order += 1

    def _dequeue_until(self, time_ns: int | None, *, inclusive: bool) -> None:
        """Dequeue at every link-free instant up to ``time_ns`` (None: until all is sent).
        At equal times dequeues go before arrivals, as in the compiled loop."""
        while self._dequeues and (
            time_ns is None
            or self._dequeues[0][0] < time_ns
            or (inclusive and self._dequeues[0][0] == time_ns)
        ):
            now, _, port = heapq.heappop(self._dequeues)
            queues = self._queues[port]
            while any(queues):
                queue = next(q for q in reversed(queues) if q)  # strict priority
                if self._egress(port, queue.popleft(), now):
                    break
            if any(queues):
                self._schedule(port, max(self._free_at[port], now))

    def _egress(self, port: int, item: _Queued, now: int) -> bool:
        """RealQueueCheck and SliceMonitor; True when the packet went out on the link."""
        td = min(now // c.TIMESTAMP_TICK_NS - item.enqueued_ns // c.TIMESTAMP_TICK_NS, _TD_MAX)
        decided = self.decisions[item.index]
        dropped, marked = False, False
        if item.policy is not None and not item.policy.metered:
            dropped, marked = dp.egress_check(item.vq_delay, td, item.policy, item.ecn)
        marked = marked or item.marked
        if dropped:
            self._count(dp.REAL_DROPPED, item.dp_sid, item.frame_bytes)
            self.decisions[item.index] = Decision(
                Outcome.REAL_DROPPED, decided.dp_sid, port, decided.priority, item.vq_delay, td
            )
            return False
        self._count(dp.FORWARDED, item.dp_sid, item.frame_bytes)
        if marked:
            self._count(dp.ECN_MARKED, item.dp_sid, item.frame_bytes)
        target = c.HIST_BEST_EFFORT_TARGET_VQ if item.policy is None else item.policy.hist_target
        vq_cell = dp.histogram_index(item.dp_sid, dp.delay_bucket(item.vq_delay, target))
        real_cell = dp.histogram_index(
            item.dp_sid, dp.delay_bucket(dp.real_delay_units(td), target)
        )
        self._counters[dp.VQ_DELAY_HIST].packets[vq_cell] += 1
        self._counters[dp.REAL_DELAY_HIST].packets[real_cell] += 1
        config = self._ports.get(port, self._default_port)
        self._free_at[port] = now + tx_time_ns(item.frame_bytes, config.rate_bps)
        self.decisions[item.index] = Decision(
            Outcome.FORWARDED,
            decided.dp_sid,
            port,
            decided.priority,
            item.vq_delay,
            td,
            _ECN_CE if marked else item.ecn,
        )
        return True
