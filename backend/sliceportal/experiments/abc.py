"""P4-ABC's Figs. 4-6 (Menth et al. 2019, section 6) inside a slice, in the emulator.

The paper has two clients upload to a server through one switch whose 50 Mbit/s link to the
server holds 24 packets; every link has a one-way delay of 5 ms, the clients' access links run at
100 Mbit/s. Each client is one aggregate, keyed by its source address. Fig. 4: both send CBR,
client 1 at 40 Mbit/s, client 0 at 10-80 Mbit/s; Fig. 5: client 0 runs 1, 2, 4 or 8 TCP flows,
client 1 one; Fig. 6: client 0 sends CBR at 10-80 Mbit/s against one TCP flow of client 1. The
figures plot each client's goodput without ABC (tail drop) and with it.

Here the bottleneck is a 50 Mbit/s slice whose burst limit is the 24 packets' time (5.76 ms),
on a port that also runs at 50 Mbit/s (as in codel-table1: the queue is real, so TCP's ACK clock
sees it); each point runs once with ``tail_drop`` and once with ``abc`` (the paper's parameters:
`AbcConfig.with_paper_thresholds`). The slice goes to the switch through P4Runtime as the portal
deploys it, and the goodputs come from the switch's counters read over P4Runtime: the slice counts
packets and bytes, and client 1's packets are one byte shorter than client 0's, so those two
counts give each client's packets exactly (`split`).

Settings the paper leaves open (docs/emulator.md, "P4-ABC's Figs. 4-6"): CUBIC senders, a
20 ms base RTT (four 5 ms links), TCP sending at the 100 Mbit/s access rate with MSS 1448
(1514-byte frames), UDP with 1448-byte payloads (1490-byte frames), rates and goodputs counted in
transport payload (iperf's); a 10 s warm-up, then 60 s measured; one seed.
"""

from __future__ import annotations

import ipaddress
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from sliceportal.domain import dataplane as dp
from sliceportal.domain.abc import AbcConfig, aggregate_slot
from sliceportal.emulator.layout import Congestion
from sliceportal.emulator.model.engine import compile_kernel
from sliceportal.emulator.model.ports import PortConfig
from sliceportal.emulator.model.switch_model import Clock, PacketModel
from sliceportal.emulator.model.traffic import Profile, SourceSpec
from sliceportal.emulator.server import EmulatorServer
from sliceportal.experiments.paper import EGRESS_PORT, QUEUE_DEPTH, ROUTES
from sliceportal.experiments.runner import (
    Check,
    RowsReport,
    deploy,
    open_session,
    read_slices,
    write_rows_and_summary,
)

MBPS = 1e6
SLICE_RATE_BPS = 50e6
BUFFER_PACKETS = 24
BURST_LIMIT_S = BUFFER_PACKETS * 1500 * 8 / SLICE_RATE_BPS
"""The paper's 24-packet buffer as the slice's burst limit: 5.76 ms at 50 Mbit/s."""
PORT_RATE_BPS = 50_000_000
ACCESS_RATE_BPS = 100e6
"""The clients' access links: TCP windows leave at this rate."""
ONE_WAY_DELAY_S = 0.005
RTT_S = 4 * ONE_WAY_DELAY_S
"""Client to switch, switch to server and back: four links of 5 ms."""
FIRST_DP_SID = 1
SLICE_OCTET = 1
"""Point ``i`` of a figure runs in slice ``FIRST_DP_SID + i``, prefix 10.0.(1 + i).0/24."""
DRAIN_S = 0.5
"""Idle time after each point, repeated until the port's queue is empty: every packet of a
point has landed before the next starts."""
CLIENTS = ("10.0.0.1", "10.0.0.2")
"""Client 0 and client 1: the source addresses ABC's aggregates are keyed on."""
CLIENT1_CBR_BPS = 40e6
CBR_RATES_BPS = tuple(r * MBPS for r in range(10, 90, 10))
FLOWS = (1, 2, 4, 8)
SCHEMES = (dp.Scheme.TAIL_DROP, dp.Scheme.ABC)
PAYLOAD_BYTES = 1448
"""The paper's UDP payload, and TCP's MSS with timestamps on a 1500-byte MTU."""
UDP_OVERHEAD_BYTES = 14 + 20 + 8
TCP_OVERHEAD_BYTES = 14 + 20 + 32
CLIENT1_SHORTER_BY = 1
"""Client 1's payloads are this much shorter than client 0's, so that the slice's packet and
byte counters tell the two clients apart (`split`)."""

