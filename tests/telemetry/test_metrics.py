"""`GET /metrics`: the fleet's gauges, each slice's counters from the stored samples (counted
once however often Prometheus scrapes), the cardinality guard, process metrics, and
authentication as for the API."""

from __future__ import annotations

import datetime as dt

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.core.config import Settings
from sliceportal.core.embedded import free_tcp_port
from sliceportal.db import samples as store
from sliceportal.db.session import create_db_engine, create_sessionmaker
from sliceportal.domain import dataplane as dp
from sliceportal.domain.telemetry import COLUMNS
from sliceportal.telemetry.exposition import FleetCollector
from utils import factories

MBIT = 1_000_000
TARGET = dp.histogram_target(0.01)

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(client: TestClient, headers: dict[str, str]) -> Samples:
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def counts(packets: int, *, vq_dropped: int = 0, marked: int = 0) -> tuple[int, ...]:
    values = dict.fromkeys(COLUMNS, 0)
    values |= {
        "forwarded_packets": packets,
        "forwarded_bytes": packets * 1000,
        "vq_dropped_packets": vq_dropped,
        "vq_dropped_bytes": vq_dropped * 1000,
        "ecn_marked_packets": marked,
        "ecn_marked_bytes": marked * 1000,
        "vq_hist_0": packets,
        "rq_hist_2": packets,
    }
    return tuple(values[name] for name in COLUMNS)


def store_samples(
    db: sessionmaker[Session], slice_id: int, switch_id: int, times: list[dt.datetime], **kw: int
) -> None:
    with db() as session:
        store.insert_samples(
            session,
            [store.SampleRecord(slice_id, switch_id, t, 1.0, counts(**kw), TARGET) for t in times],
        )
        session.commit()


def store_fleet_samples(
    db: sessionmaker[Session],
    fleet: dict[str, dict[str, object]],
    times: list[dt.datetime],
    **kw: int,
) -> None:
    """`store_samples` of the `fleet` fixture's slice on its switch."""
    slice_id, switch_id = fleet["slice"]["id"], fleet["switch"]["id"]
    assert isinstance(slice_id, int) and isinstance(switch_id, int)
    store_samples(db, slice_id, switch_id, times, **kw)


def labels_of(fleet: dict[str, dict[str, object]]) -> dict[str, str]:
    """The per-slice series' labels of the `fleet` fixture's slice."""
    slice_, switch = fleet["slice"], fleet["switch"]
    return {
        "slice_id": str(slice_["id"]),
        "slice": str(slice_["name"]),
        "switch": str(switch["name"]),
    }


@pytest.fixture
def fleet(client: TestClient, operator_headers: dict[str, str]) -> dict[str, object]:
    link = factories.create_link(client, operator_headers, capacity_bps=100 * MBIT)
    body = factories.slice_body([link["id"]], rate_bps=10 * MBIT, delay_target_s=0.01)
    created = factories.create(client, "slices", operator_headers, body)
    switch = client.get(f"/api/v1/switches/{link['switch_id']}", headers=operator_headers).json()
    return {"link": link, "slice": created, "switch": switch}


def test_gauges_and_counters_count_each_sample_once(
    client: TestClient,
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    fleet: dict[str, dict[str, object]],
) -> None:
    link, switch = fleet["link"], fleet["switch"]
    slice_labels = labels_of(fleet)
    link_labels = {"switch": str(switch["name"]), "link": str(link["name"])}
    link_labels["link_id"] = str(link["id"])
    now = dt.datetime.now(dt.UTC)
    store_fleet_samples(
        db,
        fleet,
        [now - dt.timedelta(seconds=s) for s in (3, 2, 1)],
        packets=100,
        vq_dropped=7,
        marked=5,
    )
    first = scrape(client, viewer_headers)
    assert value(first, "sliceportal_link_capacity_bits_per_second", **link_labels) == 100 * MBIT
    assert value(first, "sliceportal_link_reserved_bits_per_second", **link_labels) == 10 * MBIT
    assert value(first, "sliceportal_link_headroom_bits_per_second", **link_labels) == 90 * MBIT
    assert value(first, "sliceportal_link_slices", **link_labels) == 1
    assert value(first, "sliceportal_switch_slices", switch=str(switch["name"])) == 1
    assert value(first, "sliceportal_slice_forwarded_packets_total", **slice_labels) == 300
    assert value(first, "sliceportal_slice_forwarded_bytes_total", **slice_labels) == 300_000
    assert (
        value(first, "sliceportal_slice_dropped_packets_total", reason="vq", **slice_labels) == 21
    )
    assert value(first, "sliceportal_slice_dropped_packets_total", reason="rq", **slice_labels) == 0
    assert value(first, "sliceportal_slice_ecn_marked_packets_total", **slice_labels) == 15
    assert value(first, "sliceportal_metrics_slices_omitted") == 0
    assert value(first, "process_cpu_seconds_total") > 0  # the default collectors

    # A second scrape counts only what was stored since; the same rows never twice.
    again = scrape(client, viewer_headers)
    assert value(again, "sliceportal_slice_forwarded_packets_total", **slice_labels) == 300
    store_fleet_samples(db, fleet, [dt.datetime.now(dt.UTC)], packets=40)
    later = scrape(client, viewer_headers)
    assert value(later, "sliceportal_slice_forwarded_packets_total", **slice_labels) == 340
    assert (
        value(later, "sliceportal_slice_dropped_packets_total", reason="vq", **slice_labels) == 21
    )
    switch_sum = value(later, "sliceportal_switch_forwarded_packets_total", switch=switch["name"])
    assert switch_sum == 340  # a new switch: this slice alone


