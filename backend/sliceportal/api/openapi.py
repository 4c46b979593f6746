"""The OpenAPI document's component schemas that operations refer to by `$ref` but FastAPI does
not collect itself: the problem details every error answers with (`api.problems.RESPONSES`),
and the analytics' request bodies (`schemas.analysis.LinkDocument` and `SlicesDocument`), which
`parse_link_input` validates, not pydantic."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import TypeAdapter

from sliceportal.schemas import analysis, problems

REF_TEMPLATE = "#/components/schemas/{model}"


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


def document(app: FastAPI) -> None:
    """Make `app.openapi()` hold `component_schemas()`, built once."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            built = generate()
            schemas = built.setdefault("components", {}).setdefault("schemas", {})
            for name, schema in component_schemas().items():
                if schemas.setdefault(name, schema) != schema:
                    raise RuntimeError(f"two OpenAPI schemas are named {name!r}")
            app.openapi_schema = built
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