UTILISATION_MIN = 0.9
"""Both schemes keep the slice busy: the clients' goodputs add up to at least this share of
the slice's goodput capacity (`goodput_capacity_bps`; 0.95 at least measured)."""
TAIL_PROPORTION_TOLERANCE = 0.1
"""Fig. 4, tail drop: client 0's share of the goodput is within this of its share of the
offered rates (0.082 at most measured, at 80 Mbit/s: strictly periodic senders,
docs/emulator.md; CBR runs do not depend on the seed)."""
TAIL_FLOW_SHARE_TOLERANCE = 0.06
"""Fig. 5, tail drop: client 0's share is within this of n/(n+1), every flow alike (0.039 at
most measured, seeds 1-10 at 20 and 30 s, seeds 1-5 at 60 s; 10 s runs reach 0.074)."""
STARVED_MAX = 0.05
"""Fig. 6, tail drop: 'hardly any goodput' for client 1 once client 0 sends 50 Mbit/s or more
(0.8 Mbit/s at most measured, 1.7 %)."""
LEFTOVER_MIN = 0.9
"""Fig. 6, tail drop: below the bottleneck's rate client 1 gets at least this much of what
client 0 leaves (0.97 at least measured)."""
CBR_DELIVERED_MIN = 0.95
"""A CBR client that sends less than its fair share (with ABC) or than the bottleneck's rate
(with tail drop, against TCP) gets at least this much of what it sends (0.99 measured)."""
ABC_PROTECTED_MIN = 0.9
"""Fig. 4, abc: client 1 keeps at least this share of its 40 Mbit/s against a heavier
client 0."""
ABC_HEAVY_MAX_RATIO = 0.5
"""Fig. 4, abc: a heavier client 0 gets at most this times client 1's goodput."""
ABC_FAIR_SHARE_MIN = 0.45
"""Fig. 5, abc: client 1's single flow keeps at least this share, whatever n."""
ABC_TCP_SHARE_MIN = 0.5
"""Fig. 6, abc: client 1's TCP keeps at least half the slice (its fair share) when client 0
sends 50 Mbit/s or more."""
PAPER_CBR_CAP_BPS = 32 * MBPS
"""Fig. 6, abc: client 0 'can increase its goodput only up to 32 Mb/s'."""

PAPER_GOODPUT_BPS = 4170 * PAYLOAD_BYTES * 8
"""What the paper's bottleneck carried at most: its switch sent 4,170 packets/s (section 5.1),
each with 1448 bytes of payload: 48.3 Mbit/s."""


@dataclass(frozen=True)
class Client:
    """One client's traffic at one point: CBR at ``rate_bps`` of payload, or ``flows`` TCP."""

    pattern: str
    rate_bps: float | None = None
    flows: int = 1

    def payload(self, index: int) -> int:
        return PAYLOAD_BYTES - index * CLIENT1_SHORTER_BY

    def frame(self, index: int) -> int:
        overhead = TCP_OVERHEAD_BYTES if self.pattern == "tcp" else UDP_OVERHEAD_BYTES
        return self.payload(index) + overhead

    def source(self, index: int, server: str) -> SourceSpec:
        """The emulator's source for client ``index`` sending to ``server``: a CBR's frame rate
        carries its payload rate (what iperf's -b sets); TCP sends from a 100 Mbit/s access
        link."""
        spec = SourceSpec(
            name=f"client{index}",
            pattern=self.pattern,
            ipv4_dst=server,
            ipv4_src=CLIENTS[index],
            frame_bytes=self.frame(index),
        )
        if self.pattern == "tcp":
            return replace(
                spec, cc=Congestion.CUBIC, flows=self.flows, rtt_s=RTT_S,
                sender_rate_bps=ACCESS_RATE_BPS,
            )  # fmt: skip
        assert self.rate_bps is not None
        return replace(spec, rate_bps=self.rate_bps * self.frame(index) / self.payload(index))


