"""Match-action table contents: validation of `TableEntry` writes and reads, and entry storage.

Entries are stored under a canonical key (each match field as integers, plus the priority), so
equal keys sent with different byte encodings (leading zeros) are the same entry, as on BMv2.
Rules follow the P4Runtime specification (sections "TableEntry", "Match Format", "Default
Entry", "Direct Resources"); where the specification leaves a choice, the emulator makes BMv2's
(PI's) choice, so that what the emulator accepts BMv2 accepts too. See docs/emulator.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sliceportal.emulator import wire
from sliceportal.emulator.errors import Code, P4RuntimeError, invalid
from sliceportal.emulator.wire import MatchKind, TableActionKind
from sliceportal.p4rt.p4info import ActionCall, ActionInfo, ActionScope, TableInfo

# One match field, canonical: exact and optional -> value; lpm -> (value, prefix length);
# ternary -> (value, mask); range -> (low, high); None -> don't care (the field was omitted).
MatchValue = int | tuple[int, int] | None
# The dict key of an entry: its match values followed by its priority.
EntryKey = tuple[MatchValue, ...]
# The entries of a const table come with the BMv2 JSON, which the emulator does not read: its
# const tables stay empty, and no write can change them.
_CONST_TABLE = "{} is a const table"


def to_int(value: bytes, bitwidth: int, what: str) -> int:
    """A P4Runtime bytestring as an int; leading zero bytes are accepted (as BMv2 does)."""
    if not value:
        raise invalid(f"{what}: empty byte string (0 is encoded as b'\\x00')")
    number = int.from_bytes(value, "big")
    if number >> bitwidth:
        raise invalid(f"{what}: value 0x{value.hex()} does not fit in {bitwidth} bits")
    return number


@dataclass(slots=True, eq=False)
class Entry:
    """One table entry, or a table's default entry (whose match values are all None)."""

    match: tuple[MatchValue, ...]
    priority: int
    action: ActionCall | None
    controller_metadata: int = 0
    metadata: bytes = b""
    idle_timeout_ns: int = 0
    packet_count: int = 0  # the direct counter, when the table has one
    byte_count: int = 0
    encoded: bytes | None = None  # cached TableEntry encoding, without counter data


