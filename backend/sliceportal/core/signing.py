"""The key that signs access tokens and stream tickets when `SLICEPORTAL_SECRET_KEY` is unset.

There is no built-in default: a key every installation shared would let anyone mint an admin
token. The first process that needs a key generates a random one into `secret_key` in the data
directory (mode 0600); every later process (API, workers, CLI, on any start) reads it back, so
they all sign and verify with the same key. Two processes starting at once agree: each writes
its candidate to a private temporary file and hard-links it into place, which succeeds for one
of them only; the others read the winner's key. Deleting the file and restarting the portal
rotates the key (and ends every session).
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

KEY_FILE_NAME = "secret_key"
MIN_KEY_BYTES = 32
"""HS256 wants at least its hash's 256 bits (RFC 7518, 3.2)."""
PUBLISHED_KEYS = frozenset({"development-only-secret-change-me"})
"""Keys that were ever published as a default: tokens signed with them are forgeable."""


class SigningKeyError(Exception):
    """The key file cannot be made or used; the message says which file and what to do."""


@dataclass(frozen=True)
class KeyFile:
    key: str
    path: Path
    created: bool
    """This process generated the key (else it read one a process generated before)."""


def key_problem(key: str) -> str | None:
    """Why `key` must not sign tokens, or None when it may."""
    if key.strip() in PUBLISHED_KEYS:
        return "is a published default key: anyone could sign tokens with it"
    if len(key.encode()) < MIN_KEY_BYTES:
        return f"is shorter than {MIN_KEY_BYTES} bytes"
    return None


@lru_cache
def key_file(data_dir: Path) -> KeyFile:
    """The key in `data_dir`, generated there first if it has none yet. Read once per process
    and directory setting: tokens are signed and verified on every request, and one process
    never changes keys (rotating the key takes a restart)."""
    path = data_dir.resolve() / KEY_FILE_NAME
    created = False
    if not path.exists():
        created = _create(path)
    return KeyFile(_read(path), path, created)


def _create(path: Path) -> bool:
    """Write a new random key to `path` unless another process got there first; True when
    this call's key is the one in place."""

    def cannot(exc: OSError) -> SigningKeyError:
        return SigningKeyError(f"cannot create the signing key file {path}: {exc.strerror}")

    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        candidate = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(8)}")
        descriptor = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise cannot(exc) from None
    try:
        with os.fdopen(descriptor, "w") as stream:
            stream.write(secrets.token_urlsafe(48) + "\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.link(candidate, path)  # atomic, and refuses to replace a key already in place
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        raise cannot(exc) from None
    finally:
        candidate.unlink(missing_ok=True)


def _read(path: Path) -> str:
    try:
        mode = path.stat().st_mode
        key = path.read_text().strip()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not text"
        raise SigningKeyError(f"cannot read the signing key file {path}: {why}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SigningKeyError(
            f"the signing key file {path} is open to other users "
            f"(mode {stat.S_IMODE(mode):04o}): chmod 600 it"
        )
    problem = key_problem(key)
    if problem is not None:
        raise SigningKeyError(
            f"the key in {path} {problem}: delete the file to have a new one generated"
        )
    return key
