"""One `Settings` for every process (API, CLI, workers, migrations), read from the environment.

Variables are prefixed `SLICEPORTAL_` except the two URLs operators expect by their usual names
(`DATABASE_URL`, `REDIS_URL`). Outside development the secret key must be set explicitly.
"""

from __future__ import annotations

from enum import StrEnum
from functools import lru_cache

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEVELOPMENT_SECRET = "development-only-secret-change-me"


class Environment(StrEnum):
    DEVELOPMENT = "development"
    TEST = "test"
    PRODUCTION = "production"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SLICEPORTAL_", extra="ignore")

    environment: Environment = Environment.DEVELOPMENT
    database_url: str = Field(
        default="postgresql+psycopg://postgres@127.0.0.1:5432/sliceportal",
        validation_alias="DATABASE_URL",
    )
    redis_url: str = Field(default="redis://127.0.0.1:6379/0", validation_alias="REDIS_URL")
    secret_key: str = DEVELOPMENT_SECRET
    access_token_minutes: int = Field(default=30, ge=1, le=24 * 60)
    login_attempts_per_minute: int = Field(default=10, ge=1)
    default_model: str = "harkous"
    default_mtu_bytes: int = Field(default=1500, ge=64, le=65535)
    db_pool_size: int = Field(default=20, ge=1)
    db_max_overflow: int = Field(default=20, ge=0)
    db_pool_timeout_s: float = Field(default=10.0, gt=0)
    db_connect_timeout_s: int = Field(default=5, ge=1)

    @model_validator(mode="after")
    def _refuse_default_secret(self) -> Settings:
        """A forgotten secret in production would let anyone mint tokens."""
        if self.environment is Environment.PRODUCTION and self.secret_key == DEVELOPMENT_SECRET:
            raise ValueError("SLICEPORTAL_SECRET_KEY must be set outside development")
        return self


@lru_cache
def get_settings() -> Settings:
    """The settings of this process; tests clear the cache after changing the environment."""
    return Settings()
