"""An abc slice's translation: its policy, the shared decay and function rows, the checks of
its parameters against the slice, and the decay tables' room for memories."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from sliceportal.core.paths import P4INFO_PATH
from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain import reconcile as rc
from sliceportal.domain.abc import AbcConfig, AggregateKey, abc_decay_table
from sliceportal.domain.spec import SliceSpec, SpecError
from sliceportal.domain.units import TICKS_PER_S, DataplaneValueError, floor_vq_units
from sliceportal.p4rt.entries import EntryCodec, EntryCodecError
from sliceportal.p4rt.p4info import P4InfoIndex

RATE_BPS = 50e6
PACKET_S = 1500 * 8 / RATE_BPS
BURST_S = 24 * PACKET_S


def abc_slice(dp_sid: int, prefix: str, **abc: Any) -> dp.DataplaneSlice:
    config = AbcConfig.with_paper_thresholds(RATE_BPS, BURST_S, **abc)
    return dp.DataplaneSlice(
        dp_sid, f"s{dp_sid}", None, (prefix,), RATE_BPS, BURST_S, 5, dp.Scheme.ABC, None, 1,
        abc=config,
    )  # fmt: skip


def test_an_abc_slice_gets_the_abc_action_with_the_papers_defaults() -> None:
    policy = abc_slice(1, "10.1.0.0/16").policy()
    assert policy.action == dp.ABC and policy.abc is not None
    params = dict(policy.params)
    assert params["q_min"] == floor_vq_units(6 * PACKET_S, "q")
    assert params["q_base"] == floor_vq_units(20 * PACKET_S, "q")
    assert params["meter_memory"] == 3 * TICKS_PER_S
    assert params["average_memory"] == round(0.3 * TICKS_PER_S)
    assert params["prefix_mask"] == 0xFFFFFFFF
    assert params["c_delay"] == policy.c_delay
    by_prefix = abc_slice(2, "10.2.0.0/16", key=AggregateKey.SOURCE_PREFIX, prefix_length=24)
    assert dict(by_prefix.policy().params)["prefix_mask"] == 0xFFFFFF00


def test_an_abc_slice_needs_its_memories_rows_and_the_function_tables() -> None:
    slice_ = abc_slice(1, "10.1.0.0/16")
    groups = dp.shared_rows(slice_.policy())
    assert [g.table for g in groups] == [*dp.ABC_DECAY_TABLES, *dp.ABC_LOOKUP_TABLES]
    assert [g.memory_field for g in groups][:3] == ["meter_memory_s", "average_memory_s", None]
    entries = dp.dataplane_entries([slice_])
    assert entries[-2:] == dp.slice_entries(slice_)  # the shared rows first
    tables = [entry.table for entry in entries]
    assert tables.count(dp.ABC_METER_DECAY) == len(abc_decay_table(3.0))
    assert tables.count(dp.ABC_AVERAGE_DECAY) == len(abc_decay_table(0.3))
    assert tables.count(dp.ABC_LOG2_S) == tables.count(dp.ABC_LOG2_N) == c.ABC_LOG2_TABLE_SIZE
    assert tables.count(dp.ABC_RECIPROCAL) == c.ABC_RECIPROCAL_TABLE_SIZE
    decay = [e for e in entries if e.table == dp.ABC_METER_DECAY]
    assert all(e.priority == dp.RANGE_PRIORITY for e in decay)
    assert all(e.priority == 0 for e in entries if e.table not in dp.ABC_DECAY_TABLES)
    assert decay[-1].match[1].high == 2**c.TIMESTAMP_WIDTH - 1
    assert dict(decay[0].params) == {"factor": 1 << 48, "ticks": 0}


def intent(slice_id: int, placement: dp.DataplaneSlice) -> rc.SliceIntent:
    return rc.slice_intent(slice_id, f"s{slice_id}", [placement])


def test_abc_slices_with_equal_memories_share_rows_and_a_17th_memory_is_refused() -> None:
    same = dp.dataplane_entries([abc_slice(1, "10.1.0.0/16"), abc_slice(2, "10.2.0.0/16")])
    alone = dp.dataplane_entries([abc_slice(1, "10.1.0.0/16")])
    assert len(same) == len(alone) + 2  # the second slice's classifier entry and policy
    both = rc.desired_state(
        [intent(1, abc_slice(1, "10.1.0.0/16")), intent(2, abc_slice(2, "10.2.0.0/16"))]
    )
    routes = 2  # the intents route their prefixes too
    assert len(both.entries) == len(same) + routes
    assert list(both.shared.values()) == [[1, 2]] * 5
    decay_key = next(k for k in both.entries if k[0] == dp.ABC_METER_DECAY)
    assert both.owners[decay_key] == [1, 2]
    slices = [
        abc_slice(i + 1, f"10.{i}.0.0/16", meter_memory_s=1.0 + i / 10)
        for i in range(c.ABC_DECAY_MEMORIES)
    ]
    dp.check_decay_memories(slices)
    slices.append(abc_slice(99, "10.99.0.0/16", meter_memory_s=9.0))
    with pytest.raises(DataplaneValueError) as caught:
        dp.check_decay_memories(slices)
    assert caught.value.field == f"slices[{c.ABC_DECAY_MEMORIES}].abc.meter_memory_s"
    reused = dataclasses.replace(slices[-1], abc=slices[0].abc)
    dp.check_decay_memories([*slices[:-1], reused])
    # A slice given by its policy alone (before it has a DP_SID there) counts the same.
    policies = [s.policy() for s in slices]
    with pytest.raises(DataplaneValueError) as caught:
        dp.check_decay_memories([*slices[:-1], policies[-1]])
    assert caught.value.field == f"slices[{c.ABC_DECAY_MEMORIES}].abc.meter_memory_s"
    dp.check_decay_memories([*policies[:-1], reused.policy()])


def test_the_reconciler_rejects_the_slice_bringing_a_17th_memory() -> None:
    intents = [
        intent(i + 1, abc_slice(i + 1, f"10.{i}.0.0/16", average_memory_s=0.1 + i / 100))
        for i in range(c.ABC_DECAY_MEMORIES + 1)
    ]
    desired = rc.desired_state(intents)
    assert list(desired.rejected) == [c.ABC_DECAY_MEMORIES + 1]
    assert "abc_average_decay" in desired.rejected[c.ABC_DECAY_MEMORIES + 1]


def test_a_slice_is_confirmed_only_with_its_shared_rows_and_its_digest_names_them() -> None:
    one = intent(1, abc_slice(1, "10.1.0.0/16"))
    held = rc.desired_state([one]).entries
    groups: dict[dp.SharedRows, bool] = {}
    assert rc.confirmed(one, held, groups=groups) and all(groups.values())
    missing = dict(held)
    del missing[next(k for k in held if k[0] == dp.ABC_RECIPROCAL)]
    assert not rc.confirmed(one, missing)
    other = intent(1, abc_slice(1, "10.1.0.0/16", meter_memory_s=2.0))
    assert rc.intent_digest(one) != rc.intent_digest(other)


def test_abc_rows_are_written_before_the_policy_and_deleted_after_it() -> None:
    old = list(rc.desired_state([intent(1, abc_slice(1, "10.1.0.0/16"))]).entries.values())
    new = rc.desired_state([intent(1, abc_slice(1, "10.1.0.0/16", meter_memory_s=2.0))])
    plan = rc.plan(new.entries, old)
    tables = [(u.kind, u.entry.table) for u in plan.updates]
    inserts = [i for i, t in enumerate(tables) if t == (rc.UpdateKind.INSERT, dp.ABC_METER_DECAY)]
    deletes = [i for i, t in enumerate(tables) if t == (rc.UpdateKind.DELETE, dp.ABC_METER_DECAY)]
    policy = tables.index((rc.UpdateKind.MODIFY, dp.SLICE_POLICY))
    assert inserts and deletes and max(inserts) < policy < min(deletes)
    assert not any(t[1] in dp.ABC_LOOKUP_TABLES for t in tables)  # unchanged, kept
    row = next(u.entry for u in plan.updates if u.entry.priority and u.entry.match[1].high == 5)
    assert rc.describe(rc.entry_key(row)).startswith("abc_meter_decay elapsed=5..5")


def spec(**fields: Any) -> SliceSpec:
    base = {"name": "s", "rate_bps": RATE_BPS, "priority": 5, "burst_bytes": BURST_S * RATE_BPS / 8,
            "delay_target_s": 0.01, "max_packet_bytes": 1518}  # fmt: skip
    return SliceSpec(**(base | fields))


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"scheme": "abc", "abc": {"q_base_s": 1.0}}, "abc.q_base_s"),
        ({"scheme": "abc", "abc": {"q_min_s": 0.003, "q_base_s": 0.002}}, "abc.q_base_s"),
        ({"scheme": "abc", "abc": {"colour": 1}}, "abc.colour"),
        ({"scheme": "abc", "abc": []}, "abc"),
        ({"scheme": "abc", "abc": {"key": "destination"}}, "abc.key"),
        ({"scheme": "abc", "abc": {"key": "source_prefix"}}, "abc.prefix_length"),
        ({"scheme": "abc", "abc": {"prefix_length": 24}}, "abc.prefix_length"),
        ({"scheme": "abc", "abc": {"meter_memory_s": "3"}}, "abc.meter_memory_s"),
        ({"scheme": "abc", "abc": {"gamma_s": True}}, "abc.gamma_s"),
        ({"scheme": "abc", "abc": {"q_min_s": "1"}}, "abc.q_min_s"),
        ({"scheme": "abc", "abc": {"q_base_s": None}}, "abc.q_base_s"),
        (
            {"scheme": "abc", "abc": {"key": "source_prefix", "prefix_length": 2.5}},
            "abc.prefix_length",
        ),
        ({"scheme": "abc", "abc": {"key": ["source_address"]}}, "abc.key"),
        ({"scheme": "abc", "abc": {"meter_memory_s": 11}}, "abc.meter_memory_s"),
        ({"scheme": "abc", "abc": {"reference_rate_bps": 0}}, "abc.reference_rate_bps"),
        ({"scheme": "tail_drop", "abc": {}}, "abc"),
    ],
)
def test_check_scheme_names_the_abc_field(doc: dict[str, Any], field: str) -> None:
    with pytest.raises(SpecError) as caught:
        dp.check_scheme(doc, spec(), "slices[0].")
    assert caught.value.field == f"slices[0].{field}"


def test_check_scheme_defaults_every_abc_parameter() -> None:
    policy = dp.check_scheme({"scheme": "abc"}, spec())
    assert policy.abc is not None and policy.action == dp.ABC
    short = dp.check_scheme({"scheme": "abc", "burst_limit_s": 10 * PACKET_S}, spec())
    assert short.abc is not None and short.abc.q_base == short.c_delay  # capped at the burst


def test_range_entries_and_priorities_round_trip_through_the_codec() -> None:
    codec = EntryCodec(P4InfoIndex.from_file(P4INFO_PATH))
    entries = dp.dataplane_entries([abc_slice(1, "10.1.0.0/16")])
    for entry in (entries[-1], *[e for e in entries if e.table in dp.SHARED_TABLES][::997]):
        message = codec.encode(entry)
        assert message.priority == entry.priority
        assert codec.decode(message) == entry


def test_a_range_match_without_its_high_end_is_refused_by_the_codec() -> None:
    codec = EntryCodec(P4InfoIndex.from_file(P4INFO_PATH))
    row = dp.abc_decay_entries(dp.ABC_METER_DECAY, 3_000_000)[7]
    memory, elapsed = row.match
    broken = dataclasses.replace(row, match=(memory, dataclasses.replace(elapsed, high=None)))
    with pytest.raises(EntryCodecError, match="has no high"):
        codec.encode(broken)
