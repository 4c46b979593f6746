"""Login throttling, counted in Redis so that every API process sees the same counts.

Two throttles guard the password login, each a counter of failed attempts with a lock:

- per client address (any user name): `login_attempts_per_minute` failures in a minute lock
  that address out of the login for a minute. The address is the TCP peer's, or the one a
  trusted proxy (`SLICEPORTAL_TRUSTED_PROXIES`) names in X-Forwarded-For: a client cannot
  pick its own by sending the header. An IPv6 client counts by its /64, the block one host
  usually has to itself.
- per user name (from any address): `login_account_max_failures` failures within
  `login_account_window_s` lock the name for `login_account_lockout_s`, during which even the
  right password is refused. Names are counted whether or not such a user exists, so the
  answer tells nothing about which names exist.

An attempt is counted as a failure before the password is checked (so parallel guesses cannot
slip past the limit together) and given back once it succeeded. While a lock holds, attempts
are refused before the password is checked, with the seconds to wait.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
from dataclasses import dataclass

import redis

_KEY_PREFIX = "sliceportal:login"

# KEYS: lock, failures; ARGV: limit, window_s, lockout_s. The milliseconds the lock has left,
# or 0 when the attempt may go ahead (and was counted).
_ATTEMPT = """
local locked = redis.call('PTTL', KEYS[1])
if locked > 0 then return locked end
local failures = redis.call('INCR', KEYS[2])
if failures == 1 then redis.call('EXPIRE', KEYS[2], ARGV[2]) end
if failures > tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'EX', ARGV[3])
  redis.call('DEL', KEYS[2])
  return tonumber(ARGV[3]) * 1000
end
return 0
"""
# KEYS: failures. Give back the attempt counted by _ATTEMPT (unless its window ended since).
_SUCCEEDED = """
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DECR', KEYS[1]) end
return 0
"""


def address_subject(host: str) -> str:
    """What the per-address throttle counts for a client: its address, or for IPv6 its /64."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:  # not an address (a test client's name, a Unix socket)
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


@dataclass(frozen=True)
class Throttle:
    """At most `limit` failures within `window_s` per subject, then a `lockout_s` lock."""

    scope: str
    limit: int
    window_s: int
    lockout_s: int

    def _keys(self, subject: str) -> tuple[str, str]:
        # Hashed: a key of bounded length, whatever a client sends as a user name.
        digest = hashlib.sha256(subject.encode("utf-8", "surrogatepass")).hexdigest()
        base = f"{_KEY_PREFIX}:{self.scope}:{digest}"
        return f"{base}:lock", f"{base}:failures"

    def attempt(self, client: redis.Redis, subject: str) -> int:
        """Count an attempt for `subject`: 0 when it may go ahead, else the whole seconds until
        the subject may try again."""
        lock, failures = self._keys(subject)
        left_ms = int(
            client.eval(_ATTEMPT, 2, lock, failures, self.limit, self.window_s, self.lockout_s)
        )
        return math.ceil(left_ms / 1000)

    def succeeded(self, client: redis.Redis, subject: str) -> None:
        """The attempt went through: it is not a failure."""
        client.eval(_SUCCEEDED, 1, self._keys(subject)[1])
