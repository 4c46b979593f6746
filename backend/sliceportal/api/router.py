"""Includes the routers, nothing else."""

from fastapi import APIRouter

from sliceportal.api.routes import (
    alerts,
    analysis,
    changes,
    health,
    links,
    login,
    reports,
    slices,
    stream,
    switches,
    telemetry,
    tokens,
    users,
)

api_router = APIRouter()
for module in (
    login,
    users,
    tokens,
    switches,
    links,
    slices,
    telemetry,
    alerts,
    stream,
    analysis,
    reports,
    changes,
    health,
):
    api_router.include_router(module.router)