class Table:
    """The entries of one table. Not thread-safe: callers hold the switch state's lock."""

    def __init__(self, info: TableInfo, actions: dict[int, ActionInfo]) -> None:
        self.info = info
        self._actions = actions
        self.entries: dict[EntryKey, Entry] = {}
        self.default = Entry((None,) * len(info.match_fields), 0, info.initial_default)
        # Bumped on every change, so the packet model can rebuild lookup structures lazily.
        self.version = 0

    # -- writes -----------------------------------------------------------------------------

    def insert(self, msg: wire.TableEntry) -> None:
        if msg.is_default_action:
            raise invalid(f"{self._name}: the default entry cannot be inserted, only modified")
        self._check_write(msg)
        if self.info.is_const:
            raise P4RuntimeError(Code.PERMISSION_DENIED, _CONST_TABLE.format(self._name))
        if not self.info.match_fields:
            raise invalid(f"{self._name} has no match key: only its default entry can be set")
        match = self._match(msg)
        priority = self._priority(msg)
        key = (*match, priority)
        if msg.action_kind is None:
            raise invalid(f"{self._name}: an INSERT needs an action")
        action = self._action_call(msg, default=False)
        if key in self.entries:
            raise P4RuntimeError(
                Code.ALREADY_EXISTS, f"{self._name}: an entry with this match key exists"
            )
        if len(self.entries) >= self.info.size:
            raise P4RuntimeError(
                Code.RESOURCE_EXHAUSTED, f"{self._name} is full ({self.info.size} entries)"
            )
        entry = Entry(
            match, priority, action, msg.controller_metadata, msg.metadata, msg.idle_timeout_ns
        )
        if msg.counter_data is not None:
            entry.packet_count = msg.counter_data.packet_count
            entry.byte_count = msg.counter_data.byte_count
        self.entries[key] = entry
        self.version += 1

    def modify(self, msg: wire.TableEntry) -> None:
        self._check_write(msg)
        if msg.is_default_action:
            self._modify_default(msg)
            return
        if self.info.is_const:
            raise P4RuntimeError(Code.PERMISSION_DENIED, _CONST_TABLE.format(self._name))
        key = (*self._match(msg), self._priority(msg))
        if msg.action_kind is None:
            raise invalid(f"{self._name}: a MODIFY of a non-default entry needs an action")
        action = self._action_call(msg, default=False)
        entry = self.entries.get(key)
        if entry is None:
            raise P4RuntimeError(Code.NOT_FOUND, f"{self._name}: no entry with this match key")
        entry.action = action
        entry.controller_metadata = msg.controller_metadata
        entry.metadata = msg.metadata
        entry.idle_timeout_ns = msg.idle_timeout_ns
        if msg.counter_data is not None:
            entry.packet_count = msg.counter_data.packet_count
            entry.byte_count = msg.counter_data.byte_count
        entry.encoded = None
        self.version += 1

    def delete(self, msg: wire.TableEntry) -> None:
        """Only the key is looked at, as the specification requires for DELETE."""
        if msg.is_const:
            raise invalid(f"{self._name}: 'is_const' must be false in a write")
        if msg.is_default_action:
            raise invalid(f"{self._name}: the default entry cannot be deleted, only modified")
        if self.info.is_const:
            raise P4RuntimeError(Code.PERMISSION_DENIED, _CONST_TABLE.format(self._name))
        key = (*self._match(msg), self._priority(msg))
        if self.entries.pop(key, None) is None:
            raise P4RuntimeError(Code.NOT_FOUND, f"{self._name}: no entry with this match key")
        self.version += 1

    def _modify_default(self, msg: wire.TableEntry) -> None:
        if msg.match or msg.priority:
            raise invalid(f"{self._name}: the default entry has no match key and no priority")
        if self.info.const_default_action_id:
            raise P4RuntimeError(Code.PERMISSION_DENIED, f"{self._name} has a const default action")
        entry = self.default
        if msg.action_kind is None:  # reset to the program's default
            entry.action = self.info.initial_default
            entry.controller_metadata = 0
            entry.metadata = b""
        else:
            entry.action = self._action_call(msg, default=True)
            entry.controller_metadata = msg.controller_metadata
            entry.metadata = msg.metadata
        if msg.counter_data is not None:
            entry.packet_count = msg.counter_data.packet_count
            entry.byte_count = msg.counter_data.byte_count
        entry.encoded = None
        self.version += 1

    def _check_write(self, msg: wire.TableEntry) -> None:
        """Checks on the non-key fields of an INSERT or MODIFY."""
        if msg.is_const:
            raise invalid(f"{self._name}: 'is_const' must be false in a write")
        if msg.has_time_since_last_hit:
            raise invalid(f"{self._name}: 'time_since_last_hit' cannot be written")
        if msg.idle_timeout_ns < 0:
            raise invalid(f"{self._name}: 'idle_timeout_ns' is negative")
        if msg.idle_timeout_ns and not self.info.supports_idle_timeout:
            raise invalid(f"{self._name} does not support idle timeouts")
        if msg.has_meter_config or msg.has_meter_counter_data:
            if not self.info.direct_meter_id:
                raise invalid(f"{self._name} has no direct meter")
            raise P4RuntimeError(Code.UNIMPLEMENTED, "the emulator does not model meters")
        data = msg.counter_data
        if data is not None:
            if not self.info.direct_counter_id:
                raise invalid(f"{self._name} has no direct counter")
            if data.packet_count < 0 or data.byte_count < 0:
                raise invalid(f"{self._name}: negative counter data")

    # -- keys and actions -------------------------------------------------------------------

    def _match(self, msg: wire.TableEntry) -> tuple[MatchValue, ...]:
        """The canonical match values of `msg.match`, validated against the P4Info."""
        info = self.info
        values: list[MatchValue] = [None] * len(info.match_fields)
        for fm in msg.match:
            pos = info.field_index.get(fm.field_id)
            if pos is None:
                raise invalid(f"{self._name}: unknown match field id {fm.field_id}")
            if values[pos] is not None:
                raise invalid(
                    f"{self._name}: match field {info.match_fields[pos].name} is given twice"
                )
            values[pos] = self._match_value(fm, pos)
        for pos in info.exact_positions:
            if values[pos] is None:
                raise invalid(
                    f"{self._name}: exact match field {info.match_fields[pos].name} is missing "
                    "(exact fields have no don't-care value)"
                )
        return tuple(values)

    def _match_value(self, fm: wire.FieldMatch, pos: int) -> MatchValue:
        info = self.info.match_fields[pos]
        what = f"{self._name}: match field {info.name}"
        if fm.kind != info.kind:
            raise invalid(f"{what} is {info.kind.name}, the request gives {fm.kind.name}")
        width = info.bitwidth
        kind = fm.kind
        if kind == MatchKind.EXACT or kind == MatchKind.OPTIONAL:
            return to_int(fm.value, width, what)
        if kind == MatchKind.LPM:
            value = to_int(fm.value, width, what)
            if not 0 < fm.prefix_len <= width:
                raise invalid(
                    f"{what}: prefix length {fm.prefix_len} is outside 1..{width} "
                    "(omit the field for a don't-care match)"
                )
            if value & ((1 << (width - fm.prefix_len)) - 1):
                raise invalid(f"{what}: bits beyond the /{fm.prefix_len} prefix must be zero")
            return (value, fm.prefix_len)
        if kind == MatchKind.TERNARY:
            value = to_int(fm.value, width, what)
            mask = to_int(fm.mask, width, f"{what} (mask)")
            if mask == 0:
                raise invalid(f"{what}: mask is zero (omit the field for a don't-care match)")
            if value & ~mask:
                raise invalid(f"{what}: value has bits set outside the mask")
            return (value, mask)
        low = to_int(fm.value, width, f"{what} (low)")
        high = to_int(fm.mask, width, f"{what} (high)")
        if low > high:
            raise invalid(f"{what}: low bound {low} is above high bound {high}")
        if low == 0 and high == (1 << width) - 1:
            raise invalid(f"{what}: full range (omit the field for a don't-care match)")
        return (low, high)

    def _priority(self, msg: wire.TableEntry) -> int:
        if self.info.needs_priority:
            if msg.priority <= 0:
                raise invalid(
                    f"{self._name} has ternary, range or optional fields: "
                    "entries need a priority > 0"
                )
        elif msg.priority != 0:
            raise invalid(
                f"{self._name} has only exact and lpm fields: the priority must be 0, "
                f"not {msg.priority}"
            )
        return msg.priority

    def _action_call(self, msg: wire.TableEntry, *, default: bool) -> ActionCall:
        if self.info.implementation_id:
            raise P4RuntimeError(
                Code.UNIMPLEMENTED,
                f"{self._name} uses an action profile, which the emulator does not model",
            )
        if msg.action_kind != TableActionKind.ACTION or msg.action is None:
            raise invalid(
                f"{self._name} is a direct table: its action must be an Action "
                "(not empty, not an action profile member, group or action set)"
            )
        action_id = msg.action.action_id
        action = self._actions.get(action_id)
        if action is None:
            raise invalid(f"{self._name}: unknown action id {action_id}")
        scope = self.info.action_scopes.get(action_id)
        if scope is None:
            raise invalid(f"{self._name}: action {action.name} is not one of the table's actions")
        if default and scope == ActionScope.TABLE_ONLY:
            raise P4RuntimeError(
                Code.PERMISSION_DENIED,
                f"{self._name}: action {action.name} is @tableonly, not a default action",
            )
        if not default and scope == ActionScope.DEFAULT_ONLY:
            raise P4RuntimeError(
                Code.PERMISSION_DENIED,
                f"{self._name}: action {action.name} is @defaultonly, not for entries",
            )
        params = action.params
        given = msg.action.params
        args = [0] * len(params)
        seen = 0  # bit i: parameter i was given
        for param_id, value in given:
            pos = action.param_index.get(param_id)
            if pos is None:
                raise invalid(f"action {action.name}: unknown parameter id {param_id}")
            if seen >> pos & 1:
                raise invalid(f"action {action.name}: parameter {params[pos].name} given twice")
            seen |= 1 << pos
            number = int.from_bytes(value, "big")
            if not value or number >> params[pos].bitwidth:  # inlined to_int: this is hot
                to_int(value, params[pos].bitwidth, f"action {action.name}: {params[pos].name}")
            args[pos] = number
        if len(given) != len(params):
            missing = next(p for i, p in enumerate(params) if not seen >> i & 1)
            raise invalid(f"action {action.name}: parameter {missing.name} is missing")
        return ActionCall(action_id, tuple(args))

    @property
    def _name(self) -> str:
        return f"table {self.info.name}"

    # -- reads ------------------------------------------------------------------------------

    def read(self, request: wire.TableEntry) -> list[bytes]:
        """`wire.read_item`s of the entries `request` selects (all if `match` is empty)."""
        with_counter = request.counter_data is not None and bool(self.info.direct_counter_id)
        if request.is_default_action:
            return [self.item(self.default, with_counter, is_default=True)]
        return [self.item(entry, with_counter) for entry in self.select(request)]

    def select(self, request: wire.TableEntry) -> Iterator[Entry]:
        """Non-default entries matching the read filters of `request`, in insertion order."""
        if request.priority < 0:
            raise invalid(f"{self._name}: negative priority")
        if request.priority and not self.info.needs_priority:
            raise invalid(f"{self._name} has no priorities: the priority must be 0")
        candidates: list[Entry]
        if request.match:
            match = self._match(request)
            if request.priority:
                found = self.entries.get((*match, request.priority))
                candidates = [] if found is None else [found]
            else:
                candidates = [e for e in self.entries.values() if e.match == match]
        else:
            candidates = list(self.entries.values())
        action_id = request.action.action_id if request.action is not None else 0
        for entry in candidates:
            if request.priority and entry.priority != request.priority:
                continue
            if action_id and (entry.action is None or entry.action.action_id != action_id):
                continue
            if request.controller_metadata and (
                entry.controller_metadata != request.controller_metadata
            ):
                continue
            if request.metadata and entry.metadata != request.metadata:
                continue
            yield entry

    def lookup(self, msg: wire.TableEntry) -> Entry:
        """The entry `msg` names by its key (or the default entry); NOT_FOUND if absent."""
        if msg.is_default_action:
            return self.default
        entry = self.entries.get((*self._match(msg), self._priority(msg)))
        if entry is None:
            raise P4RuntimeError(Code.NOT_FOUND, f"{self._name}: no entry with this match key")
        return entry

    def item(self, entry: Entry, with_counter: bool, *, is_default: bool = False) -> bytes:
        """A `wire.read_item` holding `entry` as a TableEntry, as BMv2 would return it."""
        if entry.encoded is None:
            action = entry.action
            table_action = None
            if action is not None:
                info = self._actions[action.action_id]
                table_action = wire.encode_table_action(
                    action.action_id, info.param_ids, action.args
                )
            entry.encoded = wire.encode_table_entry(
                self.info.id,
                self._encoded_match(entry),
                table_action,
                priority=entry.priority,
                controller_metadata=entry.controller_metadata,
                metadata=entry.metadata,
                is_default_action=is_default,
                idle_timeout_ns=entry.idle_timeout_ns,
            )
        body = entry.encoded
        if with_counter:
            body = wire.with_counter_data(body, entry.packet_count, entry.byte_count)
        return wire.read_item(wire.EntityKind.TABLE_ENTRY, body)

    def key_entry(self, entry: Entry, *, is_default: bool = False) -> bytes:
        """A TableEntry body with only the key (as in a DirectCounterEntry)."""
        return wire.encode_table_entry(
            self.info.id,
            self._encoded_match(entry),
            None,
            priority=entry.priority,
            is_default_action=is_default,
        )

    def _encoded_match(self, entry: Entry) -> list[bytes]:
        out = []
        for info, value in zip(self.info.match_fields, entry.match, strict=True):
            if value is None:
                continue
            if isinstance(value, tuple):
                out.append(wire.encode_field_match(info.id, info.kind, value[0], value[1]))
            else:
                out.append(wire.encode_field_match(info.id, info.kind, value))
        return out
