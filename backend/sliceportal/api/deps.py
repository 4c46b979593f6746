"""Dependencies handlers declare as `Annotated` aliases; handlers touch no globals.

Dependencies that do no I/O are `async` so FastAPI does not send them to the thread pool: each
trip there is a thread switch, measured at about 5% of the CPU of a short request.

Authentication takes a bearer token that is either an access token (JWT from the login) or an
API token (`sp_…`), or else the browser's session cookie (an access token, CSRF-checked on
unsafe methods: `api.browser_session`); either way the credential is checked against the
database at most every `api.principals.CREDENTIAL_MEMORY_S` per API process, so deactivating a
user, revoking a token or changing a role takes effect within that, and at once in the process
that made the change.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import anyio
import anyio.to_thread
import redis
import sqlalchemy.exc
from fastapi import Depends, Query, Request
from fastapi.dependencies.models import Dependant
from fastapi.security import OAuth2PasswordBearer
from sqlalchemy import Select, bindparam, func, select, update
from sqlalchemy.orm import Session

from sliceportal import security
from sliceportal.api.browser_session import SessionCookieDep, check_csrf
from sliceportal.api.principals import Principal, PrincipalCache
from sliceportal.api.problems import Problem, unauthorized
from sliceportal.core.config import Settings
from sliceportal.db.aio import ReadPool
from sliceportal.db.base import Base
from sliceportal.db.changes import ChangeContext
from sliceportal.db.models import ApiToken, User
from sliceportal.domain.spec import MAX_OFFSET
from sliceportal.schemas.choices import Role

logger = logging.getLogger(__name__)

API_TOKEN_TOUCH_INTERVAL = dt.timedelta(minutes=1)
"""`last_used_at` is written at most this often, so token use is not a write per request."""

oauth2_scheme = OAuth2PasswordBearer(tokenUrl="/api/v1/login/access-token", auto_error=False)


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_db(request: Request) -> AsyncIterator[Session]:
    """A session opened on the event loop (it connects lazily, so that does no I/O) and closed
    in a worker thread only when it still holds a connection (its rollback is I/O): one trip to
    the thread pool fewer than a sync generator, which enters and exits there.

    Like FastAPI's own exit of sync dependencies, the close is shielded from cancellation and
    takes its own limiter, not a token of the default one: with every worker thread waiting
    for a pooled connection, the closes that return connections must still run. A close whose
    rollback the database fails (gone, or silent past its deadline) is logged, not raised: the
    pool has dropped that connection, and the request has its answer, maybe sent already.
    """
    session: Session = request.app.state.sessionmaker()
    try:
        yield session
    finally:
        if session.get_transaction() is None:
            session.close()
        else:
            with anyio.CancelScope(shield=True):
                try:
                    await anyio.to_thread.run_sync(session.close, limiter=anyio.CapacityLimiter(1))
                except sqlalchemy.exc.DBAPIError as exc:
                    logger.warning("closing a request's session failed: %s", exc.orig)


async def get_redis(request: Request) -> redis.Redis:
    client: redis.Redis = request.app.state.redis
    return client


async def get_read_pool(request: Request) -> ReadPool:
    pool: ReadPool = request.app.state.read_pool
    return pool


SettingsDep = Annotated[Settings, Depends(get_settings)]
ReadPoolDep = Annotated[ReadPool, Depends(get_read_pool)]
SessionDep = Annotated[Session, Depends(get_db)]
RedisDep = Annotated[redis.Redis, Depends(get_redis)]


async def request_token(
    request: Request,
    settings: SettingsDep,
    bearer: Annotated[str | None, Depends(oauth2_scheme)],
    session_cookie: SessionCookieDep,
) -> str | None:
    """The bearer token, else the session cookie's (403 on an unsafe method without its CSRF
    token); None when the request carries neither."""
    if bearer:
        return bearer
    if session_cookie:
        check_csrf(request, session_cookie, settings)
        return session_cookie
    return None


TokenDep = Annotated[str | None, Depends(request_token)]


_USER_OF_API_TOKEN = (
    select(
        User,
        ApiToken.id,
        ApiToken.token_hash,
        ApiToken.revoked_at,
        ApiToken.expires_at,
        ApiToken.last_used_at,
    )
    .join(ApiToken, ApiToken.user_id == User.id)
    .where(ApiToken.prefix == bindparam("prefix"))
)
"""Built once: SQLAlchemy memoises a statement's cache key, so each request skips building and
keying it; only the user is loaded as an object, the token's fields as plain columns."""


def _user_of_api_token(
    session: Session, token: str, prefix: str
) -> tuple[User, dt.datetime | None] | None:
    """The user an API token stands for and when the token expires (None: never), or None for a
    token unknown, revoked or expired. Marks the token used (`API_TOKEN_TOUCH_INTERVAL`)."""
    row = session.execute(_USER_OF_API_TOKEN, {"prefix": prefix}).tuples().first()
    if row is None:
        return None
    user, token_id, token_hash, revoked_at, expires_at, last_used_at = row
    now = dt.datetime.now(dt.UTC)
    if (
        not security.api_token_matches(token, token_hash)
        or revoked_at is not None
        or (expires_at is not None and expires_at <= now)
    ):
        return None
    if last_used_at is None or now - last_used_at > API_TOKEN_TOUCH_INTERVAL:
        session.execute(update(ApiToken).where(ApiToken.id == token_id).values(last_used_at=now))
        session.commit()
    return user, expires_at


