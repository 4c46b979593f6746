from __future__ import annotations

from fastapi import APIRouter, status

from sliceportal.api.deps import (
    AdminUser,
    ChangeContextDep,
    CurrentUser,
    PageDep,
    PrincipalsDep,
    SessionDep,
    paginate,
    select_where,
)
from sliceportal.db.models import User
from sliceportal.schemas.choices import Role
from sliceportal.schemas.common import FilterText, RowId
from sliceportal.schemas.users import (
    UserCreate,
    UserPublic,
    UsersPublic,
    UserUpdate,
    UserUpdateMe,
)
from sliceportal.services import crud, users

router = APIRouter(prefix="/users", tags=["users"])


@router.get("")
def read_users(
    session: SessionDep,
    _: AdminUser,
    page: PageDep,
    role: Role | None = None,
    is_active: bool | None = None,
    q: FilterText | None = None,
) -> UsersPublic:
    """Users (admin); `q` matches part of the username."""
    query = select_where(User, role=role, is_active=is_active)
    if q:
        query = query.where(User.username.icontains(q, autoescape=True))
    rows, count = paginate(session, query, page)
    return UsersPublic(data=[UserPublic.model_validate(row) for row in rows], count=count)


@router.post("", status_code=status.HTTP_201_CREATED)
def create_user(
    session: SessionDep, _: AdminUser, context: ChangeContextDep, body: UserCreate
) -> UserPublic:
    return UserPublic.model_validate(users.create_user(session, context, body))


@router.get("/me")
def read_user_me(session: SessionDep, user: CurrentUser) -> UserPublic:
    return UserPublic.model_validate(crud.get(session, User, user.user_id))


@router.patch("/me")
def update_user_me(
    session: SessionDep, user: CurrentUser, context: ChangeContextDep, body: UserUpdateMe
) -> UserPublic:
    """Change your own password (with `current_password`), email or name; not your role."""
    row = crud.get(session, User, user.user_id, lock=True)
    return UserPublic.model_validate(users.update_me(session, context, row, body))


@router.get("/{user_id}")
def read_user(session: SessionDep, _: AdminUser, user_id: RowId) -> UserPublic:
    return UserPublic.model_validate(crud.get(session, User, user_id))


@router.patch("/{user_id}")
def update_user(
    session: SessionDep,
    _: AdminUser,
    context: ChangeContextDep,
    user_id: RowId,
    body: UserUpdate,
    principals: PrincipalsDep,
) -> UserPublic:
    """Change a user. A new role or a deactivation takes effect within half a second in
    every API process."""
    user = crud.get(session, User, user_id, lock=True)
    updated = users.update_user(session, context, user, body)
    principals.forget_all()
    return UserPublic.model_validate(updated)


@router.delete("/{user_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_user(
    session: SessionDep,
    _: AdminUser,
    context: ChangeContextDep,
    principals: PrincipalsDep,
    user_id: RowId,
) -> None:
    """Delete a user who never changed anything; deactivate the others (`is_active: false`)."""
    users.delete_user(session, context, crud.get(session, User, user_id, lock=True))
    principals.forget_all()
