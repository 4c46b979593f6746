"""The ABC test vector `p4/tests/vectors/steps/abc_paper_cbr.json`, computed by ``domain/abc.py``.

The paper's Fig. 4 setting in miniature: a 50 Mbit/s slice with a 24-packet burst limit and the
paper's ABC defaults, client0 (10.0.0.1) sending CBR at 80 Mbit/s and client1 (10.0.0.2) at
40 Mbit/s, 1500-byte packets, for 30 ms. Each step holds the packet, the slice's virtual-queue
delay it meets and the reference's slot, activity and verdict; the P4 program and the emulator
will replay it. ``python tests/unit/domain/abc_vectors.py`` rewrites the file.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any

from sliceportal.domain import p4constants as c
from sliceportal.domain.abc import (
    AbcConfig,
    AbcTables,
    MeterState,
    SliceState,
    abc_meter_step,
    abc_slice_step,
    aggregate_slot,
)
from sliceportal.domain.dataplane import byte_time
from sliceportal.domain.units import TICKS_PER_S, Verdict, floor_vq_units

PATH = Path(__file__).resolve().parents[3] / "p4/tests/vectors/steps/abc_paper_cbr.json"
RATE_BPS = 50e6
PACKET_BYTES = 1500
PACKET_S = PACKET_BYTES * 8 / RATE_BPS
BURST_LIMIT_S = 24 * PACKET_S
CONFIG = AbcConfig.with_paper_thresholds(RATE_BPS, BURST_LIMIT_S)
PARAMS = CONFIG.params(floor_vq_units(BURST_LIMIT_S, "burst_limit_s"))
DP_SID = 1
CLIENTS = {"10.0.0.1": 80e6, "10.0.0.2": 40e6}
DURATION_S = 0.03


def _arrivals() -> list[tuple[int, str]]:
    arrivals = []
    for source, rate in CLIENTS.items():
        gap = PACKET_BYTES * 8 / rate
        arrivals += [
            (round(i * gap * TICKS_PER_S), source) for i in range(1, int(DURATION_S / gap))
        ]
    return sorted(arrivals)


def build() -> dict[str, Any]:
    tables = AbcTables.for_config(CONFIG)
    units_per_byte = byte_time(RATE_BPS)
    meters: dict[int, MeterState] = {}
    average, queue, last = SliceState(), 0, 0
    steps = []
    for now, source in _arrivals():
        queue = max(0, queue - (now - last) * c.VQ_UNITS_PER_TICK)
        last = now
        slot = aggregate_slot(PARAMS.prefix_mask, DP_SID, ipaddress.IPv4Address(source))
        meters[slot], activity = abc_meter_step(
            meters.get(slot, MeterState()), PARAMS, tables, now, PACKET_BYTES
        )
        average, verdict = abc_slice_step(average, PARAMS, tables, now, activity, queue)
        steps.append(
            {
                "t_ticks": now,
                "ipv4_src": source,
                "bytes": PACKET_BYTES,
                "queue_delay": queue,
                "expect": {"slot": slot, "activity": activity, "verdict": verdict.value},
            }
        )
        if verdict is Verdict.FORWARD:
            queue += PACKET_BYTES * units_per_byte
    return {
        "about": __doc__.split("\n\n")[1].replace("\n", " "),
        "config": {
            "rate_bps": RATE_BPS,
            "dp_sid": DP_SID,
            "meter_memory_s": CONFIG.meter_memory_s,
            "average_memory_s": CONFIG.average_memory_s,
            "reference_rate_bps": CONFIG.reference_rate_bps,
            "q_min_s": CONFIG.q_min_s,
            "q_base_s": CONFIG.q_base_s,
            "gamma_s": CONFIG.gamma_s,
            "burst_limit_s": BURST_LIMIT_S,
            "key": CONFIG.key.value,
            "prefix_length": CONFIG.prefix_length,
        },
        "steps": steps,
        "expected": {
            "meters": {str(slot): vars(state) for slot, state in sorted(meters.items())},
            "average": vars(average),
        },
    }


def render() -> str:
    return json.dumps(build(), indent=1) + "\n"


if __name__ == "__main__":
    PATH.parent.mkdir(parents=True, exist_ok=True)
    PATH.write_text(render())
