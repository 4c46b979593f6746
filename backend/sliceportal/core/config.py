"""One `Settings` for every process (API, CLI, workers, migrations), read from the environment.

Variables are prefixed `SLICEPORTAL_` except the two URLs operators expect by their usual names
(`DATABASE_URL`, `REDIS_URL`). The proxy, network and directory lists are comma-separated
(`a,b,c`; the webhook lists are JSON). There is no default signing key: unset, one is
generated into the data directory (`core.signing`).
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from sliceportal.core import signing
from sliceportal.core.paths import FRONTEND_DIST, P4_BUILD, P4INFO_PATH

TASK_TIME_LIMIT_GRACE_S = 3.0
"""From a task's soft time limit to its hard one (the pool process is killed): the time it has
to give up the switch (its StreamChannel, its advisory lock) and queue its next run."""

DEFAULT_SWITCH_NETWORKS = (
    "127.0.0.0/8",
    "::1/128",
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "fc00::/7",
    "localhost",
)
"""Loopback and the private ranges (RFC 1918, RFC 4193): the embedded emulator and a lab
network work out of the box; public addresses and link-local ones (cloud metadata services
live at 169.254.169.254) do not."""
HOST_NAME = re.compile(r"^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?)+$")
"""A DNS host name (RFC 1123 labels), as switch addresses and `switch_networks` give them."""
REDIS_SCHEMES = frozenset({"redis", "rediss", "unix"})
UNECHOED = frozenset({"DATABASE_URL", "REDIS_URL", "SLICEPORTAL_SECRET_KEY"})
"""Variables whose invalid value is not repeated in the error: they may hold a password."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SLICEPORTAL_", extra="ignore")

    database_url: str = Field(
        default="postgresql+psycopg://postgres@127.0.0.1:5432/sliceportal",
        validation_alias="DATABASE_URL",
    )
    redis_url: str = Field(default="redis://127.0.0.1:6379/0", validation_alias="REDIS_URL")
    data_dir: Path = Path(".sliceportal")
    """Where `serve` keeps embedded PostgreSQL and Redis and the logs, and where the generated
    signing key (and, by default, the switches' TLS files) are: every process of one portal
    must see the same directory (`serve` passes its `--data-dir` on to its children)."""
    secret_key: str | None = None
    """Signs access tokens and stream tickets; None: the key file in `data_dir`."""
    access_token_minutes: int = Field(default=30, ge=1, le=24 * 60)
    behind_tls_proxy: bool = False
    """Clients reach the portal over HTTPS through a TLS-terminating proxy that speaks plain
    HTTP to it: send Strict-Transport-Security and mark the session cookies Secure anyway."""
    # Login throttling (api/throttle.py): failed logins per client address (any user name), and
    # per user name (from any address, known or not) before that account is locked a while.
    login_attempts_per_minute: int = Field(default=10, ge=1)
    login_account_max_failures: int = Field(default=10, ge=1)
    login_account_window_s: int = Field(default=900, ge=1)
    login_account_lockout_s: int = Field(default=900, ge=1)
    trusted_proxies: Annotated[tuple[str, ...], NoDecode] = ()
    """Addresses or networks of reverse proxies whose X-Forwarded-For names the client; from
    anyone else the header is ignored (default: nobody's)."""
    # What the portal connects to (docs/security.md).
    switch_networks: Annotated[tuple[str, ...], NoDecode] = DEFAULT_SWITCH_NETWORKS
    """Networks (CIDR) and host names (`name`, or `.domain` for any name under it) that switch
    addresses may name."""
    tls_dirs: Annotated[tuple[Path, ...], NoDecode] = ()
    """Directories the switches' TLS files must be in; none given: `data_dir`/tls."""
    default_model: str = "netcalc"
    default_mtu_bytes: int = Field(default=1500, ge=64, le=65535)
    db_pool_size: int = Field(default=20, ge=1)
    db_max_overflow: int = Field(default=20, ge=0)
    db_pool_timeout_s: float = Field(default=10.0, gt=0)
    db_connect_timeout_s: int = Field(default=5, ge=1)
    db_read_pool_size: int = Field(default=4, ge=1)
    """Connections per API process for the reads answered on the event loop (`db.aio`): each
    statement holds one for a fraction of a millisecond, so a few serve thousands a second."""
    api_statement_timeout_s: float = Field(default=5.0, ge=0.1, le=3600)
    """An API request's statement (a lock wait included) is cancelled by the server after this,
    and a server silent 1 s longer (stopped, hung) has its connection closed: 503 either way.
    Its statements take milliseconds (a creation on a link of 4,000 slices: 5.5 ms in all,
    docs/api.md); a lock wait is the queue behind the link's other changes, a fraction of a
    second under the gate's 40 requests in flight."""
    health_ready_timeout_s: float = Field(default=0.8, gt=0, le=10)
    """`/health/ready` answers 503 when the database or Redis has not answered within this."""
    # The request gate (api/gate.py): API requests a process works on at once (default: the
    # pool's size plus overflow), and how many may wait, for how long, before a 503.
    api_max_in_flight: int | None = Field(default=None, ge=1)
    api_max_waiting: int = Field(default=200, ge=0)
    api_max_wait_s: float = Field(default=5.0, gt=0)
    api_max_body_bytes: int = Field(default=2 * 1024 * 1024, ge=1024)
    """Larger request bodies are refused (413) before they are parsed. The largest a client
    needs is an analysis document of a whole switch: 4,096 slices, 0.6-1.0 MB of JSON."""
    # Event streams a process holds open (an open stream holds no gate slot, docs/api.md): per user
    # (the UI opens at most two per tab, and a browser at most six connections per site) and in
    # all (each holds a Redis connection, and its messages cost the event loop that serves the
    # API). Beyond: 429 `too-many-streams` for one user, 503 `server-busy` for the process.
    stream_max_per_user: int = Field(default=8, ge=1)
    stream_max_total: int = Field(default=200, ge=1)
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
    reconcile_time_limit_s: float = Field(default=10.0, gt=0)
    """Soft time limit of a reconciliation on the main lane (queue `celery`). A run that
    exceeds it is stopped, its switch is moved to the slow lane and the run goes on there, so
    a slow switch holds a process of the main worker at most this long (docs/controlplane.md,
    "Lanes"). Keep it above a healthy switch's full push (1 to 2 s for 10,000 entries)."""
    slow_reconcile_time_limit_s: float = Field(default=45.0, gt=0)
    """Soft time limit of a reconciliation on the slow lane (queue `slow-switches`): a longer
    run is stopped and queued again behind the other slow switches. With the grace
    (`TASK_TIME_LIMIT_GRACE_S`) it must stay below `task_visibility_timeout_s`, else Redis
    would deliver a run that is still going a second time."""
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
    """Raw samples are folded into minute rows by partition, once their whole partition is
    older than this: each is kept this long and at most `telemetry_partition_s` longer."""
    telemetry_retention_s: int = Field(default=7 * 86400, ge=3600)
    """Rows are dropped by partition, once their whole partition is older than this: minute
    rows are kept this long and at most a day longer."""
    telemetry_partition_s: int = Field(default=3600, ge=60, le=86400)
    """The span of a raw samples' partition (docs/telemetry.md "Partitions"): whole minutes
    that divide a day, so that partitions align on days and hold whole minutes."""
    stream_keepalive_s: float = Field(default=15.0, gt=0)
    # Prometheus (docs/telemetry.md, "Prometheus").
    metrics_max_slices: int = Field(default=1000, ge=0)
    """The cardinality guard of `/metrics`: with more slices than this holding telemetry, no
    per-slice series are exported, only the per-switch sums of their counters, and
    `sliceportal_metrics_slices_omitted` says how many slices were left out."""
    metrics_lookback_s: float = Field(default=300.0, ge=10, le=3000)
    """How far back a scrape of `/metrics` looks for stored samples it has not counted yet: a
    scrape later than this after the one before misses the samples in between. Only raw samples
    are counted: keep it under `telemetry_downsample_after_s`."""
    poller_metrics_port: int | None = Field(default=None, ge=0, le=65535)
    """Where `sliceportal poller` serves its own `/metrics` (0: any free port, logged); unset:
    not served."""
    poller_metrics_host: str = "127.0.0.1"
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

    @model_validator(mode="after")
    def _time_limits_within_visibility(self) -> Settings:
        """A run must end (its hard limit) before Redis gives its message to another worker,
        and the slow lane exists to let runs go on longer than the main lane allows."""
        if self.slow_reconcile_time_limit_s < self.reconcile_time_limit_s:
            raise ValueError("slow_reconcile_time_limit_s must be at least reconcile_time_limit_s")
        hard_limit = self.slow_reconcile_time_limit_s + TASK_TIME_LIMIT_GRACE_S
        if hard_limit >= self.task_visibility_timeout_s:
            raise ValueError(
                f"slow_reconcile_time_limit_s + {TASK_TIME_LIMIT_GRACE_S:g} s (its hard limit) "
                f"must be below task_visibility_timeout_s ({self.task_visibility_timeout_s} s)"
            )
        return self

    @field_validator("telemetry_partition_s")
    @classmethod
    def _whole_minutes_dividing_a_day(cls, span_s: int) -> int:
        if span_s % 60 or 86400 % span_s:
            raise ValueError("must be whole minutes that divide a day (60, 300, 3600, …)")
        return span_s

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

    @field_validator("secret_key")
    @classmethod
    def _usable_secret_key(cls, key: str | None) -> str | None:
        """A published or short key would let anyone forge tokens: refuse to start with it."""
        problem = None if key is None else signing.key_problem(key)
        if problem is not None:
            raise ValueError(f"the key {problem} (unset it to have one generated)")
        return key

    @field_validator("trusted_proxies", "switch_networks", "tls_dirs", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(filter(None, (part.strip() for part in value.split(","))))
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _proxy_addresses(cls, entries: tuple[str, ...]) -> tuple[str, ...]:
        """Only addresses and networks: uvicorn would silently take anything else as a name
        that no peer ever has."""
        for entry in entries:
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(f"{entry!r} is not an IP address or network") from None
        return entries

    @field_validator("switch_networks")
    @classmethod
    def _networks_and_names(cls, entries: tuple[str, ...]) -> tuple[str, ...]:
        normalised = []
        for entry in entries:
            try:
                normalised.append(str(ipaddress.ip_network(entry, strict=False)))
                continue
            except ValueError:
                pass
            name = entry.lower().rstrip(".")
            if not HOST_NAME.match(name.removeprefix(".")):
                raise ValueError(f"{entry!r} is neither a network (CIDR) nor a host name")
            normalised.append(name)
        return tuple(normalised)

    def signing_key(self) -> str:
        """The key that signs and verifies tokens (generated on first use when not set)."""
        if self.secret_key is not None:
            return self.secret_key
        return signing.key_file(self.data_dir).key

    def signing_key_source(self) -> str:
        """Where the signing key comes from, for the log (never the key)."""
        if self.secret_key is not None:
            return "SLICEPORTAL_SECRET_KEY"
        found = signing.key_file(self.data_dir)
        return f"{'generated into' if found.created else 'read from'} {found.path}"

    def tls_directories(self) -> tuple[Path, ...]:
        return self.tls_dirs or (self.data_dir / "tls",)


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
