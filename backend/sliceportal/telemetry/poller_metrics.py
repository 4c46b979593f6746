"""A poller process's own figures for Prometheus (docs/telemetry.md "Prometheus"): the switches
it polls, how long each poll takes, what failed, and what its sink did, with prometheus-client's
process collectors; served on `poller_metrics_port` by prometheus-client's HTTP server.

Each `Poller` has a registry of its own (tests run several in one process); the switch label
is the switch's id, what the poller knows of it.
"""

from __future__ import annotations

import logging
import threading
from wsgiref.simple_server import WSGIServer

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    start_http_server,
)

logger = logging.getLogger(__name__)

POLL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Seconds: a poll of 4,096 slices on the emulator takes about 20 ms; a period is 1 s."""


class PollerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
            self.registry.register(collector)
        r = self.registry
        self.active = Gauge(
            "sliceportal_poller_active",
            "1 while this poller is a live member polling its share of the switches",
            registry=r,
        )
        self.switches = Gauge(
            "sliceportal_poller_switches", "Switches this poller polls", registry=r
        )
        self.polls = Counter(
            "sliceportal_poller_polls",
            "Polls that read the switch (one group of its slices each)",
            ["switch_id"],
            registry=r,
        )
        self.poll_duration = Histogram(
            "sliceportal_poller_poll_duration_seconds",
            "Time of a poll: the P4Runtime reads and the differencing, failed polls included",
            ["switch_id"],
            buckets=POLL_BUCKETS,
            registry=r,
        )
        self.poll_errors = Counter(
            "sliceportal_poller_poll_errors",
            "Polls that failed (transient: the connection is dropped and made again)",
            ["switch_id", "kind"],
            registry=r,
        )
        self.lease_round_duration = Histogram(
            "sliceportal_poller_lease_round_duration_seconds",
            "Time of a lease round (membership, leases, the inventory when re-read): leases "
            "lapse once rounds take 0.45 of a lease",
            buckets=POLL_BUCKETS,
            registry=r,
        )
        self.samples = Counter(
            "sliceportal_poller_samples",
            "Samples the sink handled (published, stored, checked)",
            registry=r,
        )
        self.batches_dropped = Counter(
            "sliceportal_poller_batches_dropped",
            "Batches the sink dropped because it was behind",
            registry=r,
        )
        self.store_errors = Counter(
            "sliceportal_poller_store_errors",
            "Batches whose samples PostgreSQL did not store",
            registry=r,
        )
        self.sink_duration = Histogram(
            "sliceportal_poller_sink_duration_seconds",
            "Time of the sink on one batch: metrics, publish, store, alert rules",
            buckets=POLL_BUCKETS,
            registry=r,
        )

    def forget_switch(self, switch_id: int) -> None:
        """A switch no longer polled leaves no stale series behind."""
        label = str(switch_id)
        for metric in (self.polls, self.poll_duration):
            try:
                metric.remove(label)
            except KeyError:
                pass
        for kind in ("transient", "error"):
            try:
                self.poll_errors.remove(label, kind)
            except KeyError:
                pass

    def serve(self, host: str, port: int) -> tuple[WSGIServer, threading.Thread]:
        """prometheus-client's HTTP server on ``host:port`` (0: any free port), in a thread."""
        server, thread = start_http_server(port, addr=host, registry=self.registry)
        logger.info(
            "poller metrics on http://%s:%d/metrics", server.server_address[0], server.server_port
        )
        return server, thread
