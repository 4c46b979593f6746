"""Capacity planning reports from what is stored: the network as the analytics sees it, the
scope the report covers, and what telemetry measured over a window.

Everything is read in one transaction (a consistent snapshot) with a handful of queries; the
report itself is the pure `sliceportal.domain.reports.build_report`.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Literal

import numpy as np
import sqlalchemy as sa
from sqlalchemy.orm import Session

from sliceportal.db.models import Cable, Link, Slice, SliceLink, Switch, TelemetrySample
from sliceportal.db.samples import HISTOGRAMS, PAIR_COLUMNS, hist_sum
from sliceportal.domain.reports import (
    MeasuredSlice,
    Network,
    NetworkLink,
    NetworkSlice,
    Report,
    build_report,
)
from sliceportal.domain.reports.build import MAX_GROWTH_PERCENT
from sliceportal.domain.sla import MAX_BUCKET
from sliceportal.domain.spec import MAX_REPORT_WINDOW_S
from sliceportal.domain.telemetry import BatchMetrics, Floats, Ints, batch_metrics
from sliceportal.services.errors import InvalidFieldError, NotFoundError

ScopeKind = Literal["network", "switch", "link"]

MAX_HORIZON_MONTHS = 120


@dataclass(frozen=True)
class ReportRequest:
    """What a caller (API, CLI, the scheduled task) asks for; validated by :func:`check`."""

    scope: ScopeKind
    scope_id: int | None = None
    growth_percent_per_month: float = 5.0
    horizon_months: int = 24
    telemetry_window_s: float = 3600.0
    """0 leaves telemetry out."""

    def check(self) -> None:
        if self.scope != "network" and self.scope_id is None:
            raise InvalidFieldError(f"a {self.scope} report needs its id", field="scope_id")
        self.check_parameters()

    def check_parameters(self) -> None:
        """The growth, horizon and window, before any lookup (the CLI checks these first)."""
        if not 0 <= self.growth_percent_per_month <= MAX_GROWTH_PERCENT:
            raise InvalidFieldError(
                f"must be from 0 to {MAX_GROWTH_PERCENT:g}", field="growth_percent"
            )
        if not 1 <= self.horizon_months <= MAX_HORIZON_MONTHS:
            raise InvalidFieldError(
                f"must be from 1 to {MAX_HORIZON_MONTHS}", field="horizon_months"
            )
        if not 0 <= self.telemetry_window_s <= MAX_REPORT_WINDOW_S:
            raise InvalidFieldError(
                f"must be from 0 to {MAX_REPORT_WINDOW_S:g} seconds", field="telemetry_window_s"
            )


def load_network(session: Session) -> Network:
    """Every link and slice, as the analytics sees them (three queries)."""
    link_rows = session.execute(
        sa.select(Link, Switch.name, sa.func.coalesce(Cable.propagation_s, 0.0))
        .join(Switch, Switch.id == Link.switch_id)
        .outerjoin(Cable, Cable.id == Link.cable_id)
        .order_by(Link.id)
    ).all()
    names = [f"{switch_name}/{link.name}" for link, switch_name, _ in link_rows]
    taken = Counter(names)
    links = tuple(
        NetworkLink(
            id=link.id,
            # Switch and link names may contain "/": where two read the same, the id tells.
            name=name if taken[name] == 1 else f"{name} (link {link.id})",
            switch=switch_name,
            capacity_bps=link.capacity_bps,
            model=link.model,
            queue_count=link.queue_count,
            mtu_bytes=link.mtu_bytes,
            frame_overhead_bytes=link.frame_overhead_bytes,
            propagation_s=propagation_s,
        )
        for (link, switch_name, propagation_s), name in zip(link_rows, names, strict=True)
    )
    crossed: dict[int, list[int]] = defaultdict(list)
    in_path_order = (SliceLink.position.asc().nulls_last(), SliceLink.link_id)
    for slice_id, link_id in session.execute(
        sa.select(SliceLink.slice_id, SliceLink.link_id).order_by(*in_path_order)
    ):
        crossed[slice_id].append(link_id)
    slices = tuple(
        NetworkSlice(
            id=row.id,
            name=row.name,
            rate_bps=row.rate_bps,
            burst_limit_s=row.burst_limit_s,
            delay_target_s=row.delay_target_s,
            e2e_delay_target_s=row.e2e_delay_target_s,
            priority=row.priority,
            max_packet_bytes=row.max_packet_bytes,
            link_ids=tuple(crossed[row.id]),
        )
        for row in session.scalars(sa.select(Slice).order_by(Slice.id))
    )
    return Network(links=links, slices=slices)


def _scope(session: Session, request: ReportRequest, network: Network) -> tuple[str, set[int]]:
    """The scope's name and the links it covers; 404 when the switch or link is gone."""
    if request.scope == "network":
        return "network", {link.id for link in network.links}
    if request.scope == "switch":
        name = session.scalar(sa.select(Switch.name).where(Switch.id == request.scope_id))
        if name is None:
            raise NotFoundError(f"switch {request.scope_id} does not exist")
        return name, {link.id for link in network.links if link.switch == name}
    for link in network.links:
        if link.id == request.scope_id:
            return link.name, {link.id}
    raise NotFoundError(f"link {request.scope_id} does not exist")


_samples = TelemetrySample.__table__


