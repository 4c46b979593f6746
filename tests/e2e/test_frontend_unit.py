"""The frontend's own checks, so that one pytest run covers everything: eslint (with the layer
and feature boundaries and `import/no-cycle`), `tsc --strict`, Vitest, and the generated API
client being what the backend's OpenAPI document produces (nobody edits it by hand, nobody
forgets to regenerate)."""

from __future__ import annotations

import json
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


@pytest.mark.parametrize(
    ("filename", "source", "rules"),
    [
        # lib sits below components, and components/ui/states imports lib/problem: both rules.
        (
            "src/lib/problem.ts",
            "import { FullPageState } from '@/components/ui/states';\n"
            "export const x = FullPageState;\n",
            {"import/no-restricted-paths", "import/no-cycle"},
        ),
        (
            "src/features/alerts/api/get-alerts.ts",
            "import { LinkForm } from '../../links/components/link-form';\n"
            "export const x = LinkForm;\n",
            {"import/no-restricted-paths"},
        ),
        (
            "src/api/get-health.ts",
            "import { routes } from '@/app/router';\nexport const x = routes;\n",
            {"import/no-restricted-paths"},
        ),
    ],
    ids=["lib-to-components-cycle", "feature-to-feature", "api-to-app"],
)
def test_eslint_refuses_upward_imports_and_cycles(
    filename: str, source: str, rules: set[str]
) -> None:
    """The boundaries are live (a resolver that silently resolves nothing would pass every
    file): sources given on stdin in the place of existing files (import/no-cycle needs the
    file to exist), nothing written."""
    require_node()
    result = subprocess.run(
        ["npx", "eslint", "--format", "json", "--stdin", "--stdin-filename", filename],
        cwd=FRONTEND,
        input=source,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 1, f"{result.stdout}\n{result.stderr}"
    found = {message["ruleId"] for message in json.loads(result.stdout)[0]["messages"]}
    assert rules <= found, found
