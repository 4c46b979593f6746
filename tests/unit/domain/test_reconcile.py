"""The pure diff: desired against actual entries, the steps' order, slices' intents."""

from __future__ import annotations

import dataclasses
from random import Random

from hypothesis import given
from hypothesis import strategies as st

from sliceportal.domain import dataplane as dp
from sliceportal.domain import reconcile as rc
from sliceportal.domain.codel import CodelConfig

MBIT = 1e6


def placement(
    dp_sid: int, *prefixes: str, port: int = 1, vlan_id: int | None = None
) -> dp.DataplaneSlice:
    return dp.DataplaneSlice(
        dp_sid, f"s{dp_sid}", vlan_id, prefixes, 10 * MBIT, 0.01, 7, dp.Scheme.TAIL_DROP, None, port
    )


def intent(slice_id: int, *placements: dp.DataplaneSlice) -> rc.SliceIntent:
    return rc.slice_intent(slice_id, f"slice{slice_id}", placements)


def entries(*intents: rc.SliceIntent) -> dict[rc.Key, dp.TableEntry]:
    return rc.desired_state(intents).entries


def apply(plan: rc.Plan, actual: list[dp.TableEntry]) -> list[dp.TableEntry]:
    """What a switch holds after applying `plan` to `actual` (every update succeeding)."""
    held = rc.index_entries(actual)
    for update in plan.updates:
        key = rc.entry_key(update.entry)
        if update.kind is rc.UpdateKind.DELETE:
            del held[key]
        else:
            assert (key in held) == (update.kind is rc.UpdateKind.MODIFY)
            held[key] = update.entry
    return list(held.values())


def test_plan_of_an_empty_switch_inserts_policies_then_classifiers_then_routes() -> None:
    wanted = entries(intent(1, placement(1, "10.1.0.0/16")), intent(2, placement(2, "10.2.0.0/16")))
    plan = rc.plan(wanted, [])
    assert [[u.entry.table for u in step] for step in plan.steps] == [
        [dp.SLICE_POLICY] * 2,
        [dp.PREFIX_CLASSIFIER] * 2,
        [dp.ROUTE_TABLE] * 2,
    ]
    assert all(u.kind is rc.UpdateKind.INSERT for u in plan.updates)


def test_plan_deletes_extra_entries_first_routes_before_classifiers_before_policies() -> None:
    old = list(entries(intent(1, placement(1, "10.1.0.0/16"))).values())
    plan = rc.plan(entries(intent(2, placement(2, "10.2.0.0/16"))), old)
    kinds = [(u.kind, u.entry.table) for u in plan.updates]
    assert kinds[:3] == [
        (rc.UpdateKind.DELETE, dp.ROUTE_TABLE),
        (rc.UpdateKind.DELETE, dp.PREFIX_CLASSIFIER),
        (rc.UpdateKind.DELETE, dp.SLICE_POLICY),
    ]
    assert all(kind is rc.UpdateKind.INSERT for kind, _ in kinds[3:])


def test_a_reused_dp_sid_modifies_the_policy_in_place() -> None:
    old = list(entries(intent(1, placement(1, "10.1.0.0/16"))).values())
    faster = dataclasses.replace(placement(1, "10.9.0.0/16"), rate_bps=20 * MBIT)
    plan = rc.plan(entries(intent(2, faster)), old)
    policy = [u for u in plan.updates if u.entry.table == dp.SLICE_POLICY]
    assert [u.kind for u in policy] == [rc.UpdateKind.MODIFY]
    steps = [{u.kind for u in step} for step in plan.steps]
    # old classifier and route go before the policy changes, the new ones after
    assert steps.index({rc.UpdateKind.MODIFY}) > steps.index({rc.UpdateKind.DELETE})


def codel_placement(dp_sid: int, prefix: str, interval_s: float) -> dp.DataplaneSlice:
    return dataclasses.replace(
        placement(dp_sid, prefix),
        scheme=dp.Scheme.CODEL,
        codel=CodelConfig.from_seconds(0.005, interval_s),
    )


