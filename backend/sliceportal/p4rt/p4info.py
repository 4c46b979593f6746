"""A typed, read-only index over one P4Info: the objects the emulator serves, by id and by name.

Everything downstream (validation, storage, the packet model) reads these dataclasses, never the
untyped protobuf message, which is kept only to answer `GetForwardingPipelineConfig`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any, NamedTuple

from sliceportal.p4rt.proto import p4i, text_format

# BMv2's size for a table whose P4 source gives none (p4c always writes one into the P4Info).
DEFAULT_TABLE_SIZE = 1024


class P4InfoError(ValueError):
    """The P4Info cannot be served (unreadable, or uses something the emulator does not model)."""


class MatchType(IntEnum):
    """P4Info `MatchField.MatchType` (OTHER: a match kind P4Info names by string)."""

    UNSPECIFIED = 0
    EXACT = 2
    LPM = 3
    TERNARY = 4
    RANGE = 5
    OPTIONAL = 6
    OTHER = 100


FIELD_MATCH_TYPES = {
    "exact": MatchType.EXACT,
    "lpm": MatchType.LPM,
    "ternary": MatchType.TERNARY,
    "range": MatchType.RANGE,
    "optional": MatchType.OPTIONAL,
    "other": MatchType.OTHER,
}
"""P4Runtime `FieldMatch`'s oneof member -> the P4Info match type it carries."""


class ActionScope(IntEnum):
    """P4Info `ActionRef.Scope`."""

    TABLE_AND_DEFAULT = 0
    TABLE_ONLY = 1
    DEFAULT_ONLY = 2


class CounterUnit(IntEnum):
    """P4Info `CounterSpec.Unit`."""

    UNSPECIFIED = 0
    BYTES = 1
    PACKETS = 2
    BOTH = 3


@dataclass(frozen=True, slots=True)
class MatchFieldInfo:
    id: int
    name: str
    bitwidth: int
    kind: MatchType


@dataclass(frozen=True, slots=True)
class ParamInfo:
    id: int
    name: str
    bitwidth: int


@dataclass(frozen=True, slots=True)
class ActionInfo:
    id: int
    name: str
    params: tuple[ParamInfo, ...]
    param_ids: tuple[int, ...]
    param_index: dict[int, int] = field(compare=False)  # param id -> position in `params`


class ActionCall(NamedTuple):
    """An action with its parameter values, in the action's P4Info parameter order."""

    action_id: int
    args: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TableInfo:
    id: int
    name: str
    match_fields: tuple[MatchFieldInfo, ...]
    field_index: dict[int, int] = field(compare=False)  # field id -> position in `match_fields`
    exact_positions: tuple[int, ...]  # positions of the exact fields, which cannot be omitted
    action_scopes: dict[int, ActionScope] = field(compare=False)
    size: int
    needs_priority: bool  # ternary, range or optional fields: entries carry a priority
    const_default_action_id: int  # 0: the default action may be changed
    initial_default: ActionCall | None  # what MODIFY without an action resets the default to
    direct_counter_id: int  # 0: none
    direct_meter_id: int  # 0: none
    implementation_id: int  # action profile / selector; 0: a direct table
    is_const: bool
    supports_idle_timeout: bool


@dataclass(frozen=True, slots=True)
class CounterInfo:
    id: int
    name: str
    unit: CounterUnit
    size: int


@dataclass(frozen=True, slots=True)
class DirectCounterInfo:
    id: int
    name: str
    unit: CounterUnit
    table_id: int


@dataclass(frozen=True, slots=True)
class RegisterInfo:
    id: int
    name: str
    size: int
    bitwidth: int  # 0: not a `bit<W>` register (readable only as far as the emulator models it)


@dataclass(frozen=True, slots=True)
class MeterInfo:
    """An indirect meter: `unit` is the P4Info `MeterSpec.Unit` (1 BYTES, 2 PACKETS)."""

    id: int
    name: str
    unit: int
    size: int


