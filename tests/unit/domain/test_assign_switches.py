"""`assign_switches`: rendezvous hashing with a cap, the same answer in every poller."""

from __future__ import annotations

from collections import Counter

from sliceportal.domain.telemetry import assign_switches, rendezvous_rank


def test_every_switch_goes_to_one_live_poller_within_the_cap() -> None:
    pollers = ["a:1:x", "b:2:y", "c:3:z"]
    assignment = assign_switches(range(1, 13), pollers)
    assert set(assignment) == set(range(1, 13))
    assert Counter(assignment.values()) == dict.fromkeys(pollers, 4)
    assert max(Counter(assign_switches(range(1, 14), pollers).values()).values()) == 5


def test_the_answer_does_not_depend_on_the_order_of_the_inputs() -> None:
    pollers = ["a", "b", "c", "d"]
    switches = list(range(40))
    assert assign_switches(switches, pollers) == assign_switches(
        switches[::-1], sorted(pollers, reverse=True)
    )


def test_a_poller_that_joins_takes_its_share_and_few_others_move() -> None:
    before = assign_switches(range(100), ["a", "b", "c"])
    after = assign_switches(range(100), ["a", "b", "c", "d"])
    assert Counter(after.values())["d"] == 25
    moved = {s for s in before if before[s] != after[s]}
    assert len(moved) <= 40  # the 25 that d takes, and few pushed along by the caps


def test_a_dead_poller_s_switches_go_to_the_survivors() -> None:
    after = assign_switches(range(12), ["a", "b"])
    assert set(after.values()) == {"a", "b"}
    assert Counter(after.values()) == {"a": 6, "b": 6}


def test_no_poller_no_assignment() -> None:
    assert assign_switches([1, 2], []) == {}
    assert rendezvous_rank(7, []) == []
