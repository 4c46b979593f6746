"""A built report in the format a caller asked for: the API, the CLI and the scheduled delivery
all go through here, so a format means the same bytes everywhere."""

from __future__ import annotations

import json
import re
from typing import Literal

from sliceportal.domain.reports import Report as ReportData
from sliceportal.domain.reports.tables import TableName
from sliceportal.reporting.csv_tables import render_csv
from sliceportal.reporting.pdf import render_pdf
from sliceportal.schemas.reports import Report

Format = Literal["json", "csv", "pdf"]
MEDIA_TYPES: dict[Format, str] = {
    "json": "application/json",
    "csv": "text/csv; charset=utf-8",
    "pdf": "application/pdf",
}


def document_of(data: ReportData) -> Report:
    """The report as the API's document (validated: a number out of contract fails here)."""
    return Report.model_validate(data.to_dict())


def render(data: ReportData, document: Report, output: Format, table: TableName) -> bytes:
    """The report (`document` is `document_of(data)`) as a file: indented JSON, one CSV
    table, or the PDF."""
    if output == "csv":
        return render_csv(data.tables()[table]).encode()
    if output == "pdf":
        return render_pdf(document)
    return (json.dumps(document.model_dump(mode="json"), indent=2) + "\n").encode()


def file_name(document: Report, output: Format, table: TableName) -> str:
    """`sliceportal-report-<scope>-<UTC time>[-<table>].<format>`, safe in a header."""
    scope = re.sub(r"[^A-Za-z0-9_.-]+", "-", document.scope.name).strip("-") or "report"
    suffix = f"-{table}" if output == "csv" else ""
    return f"sliceportal-report-{scope}-{document.generated_at:%Y%m%dT%H%MZ}{suffix}.{output}"
