"""The shared test vectors of `p4/tests/vectors/*.json`: packet sequence -> decisions and state.

Test support, not product: it lives with the tests that run it (and `make mutation`).

A vector is self-contained so another target (BMv2 through its Thrift and P4Runtime ports)
can replay it: the slices and routes, the P4Runtime entries they translate to, the egress
port settings, timed steps (packets, and control changes that take effect at their time) and
the expected outcome: every packet's decision, the final registers and the final non-zero
counter cells. Each packet also carries a hand-written ``expect`` (its outcome) and ``why``,
so a vector says what it checks in words, not only in numbers.

``.venv/bin/python tests/emulator/model/vectors.py FILE...`` recomputes the ``expected`` block
with the reference pipeline, after checking the hand-written outcomes against it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from sliceportal.domain import dataplane as dp
from sliceportal.domain.codel import CodelConfig
from sliceportal.domain.reconcile import UpdateKind
from sliceportal.emulator import layout as L
from sliceportal.emulator.defaults import DEFAULT_P4INFO
from sliceportal.emulator.model.engine import NEVER_NS, Engine
from sliceportal.emulator.model.entries import install, install_meters, install_switch
from sliceportal.emulator.model.ports import PortConfig
from sliceportal.emulator.model.program import DEFAULT_TTL, Headers
from sliceportal.emulator.model.reference import Decision, Packet, ReferenceSwitch
from sliceportal.emulator.model.traffic import parse_ports
from sliceportal.emulator.state import DeviceState
from sliceportal.p4rt.p4info import P4InfoIndex

VECTOR_DIR = Path(__file__).resolve().parents[3] / "p4/tests/vectors"
COUNTERS = {
    "vq_dropped": dp.VQ_DROPPED,
    "forwarded": dp.FORWARDED,
    "real_dropped": dp.REAL_DROPPED,
    "ecn_marked": dp.ECN_MARKED,
    "vq_delay_hist": dp.VQ_DELAY_HIST,
    "real_delay_hist": dp.REAL_DELAY_HIST,
    "aqm_dropped": dp.AQM_DROPPED,
}
REGISTERS = {
    "vq_delay": dp.VQ_DELAY_REGISTER,
    "vq_last_seen": dp.VQ_LAST_SEEN_REGISTER,
    "codel_dropping": dp.CODEL_DROPPING_REGISTER,
    "codel_count": dp.CODEL_COUNT_REGISTER,
    "codel_last_count": dp.CODEL_LAST_COUNT_REGISTER,
    "codel_drop_next": dp.CODEL_DROP_NEXT_REGISTER,
    "codel_first_above": dp.CODEL_FIRST_ABOVE_REGISTER,
    **{name.rsplit(".", 1)[-1]: name for name in dp.ABC_METER_REGISTERS},
    **{name.rsplit(".", 1)[-1]: name for name in dp.ABC_AVERAGE_REGISTERS},
}


@dataclass(frozen=True)
class PacketStep:
    packet: Packet
    expect: L.Outcome


@dataclass(frozen=True)
class ModifySlice:
    """Take a slice's new policy into slice_policy (a MODIFY) at ``time_ns``."""

    time_ns: int
    slice_: dp.DataplaneSlice


@dataclass(frozen=True)
class SetPort:
    time_ns: int
    port: int
    config: PortConfig


Control = ModifySlice | SetPort
Step = PacketStep | Control


@dataclass(frozen=True)
class Vector:
    path: Path
    doc: dict[str, Any]
    slices: tuple[dp.DataplaneSlice, ...]
    routes: tuple[dp.Route, ...]
    ports: dict[int, PortConfig]
    steps: tuple[Step, ...]

    @property
    def packets(self) -> list[PacketStep]:
        return [s for s in self.steps if isinstance(s, PacketStep)]


@dataclass(frozen=True)
class Result:
    decisions: list[Decision]
    registers: dict[str, dict[str, int]]
    counters: dict[str, dict[str, list[int]]]
    meters: dict[str, list[int]]
    """slice_meter's used cells: [committed, peak, last_seen] (`dataplane.MeterState`)."""