@dataclass(frozen=True)
class Point:
    """One x-axis value of a figure: the two clients' traffic."""

    client0: Client
    client1: Client


@dataclass(frozen=True)
class AbcFigure:
    name: str
    number: int
    title: str
    x_label: str
    points: tuple[Point, ...]

    @property
    def sweeps_rate(self) -> bool:
        """Client 0 sends CBR over a range of rates (Figs. 4 and 6), not TCP flows (Fig. 5)."""
        return self.points[0].client0.pattern == "cbr"


FIGURES = {
    f.name: f
    for f in (
        AbcFigure(
            "abc-fig4",
            4,
            "P4-ABC Fig. 4 in a 50 Mbit/s slice: CBR against CBR at 40 Mbit/s",
            "client 0's CBR rate (Mbit/s)",
            tuple(Point(Client("cbr", r), Client("cbr", CLIENT1_CBR_BPS)) for r in CBR_RATES_BPS),
        ),
        AbcFigure(
            "abc-fig5",
            5,
            "P4-ABC Fig. 5 in a 50 Mbit/s slice: n TCP flows against one",
            "client 0's TCP flows",
            tuple(Point(Client("tcp", flows=n), Client("tcp")) for n in FLOWS),
        ),
        AbcFigure(
            "abc-fig6",
            6,
            "P4-ABC Fig. 6 in a 50 Mbit/s slice: CBR against one TCP flow",
            "client 0's CBR rate (Mbit/s)",
            tuple(Point(Client("cbr", r), Client("tcp")) for r in CBR_RATES_BPS),
        ),
    )
}
NAMES = tuple(FIGURES)


@dataclass(frozen=True)
class Row:
    """One run: the keys of ``summary.json``'s ``rows``, exactly. Rates are goodput: transport
    payload, as the paper's iperf counted it; ``client0_flows`` is 1 for a CBR stream."""

    scheme: str
    client0_offered_bps: float | None
    client0_flows: int
    client0_bps: float
    client1_bps: float


@dataclass(frozen=True)
class PaperRow:
    """What the paper says about one row, where it says something: the keys of ``rows`` (a
    goodput it does not give is None) and ``basis``, where the figure comes from."""

    scheme: str
    client0_offered_bps: float | None
    client0_flows: int
    client0_bps: float | None
    client1_bps: float | None
    basis: str


_FIG4_PROPORTIONAL = (
    "text, section 6.2.1: without ABC 'the goodput is proportional to the sent traffic rate "
    "of both clients'; derived with the testbed's 48.3 Mbit/s of goodput (4,170 packets/s "
    "of 1448 bytes); the seed has no figure images to read"
)
_FIG5_ABC = (
    "text, section 6.2.2: 'With ABC, the goodput of both clients remains in the order of 25 Mb/s'"
)
_FIG6_TAIL = (
    "text, section 6.2.3: without ABC client 1 'can only use the bandwidth left over by "
    "Client 0' and 'achieves hardly any goodput' once client 0 exceeds the capacity; derived "
    "with the testbed's 48.3 Mbit/s of goodput (client 0 gets what it sends up to it)"
)
_FIG6_ABC = (
    "text, section 6.2.3: with ABC 'Client 0 can increase its goodput only up to 32 Mb/s by "
    "increasing its transmission rate to very large values, but the remaining capacity is "
    "utilized by Client 1': 32 Mbit/s at the largest rate, client 1 the rest of 48.3"
)


def _paper() -> dict[str, tuple[PaperRow, ...]]:
    tail, abc = dp.Scheme.TAIL_DROP.value, dp.Scheme.ABC.value
    g = PAPER_GOODPUT_BPS
    r1 = CLIENT1_CBR_BPS
    fig4 = tuple(
        PaperRow(tail, r, 1, g * r / (r + r1), g * r1 / (r + r1), _FIG4_PROPORTIONAL)
        for r in CBR_RATES_BPS
    )
    fig5 = tuple(PaperRow(abc, None, n, 25 * MBPS, 25 * MBPS, _FIG5_ABC) for n in FLOWS)
    fig6 = tuple(
        PaperRow(tail, r, 1, min(r, g), max(g - r, 0.0), _FIG6_TAIL) for r in CBR_RATES_BPS
    ) + (PaperRow(abc, CBR_RATES_BPS[-1], 1, 32 * MBPS, g - 32 * MBPS, _FIG6_ABC),)
    return {"abc-fig4": fig4, "abc-fig5": fig5, "abc-fig6": fig6}


