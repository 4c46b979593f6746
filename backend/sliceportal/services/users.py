"""Accounts: users with roles, their passwords (argon2id) and their API tokens."""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from sliceportal import security
from sliceportal.core.config import Settings
from sliceportal.db.changes import ChangeContext
from sliceportal.db.models import ApiToken, ChangeLogEntry, User
from sliceportal.db.session import create_db_engine, create_sessionmaker
from sliceportal.schemas.choices import Role
from sliceportal.schemas.tokens import ApiTokenCreate
from sliceportal.schemas.users import UserCreate, UserUpdate, UserUpdateMe
from sliceportal.services import crud
from sliceportal.services.errors import ConflictError, InvalidFieldError

FIRST_ADMIN = "admin"


def authenticate(session: Session, username: str, password: str) -> User | None:
    """The active user with these credentials (same work whether or not the user exists; a
    name PostgreSQL text cannot hold names no user)."""
    user = None
    if "\x00" not in username:
        user = session.scalar(select(User).where(User.username == username))
    if not security.verify_password(password, user.hashed_password if user else None):
        return None
    return user if user is not None and user.is_active else None


def _taken(session: Session, data: UserCreate | UserUpdate | UserUpdateMe, user_id: int) -> None:
    """Name a taken username or email as the field at fault (before the constraint would)."""
    for field in ("username", "email"):
        value = getattr(data, field, None)
        column = getattr(User, field)
        if value is not None and session.scalar(
            select(exists().where(column == value, User.id != user_id))
        ):
            raise ConflictError(f"{field} {value!r} is already taken", field=field)


def create_user(session: Session, context: ChangeContext, data: UserCreate) -> User:
    _taken(session, data, user_id=0)
    values = data.model_dump(exclude={"password"})
    user = User(**values, hashed_password=security.hash_password(data.password))
    return crud.create(session, context, user)


def update_user(
    session: Session, context: ChangeContext, user: User, data: UserUpdate | UserUpdateMe
) -> User:
    _taken(session, data, user.id)
    values = data.model_dump(exclude_unset=True, exclude={"password", "current_password"})
    if user.id == context.user_id and (
        values.get("role", user.role) is not user.role or values.get("is_active") is False
    ):
        raise ConflictError(
            "you cannot change your own role or deactivate yourself (another admin can): "
            "the portal could be left without an admin"
        )
    if data.password is not None:
        values["hashed_password"] = security.hash_password(data.password)
    return crud.update(session, context, user, values)


def update_me(session: Session, context: ChangeContext, user: User, data: UserUpdateMe) -> User:
    """Users change their own password only by proving they know the current one."""
    if data.password is not None and not security.verify_password(
        data.current_password or "", user.hashed_password
    ):
        raise InvalidFieldError("the current password is wrong", field="current_password")
    return update_user(session, context, user, data)


def delete_user(session: Session, context: ChangeContext, user: User) -> None:
    """Users who changed something stay, as the change log names them: deactivate them."""
    if user.id == context.user_id:
        raise ConflictError("you cannot delete yourself")
    if session.scalar(select(exists().where(ChangeLogEntry.user_id == user.id))):
        raise ConflictError(
            f"user {user.username!r} appears in the change log; deactivate it instead"
        )
    crud.delete(session, context, user)


def create_api_token(
    session: Session, context: ChangeContext, user_id: int, data: ApiTokenCreate
) -> tuple[ApiToken, str]:
    """A new token for user `user_id` and its secret, which is stored only as a hash."""
    if session.scalar(
        select(exists().where(ApiToken.user_id == user_id, ApiToken.name == data.name))
    ):
        raise ConflictError(f"you already have a token named {data.name!r}", field="name")
    new = security.new_api_token()
    expires_at = None
    if data.expires_in_days is not None:
        expires_at = dt.datetime.now(dt.UTC) + dt.timedelta(days=data.expires_in_days)
    token = ApiToken(
        user_id=user_id,
        name=data.name,
        prefix=new.prefix,
        token_hash=new.token_hash,
        expires_at=expires_at,
    )
    return crud.create(session, context, token), new.token


def revoke_api_token(session: Session, context: ChangeContext, token: ApiToken) -> ApiToken:
    if token.revoked_at is not None:
        return token
    return crud.update(session, context, token, {"revoked_at": dt.datetime.now(dt.UTC)})


def system_context(purpose: str) -> ChangeContext:
    """The change-log identity of set-up commands run outside any request."""
    return ChangeContext(user_id=None, request_id=f"{purpose}-{uuid.uuid4().hex}")


def create_admin(session: Session, username: str, password: str, email: str | None = None) -> User:
    data = UserCreate(username=username, password=password, email=email, role=Role.ADMIN)
    return create_user(session, system_context("create-admin"), data)


def ensure_first_admin(settings: Settings) -> tuple[str, str] | None:
    """Create user `admin` with a generated password when no admin exists yet.

    Returns (username, password) to show once, or None when an admin already exists.
    """
    engine = create_db_engine(settings)
    try:
        with create_sessionmaker(engine)() as session:
            if session.scalar(select(exists().where(User.role == Role.ADMIN))):
                return None
            password = security.generate_password()
            create_admin(session, FIRST_ADMIN, password)
            return FIRST_ADMIN, password
    finally:
        engine.dispose()
