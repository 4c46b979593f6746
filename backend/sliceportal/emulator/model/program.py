"""The tables of `p4/sliceportal.p4` as the program applies them to a packet's headers.

A packet's fate in ingress depends only on its headers (destination, VLAN tag, TTL) and the
table entries, so the model classifies each distinct header set once (`Classifier.verdict`)
and lets the compiled loop work on the resulting `Verdict`s; `Classifier.refresh` says when
a write changed a table and the verdicts must be recomputed. This is the flow cache that fast
software switches keep too, and it is exact: nothing per packet feeds the lookups.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain.abc import AbcParams, aggregate_slot
from sliceportal.domain.codel import CodelConfig, ControlLawRow, by_prefix_length
from sliceportal.emulator.model.abc_tables import InstalledAbc
from sliceportal.emulator.state import DeviceState
from sliceportal.emulator.tables import Entry, MatchValue, Table
from sliceportal.p4rt.p4info import ActionCall, P4InfoIndex, TableInfo

IPV4_WIDTH = 32
DEFAULT_TTL = 64
DEFAULT_SOURCE = "192.0.2.1"
"""A packet's source address when the traffic names none (TEST-NET-1): what ABC's aggregates
key on."""
_DEFAULT_SOURCE = int(ipaddress.IPv4Address(DEFAULT_SOURCE))


@dataclass(frozen=True)
class Headers:
    """The header fields the program reads. ``vlan_id`` None: no 802.1Q tag; ``ipv4_src``
    keys an abc slice's aggregates."""

    ipv4_dst: int
    vlan_id: int | None = None
    ttl: int = DEFAULT_TTL
    ipv4_src: int = _DEFAULT_SOURCE

    @classmethod
    def parse(
        cls,
        ipv4_dst: str,
        vlan_id: int | None = None,
        ttl: int = DEFAULT_TTL,
        ipv4_src: str | None = None,
    ) -> Headers:
        source = _DEFAULT_SOURCE if ipv4_src is None else int(ipaddress.IPv4Address(ipv4_src))
        return cls(int(ipaddress.IPv4Address(ipv4_dst)), vlan_id, ttl, source)


@dataclass(frozen=True)
class Verdict:
    """What ingress decides from the headers alone.

    ``port`` None: routing drops the packet (no route, or TTL <= 1) and nothing is counted.
    ``policy`` None: the slice has no slice_policy entry (best effort): no virtual queue,
    priority ``BEST_EFFORT_PRIORITY``; ``policy.metered``: meter_policy, the slice is policed
    by its slice_meter cell (the meter baseline) instead of a virtual queue.
    """

    port: int | None
    dp_sid: int
    policy: dp.SlicePolicy | None
    abc_cell: int = -1
    """An abc slice's packets: their aggregate's meter cell (dp_sid x 64 + slot)."""

    @property
    def priority(self) -> int:
        return c.BEST_EFFORT_PRIORITY if self.policy is None else self.policy.priority


UNROUTED = Verdict(None, c.BEST_EFFORT_DP_SID, None)


class _LpmIndex:
    """Longest-prefix lookup over a table whose keys are exact fields and one trailing LPM field.

    Entries are grouped by their exact values; within a group, by prefix length, so a lookup
    is at most 33 dict probes however many entries the table holds.
    """

    def __init__(self, table: Table) -> None:
        self.groups: dict[tuple[MatchValue, ...], dict[int, dict[int, Entry]]] = {}
        for entry in table.entries.values():
            *exact, lpm = entry.match
            value, prefix_len = (0, 0) if lpm is None else _lpm_pair(lpm)
            lengths = self.groups.setdefault(tuple(exact), {})
            lengths.setdefault(prefix_len, {})[value] = entry
        self.lengths = {key: sorted(group, reverse=True) for key, group in self.groups.items()}

    def lookup(self, exact: tuple[int, ...], address: int) -> Entry | None:
        group = self.groups.get(exact)
        if group is None:
            return None
        for prefix_len in self.lengths[exact]:
            shift = IPV4_WIDTH - prefix_len
            hit = group[prefix_len].get(address >> shift << shift)
            if hit is not None:
                return hit
        return None


def _lpm_pair(value: MatchValue) -> tuple[int, int]:
    if not isinstance(value, tuple):
        raise TypeError(f"an LPM match value is (value, prefix_len), got {value!r}")
    return value


