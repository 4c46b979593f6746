"""Capacity planning reports for the network, a switch or a link, as JSON, CSV or PDF.

All three formats come from one report (`services.reports.network_report`), so they carry the
same numbers; the CSV gives one of the report's flat tables per request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response
from sqlalchemy.orm import Session

from sliceportal.api.deps import SessionDep, ViewerUser
from sliceportal.api.schemas.reports import Report
from sliceportal.domain.reports import Report as ReportData
from sliceportal.reporting.csv_tables import TableName, render_csv
from sliceportal.reporting.pdf import render_pdf
from sliceportal.services import reports
from sliceportal.services.reports import ReportRequest, ScopeKind

router = APIRouter(prefix="/reports", tags=["reports"])

Format = Literal["json", "csv", "pdf"]
GrowthQuery = Annotated[
    float,
    Query(ge=0, le=reports.MAX_GROWTH_PERCENT, description="rate growth, percent per month"),
]
HorizonQuery = Annotated[
    int, Query(ge=1, le=reports.MAX_HORIZON_MONTHS, description="growth horizon, months")
]
WindowQuery = Annotated[
    float,
    Query(
        ge=0,
        le=reports.MAX_WINDOW_S,
        description="seconds of telemetry to compare with the declarations; 0 leaves it out",
    ),
]
FormatQuery = Annotated[Format, Query(description="json, csv (one table) or pdf")]
TableQuery = Annotated[TableName, Query(description="the table a csv gives")]
FILE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {
            "text/csv": {"schema": {"type": "string"}},
            "application/pdf": {"schema": {"type": "string", "format": "binary"}},
        },
        "description": "The report in the requested format.",
    }
}


def _file_name(document: Report, suffix: str) -> str:
    scope = re.sub(r"[^A-Za-z0-9_.-]+", "-", document.scope.name).strip("-") or "report"
    return f"sliceportal-report-{scope}-{document.generated_at:%Y%m%dT%H%MZ}{suffix}"


def _respond(data: ReportData, output: Format, table: TableName) -> Report | Response:
    document = Report.model_validate(data.to_dict())
    if output == "json":
        return document
    if output == "csv":
        name = _file_name(document, f"-{table}.csv")
        return Response(
            render_csv(data.tables()[table]),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )
    name = _file_name(document, ".pdf")
    return Response(
        render_pdf(document),
        media_type="application/pdf",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@dataclass
class ReportQuery:
    """The query parameters every report takes (a class dependency: declared once)."""

    growth_percent: GrowthQuery = 5.0
    horizon_months: HorizonQuery = 24
    telemetry_window_s: WindowQuery = 3600.0
    format: FormatQuery = "json"
    table: TableQuery = "link_slices"

    def respond(
        self, session: Session, scope: ScopeKind, scope_id: int | None
    ) -> Report | Response:
        request = ReportRequest(
            scope, scope_id, self.growth_percent, self.horizon_months, self.telemetry_window_s
        )
        return _respond(reports.network_report(session, request), self.format, self.table)


QueryDep = Annotated[ReportQuery, Depends()]


@router.get("/network", response_model=Report, responses=FILE_RESPONSES)
def read_network_report(session: SessionDep, _: ViewerUser, query: QueryDep) -> Report | Response:
    """Every link and slice: bounds under both models, minimum capacities per priority plan,
    headroom, growth, measured against declared, and recommendations."""
    return query.respond(session, "network", None)


@router.get("/switches/{switch_id}", response_model=Report, responses=FILE_RESPONSES)
def read_switch_report(
    session: SessionDep, _: ViewerUser, switch_id: int, query: QueryDep
) -> Report | Response:
    """The report for the links of one switch and the slices crossing them (their end-to-end
    bounds and headroom still account for every link they cross)."""
    return query.respond(session, "switch", switch_id)


@router.get("/links/{link_id}", response_model=Report, responses=FILE_RESPONSES)
def read_link_report(
    session: SessionDep, _: ViewerUser, link_id: int, query: QueryDep
) -> Report | Response:
    """The report for one link and the slices crossing it."""
    return query.respond(session, "link", link_id)
