"""deploy/grafana/dashboards/sliceportal.json asks Prometheus only for what the portal exports:
every PromQL expression (panels and variables) parses (promtool's parser, `promtool check
rules`), and names only metrics, and matches only labels, that a real scrape of the API's
`/metrics` and a poller's registry produce."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.telemetry.poller_metrics import PollerMetrics
from telemetry.test_metrics import fleet, store_samples  # noqa: F401 - fleet is a fixture

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "sliceportal.json"

GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__range": "1h", "$slice": ".*", "$switch": ".*"}
"""What Grafana puts in place of its variables before it sends an expression."""
KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan"}
GROUPING = r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)"
IDENTIFIER = r"(?<![\w.:])[a-zA-Z_:][\w:]*"
STRING = r'"(?:[^"\\]|\\.)*"'

Labels = dict[str, set[str]]
"""Per exported sample name, the label names its samples carry."""


def load_dashboard() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return document


def expressions(
    dashboard: dict[str, Any], variables: dict[str, str] = GRAFANA_VARIABLES
) -> list[str]:
    """The panels' target expressions and the variables' queries, as Grafana sends them with
    `variables` in place of its own."""
    return [expr for expr, _ in with_legends(dashboard, variables)]


def with_legends(
    dashboard: dict[str, Any], variables: dict[str, str] = GRAFANA_VARIABLES
) -> list[tuple[str, tuple[str, ...]]]:
    """Each expression of `expressions` and the labels its legend shows (`{{label}}`)."""
    found = [
        (target["expr"], tuple(re.findall(r"\{\{\s*(\w+)\s*\}\}", target["legendFormat"])))
        for panel in dashboard["panels"]
        for target in panel.get("targets", [])
    ]
    found += [(variable["query"]["query"], ()) for variable in dashboard["templating"]["list"]]
    sent = []
    for expr, legend in found:
        for name, value in variables.items():
            expr = expr.replace(name, value)
        assert "$" not in expr, f"a Grafana variable this test does not know: {expr}"
        sent.append((expr, legend))
    return sent


def label_values_query(expr: str) -> tuple[str, str] | None:
    """`label_values(selector, label)` (a Grafana query, not PromQL): the selector and label."""
    match = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", expr)
    return (match.group(1), match.group(2)) if match else None


def metric_names(expr: str) -> set[str]:
    """The metric names of a PromQL expression: its identifiers that are neither a function or
    aggregation (followed by `(`), a keyword, a label (inside `{}` or a grouping's `()`), nor
    part of a number or duration."""
    text = re.sub(STRING, '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(GROUPING, " ", text)
    names = set()
    for match in re.finditer(IDENTIFIER, text):
        rest = text[match.end() :].lstrip()
        if rest.startswith("(") or match.group().lower() in KEYWORDS:
            continue
        names.add(match.group())
    return names


def matched_labels(expr: str) -> Iterator[tuple[str, str]]:
    """(metric, label) for every label matcher of a selector `metric{label op "value", …}`."""
    text = re.sub(STRING, '""', expr)
    for selector in re.finditer(rf"({IDENTIFIER})\s*\{{([^}}]*)\}}", text):
        for label in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", selector.group(2)):
            yield selector.group(1), label


def exported(text: str) -> Labels:
    labels: Labels = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels.setdefault(sample.name, set()).update(sample.labels)
    return labels


def poller_exposition() -> str:
    """A poller's registry with a child of every labelled metric, as after its first polls."""
    metrics = PollerMetrics()
    metrics.polls.labels("1").inc()
    metrics.poll_duration.labels("1").observe(0.02)
    metrics.poll_errors.labels("1", "transient").inc()
    metrics.sink_duration.observe(0.01)
    return generate_latest(metrics.registry).decode()


def grouping_labels(expr: str) -> set[str]:
    """The labels of its `by`, `without`, `on`, `ignoring`, `group_left` and `group_right`."""
    text = re.sub(STRING, '""', expr)
    return {
        label
        for clause in re.finditer(GROUPING, text)
        for label in re.findall(r"\w+", clause.group().split("(", 1)[1])
    }


def check(expr: str, labels: Labels, legend_labels: tuple[str, ...] = ()) -> list[str]:
    """What `expr` asks for that `labels` does not hold: metrics, the labels of its matchers
    and groupings, and the labels its legend (`legend_labels`) shows."""
    problems = []
    query = label_values_query(expr)
    if query is not None:
        expr, label = query
        names = metric_names(expr)
        assert len(names) == 1, expr
        (name,) = names
        if label not in labels.get(name, set()):
            problems.append(f"{name} has no label {label}")
    for name in metric_names(expr) - set(labels):
        problems.append(f"{name} is not exported")
    for name, label in matched_labels(expr):
        if name in labels and label not in labels[name]:
            problems.append(f"{name} has no label {label}")
    carried = set().union(*(labels.get(name, set()) for name in metric_names(expr)))
    for label in grouping_labels(expr) | set(legend_labels):
        if label not in carried:
            problems.append(f"no metric of it has a label {label}")
    return problems


# -- the parser of this test -------------------------------------------------------------------


def test_metric_names_skips_functions_labels_groupings_numbers_and_strings() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (slice, le) (rate(a_bucket{slice=~"x{y}", le!="1e6"}'
        "[$__rate_interval]))) / ignoring (reason) group_left () (b_total + 1e6) > bool c"
    )
    assert metric_names(expr) == {"a_bucket", "b_total", "c"}
    assert set(matched_labels(expr)) == {("a_bucket", "slice"), ("a_bucket", "le")}


def test_check_reports_an_unknown_metric_and_label() -> None:
    labels: Labels = {"a_total": {"slice"}}
    assert check('rate(a_total{slice="x"}[1m])', labels) == []
    assert check("rate(a[1m]) * 8", labels) == ["a is not exported"]
    assert check('a_total{slice_name="x"}', labels) == ["a_total has no label slice_name"]
    assert check("label_values(a_total, switch)", labels) == ["a_total has no label switch"]
    assert check("sum by (slice) (a_total)", labels, ("slice",)) == []
    assert check("sum by (switch) (a_total)", labels) == ["no metric of it has a label switch"]
    assert check("a_total", labels, ("reason",)) == ["no metric of it has a label reason"]


# -- the dashboard -----------------------------------------------------------------------------


@pytest.fixture
def dashboard() -> dict[str, Any]:
    return load_dashboard()


def test_the_dashboard_mirrors_the_slice_page(dashboard: dict[str, Any]) -> None:
    """Throughput, drops by reason, ECN marks, both delay histograms' quantiles and the links'
    reservations against their capacities, per slice chosen by a variable."""
    everything = " ".join(expressions(dashboard))
    assert "rate(sliceportal_slice_forwarded_bytes_total{" in everything
    assert "* 8" in everything
    for queue in ("vq", "rq"):
        histogram = f"sliceportal_slice_{queue}_delay_seconds_bucket"
        assert f"histogram_quantile(0.99, rate({histogram}{{" in everything
    for name in (
        "sliceportal_slice_dropped_packets_total",
        "sliceportal_slice_ecn_marked_packets_total",
        "sliceportal_link_reserved_bits_per_second",
        "sliceportal_link_capacity_bits_per_second",
    ):
        assert name in everything, name
    assert [variable["name"] for variable in dashboard["templating"]["list"]][0] == "slice"
    slice_panels = [
        panel for panel in dashboard["panels"]
        for target in panel.get("targets", [])
        if "sliceportal_slice_" in target["expr"]
    ]  # fmt: skip
    assert slice_panels and all(
        'slice=~"$slice"' in target["expr"]
        for panel in slice_panels
        for target in panel["targets"]
        if "sliceportal_slice_" in target["expr"]
    )
    # Every panel asks the provisioned datasource (deploy/grafana/provisioning/datasources).
    assert {
        json.dumps(panel["datasource"], sort_keys=True)
        for panel in dashboard["panels"]
        if panel["type"] != "row"
    } == {json.dumps({"type": "prometheus", "uid": "prometheus"}, sort_keys=True)}


def test_every_expression_parses(dashboard: dict[str, Any], tmp_path: Path) -> None:
    """promtool checks the expressions as recording rules: Prometheus's own PromQL parser."""
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian's prometheus package ships it)")

    promql = [expr for expr in expressions(dashboard) if label_values_query(expr) is None]
    promql += [query[0] for e in expressions(dashboard) if (query := label_values_query(e))]
    rules = tmp_path / "dashboard.rules.yml"
    records = [{"record": f"dashboard:expr{i}", "expr": e} for i, e in enumerate(promql)]
    rules.write_text(json.dumps({"groups": [{"name": "dashboard", "rules": records}]}))
    checked = subprocess.run(
        [promtool, "check", "rules", str(rules)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(records)} rules found" in checked.stdout
    # And it does refuse what is not PromQL (`group_left (` opens a label list).
    records.append({"record": "broken", "expr": "a / ignoring (x) group_left (rate(b[1m]))"})
    rules.write_text(json.dumps({"groups": [{"name": "dashboard", "rules": records}]}))
    refused = subprocess.run(
        [promtool, "check", "rules", str(rules)], capture_output=True, text=True, timeout=60
    )
    assert refused.returncode == 1 and "parse error" in refused.stderr + refused.stdout


def test_every_expression_names_only_exported_metrics_and_labels(
    dashboard: dict[str, Any],
    client: TestClient,
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    fleet: dict[str, dict[str, object]],  # noqa: F811 - the fixture
) -> None:
    """Against the API's `/metrics` once a slice has samples (its counters and histograms
    exported) and a poller's registry."""
    slice_, switch = fleet["slice"], fleet["switch"]
    now = dt.datetime.now(dt.UTC)
    store_samples(
        db,
        int(slice_["id"]),  # type: ignore[call-overload]
        int(switch["id"]),  # type: ignore[call-overload]
        [now - dt.timedelta(seconds=s) for s in (2, 1)],
        packets=100,
        vq_dropped=3,
        marked=2,
    )
    response = client.get("/metrics", headers=viewer_headers)
    assert response.status_code == 200, response.text
    labels = exported(response.text)
    assert "sliceportal_slice_rq_delay_seconds_bucket" in labels  # the slice's series are there
    for name, more in exported(poller_exposition()).items():
        labels.setdefault(name, set()).update(more)
    problems = [
        f"{expr}: {problem}"
        for expr, legend in with_legends(dashboard)
        for problem in check(expr, labels, legend)
    ]  # fmt: skip
    assert problems == []
