"""Import rules that keep the layers apart (docs/architecture.md; STYLE.md: a pure domain
package, one adapter)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "backend" / "sliceportal"


def _imports(folder: str) -> dict[str, set[str]]:
    """Top-level-qualified module names each file under `folder` imports."""
    found: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
        found[str(path.relative_to(PACKAGE))] = names
    return found


def test_domain_imports_only_stdlib_numpy_and_itself() -> None:
    allowed_third_party = {"numpy"}
    for path, names in _imports("domain").items():
        for name in names:
            top = name.split(".")[0]
            if top == "sliceportal":
                assert name.startswith("sliceportal.domain"), f"{path} imports {name}"
            else:
                assert top in allowed_third_party or top in _stdlib(), f"{path} imports {name}"


def test_the_import_contracts_hold() -> None:
    """`.importlinter`: the layers of docs/architecture.md, no cycle between the subpackages of
    any package, and the emulator started only by entry points."""
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command; lint_imports_command()",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


SHELL_BOOTSTRAP = "cli/shell_bootstrap.py"
"""Run by p4runtime-shell's own interpreter (.venv-shell), never imported by the portal."""


def test_no_module_of_the_portal_imports_p4runtime_shell() -> None:
    """p4runtime-shell pins an old protobuf: only the bootstrap that its own environment runs
    (`sliceportal shell`) imports it, and no module of the portal imports that bootstrap."""
    imports = _imports(".")
    users = {
        path
        for path, names in imports.items()
        if any(n.split(".")[0] == "p4runtime_sh" for n in names)
    }
    assert users == {SHELL_BOOTSTRAP}, sorted(users)

    module = "sliceportal." + SHELL_BOOTSTRAP.removesuffix(".py").replace("/", ".")
    importers = sorted(
        path
        for path, names in imports.items()
        if module in names or _imports_from(path, "shell_bootstrap")
    )
    assert importers == [], importers


def _imports_from(path: str, name: str) -> bool:
    """Whether `path` has `from … import name` (absolute or relative)."""
    tree = ast.parse((PACKAGE / path).read_text())
    return any(
        isinstance(node, ast.ImportFrom) and any(alias.name == name for alias in node.names)
        for node in ast.walk(tree)
    )


def test_only_p4rt_proto_imports_the_generated_messages() -> None:
    """One module imports the generated P4Runtime stubs (the bootstrap runs in .venv-shell, on
    p4runtime-shell's own stubs)."""
    users = sorted(
        path
        for path, names in _imports(".").items()
        if path != SHELL_BOOTSTRAP
        and any(n.split(".")[0] in ("finsy", "p4") or n.startswith("google.rpc") for n in names)
    )
    assert users == ["p4rt/proto.py"]


def _stdlib() -> frozenset[str]:
    import sys

    return frozenset(sys.stdlib_module_names) | {"__future__"}
