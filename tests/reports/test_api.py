"""The capacity planning report through the API on the real PostgreSQL: the numbers of every
format (JSON, CSV, PDF) against the analytics package computed independently from the same
slices, the scopes, telemetry against declarations, and the errors."""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.db import samples as store
from sliceportal.domain import Model, SliceSpec, analyze, min_capacity, slice_spec
from sliceportal.domain import dataplane as dp
from sliceportal.domain.reports import Report
from sliceportal.domain.reports.tables import FindingsRow
from sliceportal.domain.telemetry import COLUMNS
from sliceportal.reporting.render import REPORT
from utils import factories
from utils.factories import MBIT

Network = dict[str, Any]


@pytest.fixture(scope="module")
def network(client: TestClient, operator_headers: dict[str, str]) -> Network:
    """The paper's case D on link A (400 Mbit/s, harkous, DC 7, Enterprise 6, Peering 5) and a
    slice `Edge` crossing A and B (switch 2, 100 Mbit/s, netcalc) with an end-to-end target."""
    h = operator_headers
    s1 = factories.create(client, "switches", h, factories.switch_body())
    s2 = factories.create(client, "switches", h, factories.switch_body())
    a = factories.create(
        client, "links", h, factories.link_body(s1["id"], capacity_bps=400 * MBIT, model="harkous")
    )
    b = factories.create(
        client, "links", h, factories.link_body(s2["id"], capacity_bps=100 * MBIT, model="netcalc")
    )
    paper = [("DC", 48, 0.020, 7), ("Enterprise", 12, 0.010, 6), ("Peering", 240, 0.030, 5)]
    slices = {}
    for label, rate, limit, priority in paper:
        body = factories.slice_body(
            [a["id"]],
            name=factories.unique(label),
            rate_bps=rate * MBIT,
            burst_limit_s=limit,
            priority=priority,
        )
        slices[label] = factories.create(client, "slices", h, body)
    edge = factories.slice_body(
        [a["id"], b["id"]],
        name=factories.unique("Edge"),
        rate_bps=5 * MBIT,
        burst_limit_s=0.004,
        delay_target_s=0.05,
        e2e_delay_target_s=0.08,
        priority=4,
    )
    slices["Edge"] = factories.create(client, "slices", h, edge)
    return {"switches": (s1, s2), "links": {"A": a, "B": b}, "slices": slices}


def _specs(network: Network, link: dict[str, Any]) -> list[SliceSpec]:
    """The link's slices as the analytics sees them, built from the API's own slice rows."""
    return [
        slice_spec(
            s["name"],
            s["rate_bps"],
            s["priority"],
            burst_limit_s=s["burst_limit_s"],
            delay_target_s=s["delay_target_s"],
            mtu_bytes=link["mtu_bytes"],
        )
        for s in network["slices"].values()
        if link["id"] in s["link_ids"]
    ]


def _get(client: TestClient, headers: dict[str, str], path: str, **params: Any) -> Any:
    response = client.get(f"/api/v1/reports/{path}", headers=headers, params=params)
    assert response.status_code == 200, response.text
    return response


def _link_report(client: TestClient, headers: dict[str, str], link_id: int) -> Report:
    document = _get(client, headers, f"links/{link_id}", telemetry_window_s=0).json()
    return REPORT.validate_python(document)


def test_link_report_bounds_and_capacities_match_the_analytics(
    client: TestClient, viewer_headers: dict[str, str], network: Network
) -> None:
    link = network["links"]["A"]
    report = _link_report(client, viewer_headers, link["id"])
    assert report.scope.kind == "link" and report.scope.id == link["id"]
    (section,) = report.links
    specs = _specs(network, link)
    assert {row.name for row in section.slices} == {spec.name for spec in specs}
    for model in Model:
        expected = {b.name: b for b in analyze(specs, link["capacity_bps"], model).slices}
        for row in section.slices:
            assert getattr(row.bound_s, model.value) == expected[row.name].worst_case_delay_s
            assert getattr(row.meets_target, model.value) == expected[row.name].meets_target
        assert getattr(section.min_capacity_bps.current, model.value) == pytest.approx(
            min_capacity(specs, model), rel=1e-9
        )
    one_level = [
        SliceSpec(s.name, s.rate_bps, 7, s.burst_bytes, s.delay_target_s, s.max_packet_bytes)
        for s in specs
    ]
    assert section.min_capacity_bps.one_level.harkous == pytest.approx(
        min_capacity(one_level, Model.HARKOUS), rel=1e-9
    )
    best = section.min_capacity_bps.best_plan.harkous
    assert best.capacity_bps is not None
    assert best.capacity_bps <= section.min_capacity_bps.current.harkous + 1.0
    assert section.total_rate_bps == pytest.approx(sum(s.rate_bps for s in specs))
    assert section.utilisation == pytest.approx(section.total_rate_bps / link["capacity_bps"])


