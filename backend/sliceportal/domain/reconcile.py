"""Reconciliation by diff, pure: what a switch should hold against what it holds.

The control plane never assumes a switch's state. It builds the entries the database asks for
(`desired_state`, from one `SliceIntent` per slice), reads the switch's entries back, and
`plan` turns the two into the updates that make them equal: INSERT what is missing, MODIFY
what differs, DELETE what is extra. Applying a plan and planning again gives an empty plan, so
running a reconciliation twice changes nothing.

Entries are compared by key (table and match, whatever order the fields come in) and by body
(action and parameters, in any order), so an entry read back in the switch's canonical form
equals the one the translation produced.

Routes: the database has no routing table yet, so the IPv4 routes a switch needs come from the
slices themselves: each destination prefix of a slice is routed out of the egress port of the
link the slice crosses there, to the next-hop MAC `port_mac(port)`. Slices that share a prefix
and a port share the route; a slice whose prefix is already routed out of another port cannot
be installed (`desired_state` rejects it, naming the other slice).

Meter cells (the meter baseline, scheme `meter`): a meter slice also asks for its
`slice_meter` cell, `DataplaneSlice.meter_config()` at its DP_SID. The cells of an indirect
meter always exist, so the only write is a MODIFY: `plan_meters` configures every desired cell
that reads back absent or different, and **resets** (a MODIFY without a config: back to
unconfigured, no policing) every configured `slice_meter` cell no slice asks for, such as the
cell of a deleted meter slice or of a slice moved to another scheme. The switch then holds
exactly what the database says, as for table entries; a later meter slice given that DP_SID
gets its own config written anyway. The cells are part of a slice's confirmation and digest, so
a rate change (which changes no table entry of a meter slice) waits for the cell.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from sliceportal.domain.dataplane import (
    PREFIX_CLASSIFIER,
    ROUTE_TABLE,
    SHARED_TABLES,
    SLICE_METER,
    SLICE_POLICY,
    VLAN_CLASSIFIER,
    DataplaneSlice,
    FieldMatch,
    MeterConfig,
    Route,
    SharedRows,
    TableEntry,
    over_decay_room,
    route_entry,
    shared_rows,
    slice_entries,
)
from sliceportal.domain.p4constants import ABC_DECAY_MEMORIES

Key = tuple[str, tuple[FieldMatch, ...]]
"""What identifies an entry on a switch: its table and its match, fields sorted by name."""
MeterKey = tuple[str, int]
"""What identifies a meter cell: the meter's name and the index (the DP_SID)."""

MANAGED_METERS: tuple[str, ...] = (SLICE_METER,)
"""The meters whose cells the portal owns (configured cells no slice asks for are reset)."""

INSTALL_ORDER: tuple[tuple[str, ...], ...] = (
    SHARED_TABLES,
    (SLICE_POLICY,),
    (VLAN_CLASSIFIER, PREFIX_CLASSIFIER),
    (ROUTE_TABLE,),
)
"""Tables in the order their entries are installed: CoDel's control law and ABC's decay and
function tables before the policies that use them, a slice's policy before the classifier
entries that send packets to it, classification before the route that lets the packets in.
Entries are removed in the reverse order, so traffic is never classified into a DP_SID whose
policy is gone. Each group is a separate step (a barrier between Write RPCs), since a P4Runtime
server may apply the updates of one batch in any order."""

DELETED_LAST: tuple[str, ...] = SHARED_TABLES
"""Tables whose extra entries are deleted after everything else is written: a CoDel
control-law row nobody's policy names is harmless, but a policy naming an interval whose rows
are gone gives its slice no spacing (every packet of a spell would be dropped) until the new
policy lands; an abc policy whose memory's decay rows are gone restarts its meters at every
packet."""

MANAGED_TABLES: tuple[str, ...] = tuple(table for group in INSTALL_ORDER for table in group)
"""Every table of the program; the portal owns all their entries (others are deleted)."""


class UpdateKind(StrEnum):
    INSERT = "insert"
    MODIFY = "modify"
    DELETE = "delete"


@dataclass(frozen=True)
class EntryUpdate:
    kind: UpdateKind
    entry: TableEntry


