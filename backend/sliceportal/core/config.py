"""One `Settings` for every process (API, CLI, workers, migrations), read from the environment.

Variables are prefixed `SLICEPORTAL_` except the two URLs operators expect by their usual names
(`DATABASE_URL`, `REDIS_URL`). Outside development the secret key must be set explicitly.
"""

from __future__ import annotations

from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from sliceportal.core.paths import FRONTEND_DIST, P4_BUILD, P4INFO_PATH

DEVELOPMENT_SECRET = "development-only-secret-change-me"
REDIS_SCHEMES = frozenset({"redis", "rediss", "unix"})
UNECHOED = frozenset({"DATABASE_URL", "REDIS_URL", "SLICEPORTAL_SECRET_KEY"})
"""Variables whose invalid value is not repeated in the error: they may hold a password."""


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
    default_model: str = "netcalc"
    default_mtu_bytes: int = Field(default=1500, ge=64, le=65535)
    db_pool_size: int = Field(default=20, ge=1)
    db_max_overflow: int = Field(default=20, ge=0)
    db_pool_timeout_s: float = Field(default=10.0, gt=0)
    db_connect_timeout_s: int = Field(default=5, ge=1)
    # The request gate (api/gate.py): API requests a process works on at once (default: the
    # pool's size plus overflow), and how many may wait, for how long, before a 503.
    api_max_in_flight: int | None = Field(default=None, ge=1)
    api_max_waiting: int = Field(default=200, ge=0)
    api_max_wait_s: float = Field(default=5.0, gt=0)
    # The control plane (docs/controlplane.md).
    p4info_path: Path = P4INFO_PATH
    ui_dist_dir: Path = FRONTEND_DIST
    """The built UI the API serves at `/` (nothing is served there when it is not built)."""
    p4_device_config_path: Path = P4_BUILD / "sliceportal.json"
    p4rt_batch_size: int = Field(default=1000, ge=1, le=1000)
    p4rt_connect_timeout_s: float = Field(default=5.0, gt=0)
    """How long a reconciliation waits for a switch recorded reachable to connect again (a
    refused connection fails at once; a switch not recorded reachable gets the probe's 1 s).
    A switch that does not answer in time is backed off (its circuit breaker opens): later
    reconciliations of it return at once and only the probe tries it again, so this is paid
    once per outage, not once per change."""
    p4rt_rpc_timeout_s: float = Field(default=30.0, gt=0)
    p4rt_cells_per_read: int = Field(default=4096, ge=1)
    reconcile_interval_s: float = Field(default=10.0, gt=0)
    switch_probe_interval_s: float = Field(default=2.0, gt=0)
    switch_backoff_max_s: float = Field(default=30.0, gt=0)
    """Longest pause between two probes of a switch that does not answer: the pause starts at
    1 s and doubles with every failed probe up to this. A switch back after an outage of T
    seconds is found within about min(T, this) seconds plus one probe interval."""
    outbox_dispatch_interval_s: float = Field(default=5.0, gt=0)
    task_visibility_timeout_s: int = Field(default=60, ge=1)
    bootstrap_switches: str = ""
    # Telemetry and alerts (docs/telemetry.md).
    telemetry_poll_interval_s: float = Field(default=1.0, ge=0.05, le=60)
    telemetry_cells_per_period: int = Field(default=100_000, ge=1)
    """Counter cells read per switch and period, any kind of switch: every cell of 4,096 slices
    (81,920) fits. Measured on BMv2 (behavioral-model of 2023-11): all 81,920 counter cells in
    31.9 ms, 4,096 named cells at 0.53 us each; the emulator is as fast. (It was 2,000 for BMv2,
    from a figure of ~0.1 ms a cell that was the pure-Python protobuf's own parsing.)"""
    telemetry_refresh_s: float = Field(default=5.0, gt=0)
    """How often the poller re-reads switches, slices, SLAs and analytical bounds."""
    telemetry_downsample_after_s: int = Field(default=3600, ge=60)
    telemetry_retention_s: int = Field(default=7 * 86400, ge=3600)
    stream_keepalive_s: float = Field(default=15.0, gt=0)
    alert_for_s: float = Field(default=1.0, ge=0)
    alert_clear_for_s: float = Field(default=3.0, ge=0)
    alert_delay_percentile: Literal[50, 95, 99] = 99
    alert_webhook_urls: list[str] = []
    alert_webhook_timeout_s: float = Field(default=5.0, gt=0)
    report_webhook_urls: list[str] = []
    """Where beat delivers the network's capacity planning report (JSON); none: not scheduled."""
    report_interval_s: float = Field(default=86400.0, ge=60)
    report_growth_percent: float = Field(default=5.0, ge=0, le=1000)
    report_horizon_months: int = Field(default=24, ge=1, le=120)

    @field_validator("database_url")
    @classmethod
    def _postgresql_url(cls, url: str) -> str:
        """Only PostgreSQL is supported; a typo here otherwise surfaces at the first query."""
        try:
            backend = make_url(url).get_backend_name()
        except ArgumentError:
            backend = None
        if backend != "postgresql":
            raise ValueError("not a PostgreSQL URL (postgresql+psycopg://user@host:port/db)")
        return url

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, url: str) -> str:
        if urlsplit(url).scheme not in REDIS_SCHEMES:
            raise ValueError("not a Redis URL (redis://host:port/db)")
        return url

    @model_validator(mode="after")
    def _refuse_default_secret(self) -> Settings:
        """A forgotten secret in production would let anyone mint tokens."""
        if self.environment is Environment.PRODUCTION and self.secret_key == DEVELOPMENT_SECRET:
            raise ValueError("SLICEPORTAL_SECRET_KEY must be set outside development")
        return self


class SettingsError(ValueError):
    """The environment holds an invalid setting; the message names the variable, on one line."""


@lru_cache
def get_settings() -> Settings:
    """The settings of this process; tests clear the cache after changing the environment."""
    try:
        return Settings()
    except ValidationError as exc:
        raise SettingsError(_describe(exc)) from None


def _describe(exc: ValidationError) -> str:
    """`invalid setting VARIABLE='value': why`, for each error, on one line (not pydantic's
    multi-line report, which names the field rather than the variable to fix)."""
    parts = []
    for error in exc.errors():
        why = error["msg"].removeprefix("Value error, ")
        if not error["loc"]:  # a rule across fields: its message names the variables
            parts.append(why)
            continue
        name = str(error["loc"][0])
        variable = name if name not in Settings.model_fields else f"SLICEPORTAL_{name.upper()}"
        given = "" if variable in UNECHOED else f"={error['input']!r}"
        parts.append(f"invalid setting {variable}{given}: {why}")
    return "; ".join(parts)
