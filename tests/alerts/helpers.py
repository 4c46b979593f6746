"""Alerts made on purpose: an engine observing crafted seconds of one slice."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.alerts.engine import AlertEngine, Timing
from sliceportal.alerts.events import RecordedEvent
from sliceportal.domain import dataplane as dp
from sliceportal.domain.sla import Rule, Targets
from sliceportal.domain.telemetry import COLUMNS, BatchMetrics, batch_metrics
from utils import factories

TARGETS = {
    Rule.DELAY: Targets(max_delay_s=0.005),
    Rule.THROUGHPUT: Targets(min_throughput_bps=20e6),
    Rule.LOSS: Targets(max_loss_ratio=0.01),
    Rule.MARKS: Targets(max_mark_ratio=0.05),
    Rule.DELAY_BOUND: Targets(delay_bound_s=0.002),
}
"""One rule at a time: a breach of one rule often breaks another (drops lower throughput)."""
HIST_TARGET = dp.histogram_target(0.02)
"""The crafted slice's histograms: edges 1.25, 2.5, 5, 10, 15, 17.5 and 20 ms."""


def second(
    *, forwarded: int = 2000, dropped: int = 0, marked: int = 0, rq_bucket: int = 0, tail: int = 0
) -> BatchMetrics:
    """The metrics of one second of one slice: `forwarded` packets of 1,250 bytes (10 Mbit/s per
    1,000), all in real-queue bucket `rq_bucket` but one in `tail`."""
    values = dict.fromkeys(COLUMNS, 0)
    values |= {"forwarded_packets": forwarded, "forwarded_bytes": forwarded * 1250}
    values |= {"vq_dropped_packets": dropped, "vq_dropped_bytes": dropped * 1250}
    values |= {"ecn_marked_packets": marked, "vq_hist_0": forwarded}
    values[f"rq_hist_{rq_bucket}"] += forwarded - 1
    values[f"rq_hist_{tail or rq_bucket}"] += 1
    return batch_metrics(np.array([list(values.values())]), np.ones(1), np.array([HIST_TARGET]))


BREACHES = {
    Rule.DELAY: second(rq_bucket=3),  # p99 in 5-10 ms, the SLA allows 5 ms
    Rule.THROUGHPUT: second(forwarded=1500, dropped=1000),  # 15 of 25 Mbit/s offered
    Rule.LOSS: second(dropped=100),  # 4.8%
    Rule.MARKS: second(marked=200),  # 10%
    Rule.DELAY_BOUND: second(tail=3),  # one packet of 2,000 at 5-10 ms, the bound is 2 ms
}
CLEAR = second()


@pytest.fixture
def slice_id(client: TestClient, operator_headers: dict[str, str]) -> int:
    link = factories.create_link(client, operator_headers)
    created = factories.create(
        client, "slices", operator_headers, factories.slice_body([link["id"]])
    )
    value: int = created["id"]
    return value


class Engine:
    """An engine with its published events, observing one slice on switch 1."""

    def __init__(self, db: sessionmaker[Session], slice_id: int) -> None:
        self.events: list[RecordedEvent] = []
        self.engine = AlertEngine(db, Timing(for_s=2.0, clear_for_s=2.0), [], self.events.extend)
        self.slice_id = slice_id
        self.t = dt.datetime.now(dt.UTC)

    def observe(self, metrics: BatchMetrics, targets: Targets) -> None:
        self.t += dt.timedelta(seconds=1)
        self.engine.observe(1, self.t, [(self.slice_id, targets)], metrics)

    def kinds(self) -> list[str]:
        return [f"{e.message['event']}:{e.message['alert']['rule']}" for e in self.events]
