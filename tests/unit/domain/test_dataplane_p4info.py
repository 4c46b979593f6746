"""Every entry and counter name the translation produces is one the P4Info accepts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from google.protobuf import text_format

from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain.abc import (
    MEMORY_MAX_S,
    MEMORY_MIN_S,
    REFERENCE_RATE_MIN_BPS,
    AbcConfig,
    AggregateKey,
)
from sliceportal.p4rt.proto import p4i as p4info_pb2

P4INFO = Path(__file__).resolve().parents[3] / "p4" / "build" / "sliceportal.p4info.txtpb"
MS = 1e-3


@pytest.fixture(scope="module")
def info() -> p4info_pb2.P4Info:
    return text_format.Parse(P4INFO.read_text(), p4info_pb2.P4Info())


def extreme_entries() -> tuple[dp.TableEntry, ...]:
    """Entries at the edges of every width: largest DP_SID, VLAN, port, rate, burst."""
    top = dp.DataplaneSlice(
        dp_sid=c.MAX_SLICES - 1,
        name="top",
        vlan_id=c.VLAN_ID_MAX,
        ipv4_dst_prefixes=("255.255.255.255/32", "0.0.0.0/0"),
        rate_bps=c.RATE_MIN_BPS,
        burst_limit_s=c.BURST_LIMIT_MAX_NS / 1e9,
        priority=c.MAX_PRIORITY,
        scheme=dp.Scheme.ECN_STEP,
        marking_threshold_s=3.999,
        egress_port=c.BMV2_DROP_PORT - 1,
    )
    fast = dp.DataplaneSlice(
        dp_sid=2,
        name="fast",
        vlan_id=None,
        ipv4_dst_prefixes=("10.0.0.0/8",),
        rate_bps=c.RATE_MAX_BPS,
        burst_limit_s=1 * MS,
        priority=0,
        scheme=dp.Scheme.TAIL_DROP,
        marking_threshold_s=None,
        egress_port=0,
    )
    best_effort = dp.DataplaneSlice(
        dp_sid=c.BEST_EFFORT_DP_SID,
        name="best effort",
        vlan_id=None,
        ipv4_dst_prefixes=(),
        rate_bps=1e9,
        burst_limit_s=50 * MS,
        priority=c.BEST_EFFORT_PRIORITY,
        scheme=dp.Scheme.TAIL_DROP,
        marking_threshold_s=None,
        egress_port=1,
    )
    steep = AbcConfig(
        meter_memory_s=MEMORY_MAX_S,
        average_memory_s=MEMORY_MIN_S,
        reference_rate_bps=REFERENCE_RATE_MIN_BPS,
        q_base_s=3.999,
        gamma_s=c.BURST_LIMIT_MAX_NS / 1e9,
        key=AggregateKey.SOURCE_PREFIX,
        prefix_length=0,
    )
    abc = dataclasses.replace(top, dp_sid=3, name="abc", vlan_id=1, scheme=dp.Scheme.ABC,
                              marking_threshold_s=None, abc=steep)  # fmt: skip
    route = dp.Route("10.0.0.0/8", 510, "ff:ff:ff:ff:ff:ff")
    return dp.dataplane_entries([top, fast, best_effort, abc], [route])


def test_entries_fit_the_p4info(info: p4info_pb2.P4Info) -> None:
    tables = {t.preamble.name: t for t in info.tables}
    actions = {a.preamble.name: a for a in info.actions}
    for entry in extreme_entries():
        table = tables[entry.table]
        fields = {f.name: f for f in table.match_fields}
        for match in entry.match:
            field = fields[match.field]
            assert p4info_pb2.MatchField.MatchType.Name(field.match_type) == match.kind.upper()
            assert 0 <= match.value < 2**field.bitwidth
            if match.kind == dp.MatchKind.RANGE:
                assert match.high is not None and match.value <= match.high < 2**field.bitwidth
            if match.kind == dp.MatchKind.LPM:
                assert match.prefix_len is not None and 0 < match.prefix_len <= field.bitwidth
                assert match.value % 2 ** (field.bitwidth - match.prefix_len) == 0
        # Every exact field is present; only a zero-length LPM may be left out.
        present = {m.field for m in entry.match}
        assert all(f.name in present for f in table.match_fields if f.match_type == f.EXACT)
        action = actions[entry.action]
        refs = {r.id: r for r in table.action_refs}
        assert refs[action.preamble.id].scope != p4info_pb2.ActionRef.DEFAULT_ONLY
        assert [name for name, _ in entry.params] == [p.name for p in action.params]
        for (_, value), param in zip(entry.params, action.params, strict=True):
            assert 0 <= value < 2**param.bitwidth, param.name


def test_counter_and_register_names_exist(info: p4info_pb2.P4Info) -> None:
    counters = {x.preamble.name: x for x in info.counters}
    for name, index in dp.counter_cells(c.MAX_SLICES - 1):
        assert index < counters[name].size
    registers = {r.preamble.name for r in info.registers}
    codel = {
        dp.CODEL_DROPPING_REGISTER,
        dp.CODEL_COUNT_REGISTER,
        dp.CODEL_LAST_COUNT_REGISTER,
        dp.CODEL_DROP_NEXT_REGISTER,
        dp.CODEL_FIRST_ABOVE_REGISTER,
    }
    abc = {*dp.ABC_METER_REGISTERS, *dp.ABC_AVERAGE_REGISTERS}
    assert {dp.VQ_DELAY_REGISTER, dp.VQ_LAST_SEEN_REGISTER} | codel | abc == registers
    sizes = {r.preamble.name: r.size for r in info.registers}
    assert {sizes[name] for name in dp.ABC_METER_REGISTERS} == {c.ABC_METER_CELLS}
    assert {sizes[name] for name in dp.ABC_AVERAGE_REGISTERS} == {c.MAX_SLICES}
    assert {*dp.PAIR_COUNTERS, dp.VQ_DELAY_HIST, dp.REAL_DELAY_HIST} == set(counters)