def test_end_to_end_bounds_sum_the_hops_of_each_link_model(
    client: TestClient, viewer_headers: dict[str, str], network: Network
) -> None:
    a, b = network["links"]["A"], network["links"]["B"]
    edge = network["slices"]["Edge"]
    document = _get(client, viewer_headers, "network", telemetry_window_s=0).json()
    report = REPORT.validate_python(document)
    (row,) = [s for s in report.slices if s.name == edge["name"]]
    assert row.e2e_delay_target_s == 0.08
    for model in Model:
        hops = [
            next(
                bound.worst_case_delay_s
                for bound in analyze(_specs(network, link), link["capacity_bps"], model).slices
                if bound.name == edge["name"]
            )
            for link in (a, b)
        ]
        e2e = getattr(row.e2e, model.value)
        assert e2e.total_s == pytest.approx(math.fsum(h for h in hops if h is not None))
        assert e2e.target_s == 0.08
        assert e2e.meets_target == (e2e.total_s <= 0.08)
    assert row.headroom.rate_bps is not None and row.headroom.rate_bps > 0


def test_scopes_cover_their_links_and_the_slices_crossing_them(
    client: TestClient, viewer_headers: dict[str, str], network: Network
) -> None:
    s2 = network["switches"][1]
    report = REPORT.validate_python(
        _get(client, viewer_headers, f"switches/{s2['id']}", telemetry_window_s=0).json()
    )
    assert report.scope.kind == "switch" and report.scope.name == s2["name"]
    assert [link.id for link in report.links] == [network["links"]["B"]["id"]]
    assert [s.name for s in report.slices] == [network["slices"]["Edge"]["name"]]
    # Edge's end-to-end bound still counts its hop on switch 1, out of scope.
    assert len(report.slices[0].links) == 2


def _csv(
    client: TestClient, headers: dict[str, str], link_id: int, table: str
) -> list[dict[str, str]]:
    response = _get(
        client, headers, f"links/{link_id}", format="csv", table=table, telemetry_window_s=0
    )
    assert response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    return list(csv.DictReader(io.StringIO(response.text)))


def _number(cell: str) -> float | None:
    return None if cell == "" else float(cell)


def test_csv_tables_carry_the_numbers_of_the_json(
    client: TestClient, viewer_headers: dict[str, str], network: Network
) -> None:
    link = network["links"]["A"]
    report = _link_report(client, viewer_headers, link["id"])
    rows = _csv(client, viewer_headers, link["id"], "link_slices")
    json_rows = {row.name: row for row in report.links[0].slices}
    assert len(rows) == len(json_rows)
    for row in rows:
        name = row["slice"]
        assert _number(row["bound_harkous_s"]) == json_rows[name].bound_s.harkous
        assert _number(row["bound_netcalc_s"]) == json_rows[name].bound_s.netcalc
    (link_row,) = _csv(client, viewer_headers, link["id"], "links")
    section = report.links[0]
    assert _number(link_row["capacity_bps"]) == section.capacity_bps
    assert _number(link_row["min_capacity_current_harkous_bps"]) == (
        section.min_capacity_bps.current.harkous
    )
    findings = _csv(client, viewer_headers, link["id"], "findings")
    assert [f["recommendation"] for f in findings] == [f.recommendation for f in report.findings]


