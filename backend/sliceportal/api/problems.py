"""RFC 9457 problem details for every error the API answers, and nothing else.

Each problem has a stable `type` URI under PROBLEM_BASE, a `title` per type, a one-sentence
`detail`, and `field` (e.g. `body.rate_bps`) when one input field is at fault. Database and
Redis outages become 503 with Retry-After, and so does a process too busy to take a request
(`server-busy`, see `gate`); anything unexpected becomes a bare 500 whose body carries the
request id, never a traceback (the traceback goes to the log).
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

import psycopg
import psycopg_pool
import redis
import sqlalchemy.exc
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from sliceportal.db.deadline import DatabaseSilent
from sliceportal.db.models import CONSTRAINT_FIELDS
from sliceportal.domain import SpecError
from sliceportal.services import errors

PROBLEM_BASE = "https://sliceportal.dev/problems/"
MEDIA_TYPE = "application/problem+json"
ROUTABLE_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
RETRY_AFTER_S = 5
BUSY_RETRY_AFTER_S = 1
"""A busy server frees up within a second; an outage takes longer."""

logger = logging.getLogger(__name__)


class Problem(Exception):
    """An error the API answers as problem+json; raise it from handlers and dependencies."""

    def __init__(
        self,
        status: int,
        kind: str,
        detail: str,
        *,
        title: str | None = None,
        field: str | None = None,
        headers: dict[str, str] | None = None,
        **extensions: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.kind = kind
        self.title = title or HTTPStatus(status).phrase
        self.detail = detail
        self.field = field
        self.headers = headers or {}
        self.extensions = extensions

    def body(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": PROBLEM_BASE + self.kind,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "instance": request.url.path,
        }
        if self.field is not None:
            body["field"] = self.field
        body.update(self.extensions)
        return body


class HTTPProblem(StarletteHTTPException):
    """A Problem raised where only an HTTPException passes: from a request's `receive`, whose
    errors FastAPI's body parsing turns into a 400 unless they are HTTPExceptions."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.status, problem.detail, problem.headers)
        self.problem = problem