PAPER = _paper()
"""The paper's figures where its text gives them (its plots are not in the seed's text)."""


@dataclass
class AbcReport(RowsReport[Row]):
    figure: AbcFigure


def abc_slice(scheme: dp.Scheme, point: int = 0) -> dp.DataplaneSlice:
    """The 50 Mbit/s bottleneck slice of a figure's ``point`` (its own id and prefix, see
    `run`) with tail drop or ABC (the paper's parameters, one aggregate per source address)."""
    abc = (
        AbcConfig.with_paper_thresholds(SLICE_RATE_BPS, BURST_LIMIT_S)
        if scheme == dp.Scheme.ABC
        else None
    )
    return dp.DataplaneSlice(
        FIRST_DP_SID + point, f"bottleneck{point}", None, (f"10.0.{SLICE_OCTET + point}.0/24",),
        SLICE_RATE_BPS, BURST_LIMIT_S, 7, scheme, None, EGRESS_PORT, abc=abc,
    )  # fmt: skip


def server_address(point: int) -> str:
    """The server behind the bottleneck in ``point``'s run: inside that point's slice."""
    return f"10.0.{SLICE_OCTET + point}.1"


def _check_aggregates(slices: Sequence[dp.DataplaneSlice]) -> None:
    """Each client must have a meter of its own: two in one slot would add their rates."""
    for slice_ in slices:
        if slice_.abc is None:
            continue
        mask = slice_.abc.prefix_mask
        slots = {aggregate_slot(mask, slice_.dp_sid, ipaddress.IPv4Address(a)) for a in CLIENTS}
        if len(slots) != len(CLIENTS):
            raise ValueError(f"clients {CLIENTS} share an ABC meter in slice {slice_.dp_sid}")


def run(name: str, *, duration_s: float = 60.0, warmup_s: float = 10.0, seed: int = 1) -> AbcReport:
    """Every (scheme, point) run of figure ``name``, then the paper's claims as checks."""
    if duration_s <= 0 or warmup_s < 0:
        raise ValueError("need duration_s > 0 and warmup_s >= 0")
    figure = FIGURES[name]
    rows = [
        row for scheme in SCHEMES for row in _run_scheme(figure, scheme, duration_s, warmup_s, seed)
    ]
    return AbcReport(duration_s, warmup_s, seed, rows, checks(name, rows), figure)


def split(packets: int, bytes_: int, frames: tuple[int, int]) -> tuple[int, int]:
    """Each client's packets among ``packets`` of ``bytes_`` in total, client ``i``'s frames
    being ``frames[i]`` bytes (they differ): ``n0 f0 + n1 f1 = bytes_``, ``n0 + n1 = packets``."""
    f0, f1 = frames
    n0, rest = divmod(bytes_ - packets * f1, f0 - f1)
    if rest or not 0 <= n0 <= packets:
        raise ValueError(f"{packets} packets of {bytes_} bytes are no mix of {f0} and {f1}")
    return n0, packets - n0


def _run_scheme(
    figure: AbcFigure, scheme: dp.Scheme, duration_s: float, warmup_s: float, seed: int
) -> list[Row]:
    """One switch with one slice per point (all deployed at once: ABC's shared tables are
    68,000 entries, seconds to write), the points run one after the other, each in its own
    slice: its own virtual queue, ABC meters and activity average, fresh when it starts."""
    slices = [abc_slice(scheme, i) for i in range(len(figure.points))]
    _check_aggregates(slices)
    port = PortConfig(PORT_RATE_BPS, QUEUE_DEPTH)
    model = PacketModel(Profile((), seed, {EGRESS_PORT: port}), clock=Clock.MANUAL, chunk_s=0.05)
    compile_kernel()
    rows = []
    with EmulatorServer("127.0.0.1:0", model=model) as server:
        session = open_session(server.address)
        try:
            deploy(session, dp.dataplane_entries(slices, ROUTES))
            for i, (point, slice_) in enumerate(zip(figure.points, slices, strict=True)):
                clients = (point.client0, point.client1)
                sources = [c.source(k, server_address(i)) for k, c in enumerate(clients)]
                for source in sources:
                    model.put_source(source)
                model.advance(warmup_s)
                before = read_slices(session, [slice_.dp_sid])[slice_.dp_sid]
                model.advance(duration_s)
                after = read_slices(session, [slice_.dp_sid])[slice_.dp_sid]
                for source in sources:
                    model.remove_source(source.name)
                _drain(model)
                rows.append(_row(scheme, point, slice_, before, after, duration_s))
        finally:
            session.close()
    return rows