class P4InfoIndex:
    """The objects of one P4Info, in P4Info order (the order wildcard reads return them in)."""

    def __init__(self, message: Any) -> None:
        self.message = message
        self.arch: str = message.pkg_info.arch
        self.actions = {a.preamble.id: _action(a) for a in message.actions}
        self.tables = {t.preamble.id: self._table(t) for t in message.tables}
        self.counters = {c.preamble.id: _counter(c) for c in message.counters}
        self.direct_counters = {
            c.preamble.id: DirectCounterInfo(
                c.preamble.id, c.preamble.name, CounterUnit(c.spec.unit), c.direct_table_id
            )
            for c in message.direct_counters
        }
        self.registers = {r.preamble.id: _register(r) for r in message.registers}
        self.meters = {
            m.preamble.id: MeterInfo(m.preamble.id, m.preamble.name, int(m.spec.unit), m.size)
            for m in message.meters
        }
        self.meter_ids = frozenset(m.preamble.id for m in message.meters) | frozenset(
            m.preamble.id for m in message.direct_meters
        )

    @classmethod
    def from_file(cls, path: Path) -> P4InfoIndex:
        """Load a text-format P4Info (`*.p4info.txtpb`), as p4c writes it."""
        try:
            text = path.read_text()
        except OSError as exc:
            raise P4InfoError(f"cannot read the P4Info {path}: {exc.strerror}") from exc
        message = p4i.P4Info()
        try:
            text_format.Parse(text, message, allow_unknown_field=True)
        except text_format.ParseError as exc:
            raise P4InfoError(f"{path} is not a text-format P4Info: {exc}") from exc
        return cls(message)

    def _table(self, table: Any) -> TableInfo:
        fields = tuple(_match_field(table.preamble.name, mf) for mf in table.match_fields)
        direct = set(table.direct_resource_ids)
        counter_ids = {c.preamble.id for c in self.message.direct_counters}
        meter_ids = {m.preamble.id for m in self.message.direct_meters}
        initial = None
        if table.HasField("initial_default_action"):
            call = table.initial_default_action
            initial = self._call(table.preamble.name, call.action_id, call.arguments)
        elif table.const_default_action_id:
            initial = ActionCall(table.const_default_action_id)
        else:  # P4Infos older than P4Runtime 1.4 omit it; P4 defaults to NoAction
            initial = next(
                (
                    ActionCall(ref.id)
                    for ref in table.action_refs
                    if ref.id in self.actions and self.actions[ref.id].name == "NoAction"
                ),
                None,
            )
        return TableInfo(
            id=table.preamble.id,
            name=table.preamble.name,
            match_fields=fields,
            field_index={f.id: i for i, f in enumerate(fields)},
            exact_positions=tuple(i for i, f in enumerate(fields) if f.kind == MatchType.EXACT),
            action_scopes={ref.id: ActionScope(ref.scope) for ref in table.action_refs},
            size=table.size or DEFAULT_TABLE_SIZE,
            needs_priority=any(
                f.kind in (MatchType.TERNARY, MatchType.RANGE, MatchType.OPTIONAL) for f in fields
            ),
            const_default_action_id=table.const_default_action_id,
            initial_default=initial,
            direct_counter_id=next(iter(direct & counter_ids), 0),
            direct_meter_id=next(iter(direct & meter_ids), 0),
            implementation_id=table.implementation_id,
            is_const=table.is_const_table,
            supports_idle_timeout=table.idle_timeout_behavior != 0,
        )

    def _call(self, table_name: str, action_id: int, arguments: Any) -> ActionCall:
        action = self.actions.get(action_id)
        if action is None:
            raise P4InfoError(f"table {table_name}: initial default action {action_id} is unknown")
        values = {arg.param_id: int.from_bytes(arg.value, "big") for arg in arguments}
        return ActionCall(action_id, tuple(values.get(p.id, 0) for p in action.params))

    def signature(self) -> Iterator[tuple[str, str]]:
        """(object, description) pairs; two P4Infos describe the same program iff these match.

        Covers what the emulator validates against: ids, names, widths, match kinds, action
        sets and scopes, sizes, counter units, direct resources and the architecture.
        """
        yield "architecture", repr(self.arch)
        for t in self.tables.values():
            fields = ", ".join(
                f"{f.id}:{f.name}:{f.kind.name}:{f.bitwidth}" for f in t.match_fields
            )
            actions = ", ".join(f"{a}:{s.name}" for a, s in sorted(t.action_scopes.items()))
            yield (
                f"table {t.id}",
                f"{t.name!r} keys [{fields}] actions [{actions}] size {t.size} "
                f"const-default {t.const_default_action_id} direct-counter "
                f"{t.direct_counter_id} direct-meter {t.direct_meter_id} "
                f"implementation {t.implementation_id} const {t.is_const}",
            )
        for a in self.actions.values():
            params = ", ".join(f"{p.id}:{p.name}:{p.bitwidth}" for p in a.params)
            yield f"action {a.id}", f"{a.name!r} params [{params}]"
        for c in self.counters.values():
            yield f"counter {c.id}", f"{c.name!r} unit {c.unit.name} size {c.size}"
        for d in self.direct_counters.values():
            yield f"direct counter {d.id}", f"{d.name!r} unit {d.unit.name} table {d.table_id}"
        for r in self.registers.values():
            yield f"register {r.id}", f"{r.name!r} size {r.size} bitwidth {r.bitwidth}"
        for m in sorted(self.meter_ids):
            yield f"meter {m}", "present"

    def first_difference(self, other: P4InfoIndex) -> str | None:
        """None when `other` describes the same program, else the first difference, in words."""
        mine = dict(self.signature())
        theirs = dict(other.signature())
        for key in [*mine, *(k for k in theirs if k not in mine)]:
            if mine.get(key) != theirs.get(key):
                return (
                    f"{key}: the emulated program has {mine.get(key, 'none')}, "
                    f"the request has {theirs.get(key, 'none')}"
                )
        return None


def _match_field(table_name: str, mf: Any) -> MatchFieldInfo:
    try:
        kind = MatchType(mf.match_type)
    except ValueError:
        kind = MatchType.OTHER
    if kind in (MatchType.UNSPECIFIED, MatchType.OTHER) or mf.bitwidth <= 0:
        raise P4InfoError(
            f"table {table_name}: match field {mf.name!r} is not a fixed-width "
            "exact/lpm/ternary/range/optional field, which the emulator does not model"
        )
    return MatchFieldInfo(mf.id, mf.name, mf.bitwidth, kind)


def _action(action: Any) -> ActionInfo:
    params = tuple(ParamInfo(p.id, p.name, p.bitwidth) for p in action.params)
    for param in params:
        if param.bitwidth <= 0:
            raise P4InfoError(
                f"action {action.preamble.name}: parameter {param.name!r} has no bitwidth "
                "(translated types are not modelled)"
            )
    return ActionInfo(
        action.preamble.id,
        action.preamble.name,
        params,
        tuple(p.id for p in params),
        {p.id: i for i, p in enumerate(params)},
    )


def _counter(counter: Any) -> CounterInfo:
    return CounterInfo(
        counter.preamble.id, counter.preamble.name, CounterUnit(counter.spec.unit), counter.size
    )


def _register(register: Any) -> RegisterInfo:
    spec = register.type_spec
    bitwidth = 0
    if spec.HasField("bitstring") and spec.bitstring.HasField("bit"):
        bitwidth = spec.bitstring.bit.bitwidth
    return RegisterInfo(register.preamble.id, register.preamble.name, register.size, bitwidth)
