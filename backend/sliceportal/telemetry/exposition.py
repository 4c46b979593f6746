"""The API process's Prometheus metrics (`GET /metrics`, docs/telemetry.md "Prometheus"): the
fleet's capacities and reservations as gauges, each slice's counts as counters, and the
process's own figures from prometheus-client's default collectors.

The counters are running totals kept in this process, advanced at each scrape by the stored
samples it has not counted yet (`db.samples.newer_sums`): the rows the slice page's history
reads, summed as its buckets are. They count from the process's start, as any Prometheus
counter does; a slice deleted keeps adding to its switch's sums, so those never go down.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.core.config import Settings
from sliceportal.db import samples as store
from sliceportal.db.queries import fleet
from sliceportal.domain import p4constants as c
from sliceportal.domain.telemetry import COLUMNS, LEGACY_HIST_TARGET, histogram_edges_s

Counts = npt.NDArray[np.int64]

DROP_REASONS = (("vq", "vq_dropped"), ("rq", "real_dropped"), ("aqm", "aqm_dropped"))
"""`reason` label of the drop counters: the burst limit of the virtual queue, the real queue,
the slice's queue management (CoDel, ABC); the sample's `vq_`, `rq_` and `aqm_drop_ratio`."""
_AT = {name: i for i, name in enumerate(COLUMNS)}
SLICE_LABELS = ("slice_id", "slice", "switch")
HISTOGRAM_LABELS = (*SLICE_LABELS, "delay_target_seconds")
_HISTOGRAMS = (
    ("vq", _AT["vq_hist_0"], "virtual queue (the slice's own, at its reserved rate)"),
    ("rq", _AT["rq_hist_0"], "real queue (the delay the packets experienced)"),
)
SWITCH_LABELS = ("switch",)


@dataclass
class SliceTotals:
    """Per slice, switch and histogram target, the counts of the samples counted so far; per
    (slice, switch) the time of the newest sample counted; per switch the counts of slices no
    longer stored."""

    counts: dict[tuple[int, int, int], Counts] = field(default_factory=dict)
    since: dict[tuple[int, int], dt.datetime] = field(default_factory=dict)
    retired: dict[int, Counts] = field(default_factory=dict)

    def advance(self, records: Iterable[store.SampleRecord]) -> None:
        for record in records:
            key = (record.slice_id, record.switch_id, record.hist_target)
            counts = np.asarray(record.counts, dtype=np.int64)
            if key in self.counts:
                self.counts[key] += counts
            else:
                self.counts[key] = counts
            pair = key[:2]
            if pair not in self.since or record.t > self.since[pair]:
                self.since[pair] = record.t

    def forget_before(self, floor: dt.datetime) -> None:
        """Marks older than the floor say nothing the floor does not."""
        self.since = {pair: t for pair, t in self.since.items() if t > floor}

    def retire(self, stored: set[int]) -> None:
        """Move the counts of slices no longer stored into their switches' sums."""
        for key in [key for key in self.counts if key[0] not in stored]:
            counts = self.counts.pop(key)
            switch_id = key[1]
            if switch_id in self.retired:
                self.retired[switch_id] += counts
            else:
                self.retired[switch_id] = counts.copy()

    def per_switch(self) -> dict[int, Counts]:
        sums = {switch_id: counts.copy() for switch_id, counts in self.retired.items()}
        for (_, switch_id, _), counts in self.counts.items():
            if switch_id in sums:
                sums[switch_id] += counts
            else:
                sums[switch_id] = counts.copy()
        return sums

    def per_slice(self) -> dict[tuple[int, int], Counts]:
        """Per (slice, switch), summed over histogram targets."""
        sums: dict[tuple[int, int], Counts] = {}
        for (slice_id, switch_id, _), counts in self.counts.items():
            pair = (slice_id, switch_id)
            if pair in sums:
                sums[pair] += counts
            else:
                sums[pair] = counts.copy()
        return sums


