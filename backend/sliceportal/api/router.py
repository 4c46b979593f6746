"""Includes the routers, nothing else."""

from fastapi import APIRouter

from sliceportal.api.routes import (
    analysis,
    changes,
    health,
    links,
    login,
    slices,
    switches,
    tokens,
    users,
)

api_router = APIRouter()
for module in (login, users, tokens, switches, links, slices, analysis, changes, health):
    api_router.include_router(module.router)
