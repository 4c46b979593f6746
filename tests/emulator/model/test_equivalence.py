"""The compiled pipeline against the pure-Python reference on random traffic and slices."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.model import vectors
from emulator.model.conftest import ROUTES
from sliceportal.domain import dataplane as dp
from sliceportal.domain.abc import AbcConfig, AggregateKey
from sliceportal.domain.codel import CodelConfig
from sliceportal.domain.units import TIMESTAMP_MOD
from sliceportal.emulator.layout import Outcome
from sliceportal.emulator.model.ports import PortConfig
from sliceportal.emulator.model.program import Headers
from sliceportal.emulator.model.reference import Packet

FRAME_BITS = 1518 * 8


@st.composite
def slices(draw: st.DrawFn) -> list[dp.DataplaneSlice]:
    out = []
    for dp_sid in draw(st.sets(st.integers(1, 6), min_size=1, max_size=3)):
        port = draw(st.sampled_from([1, 2]))
        rate = draw(st.sampled_from([1e6, 12e6, 48e6, 240e6, 1e9]))
        burst = draw(st.floats(FRAME_BITS / rate * 1.01, 0.05))
        mark = draw(st.one_of(st.none(), st.floats(0, burst * 0.99)))
        scheme = dp.Scheme.TAIL_DROP if mark is None else dp.Scheme.ECN_STEP
        codel = None
        if mark is None:
            # the meter baseline (a trTCM instead of a virtual queue), or CoDel on the queue
            scheme = draw(st.sampled_from([dp.Scheme.TAIL_DROP, dp.Scheme.METER, dp.Scheme.CODEL]))
            if scheme == dp.Scheme.CODEL:
                codel = draw(codel_configs(burst))
        priority = draw(st.integers(0, 7))
        prefix = f"10.{port - 1}.{dp_sid}.0/24"
        out.append(
            dp.DataplaneSlice(
                dp_sid, f"s{dp_sid}", None, (prefix,), rate, burst, priority, scheme, mark, port,
                codel=codel,
            )
        )  # fmt: skip
    return out


def codel_configs(burst_s: float) -> st.SearchStrategy[CodelConfig]:
    """Targets from a few microseconds to just below the burst limit, short intervals (so
    spells, re-entries and count growth happen within a few hundred packets)."""
    return st.builds(
        CodelConfig.from_seconds,
        st.floats(1e-6, burst_s * 0.99),
        st.sampled_from([0.001, 0.0015, 0.003, 0.02]),
        st.booleans(),
    )


@st.composite
def scenarios(draw: st.DrawFn) -> vectors.Vector:
    defined = draw(slices())
    ports = {
        p: PortConfig(draw(st.sampled_from([10**6, 10**7, 10**8, 10**9])), draw(st.integers(1, 8)))
        for p in (1, 2)
    }
    destinations = [f"10.{s.egress_port - 1}.{s.dp_sid}.9" for s in defined]
    destinations += ["10.0.200.1", "10.1.200.1", "192.168.0.1"]  # best effort, unrouted
    steps: list[vectors.Step] = []
    now = 1_000_000
    for _ in range(draw(st.integers(1, 60))):
        now += draw(st.one_of(st.just(0), st.integers(1, 50_000), st.integers(0, 5_000_000)))
        headers = Headers.parse(
            draw(st.sampled_from(destinations)), ttl=draw(st.sampled_from([64, 64, 64, 1]))
        )
        packet = Packet(now, headers, draw(st.integers(64, 1518)), draw(st.integers(0, 3)))
        steps.append(vectors.PacketStep(packet, Outcome.PENDING))
    return vectors.Vector(Path("random"), {}, tuple(defined), ROUTES, ports, tuple(steps))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_compiled_and_reference_pipelines_agree(vector: vectors.Vector) -> None:
    reference = vectors.result_json(vectors.run_reference(vector))
    compiled = vectors.result_json(vectors.run_engine(vector))
    assert compiled == reference


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.integers(1, 4), st.integers(1, 4))
def test_pipelines_agree_on_two_rate_meters(
    vector: vectors.Vector, rate_factor: int, burst_factor: int
) -> None:
    """Meter slices whose peak rate and burst exceed the committed ones (YELLOW packets):
    the slices' own configs have PIR = CIR, so these are written in their place."""
    metered = tuple(
        dp.DataplaneSlice(
            s.dp_sid, s.name, None, s.ipv4_dst_prefixes, s.rate_bps, s.burst_limit_s,
            s.priority, dp.Scheme.METER, None, s.egress_port,
        )
        for s in vector.slices
    )  # fmt: skip
    vector = vectors.Vector(vector.path, {}, metered, vector.routes, vector.ports, vector.steps)
    original = dp.meter_configs

    def two_rate(slices: object) -> tuple[dp.MeterConfig, ...]:
        return tuple(
            dp.MeterConfig(
                m.meter, m.index, m.cir, m.cburst, m.pir * rate_factor, m.pburst * burst_factor
            )
            for m in original(slices)  # type: ignore[arg-type]
        )

    dp.meter_configs = two_rate  # type: ignore[assignment]
    try:
        reference = vectors.result_json(vectors.run_reference(vector))
        compiled = vectors.result_json(vectors.run_engine(vector))
    finally:
        dp.meter_configs = original  # type: ignore[assignment]
    assert compiled == reference