def entry_key(entry: TableEntry) -> Key:
    return (entry.table, tuple(sorted(entry.match, key=lambda match: match.field)))


def same_action(a: TableEntry, b: TableEntry) -> bool:
    """True when two entries do the same thing (parameters compared by name, not position)."""
    return a.action == b.action and sorted(a.params) == sorted(b.params)


def port_mac(port: int) -> str:
    """The next-hop MAC of routes out of `port`: locally administered, 02:00:00:00:PP:PP."""
    return f"02:00:00:00:{port >> 8:02x}:{port & 0xFF:02x}"


def slice_routes(slice_: DataplaneSlice) -> tuple[Route, ...]:
    """The routes a slice's traffic needs: its destination prefixes out of its egress port."""
    return tuple(
        Route(prefix, slice_.egress_port, port_mac(slice_.egress_port))
        for prefix in slice_.ipv4_dst_prefixes
    )


@dataclass(frozen=True)
class SliceIntent:
    """What one slice asks of one switch: its entries and the shared row groups its policy
    needs, or why it cannot have any."""

    slice_id: int
    name: str
    entries: tuple[TableEntry, ...] = ()
    error: str | None = None
    meters: tuple[MeterConfig, ...] = ()
    shared: tuple[SharedRows, ...] = ()


def slice_intent(slice_id: int, name: str, placements: Sequence[DataplaneSlice]) -> SliceIntent:
    """The entries of a slice on one switch: one placement per link it crosses there (same
    DP_SID, different egress ports), each with its classifier entries, policy and routes.
    Placements share the policy entry (it is keyed by DP_SID only)."""
    entries: dict[Key, TableEntry] = {}
    meters: dict[MeterKey, MeterConfig] = {}
    shared: dict[SharedRows, None] = {}
    for placement in placements:
        shared.update(dict.fromkeys(shared_rows(placement.policy())))
        meter = placement.meter_config()
        if meter is not None:
            if meters.setdefault(meter.key, meter) != meter:
                return SliceIntent(slice_id, name, error="two of its links need different meters")
        produced = slice_entries(placement) + tuple(map(route_entry, slice_routes(placement)))
        for entry in produced:
            key = entry_key(entry)
            if key in entries and not same_action(entries[key], entry):
                return SliceIntent(
                    slice_id, name, error=f"two of its links need different {entry.table} entries"
                )
            entries[key] = entry
    return SliceIntent(
        slice_id, name, tuple(entries.values()), meters=tuple(meters.values()), shared=tuple(shared)
    )


@dataclass(frozen=True)
class Desired:
    """The entries a switch should hold, who needs each, and the slices left out (and why)."""

    entries: dict[Key, TableEntry] = field(default_factory=dict)
    owners: dict[Key, list[int]] = field(default_factory=dict)
    rejected: dict[int, str] = field(default_factory=dict)
    meters: dict[MeterKey, MeterConfig] = field(default_factory=dict)
    meter_owners: dict[MeterKey, int] = field(default_factory=dict)
    shared: dict[SharedRows, list[int]] = field(default_factory=dict)
    """The shared row groups among the entries, and the slices needing each (the same list
    is every one of the group's entries' ``owners``)."""


def describe_meter(key: MeterKey) -> str:
    """A meter cell for people: ``meter cell slice_meter[5]``."""
    return f"meter cell {key[0].rsplit('.', 1)[-1]}[{key[1]}]"


def describe(key: Key) -> str:
    """An entry key for people: `vlan_classifier egress_port=1 vlan_id=10 ipv4_dst=10.0.0.0/8`."""
    table, match = key
    parts = []
    for m in match:
        if m.high is not None:
            parts.append(f"{m.field}={m.value}..{m.high}")
        elif m.prefix_len is None:
            parts.append(f"{m.field}={m.value}")
        elif m.field.startswith("ipv4"):
            network = ipaddress.IPv4Network((m.value, m.prefix_len))
            parts.append(f"{m.field}={network}")
        else:
            parts.append(f"{m.field}={m.value:#x}/{m.prefix_len}")
    return " ".join([table.rsplit(".", 1)[-1], *parts]) if parts else table.rsplit(".", 1)[-1]