def check_credential(session: Session, settings: Settings, token: str) -> tuple[Principal, float]:
    """The principal a bearer token or session cookie stands for, and for how many seconds the
    credential itself stays valid (inf: no expiry); 401 problem when it stands for nobody."""
    now = dt.datetime.now(dt.UTC)
    expires_at: dt.datetime | None
    prefix = security.api_token_prefix(token)
    if prefix is not None:
        found = _user_of_api_token(session, token, prefix)
        if found is None:
            raise unauthorized("the API token is unknown, revoked or expired")
        user, expires_at = found
    else:
        try:
            user_id, expires_at = security.decode_access_token(token, settings)
        except security.InvalidTokenError:
            raise unauthorized("the access token is invalid or expired") from None
        found_user = session.get(User, user_id)
        if found_user is None:
            raise unauthorized("the access token names no user")
        user = found_user
    if not user.is_active:
        raise unauthorized("the user is deactivated")
    valid_for_s = math.inf if expires_at is None else (expires_at - now).total_seconds()
    return Principal(user.id, user.role), valid_for_s


_ROLES: dict[Callable[..., Any], Role] = {}
"""The role each authenticating dependency admits, and each role above it."""
DependencyT = TypeVar("DependencyT", bound=Callable[..., Any])


def admits(role: Role) -> Callable[[DependencyT], DependencyT]:
    """Register a dependency that refuses users below `role` (401 without a user, 403 below
    it), so the OpenAPI document can say what each operation needs (`required_role`)."""

    def register(dependency: DependencyT) -> DependencyT:
        _ROLES[dependency] = role
        return dependency

    return register


def required_role(dependant: Dependant) -> Role | None:
    """The role an operation needs: the highest any of its dependencies admits, at any depth
    (None: anyone may call it)."""
    found = [_ROLES[d.call] for d in _walk(dependant) if d.call in _ROLES]
    return max(found, key=lambda role: role.rank, default=None)


def _walk(dependant: Dependant) -> list[Dependant]:
    return [d for sub in dependant.dependencies for d in (sub, *_walk(sub))]


async def get_principals(request: Request) -> PrincipalCache:
    cache: PrincipalCache = request.app.state.principals
    return cache


PrincipalsDep = Annotated[PrincipalCache, Depends(get_principals)]


def _check_in_session(
    sessionmaker: Callable[[], Session], settings: Settings, token: str
) -> tuple[Principal, float]:
    with sessionmaker() as session:
        return check_credential(session, settings, token)


@admits(Role.VIEWER)
async def get_current_user(
    request: Request, settings: SettingsDep, token: TokenDep, principals: PrincipalsDep
) -> Principal:
    """The request's principal: from the credential memory (`api.principals`) when it was
    checked moments ago, on the event loop; else checked against the database in the thread
    pool, on a session of its own, and remembered."""
    if not token:
        raise unauthorized(
            "this endpoint needs a bearer token (login or API token) or the session cookie"
        )
    remembered = principals.get(token)
    if remembered is not None:
        return remembered
    principal, valid_for_s = await anyio.to_thread.run_sync(
        _check_in_session, request.app.state.sessionmaker, settings, token
    )
    principals.remember(token, principal, valid_for_s)
    return principal


CurrentUser = Annotated[Principal, Depends(get_current_user)]


def require_role(role: Role) -> Callable[[Principal], Awaitable[Principal]]:
    """A dependency admitting users whose role is `role` or above."""

    @admits(role)
    async def dependency(user: CurrentUser) -> Principal:
        if user.role.rank < role.rank:
            raise Problem(
                403,
                "forbidden",
                f"this needs the {role.value} role; you are {user.role.value}",
                title="Not enough permissions",
            )
        return user

    return dependency


ViewerUser = Annotated[Principal, Depends(require_role(Role.VIEWER))]
OperatorUser = Annotated[Principal, Depends(require_role(Role.OPERATOR))]
AdminUser = Annotated[Principal, Depends(require_role(Role.ADMIN))]


async def request_id(request: Request) -> str:
    value: str = request.state.request_id
    return value


RequestIdDep = Annotated[str, Depends(request_id)]


async def change_context(user: CurrentUser, request_id: RequestIdDep) -> ChangeContext:
    return ChangeContext(user_id=user.user_id, request_id=request_id)


ChangeContextDep = Annotated[ChangeContext, Depends(change_context)]


@dataclass(frozen=True)
class PageParams:
    """`skip`/`limit` of a list; lists are ordered by id, so pages are stable."""

    skip: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0
    limit: Annotated[int, Query(ge=1, le=1000)] = 100


PageDep = Annotated[PageParams, Depends()]
RowT = TypeVar("RowT")


def paginate(
    session: Session, query: Select[tuple[RowT]], page: PageParams
) -> tuple[list[RowT], int]:
    """One page of `query` and the number of rows matching it."""
    count = session.scalar(select(func.count()).select_from(query.order_by(None).subquery()))
    rows = list(session.scalars(query.offset(page.skip).limit(page.limit)))
    return rows, count or 0


ModelT = TypeVar("ModelT", bound=Base)


def select_where(
    model: type[ModelT], query: Select[tuple[ModelT]] | None = None, /, **equal: object
) -> Select[tuple[ModelT]]:
    """`query` (default `SELECT model`) by id, `WHERE column = value` for each filter given
    (None = not filtered)."""
    query = (select(model) if query is None else query).order_by(model.__table__.c.id)
    for column, value in equal.items():
        if value is not None:
            query = query.where(getattr(model, column) == value)
    return query
