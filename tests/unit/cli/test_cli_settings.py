"""An invalid setting in the environment is one line naming the variable, and exit 2, before
the command starts anything (no traceback, no pydantic report, no password echoed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sliceportal.cli.main import main
from sliceportal.core.config import get_settings


@pytest.fixture(autouse=True)
def fresh_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("SLICEPORTAL_SECRET_KEY", raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "SLICEPORTAL_API_MAX_WAIT_S",
            "0",
            "invalid setting SLICEPORTAL_API_MAX_WAIT_S='0': Input should be greater than 0",
        ),
        (
            "SLICEPORTAL_API_MAX_IN_FLIGHT",
            "many",
            "invalid setting SLICEPORTAL_API_MAX_IN_FLIGHT='many': Input should be a valid "
            "integer, unable to parse string as an integer",
        ),
        (
            "DATABASE_URL",
            "mysql://admin:hunter2@db/portal",
            "invalid setting DATABASE_URL: not a PostgreSQL URL "
            "(postgresql+psycopg://user@host:port/db)",
        ),
        ("REDIS_URL", "http://cache", "invalid setting REDIS_URL: not a Redis URL"),
        (
            "SLICEPORTAL_SECRET_KEY",
            "development-only-secret-change-me",
            "invalid setting SLICEPORTAL_SECRET_KEY: the key is a published default key: anyone "
            "could sign tokens with it (unset it to have one generated)",
        ),
        (
            "SLICEPORTAL_SECRET_KEY",
            "hunter2-is-31-bytes-of-a-secret",
            "invalid setting SLICEPORTAL_SECRET_KEY: the key is shorter than 32 bytes",
        ),
        (
            "SLICEPORTAL_TRUSTED_PROXIES",
            "10.0.0.1,proxy.example",
            "invalid setting SLICEPORTAL_TRUSTED_PROXIES='10.0.0.1,proxy.example': "
            "'proxy.example' is not an IP address or network",
        ),
        (
            "SLICEPORTAL_SWITCH_NETWORKS",
            "10.0.0.0/8,not_a_name",
            "invalid setting SLICEPORTAL_SWITCH_NETWORKS='10.0.0.0/8,not_a_name': "
            "'not_a_name' is neither a network (CIDR) nor a host name",
        ),
    ],
)
@pytest.mark.parametrize("command", [["serve", "--data-dir", "/nonexistent/sp"], ["migrate"]])
def test_an_invalid_setting_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
    variable: str,
    value: str,
    message: str,
) -> None:
    monkeypatch.setenv(variable, value)
    assert main(command) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"sliceportal: {message}")
    assert err.count("\n") == 1
    assert "hunter2" not in err


@pytest.mark.parametrize(
    ("option", "value", "why"),
    [
        ("--port", "70000", "'70000' is not a TCP port (1..65535)"),
        ("--port", "0", "'0' is not a TCP port (1..65535)"),
        ("--port", "http", "'http' is not a TCP port (1..65535)"),
        ("--host", "bad host!", "'bad host!' is not an IP address or host name"),
    ],
)
def test_serve_refuses_a_bad_listen_address_before_it_starts_anything(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, option: str, value: str, why: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--data-dir", str(tmp_path), option, value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err == f"sliceportal serve: argument {option}: {why} (see sliceportal serve --help)\n"
    assert not any(tmp_path.iterdir())  # no key, no database, no log


@pytest.mark.parametrize(
    ("switches", "why"),
    [
        ("far=8.8.8.8:9559", "'8.8.8.8:9559': 8.8.8.8 is outside the networks switches may be at"),
        ("typo=10.0.0.1:95590", "'10.0.0.1:95590': must be host:port with a port in 1..65535"),
    ],
)
def test_serve_refuses_a_bootstrap_switch_the_api_would_refuse(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    switches: str,
    why: str,
) -> None:
    """Before it starts anything: the database and Redis here do not answer."""
    monkeypatch.setenv("SLICEPORTAL_DATA_DIR", str(tmp_path))  # serve sets it: undone after
    monkeypatch.setenv("SLICEPORTAL_BOOTSTRAP_SWITCHES", switches)
    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    assert main(["serve", "--no-switch", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    name = switches.partition("=")[0]
    assert err.startswith(f"sliceportal: SLICEPORTAL_BOOTSTRAP_SWITCHES: {name}: {why}")
    assert err.count("\n") == 1
