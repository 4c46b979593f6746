"""A poller's own `/metrics` (`poller_metrics_port`): switches polled, the poll duration
histogram, errors and the sink's figures, served over HTTP while it runs."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from sliceportal.core.config import Settings
from sliceportal.emulator.server import EmulatorServer
from sliceportal.telemetry.poller import Poller
from telemetry.helpers import Cells, SwitchCounters, create_emulator_slices, dp_sid_of


def values(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5)
    assert response.status_code == 200
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def eventually(check: Callable[[], Any], timeout_s: float = 20) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def test_the_poller_serves_its_own_figures(
    settings: Settings,
    client: TestClient,
    operator_headers: dict[str, str],
    emulator: EmulatorServer,
    counters: SwitchCounters,
) -> None:
    (slice_,) = create_emulator_slices(client, operator_headers, emulator.address)
    switch_id = str(slice_["dp_sids"][0]["switch_id"])
    counters.set(dp_sid_of(slice_), Cells(forwarded=(10, 12_500)))
    # a switch that never answers, with a slice to read: its polls fail
    (lost,) = create_emulator_slices(client, operator_headers, "127.0.0.1:9")
    dead = {"id": lost["dp_sids"][0]["switch_id"]}
    tuned = settings.model_copy(
        update={
            "poller_metrics_port": 0,
            # a lease (1.5 periods) must outlast a lease round over every switch of the run's
            # database (other tests' too), on a loaded machine: 0.2 s let them lapse in the
            # suite, and so did 0.5 s once it held 312 switches (a round of 0.9 s)
            "telemetry_poll_interval_s": 2.0,
            "telemetry_refresh_s": 0.5,
            "p4rt_connect_timeout_s": 0.5,
        }
    )
    poller = Poller(tuned)
    stop = threading.Event()
    thread = threading.Thread(target=poller.run, args=(stop,), daemon=True)
    thread.start()
    try:
        assert poller.active.wait(20)
        port = poller.metrics_port
        assert port is not None

        def polled() -> dict[tuple[str, tuple[tuple[str, str], ...]], float] | None:
            found = values(port)
            polls = found.get(("sliceportal_poller_polls_total", (("switch_id", switch_id),)))
            errors = found.get(
                (
                    "sliceportal_poller_poll_errors_total",
                    (("kind", "transient"), ("switch_id", str(dead["id"]))),
                )
            )
            return found if polls and polls >= 3 and errors else None

        found = eventually(polled, timeout_s=40)
        assert found, values(port)
        assert found[("sliceportal_poller_active", ())] == 1
        assert found[("sliceportal_poller_switches", ())] >= 2
        count = found[
            ("sliceportal_poller_poll_duration_seconds_count", (("switch_id", switch_id),))
        ]
        assert count >= found[("sliceportal_poller_polls_total", (("switch_id", switch_id),))]
        assert found[("sliceportal_poller_samples_total", ())] >= 1
        assert found[("process_cpu_seconds_total", ())] > 0
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()
    with httpx.Client() as probe:  # the server went with the poller
        try:
            probe.get(f"http://127.0.0.1:{port}/metrics", timeout=1)
            served_after_stop = True
        except httpx.TransportError:
            served_after_stop = False
    assert not served_after_stop


def test_a_lease_round_slower_than_its_half_period_is_timed_and_warned_of(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Rounds back to back of 0.45 of a lease let every lease lapse: a round over its half
    period (0.1 s of a 0.2 s period) is warned of, with the duration at which they lapse."""
    poller = Poller(settings.model_copy(update={"telemetry_poll_interval_s": 0.2}))
    with caplog.at_level(logging.WARNING, logger="sliceportal.telemetry.poller"):
        poller._round_took(0.05)
        assert not caplog.records
        poller._round_took(0.12)
        poller._round_took(0.12)  # the first is warned of, then every hundredth
    (warning,) = caplog.records
    assert "lease round took 0.120 s, over its 0.100 s" in warning.getMessage()
    assert "leases lapse once rounds take 0.135 s" in warning.getMessage()
    assert poller.slow_rounds == 2
    timed = poller.metrics.registry.get_sample_value(
        "sliceportal_poller_lease_round_duration_seconds_count"
    )
    assert timed == 3


def test_a_metrics_port_in_use_is_logged_and_the_poller_polls_without_it(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        tuned = settings.model_copy(
            update={"poller_metrics_port": port, "telemetry_poll_interval_s": 0.5}
        )
        poller = Poller(tuned)
        stop = threading.Event()
        thread = threading.Thread(target=poller.run, args=(stop,), daemon=True)
        with caplog.at_level(logging.ERROR, logger="sliceportal.telemetry.poller"):
            thread.start()
            try:
                assert poller.active.wait(20)  # it polls its share all the same
            finally:
                stop.set()
                thread.join(timeout=30)
    assert not thread.is_alive()
    assert poller.metrics_port is None
    (error,) = caplog.records
    assert f"poller metrics not served on 127.0.0.1:{port}" in error.getMessage()