def _drain(model: PacketModel) -> None:
    """Run idle until the port's queue is empty and the stopped flows' last packets landed."""
    model.advance(DRAIN_S)
    while model.status()["ports"][str(EGRESS_PORT)]["queued"]:
        model.advance(DRAIN_S)


def _row(
    scheme: dp.Scheme,
    point: Point,
    slice_: dp.DataplaneSlice,
    before: dp.SliceCounters,
    after: dp.SliceCounters,
    duration_s: float,
) -> Row:
    """Each client's goodput from the slice's counters over the measured ``duration_s``."""
    stats = dp.slice_stats(before, after, duration_s, slice_.policy().hist_target)
    if stats.counters_reset:
        raise RuntimeError("the switch's counters were reset during the run")
    clients = (point.client0, point.client1)
    counts = split(
        after.forwarded.packets - before.forwarded.packets,
        after.forwarded.bytes - before.forwarded.bytes,
        (clients[0].frame(0), clients[1].frame(1)),
    )
    goodput = [
        n * c.payload(i) * 8 / duration_s
        for i, (n, c) in enumerate(zip(counts, clients, strict=True))
    ]
    return Row(
        scheme.value,
        point.client0.rate_bps if point.client0.pattern == "cbr" else None,
        point.client0.flows,
        goodput[0],
        goodput[1],
    )


def checks(name: str, rows: Sequence[Row]) -> list[Check]:
    """The paper's claims for figure ``name`` on the measured rows."""
    return _CHECKS[name](rows)


_SCHEME_LABEL = {dp.Scheme.TAIL_DROP: "tail drop", dp.Scheme.ABC: "abc"}
"""How the checks' names start: each check is about one scheme's rows."""


def _by(rows: Sequence[Row], scheme: dp.Scheme) -> list[Row]:
    return [r for r in rows if r.scheme == scheme.value]


def _mbps(bps: float) -> str:
    return f"{bps / MBPS:.1f}"


def _label(row: Row) -> str:
    if row.client0_offered_bps is None:
        return f"{row.client0_flows} flow(s)"
    return f"{_mbps(row.client0_offered_bps)} Mbit/s"


def goodput_capacity_bps(figure: AbcFigure) -> float:
    """The slice's rate in the figure's goodput: its frames' payload share, the smaller of the
    two clients' (48.6 Mbit/s with UDP, 47.8 with TCP)."""
    point = figure.points[0]
    share = min(c.payload(i) / c.frame(i) for i, c in enumerate((point.client0, point.client1)))
    return SLICE_RATE_BPS * share


def leftover_bps(rate_bps: float) -> float:
    """Client 1's TCP goodput in Fig. 6 if it got all the slice that client 0's CBR at
    ``rate_bps`` of payload leaves: the rest of the slice's rate, in client 1's frames."""
    cbr, tcp = Client("cbr", rate_bps), Client("tcp")
    wire = rate_bps * cbr.frame(0) / cbr.payload(0)
    return max(SLICE_RATE_BPS - wire, 0.0) * tcp.payload(1) / tcp.frame(1)


def _busy(figure: AbcFigure, rows: Sequence[Row]) -> list[Check]:
    capacity = goodput_capacity_bps(figure)
    out = []
    for scheme in SCHEMES:
        mine = _by(rows, scheme)
        low = min(mine, key=lambda r: r.client0_bps + r.client1_bps)
        total = low.client0_bps + low.client1_bps
        out.append(
            Check(
                f"{_SCHEME_LABEL[scheme]}: the bottleneck stays busy",
                total >= UTILISATION_MIN * capacity,
                f"at least {_mbps(total)} of {_mbps(capacity)} Mbit/s of goodput "
                f"(the least at {_label(low)}; at least {UTILISATION_MIN:.0%})",
            )
        )
    return out


