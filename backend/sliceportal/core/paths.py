"""Where the repository's non-Python artefacts live, found from the (editable) installation."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
P4_BUILD = REPO_ROOT / "p4" / "build"
P4INFO_PATH = P4_BUILD / "sliceportal.p4info.txtpb"
MIGRATIONS_DIR = REPO_ROOT / "migrations"
FRONTEND_DIST = REPO_ROOT / "frontend" / "dist"
