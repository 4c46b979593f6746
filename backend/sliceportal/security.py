"""Passwords (argon2id), short-lived access tokens (JWT, HS256) and long-lived API tokens.

API tokens look like `sp_<prefix>_<secret>`: the prefix is stored in clear to find the row, the
whole token only as its SHA-256 (a random 256-bit secret needs no slow hash), and the token is
shown once, when it is created.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from dataclasses import dataclass

import jwt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from sliceportal.core.config import Settings

JWT_ALGORITHM = "HS256"
API_TOKEN_SCHEME = "sp"

_hasher = PasswordHasher()
_DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))


class InvalidTokenError(Exception):
    """The bearer token is malformed, forged or expired."""


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password: str, hashed: str | None) -> bool:
    """Check `password`; with `hashed=None` (unknown user) spend the same time and say no."""
    try:
        return _hasher.verify(hashed or _DUMMY_HASH, password) and hashed is not None
    except (VerificationError, InvalidHashError):
        return False


def generate_password() -> str:
    return secrets.token_urlsafe(18)


def create_access_token(user_id: int, settings: Settings) -> tuple[str, int]:
    """A signed token naming the user, and its lifetime in seconds."""
    lifetime = dt.timedelta(minutes=settings.access_token_minutes)
    now = dt.datetime.now(dt.UTC)
    claims = {"sub": str(user_id), "iat": now, "exp": now + lifetime, "typ": "access"}
    token = jwt.encode(claims, settings.signing_key(), algorithm=JWT_ALGORITHM)
    return token, int(lifetime.total_seconds())


def decode_access_token(token: str, settings: Settings) -> tuple[int, dt.datetime]:
    """The user id an access token names and when it expires; raises InvalidTokenError."""
    try:
        claims = jwt.decode(
            token,
            settings.signing_key(),
            algorithms=[JWT_ALGORITHM],
            options={"require": ["exp", "sub"]},
        )
        if claims.get("typ") != "access":
            raise InvalidTokenError("not an access token")
        return int(claims["sub"]), dt.datetime.fromtimestamp(claims["exp"], dt.UTC)
    except (jwt.PyJWTError, ValueError) as exc:
        raise InvalidTokenError(str(exc)) from exc


@dataclass(frozen=True)
class NewApiToken:
    token: str
    prefix: str
    token_hash: str


def hash_api_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_api_token() -> NewApiToken:
    prefix = secrets.token_hex(6)
    token = f"{API_TOKEN_SCHEME}_{prefix}_{secrets.token_urlsafe(32)}"
    return NewApiToken(token=token, prefix=prefix, token_hash=hash_api_token(token))


def api_token_prefix(token: str) -> str | None:
    """The lookup prefix of an API token, or None when `token` is not one (e.g. a JWT)."""
    scheme, _, rest = token.partition("_")
    prefix, _, secret = rest.partition("_")
    if scheme != API_TOKEN_SCHEME or len(prefix) != 12 or not secret:
        return None
    return prefix


def api_token_matches(token: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_api_token(token), stored_hash)
