"""The OpenAPI document says what the API's errors are: problem+json, `ProblemDetails`, on every
operation, and not FastAPI's own validation error, which the API never sends. (That every error
the API tests provoke matches `ProblemDetails` is checked by their client: utils.fixtures.)"""

from __future__ import annotations

from typing import Any

import pytest

from sliceportal.api import problems
from sliceportal.api.main import create_app
from sliceportal.core.config import Settings


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    """Building the app connects to nothing."""
    openapi: dict[str, Any] = create_app(Settings()).openapi()
    return openapi


def test_every_operation_answers_its_errors_as_problem_details(document: dict[str, Any]) -> None:
    operations = [
        (f"{method.upper()} {path}", operation["responses"])
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]
    assert len(operations) > 40
    for name, responses in operations:
        assert "422" not in responses, name
        assert responses["default"]["content"] == {
            problems.MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/ProblemDetails"}}
        }, name


def test_problem_schemas_are_closed_and_fastapi_s_own_are_gone(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    assert "HTTPValidationError" not in schemas
    assert "ValidationError" not in schemas
    details = schemas["ProblemDetails"]
    assert details["required"] == ["type", "title", "status", "detail", "instance"]
    assert details["additionalProperties"] is False
    fixes = details["properties"]["fixes"]["items"]["discriminator"]
    assert fixes["mapping"] == {
        "capacity": "#/components/schemas/ProblemCapacityFix",
        "priority-plan": "#/components/schemas/ProblemPriorityPlanFix",
    }


def test_the_document_is_built_once() -> None:
    app = create_app(Settings())
    assert app.openapi() is app.openapi()
