"""`GET /metrics`: the Prometheus exposition of the API process (`telemetry.exposition`),
authenticated as the API is (docs/telemetry.md "Prometheus")."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client.exposition import choose_encoder

from sliceportal.api.deps import ViewerUser

router = APIRouter(tags=["metrics"])


@router.get("/metrics", include_in_schema=False)
def read_metrics(request: Request, _: ViewerUser) -> Response:
    """Prometheus's text format; any role may scrape (an API token of a viewer is the usual
    credential: Prometheus's `authorization` of a scrape job). OpenMetrics or the text
    format, as the Accept header asks (prometheus-client's negotiation)."""
    encode, media_type = choose_encoder(request.headers.get("accept", ""))
    return Response(encode(request.app.state.metrics), media_type=media_type)