def test_the_cardinality_guard_keeps_only_the_per_switch_sums(
    settings: Settings,
    db: sessionmaker[Session],
    fleet: dict[str, dict[str, object]],
) -> None:
    slice_, switch = fleet["slice"], fleet["switch"]
    store_fleet_samples(db, fleet, [dt.datetime.now(dt.UTC)], packets=10)
    guarded = FleetCollector(db, settings.model_copy(update={"metrics_max_slices": 0}))
    families = {family.name: family for family in guarded.collect()}
    assert not any(name.startswith("sliceportal_slice_") for name in families)
    (omitted,) = families["sliceportal_metrics_slices_omitted"].samples
    assert omitted.value >= 1  # this test's slice, and any other with recent samples
    switch_sums = families["sliceportal_switch_forwarded_packets"].samples
    assert {"switch": switch["name"]} in [s.labels for s in switch_sums]
    roomy = FleetCollector(db, settings.model_copy(update={"metrics_max_slices": 10_000}))
    families = {family.name: family for family in roomy.collect()}
    assert families["sliceportal_metrics_slices_omitted"].samples[0].value == 0
    exported = families["sliceportal_slice_forwarded_packets"].samples
    assert str(slice_["id"]) in {s.labels["slice_id"] for s in exported}


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Bearer spt_nope"}],
    ids=["anonymous", "bad-token", "unknown-api-token"],
)
def test_scrapes_are_authenticated_as_the_api_is(
    client: TestClient, headers: dict[str, str]
) -> None:
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["status"] == 401
    assert "sliceportal_" not in response.text


def test_an_api_token_scrapes(client: TestClient, viewer_headers: dict[str, str]) -> None:
    token = client.post("/api/v1/tokens", json={"name": "prometheus"}, headers=viewer_headers)
    assert token.status_code == 201, token.text
    samples = scrape(client, {"Authorization": f"Bearer {token.json()['token']}"})
    assert value(samples, "sliceportal_metrics_slices_omitted") >= 0


def test_delay_histograms_are_prometheus_histograms_on_the_slice_edges(
    client: TestClient,
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    fleet: dict[str, dict[str, object]],
) -> None:
    slice_ = fleet["slice"]
    store_fleet_samples(
        db, fleet, [dt.datetime.now(dt.UTC) - dt.timedelta(seconds=s) for s in (2, 1)], packets=50
    )
    response = client.get("/metrics", headers=viewer_headers)
    families = {f.name: f for f in text_string_to_metric_families(response.text)}
    mine = str(slice_["id"])
    for queue, bucket in (("vq", 0), ("rq", 2)):
        family = families[f"sliceportal_slice_{queue}_delay_seconds"]
        assert family.type == "histogram"
        samples = [s for s in family.samples if s.labels["slice_id"] == mine]
        assert {s.name for s in samples} == {f"sliceportal_slice_{queue}_delay_seconds_bucket"}
        (target,) = {s.labels["delay_target_seconds"] for s in samples}
        assert float(target) == pytest.approx(0.01, rel=1e-6)
        le = [s.labels["le"] for s in samples]
        assert le[-1] == "+Inf"
        # T/16, T/8, T/4, T/2, 3T/4, 7T/8, T (rounded down to vq units)
        expected = [0.01 * f for f in (1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4, 7 / 8, 1)]
        assert [float(v) for v in le[:-1]] == pytest.approx(expected, rel=1e-6)
        cumulative = [s.value for s in samples]
        # 100 packets in bucket `bucket` ([edge bucket-1, edge bucket)): below edges >= it
        assert cumulative == [0.0] * bucket + [100.0] * (8 - bucket)