RESPONSES: dict[int | str, dict[str, Any]] = {
    "default": {
        "description": "An error, as RFC 9457 problem details",
        "content": {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/ProblemDetails"}}},
    }
}
"""Every operation's error answers, for `include_router`. It also keeps FastAPI from
documenting its own validation error (422 `HTTPValidationError`), which the API never sends."""


def problem_response(request: Request, problem: Problem) -> JSONResponse:
    return JSONResponse(
        problem.body(request),
        status_code=problem.status,
        headers=problem.headers,
        media_type=MEDIA_TYPE,
    )


def unauthorized(detail: str) -> Problem:
    return Problem(
        401, "unauthorized", detail, headers={"WWW-Authenticate": 'Bearer realm="sliceportal"'}
    )


def service_unavailable(kind: str, detail: str) -> Problem:
    return Problem(503, kind, detail, headers={"Retry-After": str(RETRY_AFTER_S)})


def server_busy(reason: str) -> Problem:
    """The process is serving all it can (`reason` says how much); retry shortly."""
    return Problem(
        503,
        "server-busy",
        f"the server is busy ({reason}); retry in {BUSY_RETRY_AFTER_S} s",
        headers={"Retry-After": str(BUSY_RETRY_AFTER_S)},
    )


def body_field(field: str | None) -> str | None:
    return None if field is None else f"body.{field}"


def _validation_field(location: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in location)


def _from_validation(exc: RequestValidationError) -> Problem:
    found = [
        {"field": _validation_field(tuple(error["loc"])), "message": error["msg"]}
        for error in exc.errors()
    ]
    first = found[0] if found else {"field": "body", "message": "invalid request"}
    return Problem(
        422,
        "validation-error",
        f"{first['field']}: {first['message']}",
        title="Invalid request",
        field=first["field"],
        errors=found,
    )


def _from_service(exc: errors.ServiceError) -> Problem:
    field = body_field(exc.field)
    match exc:
        case errors.NotFoundError():
            return Problem(404, "not-found", exc.detail, title="Not found")
        case errors.InvalidFieldError():
            fields = [field, *(body_field(other) for other in exc.also)]
            return Problem(
                422,
                "validation-error",
                exc.detail,
                title="Invalid request",
                field=field,
                errors=[{"field": each, "message": exc.detail} for each in fields],
            )
        case errors.RowsRejectedError():
            return _from_rows(exc)
        case errors.NoPathError():
            return Problem(
                409,
                "no-path",
                exc.detail,
                title="No admissible path",
                refused=exc.refused,
                truncated=exc.truncated,
            )
        case errors.AdmissionRejectedError():
            violations = [v for link in exc.links for v in link["violations"]]
            fixes = [fix for link in exc.links for fix in link["fixes"]]
            return Problem(
                409,
                "admission-rejected",
                exc.detail,
                title="Slices would miss their delay bounds",
                violations=violations,
                fixes=fixes,
            )
        case _:
            return Problem(409, "conflict", exc.detail, title="Conflict", field=field)


def _from_rows(exc: errors.RowsRejectedError) -> Problem:
    """An import refused: every offending row in `errors` (row, field within it, reason), and
    admission's violations and fixes when admission refused it."""
    found = [
        {"row": error.row, "field": error.field, "message": error.message} for error in exc.rows
    ]
    if exc.invalid:
        return Problem(422, "validation-error", exc.detail, title="Invalid request", errors=found)
    if exc.links:
        return Problem(
            409,
            "admission-rejected",
            exc.detail,
            title="Slices would miss their delay bounds",
            errors=found,
            violations=[v for link in exc.links for v in link["violations"]],
            fixes=[fix for link in exc.links for fix in link["fixes"]],
        )
    return Problem(409, "conflict", exc.detail, title="Conflict", errors=found)


def _from_integrity(error: BaseException | None) -> Problem:
    """A constraint the database enforced (usually a race the service's own checks lost);
    `error` is the driver's error (what SQLAlchemy wraps, or what plain SQL raised)."""
    diag = getattr(error, "diag", None)
    constraint = getattr(diag, "constraint_name", None) or ""
    sqlstate = getattr(error, "sqlstate", None)
    field = body_field(CONSTRAINT_FIELDS.get(constraint))
    if sqlstate == "23505":
        return Problem(
            409,
            "conflict",
            f"{field or 'a unique value'} is already taken",
            title="Conflict",
            field=field,
            constraint=constraint,
        )
    if sqlstate == "23503":
        return Problem(
            409,
            "conflict",
            "the object is still referenced, or refers to one that is gone",
            title="Conflict",
            field=field,
            constraint=constraint,
        )
    return Problem(
        422,
        "validation-error",
        f"the change breaks the rule {constraint or sqlstate}",
        title="Invalid request",
        field=field,
        constraint=constraint,
    )


def _database_down_detail(error: BaseException | None) -> str:
    """Why the database failed this request, in words for its client."""
    match error:
        case DatabaseSilent():
            return str(error)  # "the database did not answer within N s"
        case psycopg.errors.QueryCanceled():
            return "the database did not finish the request's statement within its time limit"
        case psycopg.errors.ConnectionTimeout() | psycopg_pool.PoolTimeout():
            return "the database did not accept a connection in time"
        case _:
            return "the database cannot be reached now"


def _allowed_methods(request: Request) -> list[str]:
    """The methods the app's documented routes take at the request's path, as the router
    matches them. Starlette's 405 names those of the first route matching the path only (`GET`
    for `OPTIONS /slices`, not `POST`): each method is a route of its own."""
    routes = [
        route for route in request.app.router.routes if getattr(route, "include_in_schema", True)
    ]
    return [
        method
        for method in ROUTABLE_METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes
        )
    ]


