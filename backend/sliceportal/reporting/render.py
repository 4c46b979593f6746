"""A built report in the format a caller asked for: the API, the CLI and the scheduled delivery
all go through here, so a format means the same bytes everywhere."""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import TypeAdapter

from sliceportal.domain.reports import Report
from sliceportal.domain.reports.tables import TableName
from sliceportal.reporting.csv_tables import render_csv
from sliceportal.reporting.pdf import render_pdf

Format = Literal["json", "csv", "pdf"]
MEDIA_TYPES: dict[Format, str] = {
    "json": "application/json",
    "csv": "text/csv; charset=utf-8",
    "pdf": "application/pdf",
}


REPORT = TypeAdapter(Report)
"""The report's contract, generated from the domain's dataclasses (the API's response model)."""


def document_of(report: Report) -> dict[str, Any]:
    """The report as the JSON document the API answers (the webhook and the CLI send the same)."""
    document: dict[str, Any] = REPORT.dump_python(report, mode="json")
    return document


def render(report: Report, output: Format, table: TableName) -> bytes:
    """The report as a file: indented JSON, one CSV table, or the PDF."""
    if output == "csv":
        return render_csv(report.tables()[table]).encode()
    if output == "pdf":
        return render_pdf(report)
    return (json.dumps(document_of(report), indent=2) + "\n").encode()


def file_name(report: Report, output: Format, table: TableName) -> str:
    """`sliceportal-report-<scope>-<UTC time>[-<table>].<format>`, safe in a header."""
    scope = re.sub(r"[^A-Za-z0-9_.-]+", "-", report.scope.name).strip("-") or "report"
    suffix = f"-{table}" if output == "csv" else ""
    return f"sliceportal-report-{scope}-{report.generated_at:%Y%m%dT%H%MZ}{suffix}.{output}"