def test_a_sample_committed_after_a_scrape_is_counted_by_the_next(
    client: TestClient,
    operator_headers: dict[str, str],
    settings: Settings,
    db: sessionmaker[Session],
    fleet: dict[str, dict[str, object]],
) -> None:
    """Each (slice, switch) keeps the time of the newest sample counted: a slice whose sample
    of an earlier moment is committed after another slice's later one is still counted; a
    sample older than its own slice's newest one is not (one sink commits a switch's rows in
    time order, so that does not happen)."""
    link, first, switch = fleet["link"], fleet["slice"], fleet["switch"]
    second = factories.create(
        client, "slices", operator_headers, factories.slice_body([link["id"]], rate_bps=5 * MBIT)
    )
    switch_id = int(switch["id"])  # type: ignore[call-overload]
    now = dt.datetime.now(dt.UTC)
    collector = FleetCollector(db, settings)

    def forwarded(slice_id: object) -> float:
        (family,) = [
            f for f in collector.collect() if f.name == "sliceportal_slice_forwarded_packets"
        ]
        return sum(s.value for s in family.samples if s.labels["slice_id"] == str(slice_id))

    store_samples(db, int(first["id"]), switch_id, [now], packets=10)  # type: ignore[call-overload]
    assert forwarded(first["id"]) == 10
    store_samples(db, second["id"], switch_id, [now - dt.timedelta(seconds=2)], packets=4)
    assert forwarded(second["id"]) == 4
    assert forwarded(first["id"]) == 10
    store_samples(db, second["id"], switch_id, [now - dt.timedelta(seconds=1)], packets=5)
    assert forwarded(second["id"]) == 9
    store_samples(db, second["id"], switch_id, [now - dt.timedelta(seconds=3)], packets=100)
    assert forwarded(second["id"]) == 9  # older than its slice's newest: never counted


def test_a_scrape_while_the_database_is_down_is_a_503_and_counts_nothing_twice(
    client: TestClient,
    viewer_headers: dict[str, str],
    settings: Settings,
    db: sessionmaker[Session],
    fleet: dict[str, dict[str, object]],
) -> None:
    """The collector reads on sessions of its own: a scrape that finds the database gone once
    the caller is authenticated answers 503 problem+json (Prometheus marks the target down),
    not a 500, and the next scrape counts what the failed one did not."""
    collector = FleetCollector(db, settings)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    down = settings.model_copy(
        update={"database_url": f"postgresql+psycopg://postgres@127.0.0.1:{free_tcp_port()}/x"}
    )
    engine = create_db_engine(down)
    app = client.app
    assert isinstance(app, FastAPI)
    kept = app.state.metrics
    app.state.metrics = registry
    try:
        store_fleet_samples(db, fleet, [dt.datetime.now(dt.UTC)], packets=30)
        collector.sessions = create_sessionmaker(engine)
        response = client.get("/metrics", headers=viewer_headers)
        assert response.status_code == 503, response.text
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["type"].endswith("/database-unavailable")
        collector.sessions = db
        samples = scrape(client, viewer_headers)
        assert value(samples, "sliceportal_slice_forwarded_packets_total", **labels_of(fleet)) == 30
    finally:
        app.state.metrics = kept
        engine.dispose()


def test_a_deleted_slice_leaves_its_series_and_keeps_adding_to_its_switch_s_sums(
    client: TestClient,
    operator_headers: dict[str, str],
    settings: Settings,
    db: sessionmaker[Session],
    fleet: dict[str, dict[str, object]],
) -> None:
    """Counters never go down: once a slice is deleted (its samples with it), its counts stay
    in its switch's sums, and its own series go."""
    slice_, switch = fleet["slice"], fleet["switch"]
    collector = FleetCollector(db, settings)

    def forwarded() -> tuple[set[str], float]:
        families = {family.name: family for family in collector.collect()}
        per_slice = families["sliceportal_slice_forwarded_packets"].samples
        per_switch = families["sliceportal_switch_forwarded_packets"].samples
        (summed,) = [s.value for s in per_switch if s.labels["switch"] == switch["name"]]
        return {s.labels["slice_id"] for s in per_slice}, summed

    store_fleet_samples(db, fleet, [dt.datetime.now(dt.UTC)], packets=30)
    exported, summed = forwarded()
    assert str(slice_["id"]) in exported and summed == 30
    deleted = client.delete(f"/api/v1/slices/{slice_['id']}", headers=operator_headers)
    assert deleted.status_code == 204, deleted.text
    exported, summed = forwarded()
    assert str(slice_["id"]) not in exported and summed == 30