def _fig4_checks(rows: Sequence[Row]) -> list[Check]:
    figure = FIGURES["abc-fig4"]
    tail, abc = _by(rows, dp.Scheme.TAIL_DROP), _by(rows, dp.Scheme.ABC)
    r1 = CLIENT1_CBR_BPS
    rising = all(b.client0_bps > a.client0_bps for a, b in itertools.pairwise(tail))
    falling = all(b.client1_bps < a.client1_bps for a, b in itertools.pairwise(tail))
    heavier = [r for r in tail if (r.client0_offered_bps or 0) > r1]
    out = [
        Check(
            "tail drop: sending more is rewarded (client 0 gains, client 1 loses, the heavier "
            "gets more)",
            rising and falling and all(r.client0_bps > r.client1_bps for r in heavier),
            "client 0: "
            + ", ".join(_mbps(r.client0_bps) for r in tail)
            + "; client 1: "
            + ", ".join(_mbps(r.client1_bps) for r in tail)
            + " Mbit/s",
        )
    ]
    worst = _most(tail, lambda r: abs(_share(r) - _offered_share(r)))
    out.append(
        Check(
            "tail drop: goodput near proportion to the offered rates",
            abs(_share(worst) - _offered_share(worst)) <= TAIL_PROPORTION_TOLERANCE,
            f"client 0's share is {_share(worst):.3f} at {_label(worst)}, offered "
            f"{_offered_share(worst):.3f} (the furthest; at most {TAIL_PROPORTION_TOLERANCE} "
            "apart: strictly periodic senders, see docs/emulator.md)",
        )
    )
    lighter = [r for r in abc if (r.client0_offered_bps or 0) < r1]
    worst_light = min(lighter, key=lambda r: r.client0_bps / (r.client0_offered_bps or 1))
    out.append(
        Check(
            "abc: the lighter client 0 gets what it sends",
            worst_light.client0_bps >= CBR_DELIVERED_MIN * (worst_light.client0_offered_bps or 0),
            f"{_mbps(worst_light.client0_bps)} of {_label(worst_light)} (the least; at least "
            f"{CBR_DELIVERED_MIN:.0%})",
        )
    )
    heavy = [r for r in abc if (r.client0_offered_bps or 0) > r1]
    weakest = min(heavy, key=lambda r: r.client1_bps)
    out.append(
        Check(
            "abc: the light client 1 keeps close to its 40 Mbit/s against a heavier client 0",
            weakest.client1_bps >= ABC_PROTECTED_MIN * r1,
            f"client 1 at least {_mbps(weakest.client1_bps)} Mbit/s (at {_label(weakest)}; at "
            f"least {ABC_PROTECTED_MIN:.0%} of 40)",
        )
    )
    out.append(
        Check(
            "abc: a heavier client 0 gets clearly less than client 1",
            all(_ratio(r) <= ABC_HEAVY_MAX_RATIO for r in heavy),
            "client 0 / client 1: "
            + ", ".join(f"{_ratio(r):.2f}" for r in heavy)
            + f" (at most {ABC_HEAVY_MAX_RATIO})",
        )
    )
    return out + _busy(figure, rows)


def _most(rows: Sequence[Row], value: Callable[[Row], float]) -> Row:
    """The row with the largest ``value``, a NaN before any number."""
    return max(rows, key=lambda r: (math.isnan(value(r)), value(r)))


def _least(rows: Sequence[Row], value: Callable[[Row], float]) -> Row:
    """The row with the smallest ``value``, a NaN before any number."""
    return min(rows, key=lambda r: (not math.isnan(value(r)), value(r)))


def _ratio(row: Row) -> float:
    """Client 0's goodput over client 1's; NaN when client 1 got nothing."""
    return row.client0_bps / row.client1_bps if row.client1_bps > 0 else math.nan


def _share(row: Row) -> float:
    """Client 0's share of the goodput; NaN when nothing got through (every check on it
    fails)."""
    total = row.client0_bps + row.client1_bps
    return row.client0_bps / total if total > 0 else math.nan


