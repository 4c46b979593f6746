"""Networks for the report tests, and an oracle that checks a network from first principles.

The oracle uses only the public analytics (``slice_spec``, ``analyze``, ``path_bound``), never
the report package, so the report's searches are checked against a fresh analysis.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

from hypothesis import strategies as st
from pydantic import TypeAdapter

from sliceportal.domain import LinkAnalysis, Model, SliceSpec, analyze, slice_spec
from sliceportal.domain.admission.endtoend import Hop, PathBound, path_bound
from sliceportal.domain.reports import (
    Network,
    NetworkLink,
    NetworkSlice,
    Report,
    build_report,
)

MBPS = 1e6
WHEN = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.UTC)


def link(
    link_id: int,
    capacity_bps: float,
    model: Model = Model.HARKOUS,
    *,
    queues: int = 8,
    mtu: int = 1500,
    switch: str = "s1",
    frame_overhead: int = 0,
) -> NetworkLink:
    return NetworkLink(
        link_id, f"{switch}/eth{link_id}", switch, capacity_bps, model, queues, mtu, frame_overhead
    )


def paper_network(
    priorities: tuple[int, int, int],
    capacity_bps: float = 500 * MBPS,
    model: Model = Model.HARKOUS,
    *,
    dc_target_s: float = 0.020,
) -> Network:
    """The paper's three slices (section V-B) on one link."""
    return Network(
        (link(1, capacity_bps, model),),
        (
            NetworkSlice(1, "DC", 48 * MBPS, 0.020, dc_target_s, None, priorities[0], None, (1,)),
            NetworkSlice(2, "Enterprise", 12 * MBPS, 0.010, 0.010, None, priorities[1], None, (1,)),
            NetworkSlice(3, "Peering", 240 * MBPS, 0.030, 0.030, None, priorities[2], None, (1,)),
        ),
    )


def whole_report(network: Network, **options: Any) -> Report:
    """The network-scope report of every link, with quick defaults for tests."""
    options.setdefault("plan_time_budget_s", 0.5)
    options.setdefault("curve_points", 5)
    return build_report(
        network,
        "network",
        None,
        "test network",
        [item.id for item in network.links],
        generated_at=WHEN,
        **options,
    )


def validated(report: Report) -> dict[str, Any]:
    """The report's document, after checking that the API contract accepts it."""
    document = report.to_dict()
    TypeAdapter(Report).validate_python(document)
    return document


# --- the oracle ---------------------------------------------------------------------------


class Oracle:
    """A network checked from first principles, with optional what-ifs."""

    def __init__(
        self,
        network: Network,
        *,
        bursts: Mapping[int, float] | None = None,
        capacities: Mapping[int, float] | None = None,
    ) -> None:
        self.network = network
        self.bursts = dict(bursts or {})
        links = tuple(
            replace(item, capacity_bps=capacities[item.id])
            if capacities and item.id in capacities
            else item
            for item in network.links
        )
        self.links = {item.id: item for item in links}
        self.analyses = {item.id: self._analyze(item) for item in links}

    def specs(self, link_id: int) -> list[SliceSpec]:
        item = self.links[link_id]
        specs = []
        for s in self.network.slices:
            if link_id not in s.link_ids:
                continue
            spec = slice_spec(
                s.name,
                s.rate_bps,
                s.priority,
                burst_limit_s=s.burst_limit_s,
                delay_target_s=s.delay_target_s,
                max_packet_bytes=s.max_packet_bytes,
                mtu_bytes=item.mtu_bytes,
            )
            if s.id in self.bursts:
                spec = replace(spec, burst_bytes=self.bursts[s.id])
            specs.append(spec)
        return specs

    def _analyze(self, item: NetworkLink, model: Model | None = None) -> LinkAnalysis:
        return analyze(self.specs(item.id), item.capacity_bps, model or item.model, item.framing)

    def hop_bound(self, link_id: int, name: str, model: Model | None = None) -> float | None:
        analysis = (
            self.analyses[link_id] if model is None else self._analyze(self.links[link_id], model)
        )
        return next(b.worst_case_delay_s for b in analysis.slices if b.name == name)

    def path(self, s: NetworkSlice, model: Model | None = None) -> PathBound:
        """End-to-end bound, each link under its own model unless ``model`` is given."""
        hops = [Hop(i, self.links[i].name, self.hop_bound(i, s.name, model)) for i in s.link_ids]
        return path_bound(hops, s.e2e_delay_target_s)

    def link_admits(self, link_id: int) -> bool:
        return self.analyses[link_id].admissible

    def holds_on(self, link_ids: Collection[int]) -> bool:
        """Every per-hop constraint of ``link_ids`` and every end-to-end constraint of the
        slices crossing them holds."""
        if not all(self.link_admits(i) for i in link_ids):
            return False
        return all(
            self.path(s).meets_target
            for s in self.network.slices
            if not set(link_ids).isdisjoint(s.link_ids)
        )

    def holds(self) -> bool:
        return self.holds_on(list(self.links))