def desired_state(intents: Iterable[SliceIntent]) -> Desired:
    """Merge the slices' intents, oldest slice (lowest id) first.

    Identical entries are shared (two slices routing one prefix out of one port); a slice
    needing an entry that an earlier slice holds with another action is rejected whole, so a
    slice is either completely on the switch or not at all.
    """
    desired = Desired()
    names: dict[int, str] = {}
    for intent in sorted(intents, key=lambda i: i.slice_id):
        names[intent.slice_id] = intent.name
        if intent.error is not None:
            desired.rejected[intent.slice_id] = intent.error
            continue
        clash = next(
            (
                key
                for key, entry in ((entry_key(e), e) for e in intent.entries)
                if key in desired.entries and not same_action(desired.entries[key], entry)
            ),
            None,
        )
        if clash is not None:
            holder = names[desired.owners[clash][0]]
            desired.rejected[intent.slice_id] = (
                f"its entry {describe(clash)} collides with slice {holder!r}, which holds that "
                "key with another action"
            )
            continue
        full = over_decay_room({*desired.shared, *intent.shared})
        if full is not None:
            desired.rejected[intent.slice_id] = (
                f"its ABC memory would be the {ABC_DECAY_MEMORIES + 1}th distinct one in "
                f"{full.rsplit('.', 1)[-1]}, which holds rows for {ABC_DECAY_MEMORIES}"
            )
            continue
        taken = next((m.key for m in intent.meters if m.key in desired.meter_owners), None)
        if taken is not None:
            holder = names[desired.meter_owners[taken]]
            desired.rejected[intent.slice_id] = f"its {describe_meter(taken)} is slice {holder!r}'s"
            continue
        for meter in intent.meters:
            desired.meters[meter.key] = meter
            desired.meter_owners[meter.key] = intent.slice_id
        for entry in intent.entries:
            key = entry_key(entry)
            desired.entries.setdefault(key, entry)
            desired.owners.setdefault(key, []).append(intent.slice_id)
        for group in intent.shared:
            owners = desired.shared.get(group)
            if owners is None:
                owners = desired.shared[group] = []
                for key, entry in keyed(group):
                    desired.entries[key] = entry
                    desired.owners[key] = owners
            owners.append(intent.slice_id)
    return desired


@functools.cache
def keyed(group: SharedRows) -> tuple[tuple[Key, TableEntry], ...]:
    """A shared group's entries with their keys (computed once per process)."""
    return tuple((entry_key(entry), entry) for entry in group.entries)


@functools.cache
def group_digest(group: SharedRows) -> str:
    """A fingerprint of a shared group's rows (`entries_digest`, computed once)."""
    return entries_digest(group.entries)


@dataclass(frozen=True)
class Plan:
    """Updates in steps: each step is written after the previous one, in batches."""

    steps: tuple[tuple[EntryUpdate, ...], ...] = ()

    @property
    def updates(self) -> tuple[EntryUpdate, ...]:
        return tuple(update for step in self.steps for update in step)

    def count(self, kind: UpdateKind) -> int:
        return sum(update.kind is kind for step in self.steps for update in step)

    def __bool__(self) -> bool:
        return bool(self.steps)


def index_entries(entries: Iterable[TableEntry]) -> dict[Key, TableEntry]:
    return {entry_key(entry): entry for entry in entries}


def plan(desired: Mapping[Key, TableEntry], actual: Iterable[TableEntry]) -> Plan:
    """The updates that turn the switch's `actual` entries into `desired` (by key).

    Steps: DELETEs of the extra entries, table group by table group in the reverse of
    `INSTALL_ORDER`, then MODIFYs and INSERTs in `INSTALL_ORDER` (a MODIFY first within its
    group), then the DELETEs of `DELETED_LAST`'s tables. Deleting first also frees table space
    for the inserts.
    """
    present = index_entries(actual)
    group_of = {table: i for i, group in enumerate(INSTALL_ORDER) for table in group}
    last = len(INSTALL_ORDER)  # tables outside the program (never read back) sort last
    deletes: list[list[EntryUpdate]] = [[] for _ in range(last + 1)]
    writes: list[list[EntryUpdate]] = [[] for _ in range(last + 1)]
    late: list[EntryUpdate] = []
    for key, entry in present.items():
        if key not in desired:
            delete = EntryUpdate(UpdateKind.DELETE, entry)
            if entry.table in DELETED_LAST:
                late.append(delete)
            else:
                deletes[group_of.get(entry.table, last)].append(delete)
    for key, entry in desired.items():
        found = present.get(key)
        group = writes[group_of.get(entry.table, last)]
        if found is None:
            group.append(EntryUpdate(UpdateKind.INSERT, entry))
        elif not same_action(found, entry):
            group.append(EntryUpdate(UpdateKind.MODIFY, entry))
    for group in writes:
        group.sort(key=lambda update: update.kind is not UpdateKind.MODIFY)
    steps = [*reversed(deletes), *writes, late]
    return Plan(tuple(tuple(step) for step in steps if step))