def _offered_share(row: Row) -> float:
    rate = row.client0_offered_bps or 0.0
    return rate / (rate + CLIENT1_CBR_BPS)


def _fig5_checks(rows: Sequence[Row]) -> list[Check]:
    figure = FIGURES["abc-fig5"]
    tail, abc = _by(rows, dp.Scheme.TAIL_DROP), _by(rows, dp.Scheme.ABC)
    worst = _most(tail, lambda r: abs(_share(r) - _flow_share(r)))
    out = [
        Check(
            "tail drop: the clients share per flow (client 0 gets n/(n+1))",
            abs(_share(worst) - _flow_share(worst)) <= TAIL_FLOW_SHARE_TOLERANCE,
            "client 0's share: "
            + ", ".join(f"{_share(r):.3f}" for r in tail)
            + f" (the furthest from n/(n+1) at {_label(worst)}; at most "
            f"{TAIL_FLOW_SHARE_TOLERANCE} apart)",
        )
    ]
    weakest = _least(abc, lambda r: 1 - _share(r))
    out.append(
        Check(
            "abc: client 1's one flow keeps about half the bottleneck whatever n",
            1 - _share(weakest) >= ABC_FAIR_SHARE_MIN,
            "client 1's share: "
            + ", ".join(f"{1 - _share(r):.3f}" for r in abc)
            + f" (at least {ABC_FAIR_SHARE_MIN})",
        )
    )
    return out + _busy(figure, rows)


def _flow_share(row: Row) -> float:
    return row.client0_flows / (row.client0_flows + 1)


def _fig6_checks(rows: Sequence[Row]) -> list[Check]:
    figure = FIGURES["abc-fig6"]
    capacity = goodput_capacity_bps(figure)
    tail, abc = _by(rows, dp.Scheme.TAIL_DROP), _by(rows, dp.Scheme.ABC)
    overload = [r for r in tail if (r.client0_offered_bps or 0) >= SLICE_RATE_BPS]
    under = [r for r in tail if (r.client0_offered_bps or 0) < SLICE_RATE_BPS]
    most = max(overload, key=lambda r: r.client1_bps)
    out = [
        Check(
            "tail drop: client 1's TCP starves once client 0's CBR exceeds the bottleneck",
            most.client1_bps <= STARVED_MAX * capacity,
            f"client 1 at most {_mbps(most.client1_bps)} Mbit/s (at {_label(most)}; at most "
            f"{STARVED_MAX:.0%} of {_mbps(capacity)})",
        )
    ]
    least = min(under, key=lambda r: r.client1_bps / leftover_bps(r.client0_offered_bps or 0))
    left = leftover_bps(least.client0_offered_bps or 0)
    out.append(
        Check(
            "tail drop: below the bottleneck, client 1's TCP gets what client 0 leaves",
            all(r.client0_bps >= CBR_DELIVERED_MIN * (r.client0_offered_bps or 0) for r in under)
            and least.client1_bps >= LEFTOVER_MIN * left,
            f"client 1 at least {_mbps(least.client1_bps)} of {_mbps(left)} Mbit/s left (at "
            f"{_label(least)}; at least {LEFTOVER_MIN:.0%}), client 0 what it sends",
        )
    )
    heavy = [r for r in abc if (r.client0_offered_bps or 0) >= SLICE_RATE_BPS]
    weakest = min(heavy, key=lambda r: r.client1_bps)
    out.append(
        Check(
            "abc: client 1's TCP keeps a fair share against client 0's overload",
            weakest.client1_bps >= ABC_TCP_SHARE_MIN * capacity,
            f"client 1 at least {_mbps(weakest.client1_bps)} Mbit/s (at {_label(weakest)}; at "
            f"least {ABC_TCP_SHARE_MIN:.0%} of {_mbps(capacity)})",
        )
    )
    greediest = max(abc, key=lambda r: r.client0_bps)
    out.append(
        Check(
            "abc: client 0's CBR gets at most the paper's 32 Mbit/s, however much it sends",
            greediest.client0_bps <= PAPER_CBR_CAP_BPS,
            f"client 0 at most {_mbps(greediest.client0_bps)} Mbit/s (at {_label(greediest)})",
        )
    )
    return out + _busy(figure, rows)


