"""The credential memory: how long a checked credential is believed, and what forgets it."""

from __future__ import annotations

from sliceportal.api.principals import Principal, PrincipalCache
from sliceportal.schemas.choices import Role


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


VIEWER = Principal(7, Role.VIEWER)


def test_a_credential_is_believed_for_its_memory_then_asked_again() -> None:
    clock = Clock()
    cache = PrincipalCache(memory_s=0.5, clock=clock)
    assert cache.get("token") is None
    cache.remember("token", VIEWER, valid_for_s=float("inf"))
    clock.now += 0.49
    assert cache.get("token") == VIEWER
    clock.now += 0.01
    assert cache.get("token") is None


def test_a_credential_expiring_sooner_is_believed_only_until_it_expires() -> None:
    clock = Clock()
    cache = PrincipalCache(memory_s=0.5, clock=clock)
    cache.remember("jwt", VIEWER, valid_for_s=0.2)
    clock.now += 0.2
    assert cache.get("jwt") is None
    cache.remember("expired", VIEWER, valid_for_s=-1.0)
    assert cache.get("expired") is None


def test_forget_all_and_the_size_bound() -> None:
    cache = PrincipalCache(max_entries=2, clock=Clock())
    cache.remember("a", VIEWER, None)
    cache.remember("b", VIEWER, None)
    cache.remember("c", VIEWER, None)  # over the bound: a and b forgotten
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, None, VIEWER)
    cache.forget_all()
    assert cache.get("c") is None