def test_an_empty_csv_table_still_has_its_header(
    client: TestClient, operator_headers: dict[str, str], viewer_headers: dict[str, str]
) -> None:
    """Nothing wrong on a link: its findings download is the header alone, not an empty file."""
    link = factories.create_link(client, operator_headers, capacity_bps=10_000 * MBIT)
    body = factories.slice_body([link["id"]], rate_bps=2 * MBIT)
    factories.create(client, "slices", operator_headers, body)
    assert _link_report(client, viewer_headers, link["id"]).findings == ()
    response = _get(client, viewer_headers, f"links/{link['id']}", format="csv", table="findings")
    assert response.text == ",".join(FindingsRow.columns()) + "\n"
    (slice_row,) = _csv(client, viewer_headers, link["id"], "link_slices")
    assert slice_row["link_id"] == str(link["id"])


def _require_poppler() -> None:
    for tool in ("pdftoppm", "pdftotext"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is missing: run scripts/setup-test-tools")


def _pdftotext(pdf: Path) -> str:
    return subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout


def test_the_pdf_renders_to_pages_that_are_not_blank_and_read_the_same_numbers(
    client: TestClient, viewer_headers: dict[str, str], network: Network, tmp_path: Path
) -> None:
    _require_poppler()
    response = _get(client, viewer_headers, "network", format="pdf", telemetry_window_s=0)
    assert response.headers["content-type"] == "application/pdf"
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(response.content)
    assert response.content.startswith(b"%PDF")
    subprocess.run(["pdftoppm", "-r", "40", "-png", str(pdf), str(tmp_path / "page")], check=True)
    pages = sorted(tmp_path.glob("page-*.png"))
    assert len(pages) >= 2
    for page in pages:
        with Image.open(page) as image:
            grey = image.convert("L")
            dark = sum(grey.histogram()[:200])
            assert dark > 0.005 * grey.width * grey.height, f"{page.name} is blank"
    text = _pdftotext(pdf)
    assert "Findings and recommendations" in text
    report = REPORT.validate_python(
        _get(client, viewer_headers, "network", telemetry_window_s=0).json()
    )
    for name in (s["name"] for s in network["slices"].values()):
        assert name in text
    link_a = next(link for link in report.links if link.id == network["links"]["A"]["id"])
    assert f"{link_a.capacity_bps / 1e6:.4g} Mbit/s" in text


def test_measured_figures_come_from_the_stored_samples(
    client: TestClient,
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    network: Network,
) -> None:
    dc = network["slices"]["DC"]
    switch_id = network["switches"][0]["id"]
    now = dt.datetime.now(dt.UTC)
    rq_first = COLUMNS.index("rq_hist_0")

    def counts(mbit: float, drops: int, delay_bucket: int) -> tuple[int, ...]:
        values = [0] * len(COLUMNS)
        packets = 1000
        values[COLUMNS.index("forwarded_packets")] = packets
        values[COLUMNS.index("forwarded_bytes")] = int(mbit * 1e6 / 8)
        values[COLUMNS.index("vq_dropped_packets")] = drops
        values[rq_first + delay_bucket] = packets
        return tuple(values)

    target = dp.histogram_target(dc["delay_target_s"])
    samples = [(30.0, 0, 1), (40.0, 10, 2), (20.0, 0, 1)]
    with db() as session:
        store.insert_samples(
            session,
            (
                store.SampleRecord(
                    dc["id"], switch_id, now - dt.timedelta(seconds=10 - i), 1.0, counts(*s), target
                )
                for i, s in enumerate(samples)
            ),
        )
        session.commit()
    report = REPORT.validate_python(
        _get(client, viewer_headers, f"links/{network['links']['A']['id']}").json()
    )
    (row,) = [s for s in report.slices if s.name == dc["name"]]
    measured = row.measured
    assert measured is not None
    assert measured.peak_rate_bps == pytest.approx(40e6)
    assert measured.mean_rate_bps == pytest.approx(30e6)
    assert measured.loss_ratio == pytest.approx(10 / 3010)
    edges = dp.histogram_edges_s(target)  # the slice's own edges, from its delay target
    assert measured.delay_max_s == edges[1]  # lower edge of bucket 2
    assert measured.delay_p50_s == edges[1]  # 2,000 packets of 3,000 in bucket 1
    assert measured.delay_p99_s == edges[2]
    assert measured.peak_rate_vs_declared == pytest.approx(40e6 / dc["rate_bps"])

    # The target changes: histograms on the new edges are not pooled with the old ones, each
    # figure is the largest over them (a legacy row, on the former global edges, too).
    later = [(dp.histogram_target(2 * dc["delay_target_s"]), 7), (-1, 6)]
    with db() as session:
        store.insert_samples(
            session,
            (
                store.SampleRecord(
                    dc["id"],
                    switch_id,
                    now - dt.timedelta(seconds=5 - i),
                    1.0,
                    counts(10.0, 0, bucket),
                    hist_target,
                )
                for i, (hist_target, bucket) in enumerate(later)
            ),
        )
        session.commit()
    report = REPORT.validate_python(
        _get(client, viewer_headers, f"links/{network['links']['A']['id']}").json()
    )
    (row,) = [s for s in report.slices if s.name == dc["name"]]
    assert row.measured is not None
    # Pooled on the first edges, the top bucket would prove 20 ms; on its own edges, 40 ms.
    assert row.measured.delay_max_s == row.measured.delay_p50_s == 2 * dc["delay_target_s"]
    assert row.measured.loss_ratio == pytest.approx(10 / 5010)


@pytest.mark.parametrize(
    ("path", "params", "status", "field"),
    [
        ("links/999999999", {}, 404, None),
        ("switches/999999999", {}, 404, None),
        ("network", {"growth_percent": -1}, 422, "query.growth_percent"),
        ("network", {"horizon_months": 0}, 422, "query.horizon_months"),
        ("network", {"format": "docx"}, 422, "query.format"),
        ("network", {"table": "nope", "format": "csv"}, 422, "query.table"),
    ],
)
def test_bad_requests_get_a_specific_problem(
    client: TestClient,
    viewer_headers: dict[str, str],
    path: str,
    params: dict[str, Any],
    status: int,
    field: str | None,
) -> None:
    response = client.get(f"/api/v1/reports/{path}", headers=viewer_headers, params=params)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json().get("field") == field


def test_reports_need_a_login(client: TestClient) -> None:
    assert client.get("/api/v1/reports/network").status_code == 401


def test_end_to_end_bounds_follow_the_path_and_add_its_cables_propagation(
    client: TestClient, operator_headers: dict[str, str], viewer_headers: dict[str, str]
) -> None:
    """A slice from switch 1 through a cable of 2 ms to the hosts of switch 2: its report lists
    the hops in path order, and its end-to-end bound is 2 ms more than with no propagation."""
    h = operator_headers
    s1, s2 = (factories.create(client, "switches", h, factories.switch_body()) for _ in "12")
    out = factories.create(client, "links", h, factories.link_body(s2["id"], name="hosts"))
    up = factories.create(client, "links", h, factories.link_body(s1["id"], name="up"))
    back = factories.create(client, "links", h, factories.link_body(s2["id"], name="back"))
    cable = factories.create(
        client,
        "cables",
        h,
        {"name": factories.unique("c"), "a_link_id": up["id"], "b_link_id": back["id"]},
    )
    body = factories.slice_body([out["id"]], e2e_delay_target_s=0.08)
    del body["link_ids"]
    made = factories.create(client, "slices", h, body | {"path": [up["id"], out["id"]]})

    def enforced() -> tuple[tuple[str, ...], float]:
        document = _get(client, viewer_headers, f"links/{up['id']}", telemetry_window_s=0)
        (row,) = [s for s in REPORT.validate_python(document.json()).slices if s.id == made["id"]]
        assert row.e2e_enforced.total_s is not None
        return row.links, row.e2e_enforced.total_s

    names, without = enforced()
    assert names == (f"{s1['name']}/up", f"{s2['name']}/hosts")
    response = client.patch(
        f"/api/v1/cables/{cable['id']}", json={"propagation_s": 0.002}, headers=h
    )
    assert response.status_code == 200, response.text
    assert enforced()[1] == pytest.approx(without + 0.002)
