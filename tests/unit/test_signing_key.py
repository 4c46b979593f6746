"""The generated signing key (core/signing.py): one key per data directory, whichever process
makes it, kept from other users; a key file open to them, or a published key, is refused."""

from __future__ import annotations

import multiprocessing
import re
import stat
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from sliceportal.core.config import Settings
from sliceportal.core.signing import SigningKeyError

PROCESSES = 8


def _start_at_once(data_dir: Path, barrier: Barrier, results: multiprocessing.Queue[str]) -> None:
    barrier.wait()
    settings = Settings(data_dir=data_dir)
    results.put(f"{settings.signing_key()} {settings.signing_key_source().split()[0]}")


def test_processes_starting_at_once_share_one_generated_key(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(PROCESSES)
    results: multiprocessing.Queue[str] = context.Queue()
    workers = [
        context.Process(target=_start_at_once, args=(tmp_path / "data", barrier, results))
        for _ in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    answers = [results.get(timeout=30).split() for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    keys = {key for key, _ in answers}
    assert len(keys) == 1, "processes sign with different keys"
    assert sorted(source for _, source in answers).count("generated") == 1
    key_file = tmp_path / "data" / "secret_key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert key_file.read_text().strip() == keys.pop()
    assert [path.name for path in key_file.parent.iterdir()] == ["secret_key"]
    assert Settings(data_dir=tmp_path / "data").signing_key_source().startswith("read from")


@pytest.mark.parametrize(
    ("content", "mode", "why"),
    [
        ("x" * 64, 0o644, "is open to other users (mode 0644): chmod 600 it"),
        ("development-only-secret-change-me", 0o600, "is a published default key"),
        ("short", 0o600, "is shorter than 32 bytes"),
    ],
)
def test_an_unusable_key_file_is_refused(tmp_path: Path, content: str, mode: int, why: str) -> None:
    key_file = tmp_path / "secret_key"
    key_file.write_text(content)
    key_file.chmod(mode)
    with pytest.raises(SigningKeyError, match=re.escape(why)):
        Settings(data_dir=tmp_path).signing_key()