def test_codel_law_rows_come_before_the_policy_and_go_after_it() -> None:
    """A new interval's rows are written before the policy that names it; the old interval's
    rows are deleted only once no policy names them (else a spell would find no spacing)."""
    old = list(entries(intent(1, codel_placement(1, "10.1.0.0/16", 0.1))).values())
    plan = rc.plan(entries(intent(1, codel_placement(1, "10.1.0.0/16", 0.05))), old)
    tables = [(u.kind, u.entry.table) for u in plan.updates]
    law_inserts = [
        i for i, t in enumerate(tables) if t == (rc.UpdateKind.INSERT, dp.CODEL_CONTROL_LAW)
    ]
    law_deletes = [
        i for i, t in enumerate(tables) if t == (rc.UpdateKind.DELETE, dp.CODEL_CONTROL_LAW)
    ]
    policy = tables.index((rc.UpdateKind.MODIFY, dp.SLICE_POLICY))
    assert len(law_inserts) == len(law_deletes) == 44
    assert max(law_inserts) < policy < min(law_deletes)
    assert plan.steps[-1] == tuple(plan.updates[i] for i in law_deletes)


def test_codel_slices_with_one_interval_share_its_law_rows() -> None:
    one = intent(1, codel_placement(1, "10.1.0.0/16", 0.1))
    two = intent(2, codel_placement(2, "10.2.0.0/16", 0.1))
    desired = rc.desired_state([one, two])
    law = [key for key in desired.entries if key[0] == dp.CODEL_CONTROL_LAW]
    assert len(law) == 44 and all(desired.owners[key] == [1, 2] for key in law)
    assert not desired.rejected
    # the rows stay while one slice still needs them
    assert len([k for k in entries(two) if k[0] == dp.CODEL_CONTROL_LAW]) == 44


def test_entries_compare_by_key_and_action_whatever_the_field_and_param_order() -> None:
    (policy,) = [
        e
        for e in entries(intent(1, placement(1, "10.1.0.0/16"))).values()
        if e.table == dp.SLICE_POLICY
    ]
    shuffled = dp.TableEntry(
        policy.table, tuple(reversed(policy.match)), policy.action, tuple(reversed(policy.params))
    )
    assert rc.entry_key(shuffled) == rc.entry_key(policy)
    assert rc.same_action(shuffled, policy)
    assert rc.entries_digest([shuffled]) == rc.entries_digest([policy])
    assert not rc.plan(rc.index_entries([policy]), [shuffled])


@st.composite
def slice_sets(draw: st.DrawFn) -> list[rc.SliceIntent]:
    dp_sids = draw(st.lists(st.integers(1, 30), unique=True, max_size=6))
    out = []
    for dp_sid in dp_sids:
        nets = draw(st.lists(st.integers(0, 40), unique=True, min_size=1, max_size=3))
        port = draw(st.integers(1, 3))
        rate = draw(st.sampled_from([10 * MBIT, 20 * MBIT]))
        body = dataclasses.replace(
            placement(dp_sid, *(f"10.{n}.0.0/16" for n in nets), port=port), rate_bps=rate
        )
        out.append(intent(dp_sid, body))
    return out


@given(slice_sets(), slice_sets())
def test_applying_the_plan_converges_and_planning_again_changes_nothing(
    before: list[rc.SliceIntent], after: list[rc.SliceIntent]
) -> None:
    actual = list(entries(*before).values())
    wanted = entries(*after)
    plan = rc.plan(wanted, actual)
    held = apply(plan, actual)
    assert rc.index_entries(held) == wanted
    assert not rc.plan(wanted, held)
    assert len({rc.entry_key(u.entry) for u in plan.updates}) == len(plan.updates)