@dataclass(frozen=True)
class MeterPlan:
    """Meter cell writes (all MODIFYs): `configure` before the table entries are written (a
    meter slice's policy never runs on an unconfigured, unpoliced cell), `reset` after them
    (a cell is unconfigured only once no entry sends packets to it)."""

    configure: tuple[MeterConfig, ...] = ()
    reset: tuple[MeterKey, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.configure or self.reset)


def plan_meters(
    desired: Mapping[MeterKey, MeterConfig], actual: Iterable[MeterConfig]
) -> MeterPlan:
    """The meter writes that turn the switch's configured cells (`actual`, as read back) into
    `desired`: configure the missing and different ones, reset the managed ones nobody wants."""
    present = {m.key: m for m in actual}
    configure = tuple(m for key, m in sorted(desired.items()) if present.get(key) != m)
    reset = tuple(key for key in sorted(present) if key not in desired and key[0] in MANAGED_METERS)
    return MeterPlan(configure, reset)


def confirmed(
    intent: SliceIntent,
    actual: Mapping[Key, TableEntry],
    meters: Mapping[MeterKey, MeterConfig] | None = None,
    groups: dict[SharedRows, bool] | None = None,
) -> bool:
    """True when the switch holds every entry of the slice and of its shared groups, with the
    same action, and (when `meters`, the cells read back, is given) every meter cell it asks
    for, as asked. ``groups`` remembers each group's answer across the slices of one read."""
    if intent.error is not None:
        return False
    if intent.meters and (meters is None or any(meters.get(m.key) != m for m in intent.meters)):
        return False
    if not _held(((entry_key(e), e) for e in intent.entries), actual):
        return False
    checked = {} if groups is None else groups
    for group in intent.shared:
        if group not in checked:
            checked[group] = _held(keyed(group), actual)
        if not checked[group]:
            return False
    return True


def _held(entries: Iterable[tuple[Key, TableEntry]], actual: Mapping[Key, TableEntry]) -> bool:
    for key, entry in entries:
        found = actual.get(key)
        if found is None or not same_action(found, entry):
            return False
    return True


def intent_digest(intent: SliceIntent) -> str:
    """What a slice had confirmed on a switch: its entries, meter cells and shared groups."""
    own = entries_digest(intent.entries, intent.meters)
    if not intent.shared:
        return own
    groups = sorted(group_digest(group) for group in intent.shared)
    return hashlib.sha256("\n".join([own, *groups]).encode()).hexdigest()[:32]


def entries_digest(entries: Iterable[TableEntry], meters: Iterable[MeterConfig] = ()) -> str:
    """A fingerprint of a set of entries and meter cells (order-free): what a slice had
    confirmed on a switch, compared later with what it asks for now. Without meter cells it
    is the digest stored before meters existed."""
    canonical = sorted(
        repr(
            (
                key[0],
                tuple(
                    (m.field, m.kind.value, m.value, m.prefix_len)
                    + (() if m.high is None else (m.high,))
                    for m in key[1]
                ),
                entry.action,
                tuple(sorted(entry.params)),
            )
        )
        for key, entry in ((entry_key(e), e) for e in entries)
    ) + sorted(repr(("meter", m.meter, m.index, m.cir, m.cburst, m.pir, m.pburst)) for m in meters)
    return hashlib.sha256("\n".join(canonical).encode()).hexdigest()[:32]
