"""Finding node, npm and Chromium for the frontend tests, and building the UI when stale.

Missing tools skip the tests; `tests/conftest.py` turns a skip into a failure under CI=true,
so CI can never pass without having run them. `scripts/setup-frontend` installs everything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
DIST = FRONTEND / "dist"
SETUP_HINT = "run scripts/setup-frontend (npm ci in frontend/, Debian's chromium)"


def require_node() -> str:
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        pytest.skip(f"node/npm are not installed: {SETUP_HINT}")
    if not (FRONTEND / "node_modules" / ".bin").is_dir():
        pytest.skip(f"frontend/node_modules is missing: {SETUP_HINT}")
    return node


def require_chromium() -> str:
    path = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    if not os.access(path, os.X_OK):
        pytest.skip(f"Chromium is not installed at {path}: {SETUP_HINT}")
    return path


def _newest_source() -> float:
    sources = [FRONTEND / name for name in ("index.html", "package-lock.json", "vite.config.ts")]
    for folder in (FRONTEND / "src", FRONTEND / "public"):
        sources.extend(p for p in folder.rglob("*") if p.is_file())
    return max(p.stat().st_mtime for p in sources if p.exists())


def build_if_stale() -> Path:
    """`npm run build` unless dist/ is newer than every source file; returns dist/."""
    index = DIST / "index.html"
    if index.is_file() and index.stat().st_mtime >= _newest_source():
        return DIST
    result = subprocess.run(
        ["npm", "run", "build"],
        cwd=FRONTEND,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"npm run build failed:\n{result.stdout}\n{result.stderr}"
    return DIST
