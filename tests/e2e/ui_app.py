"""The app the end-to-end test serves: the real API plus the built UI (`mount_spa`).

Run by uvicorn in a subprocess (`--factory ui_app:create`); settings come from the
environment like every other process (DATABASE_URL, REDIS_URL, SLICEPORTAL_*), the UI from
SLICEPORTAL_UI_DIST.
"""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import FastAPI

from sliceportal.api.main import create_app
from sliceportal.api.spa import mount_spa
from sliceportal.core.config import Settings


def create() -> FastAPI:
    app = create_app(Settings())
    mount_spa(app, Path(os.environ["SLICEPORTAL_UI_DIST"]))  # a no-op if create_app did it
    return app
