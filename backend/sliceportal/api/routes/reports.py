"""Capacity planning reports for the network, a switch or a link, as JSON, CSV or PDF.

All three formats come from one report (`services.reports.network_report`), so they carry the
same numbers; the CSV gives one of the report's flat tables per request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response
from sqlalchemy.orm import Session

from sliceportal.api.deps import SessionDep, ViewerUser
from sliceportal.domain.reports import Report
from sliceportal.domain.reports.build import MAX_GROWTH_PERCENT
from sliceportal.domain.reports.tables import TableName
from sliceportal.domain.spec import MAX_REPORT_WINDOW_S
from sliceportal.reporting.render import MEDIA_TYPES, Format, file_name, render
from sliceportal.schemas.common import RowId
from sliceportal.services import reports
from sliceportal.services.reports import ReportRequest, ScopeKind

router = APIRouter(prefix="/reports", tags=["reports"])

GrowthQuery = Annotated[
    float,
    Query(ge=0, le=MAX_GROWTH_PERCENT, description="rate growth, percent per month"),
]
HorizonQuery = Annotated[
    int, Query(ge=1, le=reports.MAX_HORIZON_MONTHS, description="growth horizon, months")
]
WindowQuery = Annotated[
    float,
    Query(
        ge=0,
        le=MAX_REPORT_WINDOW_S,
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


def _respond(report: Report, output: Format, table: TableName) -> Report | Response:
    if output == "json":
        return report
    return Response(
        render(report, output, table),
        media_type=MEDIA_TYPES[output],
        headers={
            "Content-Disposition": f'attachment; filename="{file_name(report, output, table)}"'
        },
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
    session: SessionDep, _: ViewerUser, switch_id: RowId, query: QueryDep
) -> Report | Response:
    """The report for the links of one switch and the slices crossing them (their end-to-end
    bounds and headroom still account for every link they cross)."""
    return query.respond(session, "switch", switch_id)


@router.get("/links/{link_id}", response_model=Report, responses=FILE_RESPONSES)
def read_link_report(
    session: SessionDep, _: ViewerUser, link_id: RowId, query: QueryDep
) -> Report | Response:
    """The report for one link and the slices crossing it."""
    return query.respond(session, "link", link_id)