def install(app: FastAPI) -> None:
    """Register the handlers that turn every exception into problem+json."""

    @app.exception_handler(Problem)
    def _problem(request: Request, exc: Problem) -> JSONResponse:
        return problem_response(request, exc)

    @app.exception_handler(errors.ServiceError)
    def _service(request: Request, exc: errors.ServiceError) -> JSONResponse:
        return problem_response(request, _from_service(exc))

    @app.exception_handler(SpecError)
    def _spec(request: Request, exc: SpecError) -> JSONResponse:
        field = body_field(exc.field)
        return problem_response(
            request,
            Problem(
                422,
                "validation-error",
                f"{field}: {exc.message}",
                title="Invalid request",
                field=field,
                errors=[{"field": field, "message": exc.message}],
            ),
        )

    @app.exception_handler(RequestValidationError)
    def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return problem_response(request, _from_validation(exc))

    @app.exception_handler(HTTPProblem)
    def _http_problem(request: Request, exc: HTTPProblem) -> JSONResponse:
        return problem_response(request, exc.problem)

    @app.exception_handler(StarletteHTTPException)
    def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = HTTPStatus(exc.status_code).phrase.lower().replace(" ", "-")
        headers = dict(exc.headers or {})
        if exc.status_code == 405 and (allowed := _allowed_methods(request)):
            headers["Allow"] = ", ".join(allowed)
        return problem_response(
            request, Problem(exc.status_code, kind, str(exc.detail), headers=headers)
        )

    @app.exception_handler(sqlalchemy.exc.IntegrityError)
    def _integrity(request: Request, exc: sqlalchemy.exc.IntegrityError) -> JSONResponse:
        return problem_response(request, _from_integrity(exc.orig))

    # The hot paths run plain SQL on the driver connection (`crud.driver`): its errors reach
    # here unwrapped.
    @app.exception_handler(psycopg.errors.IntegrityError)
    def _plain_integrity(request: Request, exc: psycopg.errors.IntegrityError) -> JSONResponse:
        return problem_response(request, _from_integrity(exc))

    def _data(request: Request, exc: Exception) -> JSONResponse:
        # The schemas bound what the columns hold; this is the net under them.
        logger.warning("a value the database refused: %s", exc.__class__.__name__)
        return problem_response(
            request,
            Problem(
                422,
                "validation-error",
                "a value of the request is out of range for the database",
                title="Invalid request",
            ),
        )

    for data_error in (sqlalchemy.exc.DataError, psycopg.errors.DataError):
        app.add_exception_handler(data_error, _data)

    def _database_down(request: Request, exc: Exception) -> JSONResponse:
        error = exc.orig if isinstance(exc, sqlalchemy.exc.DBAPIError) else exc
        logger.warning("database unavailable: %s", error.__class__.__name__)
        return problem_response(
            request, service_unavailable("database-unavailable", _database_down_detail(error))
        )

    for db_error in (
        sqlalchemy.exc.OperationalError,
        sqlalchemy.exc.InterfaceError,
        psycopg.OperationalError,
        psycopg.InterfaceError,
    ):
        app.add_exception_handler(db_error, _database_down)

    @app.exception_handler(sqlalchemy.exc.TimeoutError)
    def _pool_exhausted(request: Request, exc: sqlalchemy.exc.TimeoutError) -> JSONResponse:
        # No pooled connection came free in time: the database is up, this process is full
        # (the gate keeps API requests within the pool; this is anything else that is not).
        return problem_response(request, server_busy("no database connection came free"))

    @app.exception_handler(redis.RedisError)
    def _redis_down(request: Request, exc: redis.RedisError) -> JSONResponse:
        logger.warning("redis unavailable: %s", exc.__class__.__name__)
        return problem_response(
            request, service_unavailable("redis-unavailable", "Redis cannot be reached now")
        )

    @app.exception_handler(Exception)
    def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        request_id = getattr(request.state, "request_id", None)
        logger.exception("unhandled error (request %s)", request_id)
        return problem_response(
            request,
            Problem(
                500,
                "internal-error",
                f"an unexpected error occurred (request {request_id})",
                request_id=request_id,
            ),
        )
