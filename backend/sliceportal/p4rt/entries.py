"""Table entries of the domain (`domain.dataplane.TableEntry`, by P4Info names) to P4Runtime
wire bytes and back, for one P4Info.

The control plane writes what `encode_update` produces and diffs what `decode` gives back
against the translation's entries, so both directions use the P4Info's own order (match fields
and action parameters) and the switch's canonical values (integers, LPM values masked).
"""

from __future__ import annotations

from sliceportal.domain import dataplane as dp
from sliceportal.domain.reconcile import EntryUpdate, UpdateKind
from sliceportal.p4rt import wire
from sliceportal.p4rt.p4info import ActionInfo, P4InfoIndex, TableInfo

_WIRE_KINDS = {dp.MatchKind.EXACT: wire.MatchKind.EXACT, dp.MatchKind.LPM: wire.MatchKind.LPM}
_DOMAIN_KINDS = {kind: domain for domain, kind in _WIRE_KINDS.items()}
_UPDATE_TYPES = {
    UpdateKind.INSERT: wire.UpdateType.INSERT,
    UpdateKind.MODIFY: wire.UpdateType.MODIFY,
    UpdateKind.DELETE: wire.UpdateType.DELETE,
}


class EntryCodecError(ValueError):
    """An entry that does not fit the P4Info (unknown name, wrong match kind, missing value)."""


class EntryCodec:
    """Name <-> id translation of one P4Info, and the table-entry codec built on it."""

    def __init__(self, program: P4InfoIndex) -> None:
        self.program = program
        self._tables = {t.name: t for t in program.tables.values()}
        self._encoding = {
            t.name: (
                t.id,
                {f.name: (f.id, f.kind, _DOMAIN_KINDS.get(f.kind)) for f in t.match_fields},
            )
            for t in program.tables.values()
        }
        self._actions = {a.name: a for a in program.actions.values()}
        self._param_names = {
            a.name: tuple(p.name for p in a.params) for a in self._actions.values()
        }
        self._counters = {c.name: c.id for c in program.counters.values()}
        self._registers = {r.name: r.id for r in program.registers.values()}
        self._meters = {m.name: m.id for m in program.meters.values()}

    def table(self, name: str) -> TableInfo:
        try:
            return self._tables[name]
        except KeyError:
            raise EntryCodecError(f"the P4Info has no table {name}") from None

    def _action(self, name: str) -> ActionInfo:
        try:
            return self._actions[name]
        except KeyError:
            raise EntryCodecError(f"the P4Info has no action {name}") from None

    def counter_id(self, name: str) -> int:
        try:
            return self._counters[name]
        except KeyError:
            raise EntryCodecError(f"the P4Info has no counter {name}") from None

    def register_id(self, name: str) -> int:
        try:
            return self._registers[name]
        except KeyError:
            raise EntryCodecError(f"the P4Info has no register {name}") from None

    def meter_id(self, name: str) -> int:
        try:
            return self._meters[name]
        except KeyError:
            raise EntryCodecError(f"the P4Info has no meter {name}") from None

    def encode_meter_update(self, config: dp.MeterConfig) -> bytes:
        """A serialized MODIFY `Update` of one meter cell (the only update an indirect meter
        takes: its cells always exist)."""
        rates = wire.MeterConfig(config.cir, config.cburst, config.pir, config.pburst)
        body = wire.encode_meter_entry(self.meter_id(config.meter), config.index, rates)
        return wire.encode_update(wire.UpdateType.MODIFY, wire.EntityKind.METER_ENTRY, body)

    def encode_meter_reset(self, meter: str, index: int) -> bytes:
        """A serialized MODIFY `Update` of one meter cell without a config: back to
        unconfigured (no policing)."""
        body = wire.encode_meter_entry(self.meter_id(meter), index, None)
        return wire.encode_update(wire.UpdateType.MODIFY, wire.EntityKind.METER_ENTRY, body)

    def decode_meter(self, entry: wire.MeterEntry) -> dp.MeterConfig | None:
        """A meter cell as read back; None for a cell without a config (unconfigured)."""
        info = self.program.meters.get(entry.meter_id)
        if info is None:
            raise EntryCodecError(f"the switch returned a cell of unknown meter {entry.meter_id}")
        if entry.config is None:
            return None
        rates = entry.config
        index = entry.index or 0
        return dp.MeterConfig(info.name, index, rates.cir, rates.cburst, rates.pir, rates.pburst)

    def encode(self, entry: dp.TableEntry, *, with_action: bool = True) -> bytes:
        """The serialized `TableEntry`; a DELETE needs only the key (`with_action=False`).

        The control plane's hot path (thousands of entries per push), hence the lookups in
        flat dicts prepared once per P4Info.
        """
        found = self._encoding.get(entry.table)
        if found is None:
            raise EntryCodecError(f"the P4Info has no table {entry.table}")
        table_id, fields = found
        matches = []
        for match in entry.match:
            info = fields.get(match.field)
            if info is None or info[2] is not match.kind:
                raise EntryCodecError(
                    f"{entry.table} has no {match.kind} field {match.field!r} in the P4Info"
                )
            matches.append(
                wire.encode_field_match(info[0], info[1], match.value, match.prefix_len or 0)
            )
        table_action = None
        if with_action:
            action = self._action(entry.action)
            names = self._param_names[entry.action]
            if tuple([name for name, _ in entry.params]) == names:  # as the translation has them
                args = [value for _, value in entry.params]
            else:
                values = dict(entry.params)
                if sorted(values) != sorted(names) or len(values) != len(entry.params):
                    raise EntryCodecError(
                        f"{entry.action} takes {list(names)}, the entry gives {sorted(values)}"
                    )
                args = [values[name] for name in names]
            table_action = wire.encode_table_action(action.id, action.param_ids, args)
        return wire.encode_table_entry(table_id, matches, table_action)

    def encode_update(self, update: EntryUpdate) -> bytes:
        """A serialized `Update` of one table entry."""
        body = self.encode(update.entry, with_action=update.kind is not UpdateKind.DELETE)
        return wire.encode_update(_UPDATE_TYPES[update.kind], wire.EntityKind.TABLE_ENTRY, body)

    def decode(self, entry: wire.TableEntry) -> dp.TableEntry:
        """A table entry as read back from the switch, in the P4Info's field and param order."""
        table = self.program.tables.get(entry.table_id)
        if table is None:
            raise EntryCodecError(f"the switch returned an entry of unknown table {entry.table_id}")
        matches = []
        for match in sorted(entry.match, key=lambda m: table.field_index.get(m.field_id, -1)):
            position = table.field_index.get(match.field_id)
            kind = _DOMAIN_KINDS.get(match.kind)
            if position is None or kind is None:
                raise EntryCodecError(
                    f"{table.name}: field {match.field_id} of kind {match.kind.name} is not ours"
                )
            info = table.match_fields[position]
            value = int.from_bytes(match.value, "big")
            prefix_len = match.prefix_len if kind is dp.MatchKind.LPM else None
            matches.append(dp.FieldMatch(info.name, kind, value, prefix_len))
        if entry.action_kind is not wire.TableActionKind.ACTION or entry.action is None:
            raise EntryCodecError(f"{table.name}: an entry without a direct action")
        action = self.program.actions.get(entry.action.action_id)
        if action is None:
            raise EntryCodecError(f"{table.name}: unknown action {entry.action.action_id}")
        values = dict(entry.action.params)
        params = tuple(
            (p.name, int.from_bytes(values[p.id], "big")) for p in action.params if p.id in values
        )
        return dp.TableEntry(table.name, tuple(matches), action.name, params)
