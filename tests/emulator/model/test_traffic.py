"""Traffic profiles and the open-loop generators."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sliceportal.emulator.layout import Congestion
from sliceportal.emulator.model.ports import PortConfig
from sliceportal.emulator.model.traffic import (
    OpenLoop,
    ProfileError,
    SourceSpec,
    parse_profile,
    parse_source,
)

S = 1_000_000_000


def times(spec: SourceSpec, steps: list[int], seed: int = 1, start: int = 0) -> np.ndarray:
    source = OpenLoop(spec, seed, start)
    return np.concatenate([source.until(end) for end in steps])


def test_cbr_is_evenly_spaced_at_its_rate() -> None:
    spec = SourceSpec("a", "cbr", "10.0.0.1", rate_bps=12_112_000)  # 1 ms per 1514-byte frame
    got = times(spec, [S], start=500)
    assert len(got) == 1000
    assert got[0] == 500 and set(np.diff(got).tolist()) == {1_000_000}


@pytest.mark.parametrize("pattern", ["cbr", "poisson", "onoff"])
def test_generators_give_the_same_packets_however_time_is_sliced(pattern: str) -> None:
    spec = SourceSpec("a", pattern, "10.0.0.1", rate_bps=50e6, on_s=0.01, off_s=0.02)
    whole = times(spec, [2 * S])
    sliced = times(spec, list(range(1_000_003, 2 * S, 7_777_777)) + [2 * S])
    assert np.array_equal(whole, sliced)
    assert np.all(np.diff(whole) >= 0)


def test_poisson_averages_its_rate_and_is_seeded() -> None:
    spec = SourceSpec("a", "poisson", "10.0.0.1", rate_bps=100e6)
    got = times(spec, [10 * S])
    expected = 100e6 * 10 / (1514 * 8)
    assert abs(len(got) - expected) < 4 * expected**0.5
    assert np.array_equal(got, times(spec, [10 * S]))
    assert not np.array_equal(got[:100], times(spec, [10 * S], seed=2)[:100])
    other = SourceSpec("b", "poisson", "10.0.0.1", rate_bps=100e6)
    assert not np.array_equal(got[:100], times(other, [10 * S])[:100])


def test_onoff_sends_at_its_peak_rate_for_its_duty_cycle() -> None:
    spec = SourceSpec("a", "onoff", "10.0.0.1", rate_bps=100e6, on_s=0.01, off_s=0.03)
    got = times(spec, [20 * S])
    mean_rate = len(got) * 1514 * 8 / 20
    assert 0.2 < mean_rate / 100e6 < 0.3  # on a quarter of the time
    gaps = np.diff(got)
    assert np.median(gaps) == pytest.approx(1514 * 8 * S / 100e6, abs=1)


PROFILE: dict[str, Any] = {
    "seed": 3,
    "ports": {"1": {"rate_bps": 285e6, "queue_depth": 200000}},
    "sources": [
        {"name": "dc", "pattern": "tcp", "ipv4_dst": "10.0.1.1", "cc": "dctcp", "flows": 10,
         "rtt_s": 0.005},
        {"name": "video", "pattern": "onoff", "ipv4_dst": "10.0.2.1", "vlan_id": 100,
         "rate_bps": 20e6, "on_s": 0.1, "off_s": 0.4, "start_s": 1, "stop_s": 5},
        {"name": "probe", "pattern": "cbr", "ipv4_dst": "10.0.3.1", "rate_bps": 1e6,
         "frame_bytes": 64, "ecn": "ect1", "enabled": False, "ipv4_src": "10.9.0.7"},
    ],
}  # fmt: skip


def test_a_profile_parses_with_defaults_and_round_trips() -> None:
    profile = parse_profile(PROFILE)
    assert profile.seed == 3
    assert profile.ports == {1: PortConfig(285_000_000, 200_000)}
    dc, video, probe = profile.sources
    assert (dc.cc, dc.flows, dc.ecn, dc.frame_bytes) == (Congestion.DCTCP, 10, 2, 1514)
    assert (video.vlan_id, video.start_s, video.stop_s) == (100, 1.0, 5.0)
    assert (probe.ecn, probe.enabled, probe.frame_bytes) == (1, False, 64)
    assert (dc.ipv4_src, probe.ipv4_src) == ("192.0.2.1", "10.9.0.7")  # the default, a given one
    assert probe.headers.ipv4_src == 0x0A090007
    for source in profile.sources:
        assert parse_source(source.to_json()) == source


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pattern": "burst"}, "sources[1](video).pattern: must be one of"),
        ({"rate_bps": -1}, "sources[1](video).rate_bps: must be in (0,"),
        ({"rate_bps": "fast"}, "rate_bps: must be a number"),
        ({"flows": 3}, "unknown field(s) ['flows'] for pattern onoff"),
        ({"ipv4_dst": "10.0.0.300"}, "ipv4_dst: must be an IPv4 address"),
        ({"ipv4_src": "client0"}, "ipv4_src: must be an IPv4 address, got 'client0'"),
        ({"ipv4_src": 167772161}, "ipv4_src: must be an IPv4 address, got 167772161"),
        ({"ecn": "yes"}, "ecn: must be one of"),
        ({"stop_s": 0.5}, "stop_s: must be after start_s"),
        ({"frame_bytes": 70000}, "frame_bytes: must be in [64, 65536]"),
        ({"name": "dc"}, "two sources are named 'dc'"),
        ({"name": "a/b"}, "name: must be a non-empty string"),
    ],
)
def test_a_bad_source_is_refused_naming_the_field(change: dict[str, Any], message: str) -> None:
    doc = {**PROFILE, "sources": [PROFILE["sources"][0], {**PROFILE["sources"][1], **change}]}
    with pytest.raises(ProfileError) as error:
        parse_profile(doc)
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("ports", "message"),
    [
        ({"511": {"rate_bps": 1e9}}, "'511' is not a usable port number"),
        ({"x": {}}, "'x' is not a usable port number"),
        ({"1": {"rate_bps": 0}}, "ports.1.rate_bps: must be in [1000"),
        ({"1": {"queue_depth": 0}}, "ports.1.queue_depth: must be in [1,"),
        ({"1": {"speed": 1}}, "ports.1: must be an object with rate_bps and queue_depth"),
    ],
)
def test_bad_port_settings_are_refused(ports: dict[str, Any], message: str) -> None:
    with pytest.raises(ProfileError) as error:
        parse_profile({"ports": ports})
    assert message in str(error.value)


def test_a_profile_is_an_object_with_known_fields() -> None:
    with pytest.raises(ProfileError, match="must be a JSON object"):
        parse_profile([])
    with pytest.raises(ProfileError, match=r"unknown field\(s\) \['slices'\]"):
        parse_profile({"slices": []})
