"""The report's CSV tables: every table carries its header, also with no rows, so a download
of an empty table (the findings of a healthy network) still names its columns."""

from __future__ import annotations

import csv
import io

from report_networks import MBPS, link, paper_network, whole_report

from sliceportal.domain.reports import MeasuredSlice, Network, NetworkSlice
from sliceportal.domain.reports.tables import (
    TABLES,
    FindingsRow,
    LinkSlicesRow,
    LinksRow,
    Row,
    SlicesRow,
    Table,
    TableName,
)
from sliceportal.reporting.csv_tables import render_csv

ROW_TYPES: dict[TableName, type[Row]] = {
    "links": LinksRow,
    "link_slices": LinkSlicesRow,
    "slices": SlicesRow,
    "findings": FindingsRow,
}


def _empty_tables() -> dict[TableName, Table]:
    return whole_report(Network(links=(), slices=())).tables()


def _full_tables() -> dict[TableName, Table]:
    """Every table with rows, built by the report code: case B misses a target (findings),
    and one slice has telemetry (the measured columns)."""
    measured = {1: MeasuredSlice(60.0, 10e6, 5e6, 0.001, 0.002, 0.003, 0.004, 0.0)}
    report = whole_report(paper_network((7, 6, 6)), measured=measured, telemetry_window_s=60.0)
    tables = report.tables()
    assert all(tables[name].rows for name in TABLES)
    return tables


def test_the_tables_are_the_ones_the_csv_export_offers() -> None:
    assert tuple(_empty_tables()) == TABLES == tuple(ROW_TYPES)


def test_an_empty_table_of_each_kind_renders_exactly_its_header() -> None:
    for name, table in _empty_tables().items():
        assert table.rows == []
        assert table.columns == ROW_TYPES[name].columns() and table.columns
        assert render_csv(table) == ",".join(table.columns) + "\n"
        reader = csv.DictReader(io.StringIO(render_csv(table)))
        assert list(reader) == [] and tuple(reader.fieldnames or ()) == table.columns


def test_empty_and_full_tables_have_the_same_header() -> None:
    empty, full = _empty_tables(), _full_tables()
    for name in TABLES:
        header = render_csv(empty[name])
        lines = render_csv(full[name]).splitlines(keepends=True)
        assert lines[0] == header, name
        for row in full[name].rows:
            assert tuple(row) == full[name].columns


def test_a_healthy_network_gives_an_empty_findings_table_with_its_header() -> None:
    healthy = Network(
        (link(1, 10_000 * MBPS),),
        (NetworkSlice(1, "DC", 1 * MBPS, 0.020, 0.050, None, 7, None, (1,)),),
    )
    tables = whole_report(healthy).tables()
    assert tables["links"].rows and tables["findings"].rows == []
    assert (
        render_csv(tables["findings"])
        == render_csv(_full_tables()["findings"]).split("\n")[0] + "\n"
    )


def test_cells_keep_every_digit_and_none_is_an_empty_field() -> None:
    table = Table(("a", "b", "c"), [{"a": 0.1 + 0.2, "b": None, "c": True}])
    assert render_csv(table) == "a,b,c\n0.30000000000000004,,True\n"