def _counter_families(prefix: str, labels: tuple[str, ...]) -> dict[str, CounterMetricFamily]:
    what = "per slice and switch" if prefix == "slice" else "per switch, all its slices"
    return {
        "forwarded_packets": CounterMetricFamily(
            f"sliceportal_{prefix}_forwarded_packets", f"Packets forwarded, {what}", labels=labels
        ),
        "forwarded_bytes": CounterMetricFamily(
            f"sliceportal_{prefix}_forwarded_bytes", f"Bytes forwarded, {what}", labels=labels
        ),
        "dropped_packets": CounterMetricFamily(
            f"sliceportal_{prefix}_dropped_packets",
            f"Packets dropped by reason (vq: burst limit, rq: real queue, aqm), {what}",
            labels=(*labels, "reason"),
        ),
        "dropped_bytes": CounterMetricFamily(
            f"sliceportal_{prefix}_dropped_bytes",
            f"Bytes dropped by reason (vq: burst limit, rq: real queue, aqm), {what}",
            labels=(*labels, "reason"),
        ),
        "ecn_marked_packets": CounterMetricFamily(
            f"sliceportal_{prefix}_ecn_marked_packets",
            f"Packets forwarded ECN-marked (ECN step or CoDel), {what}",
            labels=labels,
        ),
        "ecn_marked_bytes": CounterMetricFamily(
            f"sliceportal_{prefix}_ecn_marked_bytes",
            f"Bytes forwarded ECN-marked (ECN step or CoDel), {what}",
            labels=labels,
        ),
    }


def _add_counts(
    families: dict[str, CounterMetricFamily], labels: list[str], counts: Counts
) -> None:
    for name in ("forwarded_packets", "forwarded_bytes"):
        families[name].add_metric(labels, float(counts[_AT[name]]))
    for unit in ("packets", "bytes"):
        for reason, column in DROP_REASONS:
            families[f"dropped_{unit}"].add_metric(
                [*labels, reason], float(counts[_AT[f"{column}_{unit}"]])
            )
        families[f"ecn_marked_{unit}"].add_metric(labels, float(counts[_AT[f"ecn_marked_{unit}"]]))


class FleetCollector(Collector):
    """Reads the database at each scrape (one short session); serialised, so two scrapes at
    once never count a sample twice."""

    def __init__(self, sessions: sessionmaker[Session], settings: Settings) -> None:
        self.sessions = sessions
        self.max_slices = settings.metrics_max_slices
        self.lookback = dt.timedelta(seconds=settings.metrics_lookback_s)
        self.totals = SliceTotals()
        self.lock = threading.Lock()

    def collect(self) -> Iterator[Metric]:
        with self.lock, self.sessions() as session:
            now = dt.datetime.now(dt.UTC)
            links = fleet.link_loads(session)
            switches = fleet.switch_rows(session)
            floor = now - self.lookback
            self.totals.forget_before(floor)
            self.totals.advance(store.newer_sums(session, self.totals.since, floor))
            counted = {slice_id for slice_id, _, _ in self.totals.counts}
            names = {row.slice_id: row.name for row in fleet.slice_names(session, counted)}
            self.totals.retire(set(names))
            per_slice = self.totals.per_slice()
            histograms = {key: counts.copy() for key, counts in self.totals.counts.items()}
            per_switch = self.totals.per_switch()
        yield from _link_gauges(links)
        yield from _switch_gauges(links, switches)
        switch_name = {row.switch_id: row.switch for row in switches}
        sums = _counter_families("switch", SWITCH_LABELS)
        for switch_id, counts in sorted(per_switch.items()):
            _add_counts(sums, [switch_name.get(switch_id, str(switch_id))], counts)
        yield from sums.values()
        exported = {slice_id for slice_id, _ in per_slice}
        over = len(exported) > self.max_slices
        omitted = GaugeMetricFamily(
            "sliceportal_metrics_slices_omitted",
            "Slices with telemetry left out of the per-slice series by the cardinality guard "
            "(SLICEPORTAL_METRICS_MAX_SLICES): all of them once there are more than the guard",
        )
        omitted.add_metric([], float(len(exported) if over else 0))
        yield omitted
        if over:
            return
        families = _counter_families("slice", SLICE_LABELS)
        for (slice_id, switch_id), counts in sorted(per_slice.items()):
            labels = [
                str(slice_id),
                names.get(slice_id, ""),
                switch_name.get(switch_id, str(switch_id)),
            ]
            _add_counts(families, labels, counts)
        yield from families.values()
        yield from _delay_histograms(histograms, names, switch_name)


def _number(value: float) -> str:
    """A label value for a number, as Python writes it (Prometheus parses any float)."""
    return repr(float(value))


def _le(edges: list[float]) -> list[str]:
    return [_number(edge) for edge in edges] + ["+Inf"]


