"""An invalid setting in the environment is one line naming the variable, and exit 2, before
the command starts anything (no traceback, no pydantic report, no password echoed)."""

from __future__ import annotations

from collections.abc import Iterator

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
            "SLICEPORTAL_ENVIRONMENT",
            "production",
            "SLICEPORTAL_SECRET_KEY must be set outside development",
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