@st.composite
def codel_scenarios(draw: st.DrawFn) -> vectors.Vector:
    """CoDel slices under paced streams near their rate (the queue sits at the target for
    whole intervals), bursts, idle gaps that end a spell, re-entries, and a clock that may
    start just before the 48-bit timestamp wraps."""
    defined = []
    for dp_sid in draw(st.sets(st.integers(1, 4), min_size=1, max_size=2)):
        rate = draw(st.sampled_from([12e6, 48e6, 100e6]))
        burst = draw(st.floats(0.002, 0.05))
        prefix = f"10.0.{dp_sid}.0/24"
        defined.append(
            dp.DataplaneSlice(
                dp_sid, f"c{dp_sid}", None, (prefix,), rate, burst, draw(st.integers(0, 7)),
                dp.Scheme.CODEL, None, 1, codel=draw(codel_configs(burst)),
            )
        )  # fmt: skip
    ports = {1: PortConfig(draw(st.sampled_from([10**8, 10**9, 10**10])), 64)}
    wrap_ns = (TIMESTAMP_MOD - draw(st.integers(1, 20_000))) * 1000
    now = draw(st.sampled_from([1_000_000, wrap_ns]))
    steps: list[vectors.Step] = []
    for _ in range(draw(st.integers(1, 8))):
        target = draw(st.sampled_from(defined))
        size = draw(st.integers(64, 1518))
        paced_ns = int(size * 8 / target.rate_bps * 1e9)
        gap = draw(st.sampled_from([paced_ns, paced_ns - paced_ns // 50, 0, paced_ns // 2]))
        for _ in range(draw(st.integers(1, 120))):
            now += max(0, gap + draw(st.integers(-2_000, 2_000)))
            headers = Headers.parse(f"10.0.{target.dp_sid}.9")
            steps.append(
                vectors.PacketStep(
                    Packet(now, headers, size, draw(st.integers(0, 3))), Outcome.PENDING
                )
            )
        now += draw(st.sampled_from([0, 500_000, 3_000_000, 40_000_000]))
    return vectors.Vector(Path("codel"), {}, tuple(defined), ROUTES, ports, tuple(steps))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(codel_scenarios())
def test_pipelines_agree_on_codel(vector: vectors.Vector) -> None:
    reference = vectors.result_json(vectors.run_reference(vector))
    compiled = vectors.result_json(vectors.run_engine(vector))
    assert compiled == reference


def abc_configs(rate_bps: float, burst_s: float) -> st.SearchStrategy[AbcConfig]:
    """Memories short enough that rates and the average move within a few hundred packets,
    or the paper's; thresholds anywhere up to the burst limit; per address or per prefix."""
    fractions = st.floats(0, 1)

    def build(meter: float, average: float, reference: float, low: float, high: float,
              gamma: float, prefix: int) -> AbcConfig:  # fmt: skip
        q_min, q_base = sorted((low * burst_s, high * burst_s))
        key = AggregateKey.SOURCE_ADDRESS if prefix == 32 else AggregateKey.SOURCE_PREFIX
        return AbcConfig(meter, average, reference, q_min, q_base, gamma * burst_s, key, prefix)

    return st.builds(
        build,
        st.sampled_from([0.001, 0.004, 0.02, 3.0]),
        st.sampled_from([0.001, 0.005, 0.3]),
        st.sampled_from([1e3, 1e4, rate_bps / 4]),
        fractions,
        fractions,
        st.floats(0, 2),
        st.sampled_from([32, 32, 30, 24, 0]),
    )


@st.composite
def abc_scenarios(draw: st.DrawFn) -> vectors.Vector:
    """ABC slices fed by many aggregates (more than their 64 slots, so some share one) at
    paced rates around the slice's and in bursts, idle gaps beyond 34 memories (the decay
    table's last row), and a clock that may start just before the 48-bit timestamp wraps."""
    defined = []
    for dp_sid in draw(st.sets(st.integers(1, 4), min_size=1, max_size=2)):
        rate = draw(st.sampled_from([12e6, 50e6, 100e6]))
        burst = draw(st.floats(0.002, 0.03))
        defined.append(
            dp.DataplaneSlice(
                dp_sid, f"a{dp_sid}", None, (f"10.0.{dp_sid}.0/24",), rate, burst,
                draw(st.integers(0, 7)), dp.Scheme.ABC, None, 1,
                abc=draw(abc_configs(rate, burst)),
            )
        )  # fmt: skip
    ports = {1: PortConfig(draw(st.sampled_from([10**8, 10**9, 10**10])), 64)}
    wrap_ns = (TIMESTAMP_MOD - draw(st.integers(1, 20_000))) * 1000
    now = draw(st.sampled_from([1_000_000, wrap_ns]))
    sources = [f"10.9.{i // 250}.{i % 250 + 1}" for i in range(draw(st.integers(1, 90)))]
    steps: list[vectors.Step] = []
    for _ in range(draw(st.integers(1, 8))):
        target = draw(st.sampled_from(defined))
        size = draw(st.integers(64, 1518))
        paced_ns = int(size * 8 / target.rate_bps * 1e9)
        gap = draw(st.sampled_from([paced_ns, paced_ns // 2, paced_ns * 2, 0]))
        active = draw(st.lists(st.sampled_from(sources), min_size=1, max_size=4))
        for _ in range(draw(st.integers(1, 100))):
            now += max(0, gap + draw(st.integers(-2_000, 2_000)))
            headers = Headers.parse(
                f"10.0.{target.dp_sid}.9", ipv4_src=draw(st.sampled_from(active))
            )
            steps.append(vectors.PacketStep(Packet(now, headers, size), Outcome.PENDING))
        now += draw(st.sampled_from([0, 500_000, 40_000_000, 200_000_000]))
    return vectors.Vector(Path("abc"), {}, tuple(defined), ROUTES, ports, tuple(steps))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(abc_scenarios())
def test_pipelines_agree_on_abc(vector: vectors.Vector) -> None:
    reference = vectors.result_json(vectors.run_reference(vector))
    compiled = vectors.result_json(vectors.run_engine(vector))
    assert compiled == reference
