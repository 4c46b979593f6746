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

from sliceportal.emulator.errors import Code, P4RuntimeError, invalid
from sliceportal.p4rt.entries import canonical_bytes
from sliceportal.p4rt.p4info import (
    FIELD_MATCH_TYPES,
    ActionCall,
    ActionInfo,
    ActionScope,
    MatchType,
    TableInfo,
)
from sliceportal.p4rt.proto import p4r

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
    encoded: p4r.TableEntry | None = None  # cached TableEntry message, without counter data


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

    def insert(self, msg: p4r.TableEntry) -> None:
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
        if not msg.HasField("action"):
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
        if msg.HasField("counter_data"):
            entry.packet_count = msg.counter_data.packet_count
            entry.byte_count = msg.counter_data.byte_count
        self.entries[key] = entry
        self.version += 1

    def modify(self, msg: p4r.TableEntry) -> None:
        self._check_write(msg)
        if msg.is_default_action:
            self._modify_default(msg)
            return
        if self.info.is_const:
            raise P4RuntimeError(Code.PERMISSION_DENIED, _CONST_TABLE.format(self._name))
        key = (*self._match(msg), self._priority(msg))
        if not msg.HasField("action"):
            raise invalid(f"{self._name}: a MODIFY of a non-default entry needs an action")
        action = self._action_call(msg, default=False)
        entry = self.entries.get(key)
        if entry is None:
            raise P4RuntimeError(Code.NOT_FOUND, f"{self._name}: no entry with this match key")
        entry.action = action
        entry.controller_metadata = msg.controller_metadata
        entry.metadata = msg.metadata
        entry.idle_timeout_ns = msg.idle_timeout_ns
        if msg.HasField("counter_data"):
            entry.packet_count = msg.counter_data.packet_count
            entry.byte_count = msg.counter_data.byte_count
        entry.encoded = None
        self.version += 1

    def delete(self, msg: p4r.TableEntry) -> None:
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

    def _modify_default(self, msg: p4r.TableEntry) -> None:
        if msg.match or msg.priority:
            raise invalid(f"{self._name}: the default entry has no match key and no priority")
        if self.info.const_default_action_id:
            raise P4RuntimeError(Code.PERMISSION_DENIED, f"{self._name} has a const default action")
        entry = self.default
        if not msg.HasField("action"):  # reset to the program's default
            entry.action = self.info.initial_default
            entry.controller_metadata = 0
            entry.metadata = b""
        else:
            entry.action = self._action_call(msg, default=True)
            entry.controller_metadata = msg.controller_metadata
            entry.metadata = msg.metadata
        if msg.HasField("counter_data"):
            entry.packet_count = msg.counter_data.packet_count
            entry.byte_count = msg.counter_data.byte_count
        entry.encoded = None
        self.version += 1

    def _check_write(self, msg: p4r.TableEntry) -> None:
        """Checks on the non-key fields of an INSERT or MODIFY."""
        if msg.is_const:
            raise invalid(f"{self._name}: 'is_const' must be false in a write")
        if msg.HasField("time_since_last_hit"):
            raise invalid(f"{self._name}: 'time_since_last_hit' cannot be written")
        if msg.idle_timeout_ns < 0:
            raise invalid(f"{self._name}: 'idle_timeout_ns' is negative")
        if msg.idle_timeout_ns and not self.info.supports_idle_timeout:
            raise invalid(f"{self._name} does not support idle timeouts")
        if msg.HasField("meter_config") or msg.HasField("meter_counter_data"):
            if not self.info.direct_meter_id:
                raise invalid(f"{self._name} has no direct meter")
            raise P4RuntimeError(Code.UNIMPLEMENTED, "the emulator does not model meters")
        if msg.HasField("counter_data"):
            data = msg.counter_data
            if not self.info.direct_counter_id:
                raise invalid(f"{self._name} has no direct counter")
            if data.packet_count < 0 or data.byte_count < 0:
                raise invalid(f"{self._name}: negative counter data")

    # -- keys and actions -------------------------------------------------------------------

    def _match(self, msg: p4r.TableEntry) -> tuple[MatchValue, ...]:
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

    def _match_value(self, fm: p4r.FieldMatch, pos: int) -> MatchValue:
        info = self.info.match_fields[pos]
        what = f"{self._name}: match field {info.name}"
        member = fm.WhichOneof("field_match_type")
        kind = FIELD_MATCH_TYPES.get(member or "", MatchType.UNSPECIFIED)
        if kind != info.kind:
            given = kind.name if member else "no match"
            raise invalid(f"{what} is {info.kind.name}, the request gives {given}")
        width = info.bitwidth
        if kind == MatchType.EXACT:
            return to_int(fm.exact.value, width, what)
        if kind == MatchType.OPTIONAL:
            return to_int(fm.optional.value, width, what)
        if kind == MatchType.LPM:
            value = to_int(fm.lpm.value, width, what)
            prefix_len = fm.lpm.prefix_len
            if not 0 < prefix_len <= width:
                raise invalid(
                    f"{what}: prefix length {prefix_len} is outside 1..{width} "
                    "(omit the field for a don't-care match)"
                )
            if value & ((1 << (width - prefix_len)) - 1):
                raise invalid(f"{what}: bits beyond the /{prefix_len} prefix must be zero")
            return (value, prefix_len)
        if kind == MatchType.TERNARY:
            value = to_int(fm.ternary.value, width, what)
            mask = to_int(fm.ternary.mask, width, f"{what} (mask)")
            if mask == 0:
                raise invalid(f"{what}: mask is zero (omit the field for a don't-care match)")
            if value & ~mask:
                raise invalid(f"{what}: value has bits set outside the mask")
            return (value, mask)
        low = to_int(fm.range.low, width, f"{what} (low)")
        high = to_int(fm.range.high, width, f"{what} (high)")
        if low > high:
            raise invalid(f"{what}: low bound {low} is above high bound {high}")
        if low == 0 and high == (1 << width) - 1:
            raise invalid(f"{what}: full range (omit the field for a don't-care match)")
        return (low, high)

    def _priority(self, msg: p4r.TableEntry) -> int:
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

    def _action_call(self, msg: p4r.TableEntry, *, default: bool) -> ActionCall:
        if self.info.implementation_id:
            raise P4RuntimeError(
                Code.UNIMPLEMENTED,
                f"{self._name} uses an action profile, which the emulator does not model",
            )
        if msg.action.WhichOneof("type") != "action":
            raise invalid(
                f"{self._name} is a direct table: its action must be an Action "
                "(not empty, not an action profile member, group or action set)"
            )
        action_id = msg.action.action.action_id
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
        given = msg.action.action.params
        args = [0] * len(params)
        seen = 0  # bit i: parameter i was given
        for param in given:
            param_id, value = param.param_id, param.value
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

    def read(self, request: p4r.TableEntry) -> list[p4r.TableEntry]:
        """The entries `request` selects (all if `match` is empty), as messages."""
        with_counter = request.HasField("counter_data") and bool(self.info.direct_counter_id)
        if request.is_default_action:
            return [self.item(self.default, with_counter, is_default=True)]
        return [self.item(entry, with_counter) for entry in self.select(request)]

    def select(self, request: p4r.TableEntry) -> Iterator[Entry]:
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
        action_id = request.action.action.action_id
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

    def lookup(self, msg: p4r.TableEntry) -> Entry:
        """The entry `msg` names by its key (or the default entry); NOT_FOUND if absent."""
        if msg.is_default_action:
            return self.default
        entry = self.entries.get((*self._match(msg), self._priority(msg)))
        if entry is None:
            raise P4RuntimeError(Code.NOT_FOUND, f"{self._name}: no entry with this match key")
        return entry

    def item(self, entry: Entry, with_counter: bool, *, is_default: bool = False) -> p4r.TableEntry:
        """`entry` as a TableEntry, as BMv2 would return it."""
        if entry.encoded is None:
            message = self.key_entry(entry, is_default=is_default)
            action = entry.action
            if action is not None:
                info = self._actions[action.action_id]
                params = [
                    p4r.Action.Param(param_id=param_id, value=canonical_bytes(arg))
                    for param_id, arg in zip(info.param_ids, action.args, strict=True)
                ]
                message.action.action.action_id = action.action_id
                message.action.action.params.extend(params)
            message.controller_metadata = entry.controller_metadata
            message.metadata = entry.metadata
            message.idle_timeout_ns = entry.idle_timeout_ns
            entry.encoded = message
        if not with_counter:
            return entry.encoded
        counted = p4r.TableEntry()
        counted.CopyFrom(entry.encoded)
        counted.counter_data.packet_count = entry.packet_count
        counted.counter_data.byte_count = entry.byte_count
        return counted

    def key_entry(self, entry: Entry, *, is_default: bool = False) -> p4r.TableEntry:
        """A TableEntry with only the key (as in a DirectCounterEntry)."""
        message = p4r.TableEntry(
            table_id=self.info.id,
            priority=entry.priority,
            is_default_action=is_default,
        )
        matches = message.match
        for info, value in zip(self.info.match_fields, entry.match, strict=True):
            if value is None:
                continue
            match = matches.add(field_id=info.id)
            kind = info.kind
            if kind == MatchType.EXACT:
                assert isinstance(value, int)
                match.exact.value = canonical_bytes(value)
            elif kind == MatchType.OPTIONAL:
                assert isinstance(value, int)
                match.optional.value = canonical_bytes(value)
            else:
                assert isinstance(value, tuple)
                first, second = value
                if kind == MatchType.LPM:
                    match.lpm.value = canonical_bytes(first)
                    match.lpm.prefix_len = second
                elif kind == MatchType.TERNARY:
                    match.ternary.value = canonical_bytes(first)
                    match.ternary.mask = canonical_bytes(second)
                else:
                    match.range.low = canonical_bytes(first)
                    match.range.high = canonical_bytes(second)
        return message