_CHECKS = {"abc-fig4": _fig4_checks, "abc-fig5": _fig5_checks, "abc-fig6": _fig6_checks}


def summary(report: AbcReport) -> dict[str, Any]:
    """``summary.json``: settings, ``rows`` (our runs), ``paper`` (the paper's figures where its
    text gives them), ``checks``."""
    figure = report.figure
    abc = AbcConfig.with_paper_thresholds(SLICE_RATE_BPS, BURST_LIMIT_S)
    return {
        "experiment": figure.name,
        "title": figure.title,
        "slice_mbps": SLICE_RATE_BPS / MBPS,
        "burst_limit_ms": BURST_LIMIT_S * 1e3,
        "port_mbps": PORT_RATE_BPS / MBPS,
        "access_mbps": ACCESS_RATE_BPS / MBPS,
        "one_way_delay_ms": ONE_WAY_DELAY_S * 1e3,
        "rtt_ms": RTT_S * 1e3,
        "clients": list(CLIENTS),
        "abc": {
            "meter_memory_s": abc.meter_memory_s,
            "average_memory_s": abc.average_memory_s,
            "reference_rate_bps": abc.reference_rate_bps,
            "q_min_ms": abc.q_min_s * 1e3,
            "q_base_ms": abc.q_base_s * 1e3,
            "gamma_ms": abc.gamma_s * 1e3,
            "key": abc.key.value,
        },
        "goodput": "transport payload: 1448-byte UDP payloads and TCP segments (client 1: 1447)",
        "duration_s": report.duration_s,
        "warmup_s": report.warmup_s,
        "seed": report.seed,
        "rows": [asdict(r) for r in report.rows],
        "paper": [asdict(p) for p in PAPER[figure.name]],
        "checks": [asdict(c) for c in report.checks],
        "passed": report.passed,
    }


def write_report(report: AbcReport, out: Path) -> list[Path]:
    """``rows.csv``, ``summary.json`` and ``goodput.png`` into ``out`` (created)."""
    files = write_rows_and_summary(report.rows, summary(report), out)
    return [*files, _plot(report, out / "goodput.png")]


def _x(figure: AbcFigure, row: Row | PaperRow) -> float:
    if figure.sweeps_rate:
        assert row.client0_offered_bps is not None
        return row.client0_offered_bps / MBPS
    return row.client0_flows


def _plot(report: AbcReport, path: Path) -> Path:
    """Each client's goodput over the figure's x-axis, tail drop and ABC, the paper's beside."""
    figure = report.figure
    fig = Figure(figsize=(7, 3.8), dpi=120, layout="constrained")
    ax = fig.subplots()
    colors = ("#d62728", "#1f77b4")  # client 0, client 1
    for scheme, style in zip(SCHEMES, ("x--", "o-"), strict=True):
        rows = _by(report.rows, scheme)
        xs = [_x(figure, r) for r in rows]
        ax.plot(xs, [r.client0_bps / MBPS for r in rows], style, color=colors[0],
                label=f"client 0, {scheme}")  # fmt: skip
        ax.plot(xs, [r.client1_bps / MBPS for r in rows], style, color=colors[1],
                label=f"client 1, {scheme}")  # fmt: skip
    for scheme, marker in zip(SCHEMES, ("v", "s"), strict=True):
        for client, color in enumerate(colors):
            cells = [
                (_x(figure, p), getattr(p, f"client{client}_bps"))
                for p in PAPER[figure.name]
                if p.scheme == scheme.value and getattr(p, f"client{client}_bps") is not None
            ]
            if cells:
                label = f"paper (text), client {client}, {scheme}"
                ax.plot([x for x, _ in cells], [y / MBPS for _, y in cells], marker,
                        color=color, alpha=0.4, label=label)  # fmt: skip
    if not figure.sweeps_rate:
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(FLOWS), [str(n) for n in FLOWS])
    ax.set_xlabel(figure.x_label)
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Fig. {figure.number}: {figure.title.split(': ', 1)[1]}", fontsize=9)
    ax.legend(fontsize=6, ncol=2)
    fig.savefig(path)
    return path
