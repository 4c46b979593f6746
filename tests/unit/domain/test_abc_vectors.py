"""Replays the ABC vector (p4/tests/vectors/steps/abc_paper_cbr.json) through the reference,
packet by packet.

The emulator does not run ABC yet, so tests/emulator/model/test_vectors.py does not read this
directory; the P4/emulator step will replay the same file there.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any

from abc_vectors import PATH, render

from sliceportal.domain.abc import (
    AbcConfig,
    AbcTables,
    AggregateKey,
    MeterState,
    SliceState,
    abc_meter_step,
    abc_slice_step,
    aggregate_slot,
)
from sliceportal.domain.units import floor_vq_units


def _config(doc: dict[str, Any]) -> AbcConfig:
    skip = ("rate_bps", "dp_sid", "key", "burst_limit_s")
    fields = {k: v for k, v in doc.items() if k not in skip}
    return AbcConfig(key=AggregateKey(doc["key"]), **fields)


def test_vector_replays_packet_by_packet() -> None:
    doc = json.loads(PATH.read_text())
    config = _config(doc["config"])
    tables = AbcTables.for_config(config)
    params = config.params(floor_vq_units(doc["config"]["burst_limit_s"], "burst_limit_s"))
    meters: dict[int, MeterState] = {}
    average = SliceState()
    for step in doc["steps"]:
        source = ipaddress.IPv4Address(step["ipv4_src"])
        slot = aggregate_slot(params.prefix_mask, doc["config"]["dp_sid"], source)
        meters[slot], activity = abc_meter_step(
            meters.get(slot, MeterState()), params, tables, step["t_ticks"], step["bytes"]
        )
        average, verdict = abc_slice_step(
            average, params, tables, step["t_ticks"], activity, step["queue_delay"]
        )
        assert {"slot": slot, "activity": activity, "verdict": verdict.value} == step["expect"]
    expected = doc["expected"]
    assert {str(k): vars(v) for k, v in sorted(meters.items())} == expected["meters"]
    assert vars(average) == expected["average"]
    verdicts = {(s["ipv4_src"], s["expect"]["verdict"]) for s in doc["steps"]}
    assert ("10.0.0.1", "drop") in verdicts and ("10.0.0.2", "drop") not in verdicts


def test_vector_file_is_current() -> None:
    assert PATH.read_text() == render(), "run python tests/unit/domain/abc_vectors.py"