def _delay_histograms(
    totals: dict[tuple[int, int, int], Counts],
    names: dict[int, str],
    switch_name: dict[int, str],
) -> Iterator[Metric]:
    """The slice's two delay histograms on its own edges (docs/telemetry.md): bucket i counts
    the packets with a delay in [edge i-1, edge i), so the cumulative count up to edge i is the
    packets *below* it, exported as ``le`` = edge i (Prometheus means "at most": the two differ
    by the delays exactly on an edge, one vq unit, 1/65,536 ns, apart); the top bucket (at or
    above the target) is ``+Inf``. Edges derive from the target, so a slice's histograms are
    one series per target it had (label ``delay_target_seconds``, ``legacy`` for the rows of
    the former global edges). No ``_sum`` (the switch does not add delays up), hence no
    ``_count`` either (prometheus-client writes both or neither): the ``+Inf`` bucket is the
    count."""
    targets = sorted({target for _, _, target in totals})
    edges = dict(
        zip(targets, histogram_edges_s(np.array(targets, dtype=np.int64)).tolist(), strict=True)
    )
    families = [
        HistogramMetricFamily(
            f"sliceportal_slice_{queue}_delay_seconds",
            f"Delay in the {what}, on the slice's histogram edges",
            labels=HISTOGRAM_LABELS,
        )
        for queue, _, what in _HISTOGRAMS
    ]
    for (slice_id, switch_id, target), counts in sorted(totals.items()):
        top = "legacy" if target == LEGACY_HIST_TARGET else _number(edges[target][-1])
        labels = [
            str(slice_id),
            names.get(slice_id, ""),
            switch_name.get(switch_id, str(switch_id)),
            top,
        ]
        le = _le(edges[target])
        for family, (_, start, _) in zip(families, _HISTOGRAMS, strict=True):
            cumulative = np.cumsum(counts[start : start + c.HIST_BUCKETS]).tolist()
            family.add_metric(labels, list(zip(le, map(float, cumulative), strict=True)), None)
    return iter(families)


def _link_gauges(links: list[fleet.LinkLoadRow]) -> Iterator[Metric]:
    labels = ("switch", "link", "link_id")
    capacity = GaugeMetricFamily(
        "sliceportal_link_capacity_bits_per_second", "The link's capacity", labels=labels
    )
    reserved = GaugeMetricFamily(
        "sliceportal_link_reserved_bits_per_second",
        "Sum of the rates of the slices stored on the link",
        labels=labels,
    )
    headroom = GaugeMetricFamily(
        "sliceportal_link_headroom_bits_per_second",
        "Capacity minus the reserved rates (the rate left to new slices before their delay "
        "bounds are checked; not the capacity report's per-slice headroom)",
        labels=labels,
    )
    slices = GaugeMetricFamily(
        "sliceportal_link_slices", "Slices stored on the link", labels=labels
    )
    for row in links:
        values = [row.switch, row.link, str(row.link_id)]
        capacity.add_metric(values, row.capacity_bps)
        reserved.add_metric(values, row.reserved_bps)
        headroom.add_metric(values, row.capacity_bps - row.reserved_bps)
        slices.add_metric(values, float(row.slices))
    return iter((capacity, reserved, headroom, slices))


def _switch_gauges(
    links: list[fleet.LinkLoadRow], switches: list[fleet.SwitchRow]
) -> Iterator[Metric]:
    capacity = GaugeMetricFamily(
        "sliceportal_switch_capacity_bits_per_second",
        "Sum of the capacities of the switch's links",
        labels=SWITCH_LABELS,
    )
    reserved = GaugeMetricFamily(
        "sliceportal_switch_reserved_bits_per_second",
        "Sum over the switch's links of the rates reserved on them",
        labels=SWITCH_LABELS,
    )
    headroom = GaugeMetricFamily(
        "sliceportal_switch_headroom_bits_per_second",
        "Sum over the switch's links of capacity minus reserved rates",
        labels=SWITCH_LABELS,
    )
    slices = GaugeMetricFamily(
        "sliceportal_switch_slices",
        "Slices holding a DP_SID on the switch",
        labels=SWITCH_LABELS,
    )
    by_switch: dict[int, list[fleet.LinkLoadRow]] = {}
    for link in links:
        by_switch.setdefault(link.switch_id, []).append(link)
    for row in switches:
        mine = by_switch.get(row.switch_id, [])
        total = sum(link.capacity_bps for link in mine)
        taken = sum(link.reserved_bps for link in mine)
        capacity.add_metric([row.switch], total)
        reserved.add_metric([row.switch], taken)
        headroom.add_metric([row.switch], total - taken)
        slices.add_metric([row.switch], float(row.slices))
    return iter((capacity, reserved, headroom, slices))


def api_registry(sessions: sessionmaker[Session], settings: Settings) -> CollectorRegistry:
    """The API process's metrics: the fleet's, and prometheus-client's process, platform and
    garbage-collector collectors (those of its default registry)."""
    registry = CollectorRegistry(auto_describe=False)
    for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
        registry.register(collector)
    registry.register(FleetCollector(sessions, settings))
    return registry