def with_slice(network: Network, slice_id: int, **changes: Any) -> Network:
    slices = tuple(replace(s, **changes) if s.id == slice_id else s for s in network.slices)
    return Network(network.links, slices)


def scaled(network: Network, factor: float) -> Network:
    """Every rate times ``factor`` (bursts follow: they are rate × burst limit)."""
    slices = tuple(replace(s, rate_bps=s.rate_bps * factor) for s in network.slices)
    return Network(network.links, slices)


def with_capacity(network: Network, link_id: int, capacity_bps: float) -> Network:
    links = tuple(
        replace(item, capacity_bps=capacity_bps) if item.id == link_id else item
        for item in network.links
    )
    return Network(links, network.slices)


# --- random networks ----------------------------------------------------------------------


@st.composite
def networks(draw: st.DrawFn, max_links: int = 3, max_slices: int = 6) -> Network:
    """Small networks with random paths, models, queues and (end-to-end) targets."""
    link_count = draw(st.integers(min_value=1, max_value=max_links))
    links = tuple(
        NetworkLink(
            i + 1,
            f"s{i % 2 + 1}/eth{i + 1}",
            f"s{i % 2 + 1}",
            draw(st.floats(min_value=1e7, max_value=1e9)),
            draw(st.sampled_from(list(Model))),
            draw(st.integers(min_value=2, max_value=8)),  # best effort keeps one queue
            draw(st.sampled_from([64, 1500, 9000])),
            draw(st.sampled_from([0, 24])),  # capacity as counted frames, or as the line rate
        )
        for i in range(link_count)
    )
    slice_count = draw(st.integers(min_value=1, max_value=max_slices))
    slices = []
    for j in range(slice_count):
        path = draw(st.permutations(range(1, link_count + 1)))
        hops = draw(st.integers(min_value=1, max_value=link_count))
        target = draw(st.floats(min_value=1e-4, max_value=0.1))
        slices.append(
            NetworkSlice(
                j + 1,
                f"slice{j + 1}",
                draw(st.floats(min_value=1e5, max_value=1e8)),
                draw(st.sampled_from([0.0, 0.001, 0.005, 0.02])),
                target,
                draw(st.one_of(st.none(), st.floats(min_value=1e-4, max_value=0.3))),
                draw(st.integers(min_value=1, max_value=7)),
                draw(st.one_of(st.none(), st.integers(min_value=64, max_value=9000))),
                tuple(path[:hops]),
            )
        )
    return Network(links, tuple(slices))


def big_network(slices: int = 1000, links: int = 20, *, seed: int = 7) -> Network:
    """A fabric of ``links`` 10 Gbit/s links (half of each model) and ``slices`` slices on
    random paths of 1 to 4 links, half of them with end-to-end targets."""
    rnd = random.Random(seed)
    fabric = tuple(
        link(i + 1, 10e9, Model.HARKOUS if i % 2 else Model.NETCALC, switch=f"s{i // 4 + 1}")
        for i in range(links)
    )
    declared = []
    for j in range(slices):
        hops = rnd.randint(1, 4)
        target = rnd.choice([0.002, 0.005, 0.01, 0.02])
        declared.append(
            NetworkSlice(
                j + 1,
                f"slice{j + 1}",
                rnd.uniform(5e6, 50e6),
                rnd.choice([0.0005, 0.001, 0.002]),
                target,
                target * hops * 0.8 if rnd.random() < 0.5 else None,
                rnd.randint(1, 7),
                None,
                tuple(rnd.sample(range(1, links + 1), hops)),
            )
        )
    return Network(fabric, tuple(declared))