def _slice(doc: dict[str, Any]) -> dp.DataplaneSlice:
    doc = dict(doc)
    doc["ipv4_dst_prefixes"] = tuple(doc.get("ipv4_dst_prefixes", ()))
    doc["scheme"] = dp.Scheme(doc["scheme"])
    doc.setdefault("vlan_id", None)
    doc.setdefault("marking_threshold_s", None)
    if "codel" in doc:
        doc["codel"] = CodelConfig.from_seconds(**doc["codel"])
    if "abc" in doc:
        doc["abc"] = dp.abc_config(doc["abc"], doc["rate_bps"], doc["burst_limit_s"])
    return dp.DataplaneSlice(**doc)


def _packet(doc: dict[str, Any]) -> PacketStep:
    headers = Headers.parse(
        doc["ipv4_dst"], doc.get("vlan_id"), doc.get("ttl", DEFAULT_TTL), doc.get("ipv4_src")
    )
    packet = Packet(doc["t_ns"], headers, doc["bytes"], doc.get("ecn", 0))
    return PacketStep(packet, L.Outcome[doc["expect"].upper()])


def entries_json(entries: Sequence[dp.TableEntry]) -> list[dict[str, Any]]:
    """Entries by P4Info names, as a BMv2 driver would install them."""
    return [
        {
            "table": e.table,
            "match": [
                {k: v for k, v in asdict(m).items() if v is not None} | {"kind": str(m.kind)}
                for m in e.match
            ],
            "action": e.action,
            "params": dict(e.params),
        }
        | ({"priority": e.priority} if e.priority else {})
        for e in entries
    ]


def meter_entries_json(configs: Sequence[dp.MeterConfig]) -> list[dict[str, Any]]:
    """Meter cells by P4Info names, as a BMv2 driver would write them (MeterEntry MODIFY)."""
    return [asdict(m) for m in configs]


def load(path: Path) -> Vector:
    doc = json.loads(path.read_text())
    steps: list[Step] = []
    for step in doc["steps"]:
        if "modify_slice" in step:
            steps.append(ModifySlice(step["t_ns"], _slice(step["modify_slice"])))
        elif "set_port" in step:
            ((port, config),) = parse_ports(step["set_port"]).items()
            steps.append(SetPort(step["t_ns"], port, config))
        else:
            steps.append(_packet(step))
    return Vector(
        path,
        doc,
        tuple(_slice(s) for s in doc["slices"]),
        tuple(dp.Route(**r) for r in doc["routes"]),
        parse_ports(doc.get("ports", {})),
        tuple(steps),
    )


def _state(vector: Vector) -> DeviceState:
    state = DeviceState(P4InfoIndex.from_file(DEFAULT_P4INFO))
    install_switch(state, dp.dataplane_entries(vector.slices, vector.routes))
    install_meters(state, dp.meter_configs(vector.slices))
    return state


def _modify(state: DeviceState, slice_: dp.DataplaneSlice) -> None:
    policy = [e for e in dp.slice_entries(slice_) if e.table == dp.SLICE_POLICY]
    install(state, policy, UpdateKind.MODIFY)
    install_meters(state, dp.meter_configs([slice_]))


def _segments(vector: Vector) -> list[tuple[list[Packet], Control | None]]:
    """The packets before each control step, and the step (None after the last packets)."""
    out: list[tuple[list[Packet], Control | None]] = []
    batch: list[Packet] = []
    for step in vector.steps:
        if isinstance(step, PacketStep):
            batch.append(step.packet)
        else:
            out.append((batch, step))
            batch = []
    out.append((batch, None))
    return out


def _apply(state: DeviceState, step: Control, set_port: Callable[[int, PortConfig], None]) -> None:
    if isinstance(step, ModifySlice):
        _modify(state, step.slice_)
    elif isinstance(step, SetPort):
        set_port(step.port, step.config)


def run_reference(vector: Vector) -> Result:
    state = _state(vector)
    switch = ReferenceSwitch(state, vector.ports, PortConfig())
    for packets, step in _segments(vector):
        switch.run(packets, None if step is None else step.time_ns)
        if step is not None:
            _apply(state, step, switch.set_port)
    return Result(switch.decisions, *_final_state(state))


