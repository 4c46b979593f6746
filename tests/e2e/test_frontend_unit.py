"""The frontend's own checks, so that one pytest run covers everything: eslint (with the
feature-boundary rule), `tsc --strict`, Vitest, and the generated API client being what the
backend's OpenAPI document produces (nobody edits it by hand, nobody forgets to regenerate)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .frontend_tools import FRONTEND, ROOT, require_node


def _run(*command: str, cwd: Path = FRONTEND) -> None:
    result = subprocess.run(
        list(command), cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}"


@pytest.mark.parametrize(
    "script", ["lint", "typecheck", "test"], ids=["eslint", "tsc-strict", "vitest"]
)
def test_frontend_script(script: str) -> None:
    require_node()
    _run("npm", "run", "--silent", script)


def test_api_client_is_generated_from_current_openapi() -> None:
    require_node()
    _run(str(ROOT / "scripts" / "gen-api-client"), "--check", cwd=ROOT)