@given(slice_sets(), slice_sets(), st.randoms(use_true_random=False))
def test_nothing_depends_on_the_order_a_switch_returns_its_entries_in(
    before: list[rc.SliceIntent], after: list[rc.SliceIntent], random: Random
) -> None:
    """BMv2 returns entries in handle order, and reuses the handles of deleted entries: a
    read's order says nothing. The same steps (as sets) and the same confirmations."""
    actual = list(entries(*before).values())
    shuffled = random.sample(actual, len(actual))
    wanted = entries(*after)

    def steps(read: list[dp.TableEntry]) -> list[set[rc.EntryUpdate]]:
        return [set(step) for step in rc.plan(wanted, read).steps]

    assert steps(shuffled) == steps(actual)
    assert rc.index_entries(shuffled) == rc.index_entries(actual)
    for slice_ in after:
        held = rc.index_entries(shuffled)
        assert rc.confirmed(slice_, held) == rc.confirmed(slice_, rc.index_entries(actual))


def test_slices_routing_one_prefix_out_of_one_port_share_the_route() -> None:
    desired = rc.desired_state(
        [intent(1, placement(1, "10.1.0.0/16")), intent(2, placement(2, "10.1.0.0/16", vlan_id=7))]
    )
    routes = [k for k in desired.entries if k[0] == dp.ROUTE_TABLE]
    assert len(routes) == 1
    assert desired.owners[routes[0]] == [1, 2]
    assert desired.rejected == {}


def test_a_slice_whose_entry_collides_is_rejected_whole_and_names_the_holder() -> None:
    first = intent(1, placement(1, "10.1.0.0/16", port=1))
    moved = intent(2, placement(2, "10.1.0.0/16", "10.2.0.0/16", port=2))
    desired = rc.desired_state([moved, first])  # the lower id wins, whatever the order
    assert set(desired.rejected) == {2}
    assert "'slice1'" in desired.rejected[2] and "ipv4_dst=10.1.0.0/16" in desired.rejected[2]
    assert all(owners == [1] for owners in desired.owners.values())


def test_a_translation_error_rejects_the_slice() -> None:
    broken = rc.SliceIntent(3, "broken", error="the data plane cannot hold it")
    desired = rc.desired_state([intent(1, placement(1, "10.1.0.0/16")), broken])
    assert desired.rejected == {3: "the data plane cannot hold it"}


def test_a_slice_on_two_ports_of_a_switch_shares_its_policy() -> None:
    both = intent(1, placement(1, port=1, vlan_id=5), placement(1, port=2, vlan_id=5))
    tables = sorted(e.table for e in both.entries)
    assert tables == [dp.VLAN_CLASSIFIER, dp.VLAN_CLASSIFIER, dp.SLICE_POLICY]


def test_a_prefix_cannot_be_routed_out_of_two_ports() -> None:
    both = intent(1, placement(1, "10.1.0.0/16", port=1), placement(1, "10.1.0.0/16", port=2))
    assert both.error is not None and dp.ROUTE_TABLE in both.error
    assert rc.desired_state([both]).rejected == {1: both.error}


def test_confirmed_needs_every_entry_with_the_same_action() -> None:
    one = intent(1, placement(1, "10.1.0.0/16"))
    held = rc.index_entries(one.entries)
    assert rc.confirmed(one, held)
    policy = next(k for k in held if k[0] == dp.SLICE_POLICY)
    assert not rc.confirmed(one, {k: v for k, v in held.items() if k != policy})
    changed = dataclasses.replace(held[policy], params=(("priority", 1),))
    assert not rc.confirmed(one, {**held, policy: changed})
    assert not rc.confirmed(rc.SliceIntent(1, "x", error="no"), held)


def test_describe_names_the_table_and_fields() -> None:
    (key,) = [
        k
        for k in entries(intent(1, placement(1, "10.1.0.0/16", vlan_id=5)))
        if k[0] == dp.VLAN_CLASSIFIER
    ]
    assert rc.describe(key) == "vlan_classifier egress_port=1 ipv4_dst=10.1.0.0/16 vlan_id=5"


def test_port_macs_are_locally_administered_and_distinct() -> None:
    macs = {rc.port_mac(port) for port in range(511)}
    assert len(macs) == 511
    assert all(int(mac[:2], 16) & 0b10 for mac in macs)