class Classifier:
    """Routing, slice classification and slice policy of the program over one `DeviceState`.

    Not thread-safe: call it with ``state.lock`` held, as everything touching the tables.
    """

    def __init__(self, state: DeviceState) -> None:
        program = state.program
        self._state = state
        self._route = _table(program, dp.ROUTE_TABLE)
        self._vlan = _table(program, dp.VLAN_CLASSIFIER)
        self._prefix = _table(program, dp.PREFIX_CLASSIFIER)
        self._policy = _table(program, dp.SLICE_POLICY)
        self._law = _table(program, dp.CODEL_CONTROL_LAW)
        names = {a.name: a.id for a in program.actions.values()}
        self._set_next_hop = names[dp.SET_NEXT_HOP]
        self._set_slice = names[dp.SET_SLICE]
        self._tail_drop = names[dp.TAIL_DROP]
        self._ecn_step = names[dp.ECN_STEP]
        self._meter_policy = names.get(dp.METER_POLICY)
        self._codel = names[dp.CODEL]
        self._codel_spacing = names[dp.CODEL_SPACING]
        self._abc = names[dp.ABC]
        self._abc_tables = tuple(
            _table(program, name)
            for name in (dp.ABC_METER_DECAY, dp.ABC_AVERAGE_DECAY, *dp.ABC_LOOKUP_TABLES)
        )
        self._abc_versions: tuple[int, ...] = ()
        self._abc_installed: InstalledAbc | None = None
        self._versions: tuple[int, ...] = ()
        self._indexes: tuple[_LpmIndex, _LpmIndex, _LpmIndex] | None = None
        self._policies: dict[int, Entry] = {}
        self._laws: dict[int, tuple[ControlLawRow, ...]] = {}

    def refresh(self) -> bool:
        """Re-read the tables if a write changed them since the last call; True if it did."""
        tables = self._state.tables
        abc_versions = tuple(tables[t.id].version for t in self._abc_tables)
        abc_changed = abc_versions != self._abc_versions
        if abc_changed:
            self._abc_versions = abc_versions
            self._abc_installed = None
        versions = tuple(tables[t.id].version for t in self._tables())
        if versions == self._versions:
            return abc_changed
        self._versions = versions
        route, vlan, prefix, policy, law = (tables[t.id] for t in self._tables())
        self._indexes = (_LpmIndex(route), _LpmIndex(vlan), _LpmIndex(prefix))
        self._policies = {_exact(e.match[0]): e for e in policy.entries.values()}
        rows: dict[int, list[ControlLawRow]] = {}
        for entry in law.entries.values():
            if entry.action is None or entry.action.action_id != self._codel_spacing:
                continue
            interval, count = entry.match
            value, prefix_len = (0, 0) if count is None else _lpm_pair(count)
            row = ControlLawRow(value, prefix_len, entry.action.args[0])
            rows.setdefault(_exact(interval), []).append(row)
        self._laws = {interval: by_prefix_length(tuple(r)) for interval, r in rows.items()}
        return True

    @property
    def abc(self) -> InstalledAbc:
        """ABC's tables as installed: read on first use after a write changed one (a deploy
        writes their 57k rows in many batches; only a packet of an abc slice needs them)."""
        if self._abc_installed is None:
            self._abc_installed = InstalledAbc.read(
                *(self._state.tables[t.id] for t in self._abc_tables)
            )
        return self._abc_installed

    def _tables(self) -> tuple[TableInfo, ...]:
        return (self._route, self._vlan, self._prefix, self._policy, self._law)

    def verdict(self, headers: Headers) -> Verdict:
        """Ingress for these headers, as `SliceportalIngress` applies it (call `refresh` first)."""
        if self._indexes is None:
            self.refresh()
        assert self._indexes is not None
        routes, vlans, prefixes = self._indexes
        if headers.ttl <= 1:
            return UNROUTED
        route = _action(routes.lookup((), headers.ipv4_dst), self._state.tables[self._route.id])
        if route.action_id != self._set_next_hop:
            return UNROUTED
        port = route.args[0]
        dp_sid = c.BEST_EFFORT_DP_SID
        hit = None
        if headers.vlan_id is not None:
            hit = vlans.lookup((port, headers.vlan_id), headers.ipv4_dst)
        if hit is None:
            hit = prefixes.lookup((port,), headers.ipv4_dst)
        if hit is not None and hit.action is not None and hit.action.action_id == self._set_slice:
            dp_sid = hit.action.args[0]
        entry = self._policies.get(dp_sid)
        if entry is None or entry.action is None:
            return Verdict(port, dp_sid, None)
        action, args = entry.action
        if action == self._tail_drop:
            return Verdict(port, dp_sid, dp.SlicePolicy(args[0], args[1], args[2], None, args[3]))
        if action == self._ecn_step:
            return Verdict(
                port, dp_sid, dp.SlicePolicy(args[0], args[1], args[2], args[3], args[4])
            )
        if action == self._codel:
            priority, byte_time, c_delay, hist_target, target, interval, ecn_mark = args
            law = self._laws.get(interval, ())
            codel = CodelConfig(target, interval, ecn_mark == 1, law)
            policy = dp.SlicePolicy(priority, byte_time, c_delay, None, hist_target, codel=codel)
            return Verdict(port, dp_sid, policy)
        if action == self._abc:
            priority, byte_time, c_delay, hist_target, *data = args
            q_min, q_base, gamma, offset, meter_memory, average_memory, mask = data
            abc = AbcParams(
                q_min, q_base, gamma, offset, meter_memory, average_memory, mask, c_delay
            )
            policy = dp.SlicePolicy(priority, byte_time, c_delay, None, hist_target, abc=abc)
            source = ipaddress.IPv4Address(headers.ipv4_src)
            return Verdict(port, dp_sid, policy, aggregate_slot(mask, dp_sid, source))
        if action == self._meter_policy:
            # No virtual queue: byte_time and c_delay are unused (the meter holds the rates).
            return Verdict(port, dp_sid, dp.SlicePolicy(args[0], 0, 0, None, args[1], True))
        return Verdict(port, dp_sid, None)


def _table(program: P4InfoIndex, name: str) -> TableInfo:
    for table in program.tables.values():
        if table.name == name:
            return table
    raise LookupError(f"the P4Info has no table {name}: the model needs sliceportal.p4's")


def _action(entry: Entry | None, table: Table) -> ActionCall:
    """The action a lookup runs: the hit entry's, else the table's default."""
    chosen = table.default if entry is None else entry
    return chosen.action if chosen.action is not None else ActionCall(0)


def _exact(value: MatchValue) -> int:
    if not isinstance(value, int):
        raise TypeError(f"an exact match value is an int, got {value!r}")
    return value
