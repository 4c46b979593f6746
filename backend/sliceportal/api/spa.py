"""Serve the built web UI (`frontend/dist`) from the API process.

Only GET and HEAD are routed to the UI, so a POST to an unknown path under `/api` answers 405
(not 404); the UI treats both as "this server has no such endpoint yet".

`mount_spa(app, dist)` serves the files of the Vite build at `/` and answers `index.html` for
every other GET that names no file, so client routes (`/slices/7`, `/links/3`) survive a
reload. It never shadows the API or the docs: paths under `/api` and the docs URLs keep their
own 404s and handlers. Built assets have content hashes in their names and are cached for a
year; `index.html` is never cached, so a new build shows at the next load.
"""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

logger = logging.getLogger(__name__)

RESERVED_PREFIXES = ("/api", "/docs", "/redoc", "/openapi.json")
"""Paths the UI never answers: the API, Swagger UI, ReDoc and FastAPI's default schema URL."""

IMMUTABLE = "public, max-age=31536000, immutable"
NO_CACHE = "no-cache"


def _reserved(path: str) -> bool:
    return any(path == prefix or path.startswith(prefix + "/") for prefix in RESERVED_PREFIXES)


def _file_in(root: Path, relative: str) -> Path | None:
    """The regular file `relative` under `root`, or None (also for `..` escapes and symlinks
    that point outside)."""
    if not relative or "\x00" in relative:
        return None
    candidate = (root / relative).resolve()
    if not candidate.is_relative_to(root) or not candidate.is_file():
        return None
    return candidate


def mount_spa(app: FastAPI, dist: Path) -> None:
    """Serve the UI built in `dist` at `/`; do nothing (with a log line) when it is not built.

    Call it after the API routers are included. Calling it twice on one app is harmless.
    """
    if getattr(app.state, "spa_dist", None) is not None:
        return
    root = dist.resolve()
    index = root / "index.html"
    if not index.is_file():
        logger.info("no built UI at %s (npm run build in frontend/): serving the API only", root)
        return
    app.state.spa_dist = root

    async def serve_ui(request: Request, path: str = "") -> Response:
        if _reserved(request.url.path):
            raise StarletteHTTPException(status_code=404)
        found = _file_in(root, path)
        if found is not None and found != index:
            cache = IMMUTABLE if found.parent.name == "assets" else NO_CACHE
            return FileResponse(found, headers={"Cache-Control": cache})
        if path.startswith("assets/") or (found is None and "." in path.rsplit("/", 1)[-1]):
            # A missing asset is a 404, not the HTML page (a stale tab after a new build).
            raise StarletteHTTPException(status_code=404)
        return FileResponse(index, media_type="text/html", headers={"Cache-Control": NO_CACHE})

    for route in ("/", "/{path:path}"):
        app.add_api_route(
            route,
            serve_ui,
            methods=["GET", "HEAD"],
            include_in_schema=False,
            name="spa" if route == "/" else "spa_path",
        )
