"""Properties of the report's searches on random networks, checked by a fresh analysis."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from report_networks import (
    Oracle,
    networks,
    scaled,
    validated,
    whole_report,
    with_capacity,
    with_slice,
)

from sliceportal.domain import Model, analyze, min_capacity, plan_priorities
from sliceportal.domain.reports import Network, growth_factor
from sliceportal.domain.spec import MAX_RATE_BPS

PROPERTY_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
ABOVE = 1e-5
"""Relative step past a reported limit that must break something (searches stop at 1e-6)."""


def _report(network: Network, **options: Any) -> dict[str, Any]:
    return validated(whole_report(network, plan_time_budget_s=0.2, **options))


@PROPERTY_SETTINGS
@given(network=networks())
def test_every_report_fits_the_contract_and_counts_what_it_lists(network: Network) -> None:
    document = _report(network)
    summary = document["summary"]
    assert summary["links"] == len(network.links)
    assert summary["slices"] == sum(1 for s in network.slices if s.link_ids)
    for model in Model:
        inadmissible = sum(not item["admissible"][model.value] for item in document["links"])
        assert summary["inadmissible_links"][model.value] == inadmissible
        missed = sum(not item["e2e"][model.value]["meets_target"] for item in document["slices"])
        assert summary["e2e_violations"][model.value] == missed
    severities = [finding["severity"] for finding in document["findings"]]
    assert severities == sorted(severities, key=["critical", "warning", "info"].index)
    assert summary["findings"] == {s: severities.count(s) for s in ("critical", "warning", "info")}


@PROPERTY_SETTINGS
@given(network=networks())
def test_adding_the_rate_headroom_keeps_everything_and_a_little_more_does_not(
    network: Network,
) -> None:
    document = _report(network)
    for declared, item in zip(network.slices, document["slices"], strict=True):
        extra = item["headroom"]["rate_bps"]
        nearby = list(declared.link_ids)
        if extra is None:
            assert not Oracle(network).holds_on(nearby)
            continue
        grown = with_slice(network, declared.id, rate_bps=declared.rate_bps + extra)
        assert Oracle(grown).holds_on(nearby)
        more = declared.rate_bps + extra * (1 + ABOVE) + 1e-9 * declared.rate_bps
        assert not Oracle(with_slice(network, declared.id, rate_bps=more)).holds_on(nearby)


@PROPERTY_SETTINGS
@given(network=networks())
def test_adding_the_burst_headroom_keeps_everything_and_a_little_more_does_not(
    network: Network,
) -> None:
    document = _report(network)
    for declared, item in zip(network.slices, document["slices"], strict=True):
        extra = item["headroom"]["burst_bytes"]
        if extra is None:
            continue
        nearby = list(declared.link_ids)
        burst = item["burst_bytes"]
        assert Oracle(network, bursts={declared.id: burst + extra}).holds_on(nearby)
        more = burst + extra * (1 + ABOVE) + 1e-6
        assert not Oracle(network, bursts={declared.id: more}).holds_on(nearby)


@PROPERTY_SETTINGS
@given(network=networks())
def test_growth_month_is_the_first_inadmissible_one(network: Network) -> None:
    percent, horizon = 7.0, 12
    document = _report(network, growth_percent_per_month=percent, horizon_months=horizon)
    for declared_link, item in zip(network.links, document["links"], strict=True):
        growth = item["growth"]
        months = growth["months_until_inadmissible"]

        def holds_after(month: int, link_id: int = declared_link.id) -> bool:
            return Oracle(scaled(network, growth_factor(percent, month))).holds_on([link_id])

        if not any(declared_link.id in s.link_ids for s in network.slices):
            assert months is None
            continue
        if months is None:
            assert holds_after(horizon)
        elif months == 0:
            assert not holds_after(0)
        else:
            assert holds_after(months - 1)
            assert not holds_after(months)
        limit = growth["rate_factor_limit"]
        if limit is not None:
            assert Oracle(scaled(network, limit)).holds_on([declared_link.id])
            beyond = scaled(network, limit * (1 + ABOVE))
            assert not Oracle(beyond).holds_on([declared_link.id])


@PROPERTY_SETTINGS
@given(network=networks())
def test_capacity_margin_is_to_the_least_capacity_meeting_every_target(
    network: Network,
) -> None:
    document = _report(network)
    for declared_link, item in zip(network.links, document["links"], strict=True):
        margin = item["capacity_margin_bps"]
        if margin is None:
            continue
        needed = declared_link.capacity_bps - margin
        if needed == 0:  # no slices
            assert not any(declared_link.id in s.link_ids for s in network.slices)
            continue
        at = with_capacity(network, declared_link.id, needed * (1 + 1e-9))
        assert Oracle(at).holds_on([declared_link.id])
        if needed > sum(s.rate_bps for s in network.slices if declared_link.id in s.link_ids):
            below = with_capacity(network, declared_link.id, needed * (1 - 1e-6))
            assert not Oracle(below).holds_on([declared_link.id])


@PROPERTY_SETTINGS
@given(network=networks())
def test_recommended_fixes_fix_what_they_say(network: Network) -> None:
    document = _report(network)
    by_name = {item.name: item for item in network.links}
    slices = {s.name: s for s in network.slices}
    margins = {item["name"]: item["capacity_margin_bps"] for item in document["links"]}
    for finding in document["findings"]:
        action = finding["action"]
        if "stops admitting" in finding["finding"]:
            continue  # growth: checked with the grown network in its own test
        if action["kind"] == "raise-capacity" and finding["subject"].startswith("link"):
            target = by_name[action["link"]]
            at = Oracle(with_capacity(network, target.id, action["capacity_bps"] * (1 + 1e-9)))
            assert at.link_admits(target.id)
            if margins[target.name] is not None:  # else no capacity meets the e2e targets
                assert at.holds_on([target.id])
        elif action["kind"] == "raise-capacity":
            target = by_name[action["link"]]
            raised = with_capacity(network, target.id, action["capacity_bps"] * (1 + 1e-9))
            assert Oracle(raised).path(slices[action["slice"]]).meets_target
        elif action["kind"] == "cap-burst":
            declared = slices[action["slice"]]
            oracle = Oracle(network, bursts={declared.id: action["burst_bytes"]})
            assert oracle.holds_on(list(declared.link_ids))


@PROPERTY_SETTINGS
@given(network=networks())
def test_best_plan_fits_at_its_capacity_and_nothing_fits_just_below_when_exhaustive(
    network: Network,
) -> None:
    document = _report(network)
    for declared_link, item in zip(network.links, document["links"], strict=True):
        specs = Oracle(network).specs(declared_link.id)
        if not specs:
            continue
        for model in Model:
            best = item["min_capacity_bps"]["best_plan"][model.value]
            capacity = best["capacity_bps"]
            if capacity is None:
                assert best["priorities"] is None
                continue
            planned = [replace(s, priority=best["priorities"][s.name]) for s in specs]
            # Best effort keeps one of the link's queues: slices get one fewer level.
            levels = declared_link.slice_levels
            assert levels == declared_link.queue_count - 1
            assert len(set(best["priorities"].values())) <= levels
            assert min(best["priorities"].values()) >= 1  # never best effort's level
            framing = declared_link.framing
            assert analyze(planned, capacity, model, framing).admissible
            current = item["min_capacity_bps"]["current"][model.value]
            if len({s.priority for s in specs}) > levels:
                current = None  # today's priorities need more levels than the link has
            one_level = item["min_capacity_bps"]["one_level"][model.value]
            assert capacity <= min(c for c in (current, one_level, MAX_RATE_BPS) if c is not None)
            wire = framing.rate_factor if model is Model.NETCALC else 1.0
            if best["exhaustive"] and capacity > wire * sum(s.rate_bps for s in specs):
                below = plan_priorities(
                    specs, capacity * (1 - 2e-6), levels, model, framing=framing
                )
                assert not below.feasible


@PROPERTY_SETTINGS
@given(network=networks())
def test_recommended_moves_fix_the_link_and_break_nothing_that_held(network: Network) -> None:
    document = _report(network)
    before = Oracle(network)
    moves: dict[str, dict[str, int]] = {}
    for finding in document["findings"]:
        action = finding["action"]
        if action["kind"] == "move-slice":
            assert action["link"] not in moves, "one move finding per link"
            moves[action["link"]] = action["priorities"]
    for link_name, priorities in moves.items():
        moved = network
        for declared in network.slices:
            if declared.name in priorities:
                moved = with_slice(moved, declared.id, priority=priorities[declared.name])
        after = Oracle(moved)
        target = next(item.id for item in network.links if item.name == link_name)
        assert after.link_admits(target)
        for item in network.links:
            assert after.link_admits(item.id) or not before.link_admits(item.id)
        for declared, changed in zip(network.slices, moved.slices, strict=True):
            assert after.path(changed).meets_target or not before.path(declared).meets_target


@PROPERTY_SETTINGS
@given(network=networks())
def test_capacity_at_the_horizon_admits_the_grown_slices(network: Network) -> None:
    percent, horizon = 10.0, 6
    document = _report(network, growth_percent_per_month=percent, horizon_months=horizon)
    grown = scaled(network, growth_factor(percent, horizon))
    upgraded = {
        item.id: max(
            item.capacity_bps,
            min_capacity(Oracle(grown).specs(item.id), item.model, item.framing) or 0,
        )
        for item in network.links
    }
    for declared_link, item in zip(network.links, document["links"], strict=True):
        needed = item["growth"]["capacity_at_horizon_bps"]
        if needed is None or needed == 0:
            continue
        capacities = {**upgraded, declared_link.id: needed * (1 + 1e-9)}
        assert Oracle(grown, capacities=capacities).holds_on([declared_link.id])