def _largest(values: list[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return max(found) if found else None


def _summed(
    counts: Ints, intervals: Floats, targets: Ints, groups: list[list[int]], *, longest: bool
) -> BatchMetrics:
    """The metrics of each group of rows, its counts summed; its interval the sum of the
    rows' (one hop's consecutive rows) or the ``longest`` (the same window on several hops);
    its histogram target the first row's (the caller groups rows of one target, or uses only
    what does not depend on it)."""
    return batch_metrics(
        np.array([counts[g].sum(axis=0) for g in groups], dtype=np.int64).reshape(len(groups), -1),
        np.array([intervals[g].max() if longest else intervals[g].sum() for g in groups]),
        np.array([targets[g[0]] for g in groups], dtype=np.int64),
    )


def measured_slices(
    session: Session, slice_ids: set[int], start: dt.datetime, end: dt.datetime
) -> dict[int, MeasuredSlice]:
    """What the switches counted for each slice with ``start < t <= end``, in one query.

    Counts are summed per slice, switch and histogram target; the rate of a slice is the
    largest over the switches it crosses (each sees the slice's whole traffic, minus what
    earlier hops dropped), and its delays pool the real-queue histograms of its hops counted
    on the same target, so the maximum is the largest delay of any hop (compared with the
    largest per-hop bound).
    """
    if not slice_ids:
        return {}
    throughput = _samples.c.forwarded_bytes * 8.0 / _samples.c.interval_s
    query = (
        sa.select(
            _samples.c.slice_id,
            _samples.c.switch_id,
            _samples.c.hist_target,
            sa.func.sum(_samples.c.interval_s),
            sa.func.max(throughput),
            *(sa.cast(sa.func.sum(_samples.c[name]), sa.BigInteger) for name in PAIR_COLUMNS),
            *(hist_sum(name) for name in HISTOGRAMS),
        )
        .where(
            _samples.c.slice_id.in_(slice_ids),
            _samples.c.t > start,
            _samples.c.t <= end,
            _samples.c.interval_s > 0,
        )
        .group_by(_samples.c.slice_id, _samples.c.switch_id, _samples.c.hist_target)
    )
    rows = session.execute(query).all()
    if not rows:
        return {}
    intervals = np.array([row[3] for row in rows], dtype=np.float64)
    counts = np.array([[*row[5:-2], *row[-2], *row[-1]] for row in rows], dtype=np.int64)
    targets = np.array([row[2] for row in rows], dtype=np.int64)
    everything: dict[int, list[int]] = defaultdict(list)
    hops: dict[tuple[int, int], list[int]] = defaultdict(list)
    pools: dict[tuple[int, int], list[int]] = defaultdict(list)
    for index, (slice_id, switch_id, hist_target, *_) in enumerate(rows):
        everything[slice_id].append(index)
        hops[(slice_id, switch_id)].append(index)
        pools[(slice_id, hist_target)].append(index)
    hops_of: dict[int, list[int]] = defaultdict(list)
    for k, (slice_id, _) in enumerate(hops):
        hops_of[slice_id].append(k)
    pools_of: dict[int, list[int]] = defaultdict(list)
    for k, (slice_id, _) in enumerate(pools):
        pools_of[slice_id].append(k)
    # Rates per hop, whatever the target; delays per target pooled over the hops; the loss
    # over everything the slice sent (neither depends on the edges).
    per_hop = _summed(counts, intervals, targets, list(hops.values()), longest=False)
    pooled = _summed(counts, intervals, targets, list(pools.values()), longest=True)
    whole = _summed(counts, intervals, targets, list(everything.values()), longest=True)
    # p50, p95, p99 and the largest delay of each pool, on its own edges, as the telemetry API
    # reports them. Histograms on different edges cannot be pooled, so a slice with several
    # (its target changed in the window, or legacy rows) gets the largest of each figure: a
    # percentile below each pool's edge is below the largest of them for all the packets
    # together, and the largest delay is the largest any pool proves.
    figures = [pooled.delays_s(pooled.rq_buckets[:, k]) for k in range(MAX_BUCKET)]
    figures.append(pooled.delays_s(pooled.rq_buckets[:, MAX_BUCKET], lower=True))
    window_s = (end - start).total_seconds()
    found: dict[int, MeasuredSlice] = {}
    for n, (slice_id, own) in enumerate(everything.items()):
        p50, p95, p99, top = (
            _largest([column[k] for k in pools_of[slice_id]]) for column in figures
        )
        found[slice_id] = MeasuredSlice(
            window_s=window_s,
            peak_rate_bps=max(float(rows[i][4]) for i in own),
            mean_rate_bps=float(per_hop.throughput_bps[hops_of[slice_id]].max()),
            delay_p50_s=p50,
            delay_p95_s=p95,
            delay_p99_s=p99,
            delay_max_s=top,
            loss_ratio=float(whole.drop_ratio[n]) if whole.offered_bps[n] > 0 else None,
        )
    return found


def network_report(
    session: Session, request: ReportRequest, *, now: dt.datetime | None = None
) -> Report:
    """The report ``request`` asks for, from one consistent snapshot of the database."""
    request.check()
    now = now or dt.datetime.now(dt.UTC)
    network = load_network(session)
    scope_name, link_ids = _scope(session, request, network)
    measured = None
    window = request.telemetry_window_s or None
    if window is not None:
        in_scope = {s.id for s in network.slices if link_ids.intersection(s.link_ids)}
        measured = measured_slices(session, in_scope, now - dt.timedelta(seconds=window), now)
    return build_report(
        network,
        request.scope,
        request.scope_id,
        scope_name,
        link_ids,
        generated_at=now,
        growth_percent_per_month=request.growth_percent_per_month,
        horizon_months=request.horizon_months,
        measured=measured,
        telemetry_window_s=window,
    )
