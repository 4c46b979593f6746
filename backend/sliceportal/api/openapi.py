"""The OpenAPI document's component schemas that operations refer to by `$ref` but FastAPI does
not collect itself: the problem details every error answers with (`api.problems.RESPONSES`),
and the analytics' request bodies (`schemas.analysis.LinkDocument` and `SlicesDocument`), which
`parse_link_input` validates, not pydantic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from pydantic import TypeAdapter

from sliceportal.api.deps import required_role
from sliceportal.schemas import analysis, problems

REF_TEMPLATE = "#/components/schemas/{model}"
ROLE_EXTENSION = "x-required-role"
"""Each operation's least role, from its dependencies (`deps.required_role`); `anonymous`:
no token needed. tests/api/test_permissions.py calls every operation as each role against it
and checks it against the table of docs/api.md."""
ANONYMOUS = "anonymous"


def _schemas(adapter: TypeAdapter[Any], name: str) -> dict[str, Any]:
    """`adapter`'s schema as `name`, and the schemas it refers to, as components."""
    schema = adapter.json_schema(ref_template=REF_TEMPLATE)
    definitions: dict[str, Any] = schema.pop("$defs", {})
    return definitions | {name: schema}


def component_schemas() -> dict[str, Any]:
    return (
        _schemas(problems.PROBLEM_DETAILS, "ProblemDetails")
        | _schemas(TypeAdapter(analysis.LinkDocument), "LinkDocument")
        | _schemas(TypeAdapter(analysis.SlicesDocument), "SlicesDocument")
    )


def _mark_required_roles(paths: dict[str, Any], prefix: str, routers: Sequence[APIRouter]) -> None:
    for router in routers:
        for route in router.routes:
            if isinstance(route, APIRoute) and route.include_in_schema:
                role = required_role(route.dependant)
                for method in route.methods or ():
                    operation = paths[prefix + route.path_format][method.lower()]
                    operation[ROLE_EXTENSION] = ANONYMOUS if role is None else role.value


def document(app: FastAPI, prefix: str, routers: Sequence[APIRouter]) -> None:
    """Make `app.openapi()` hold `component_schemas()` and the required role of each operation
    of `routers` (included under `prefix`), built once."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            built = generate()
            schemas = built.setdefault("components", {}).setdefault("schemas", {})
            for name, schema in component_schemas().items():
                if schemas.setdefault(name, schema) != schema:
                    raise RuntimeError(f"two OpenAPI schemas are named {name!r}")
            _mark_required_roles(built["paths"], prefix, routers)
            app.openapi_schema = built
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
