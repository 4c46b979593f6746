"""Import rules that keep the layers apart (STYLE.md: a pure domain package, one adapter)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "backend" / "sliceportal"


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


@pytest.mark.parametrize(
    "folder", ["p4rt", "switches", "controlplane", "telemetry", "alerts", "api"]
)
def test_the_control_plane_does_not_depend_on_the_emulator(folder: str) -> None:
    for path, names in _imports(folder).items():
        bad = sorted(n for n in names if n.startswith("sliceportal.emulator"))
        assert not bad, f"{path} imports {bad}"


def test_no_module_imports_p4runtime_shell() -> None:
    """p4runtime-shell runs in its own environment (`sliceportal shell`): it pins a protobuf
    too old for the portal's, so no module of the portal imports it."""
    users = sorted(
        path
        for path, names in _imports(".").items()
        if any(n.split(".")[0] == "p4runtime_sh" for n in names)
    )
    assert users == []


def test_only_p4rt_proto_imports_the_generated_messages() -> None:
    users = sorted(
        path
        for path, names in _imports(".").items()
        if any(n.split(".")[0] in ("finsy", "p4") or n.startswith("google.rpc") for n in names)
    )
    assert users == ["p4rt/proto.py"]


def _stdlib() -> frozenset[str]:
    import sys

    return frozenset(sys.stdlib_module_names) | {"__future__"}
