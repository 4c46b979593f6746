"""The route modules' routers, in the order of the OpenAPI document.

`api.main` includes each of them into the app directly, not through one parent router (see
there why)."""

from fastapi import APIRouter

from sliceportal.api.routes import (
    alerts,
    analysis,
    cables,
    changes,
    health,
    links,
    login,
    logout,
    reports,
    slices,
    stream,
    switches,
    telemetry,
    tokens,
    topology,
    users,
)

ROUTERS: tuple[APIRouter, ...] = tuple(
    module.router
    for module in (
        login,
        logout,
        users,
        tokens,
        switches,
        links,
        cables,
        topology,
        slices,
        telemetry,
        alerts,
        stream,
        analysis,
        reports,
        changes,
        health,
    )
)
