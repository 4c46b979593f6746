from __future__ import annotations

from fastapi import APIRouter, status

from sliceportal.api.deps import (
    ChangeContextDep,
    CurrentUser,
    PageDep,
    PrincipalsDep,
    SessionDep,
    paginate,
    select_where,
)
from sliceportal.api.problems import Problem
from sliceportal.db.models import ApiToken
from sliceportal.schemas.choices import Role
from sliceportal.schemas.common import RowId
from sliceportal.schemas.tokens import (
    ApiTokenCreate,
    ApiTokenCreated,
    ApiTokenPublic,
    ApiTokensPublic,
)
from sliceportal.services import crud, users
from sliceportal.services.errors import NotFoundError

router = APIRouter(prefix="/tokens", tags=["tokens"])


@router.get("")
def read_tokens(
    session: SessionDep, user: CurrentUser, page: PageDep, user_id: RowId | None = None
) -> ApiTokensPublic:
    """Your API tokens; admins may list anyone's with `user_id`. Secrets are never shown."""
    if user_id is not None and user_id != user.user_id and user.role is not Role.ADMIN:
        raise Problem(
            403, "forbidden", "only admins list other users' tokens", title="Not enough permissions"
        )
    rows, count = paginate(session, select_where(ApiToken, user_id=user_id or user.user_id), page)
    return ApiTokensPublic(data=[ApiTokenPublic.model_validate(row) for row in rows], count=count)


@router.post("", status_code=status.HTTP_201_CREATED)
def create_token(
    session: SessionDep, user: CurrentUser, context: ChangeContextDep, body: ApiTokenCreate
) -> ApiTokenCreated:
    """A long-lived token for automation, acting with your role. The secret is in this answer
    only: store it now."""
    row, secret = users.create_api_token(session, context, user.user_id, body)
    return ApiTokenCreated(**ApiTokenPublic.model_validate(row).model_dump(), token=secret)


@router.delete("/{token_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke_token(
    session: SessionDep,
    user: CurrentUser,
    context: ChangeContextDep,
    principals: PrincipalsDep,
    token_id: RowId,
) -> None:
    """Revoke one of your tokens (admins: anyone's). The row stays, marked revoked."""
    token = crud.get(session, ApiToken, token_id, lock=True)
    if token.user_id != user.user_id and user.role is not Role.ADMIN:
        raise NotFoundError(f"api token {token_id} does not exist")
    users.revoke_api_token(session, context, token)
    principals.forget_all()
