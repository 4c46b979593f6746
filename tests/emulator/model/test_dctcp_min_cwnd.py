"""DCTCP's minimum window: a per-flow setting, Linux's 2 packets unless a profile says 1.

(The packet model's other tests live in tests/emulator/model/.)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from sliceportal.domain import dataplane as dp
from sliceportal.emulator import layout as L
from sliceportal.emulator.defaults import DEFAULT_P4INFO
from sliceportal.emulator.model import kernel
from sliceportal.emulator.model.engine import Engine, FlowSpec, compile_kernel
from sliceportal.emulator.model.entries import install
from sliceportal.emulator.model.ports import PortConfig
from sliceportal.emulator.model.program import Headers
from sliceportal.emulator.model.switch_model import Clock, PacketModel
from sliceportal.emulator.model.traffic import (
    Profile,
    ProfileError,
    SourceSpec,
    parse_source,
)
from sliceportal.emulator.state import DeviceState
from sliceportal.p4rt.p4info import P4InfoIndex

DC: dict[str, Any] = {"name": "dc", "pattern": "tcp", "ipv4_dst": "10.0.1.1", "cc": "dctcp",
                      "flows": 10, "rtt_s": 0.005}  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def compiled_kernel() -> None:
    compile_kernel()


def test_linux_default_and_profile_field() -> None:
    assert L.DCTCP_MIN_CWND == 2
    assert parse_source(DC).min_cwnd == 2
    one = parse_source({**DC, "min_cwnd": 1})
    assert one.min_cwnd == 1
    assert one.to_json()["min_cwnd"] == 1 and parse_source(one.to_json()) == one
    cubic = parse_source({**DC, "cc": "cubic"})
    assert "min_cwnd" not in cubic.to_json()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"min_cwnd": 0}, "source(dc).min_cwnd: must be in [1, 10000], got 0"),
        ({"min_cwnd": 1.5}, "source(dc).min_cwnd: must be an integer"),
        ({"min_cwnd": True}, "source(dc).min_cwnd: must be an integer"),
        ({"cc": "cubic", "min_cwnd": 1}, "source(dc).min_cwnd: only for cc dctcp"),
    ],
)
def test_a_bad_minimum_window_is_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ProfileError) as error:
        parse_source({**DC, **change})
    assert message in str(error.value)


def reduce(cc: L.Congestion, kind: int, cwnd: float, min_cwnd: int) -> float:
    """The window after one mark or loss (alpha 1: DCTCP halves, as Reno does)."""
    fi = np.zeros((1, L.FI_COLUMNS), np.int64)
    ff = np.zeros((1, L.FF_COLUMNS), np.float64)
    fi[0, L.FI_CC] = cc
    fi[0, L.FI_INFLIGHT] = 2
    fi[0, L.FI_NEXT_SEQ] = 200
    fi[0, L.FI_RECOVER] = -1
    fi[0, L.FI_WIN_END] = 10_000
    fi[0, L.FI_MAX_CWND] = 10_000
    fi[0, L.FI_MIN_CWND] = min_cwnd
    ff[0, L.FF_CWND] = cwnd
    ff[0, L.FF_SSTHRESH] = 1.0
    ff[0, L.FF_ALPHA] = 1.0
    ff[0, L.FF_EPOCH] = -1.0
    kernel._on_feedback(fi, ff, 0, 100, kind, 10**9)
    return float(ff[0, L.FF_CWND])


@pytest.mark.parametrize(
    ("cc", "kind", "cwnd", "min_cwnd", "after"),
    [
        (L.Congestion.DCTCP, L.EV_ACK_CE, 3.0, 2, 2.0),  # Linux's floor
        (L.Congestion.DCTCP, L.EV_ACK_CE, 3.0, 1, 1.5),
        (L.Congestion.DCTCP, L.EV_ACK_CE, 1.5, 1, 1.0),
        (L.Congestion.DCTCP, L.EV_LOSS, 3.0, 2, 2.0),
        (L.Congestion.DCTCP, L.EV_ACK_CE, 1.5, 0, 1.0),  # a row built without it: 1
        (L.Congestion.RENO, L.EV_LOSS, 3.0, 1, 2.0),  # Reno and CUBIC keep 2 whatever it says
        (L.Congestion.CUBIC, L.EV_LOSS, 2.5, 1, 2.0),
    ],
)
def test_the_kernel_stops_dctcp_at_the_flows_minimum_window(
    cc: L.Congestion, kind: int, cwnd: float, min_cwnd: int, after: float
) -> None:
    assert reduce(cc, kind, cwnd, min_cwnd) == pytest.approx(after)


def state_with_dc_slice() -> DeviceState:
    """A 3 Mbit/s slice, ECN step at 5 ms, burst limit 20 ms, on port 1."""
    state = DeviceState(P4InfoIndex.from_file(DEFAULT_P4INFO))
    slice_ = dp.DataplaneSlice(
        1, "dc", None, ("10.0.1.0/24",), 3e6, 0.020, 7, dp.Scheme.ECN_STEP, 0.005, 1
    )
    install(
        state, dp.dataplane_entries([slice_], (dp.Route("10.0.0.0/16", 1, "02:00:00:00:00:01"),))
    )
    return state


def test_an_engine_refuses_a_window_below_one_packet() -> None:
    engine = Engine(DeviceState(P4InfoIndex.from_file(DEFAULT_P4INFO)), {}, PortConfig())
    spec = FlowSpec(Headers.parse("10.0.1.1"), 1514, 2, 5_000_000, 10**9, L.Congestion.DCTCP)
    assert spec.min_cwnd == 2
    with pytest.raises(ValueError, match="min_cwnd must be in"):
        engine.add_flow(replace(spec, min_cwnd=0))


@pytest.mark.parametrize("min_cwnd", [1, 2])
def test_a_profiles_minimum_window_reaches_the_senders(min_cwnd: int) -> None:
    """One DCTCP flow, 5 ms RTT, into a 3 Mbit/s slice: 1.2 packets per RTT. Two packets
    (4.8 Mbit/s) overrun it, so with Linux's floor every packet is marked and the virtual
    queue keeps dropping; with 1 the flow backs off below the rate and, once slow start is
    over, nothing is dropped."""
    state = state_with_dc_slice()
    source = SourceSpec(
        "dc", "tcp", "10.0.1.1", ecn=2, cc=L.Congestion.DCTCP, rtt_s=0.005, min_cwnd=min_cwnd
    )
    model = PacketModel(Profile((source,)), clock=Clock.MANUAL)
    model.attach(state)
    model.advance(1.0)
    before = model.flow_stats("dc")[0]
    model.advance(2.0)
    after = model.flow_stats("dc")[0]
    lost = after.lost - before.lost
    delivered = after.delivered - before.delivered
    marked = after.marked - before.marked
    assert after.cwnd >= min_cwnd
    if min_cwnd == 2:
        assert after.cwnd == 2.0 and lost > 0.2 * delivered and marked == delivered
    else:
        assert after.cwnd < 2.0 and lost == 0 and 0 < marked < 0.9 * delivered