def run_engine(vector: Vector) -> Result:
    """The compiled path over the same vector; decisions come from the kernel's trace."""
    state = _state(vector)
    total = len(vector.packets)
    engine = Engine(state, vector.ports, PortConfig(), trace_capacity=total)
    done = 0
    for packets, step in _segments(vector):
        arrivals = np.zeros((len(packets), L.OL_COLUMNS), np.int64)
        for i, p in enumerate(packets):
            arrivals[i] = (p.time_ns, engine.header_class(p.headers), p.frame_bytes, p.ecn)
        end = NEVER_NS if step is None else step.time_ns
        engine.run(end, arrivals, trace_offset=done)
        done += len(packets)
        if step is not None:
            _apply(state, step, engine.set_port)
    return Result([_decision(row) for row in engine.trace], *_final_state(state))


def _decision(row: Any) -> Decision:
    outcome = L.Outcome(int(row[L.TR_OUTCOME]))
    if outcome in (L.Outcome.UNROUTED, L.Outcome.PENDING):
        return Decision(outcome)
    head = (int(row[L.TR_SID]), int(row[L.TR_PORT]), int(row[L.TR_PRIO]), int(row[L.TR_VQ]))
    if outcome in (L.Outcome.VQ_DROPPED, L.Outcome.QUEUE_FULL, L.Outcome.AQM_DROPPED):
        return Decision(outcome, *head)
    if outcome == L.Outcome.REAL_DROPPED:
        return Decision(outcome, *head, int(row[L.TR_TD]))
    return Decision(outcome, *head, int(row[L.TR_TD]), int(row[L.TR_ECN]))


Registers = dict[str, dict[str, int]]
Counters = dict[str, dict[str, list[int]]]


Meters = dict[str, list[int]]


def _final_state(state: DeviceState) -> tuple[Registers, Counters, Meters]:
    by_name = {i.name: i.id for i in state.program.registers.values()}
    registers = {}
    for short, name in REGISTERS.items():
        values = state.registers[by_name[name]].values
        registers[short] = {str(i): int(values[i]) for i in np.flatnonzero(values)}
    counter_ids = {i.name: i.id for i in state.program.counters.values()}
    counters = {}
    for short, name in COUNTERS.items():
        array = state.counters[counter_ids[name]]
        cells = np.flatnonzero(array.packets | array.bytes)
        counters[short] = {str(i): [int(array.packets[i]), int(array.bytes[i])] for i in cells}
    meters: Meters = {}
    for meter in state.meters.values():
        if meter.info.name == dp.SLICE_METER:
            used = np.flatnonzero(meter.cells[:, L.MTR_LAST])
            columns = [L.MTR_COMMITTED, L.MTR_PEAK, L.MTR_LAST]
            meters = {str(i): [int(v) for v in meter.cells[i, columns]] for i in used}
    return registers, counters, meters


def result_json(result: Result) -> dict[str, Any]:
    decisions = []
    for d in result.decisions:
        row: dict[str, Any] = {"outcome": d.outcome.name.lower()}
        for f in fields(d)[1:]:
            value = getattr(d, f.name)
            if value is not None:
                row[f.name] = value
        decisions.append(row)
    doc = {"decisions": decisions, "registers": result.registers, "counters": result.counters}
    if result.meters:  # only vectors with meter slices have the key
        doc["meters"] = result.meters
    return doc


def regenerate(path: Path) -> None:
    """Rewrite ``expected`` and ``entries`` from the reference, after the hand checks pass."""
    vector = load(path)
    result = run_reference(vector)
    for i, (step, decision) in enumerate(zip(vector.packets, result.decisions, strict=True)):
        if step.expect != decision.outcome:
            raise SystemExit(
                f"{path.name}: packet {i} is {decision.outcome.name.lower()}, "
                f"but the vector expects {step.expect.name.lower()}"
            )
    doc = dict(vector.doc)
    doc["entries"] = entries_json(dp.dataplane_entries(vector.slices, vector.routes))
    meters = dp.meter_configs(vector.slices)
    if meters:
        doc["meter_entries"] = meter_entries_json(meters)
    doc["expected"] = result_json(result)
    path.write_text(json.dumps(doc, indent=1) + "\n")


def main(argv: Sequence[str]) -> int:
    for name in argv or sorted(str(p) for p in VECTOR_DIR.glob("*.json")):
        regenerate(Path(name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
