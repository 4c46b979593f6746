"""The committed P4Info must say exactly what the P4 source says.

We cannot run p4c in CI, so the P4Info is committed (p4/build/sliceportal.p4info.txtpb) and this
test keeps it in step with the source: names, ids, match fields, action parameters, counter and
register sizes and units. It reads the source with a small parser of our own conventions
(every object annotated ``@id(...) @name("...")`` directly above its declaration, one control
per file, controls instantiated as ``Control() name;`` or ``@name("name") Control() other;``, at
any depth) and names objects the way p4c does: ``<top control>.<instance>...<local name>``.
Match kinds are taken as written (``exact``, ``lpm``, ``range``), upper-cased as P4Info's
``match_type``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from google.protobuf import text_format

from sliceportal.p4rt.proto import p4i as p4info_pb2

ROOT = Path(__file__).resolve().parents[3]
P4_MAIN = ROOT / "p4" / "sliceportal.p4"
P4INFO = ROOT / "p4" / "build" / "sliceportal.p4info.txtpb"

# Widths of the v1model metadata fields our keys read (from p4c's p4include/v1model.p4).
STANDARD_METADATA_WIDTHS = {"egress_spec": 9, "ingress_port": 9}
# Which struct a control parameter is, by our naming convention.
PARAM_TYPES = {"hdr": "headers_t", "local_md": "local_metadata_t"}
ID_PREFIX = {"table": 0x02, "action": 0x01, "counter": 0x12, "meter": 0x14, "register": 0x16}
COUNTER_UNITS = {"packets": "PACKETS", "bytes": "BYTES", "packets_and_bytes": "BOTH"}
METER_UNITS = {"packets": "PACKETS", "bytes": "BYTES"}
ANNOTATED = r"@id\((0x[0-9a-fA-F]+|\d+)\)\s*@name\(\"(\w+)\"\)\s*"
DECLARATION = re.compile(r"\b(?:action|table) (\w+)|\b(?:counter|meter|register)\b[^;]*\s(\w+);")


@dataclass(frozen=True)
class Table:
    id: int
    match_fields: tuple[tuple[int, str, int, str], ...]  # (id, name, bitwidth, match type)
    actions: tuple[tuple[str, bool], ...]  # (action name, default only)
    const_default_action: str | None
    size: int


@dataclass(frozen=True)
class Action:
    id: int
    params: tuple[tuple[int, str, int], ...]  # (id, name, bitwidth)


@dataclass(frozen=True)
class Counter:
    id: int
    unit: str
    size: int


@dataclass(frozen=True)
class Meter:
    id: int
    unit: str
    size: int


@dataclass(frozen=True)
class Register:
    id: int
    bitwidth: int
    size: int


@dataclass
class Program:
    tables: dict[str, Table]
    actions: dict[str, Action]
    counters: dict[str, Counter]
    registers: dict[str, Register]
    meters: dict[str, Meter]


def _read_with_includes(path: Path) -> str:
    """The source with our quoted #includes expanded (system ones are p4c's)."""
    text = path.read_text()

    def expand(m: re.Match[str]) -> str:
        return _read_with_includes(path.parent / m.group(1))

    return re.sub(r'^#include "([^"]+)"\s*$', expand, text, flags=re.M)


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def _block(text: str, start: int) -> str:
    """The text inside the braces opening at or after ``start``."""
    open_at = text.index("{", start)
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[open_at + 1 : i]
    raise AssertionError("unbalanced braces")


class SourceModel:
    """Reads our P4 source into the objects p4c would put in the P4Info."""

    def __init__(self, main: Path) -> None:
        raw = _read_with_includes(main)
        self.defines = {
            m.group(1): int(m.group(2), 0)
            for m in re.finditer(r"^#define (\w+) (0x[0-9a-fA-F]+|\d+)\b", raw, flags=re.M)
        }
        self.text = _strip_comments(raw)
        self.typedefs = {
            m.group(2): self._int(m.group(1))
            for m in re.finditer(r"typedef bit<(\w+)> (\w+);", self.text)
        }
        self.structs = {
            m.group(2): self._fields(_block(self.text, m.end()))
            for m in re.finditer(r"\b(header|struct) (\w+)\s*(?=\{)", self.text)
        }
        self.controls = {
            m.group(1): _block(self.text, m.end())
            for m in re.finditer(r"^control (\w+)\(", self.text, flags=re.M)
        }

    def _int(self, token: str) -> int:
        token = token.strip()
        return self.defines[token] if token in self.defines else int(token, 0)

    def width(self, type_name: str) -> int:
        m = re.fullmatch(r"bit<(\w+)>", type_name)
        if m:
            return self._int(m.group(1))
        if type_name == "bool":
            return 1
        return self.typedefs[type_name]

    @staticmethod
    def _fields(body: str) -> dict[str, str]:
        return {m.group(2): m.group(1) for m in re.finditer(r"([\w<>]+)\s+(\w+);", body)}

    def expression_width(self, expression: str) -> int:
        """Width of a key such as ``hdr.ipv4.dst_addr`` or ``standard_metadata.egress_spec``."""
        head, *path = expression.split(".")
        if head == "standard_metadata":
            return STANDARD_METADATA_WIDTHS[path[0]]
        type_name = PARAM_TYPES[head]
        for field in path:
            type_name = self.structs[type_name][field]
        return self.width(type_name)

    def top_controls(self) -> tuple[str, str]:
        """Ingress and egress: the third and fourth arguments of V1Switch."""
        args = re.search(r"V1Switch\((.*?)\)\s*main;", self.text, flags=re.S)
        assert args is not None
        names = [a.strip().removesuffix("()") for a in args.group(1).split(",")]
        return names[2], names[3]

    def program(self) -> Program:
        program = Program({}, {}, {}, {}, {})
        for top in self.top_controls():
            self._collect_instances(top, top, program)
        return program

    def _collect_instances(self, control: str, prefix: str, program: Program) -> None:
        """A control's objects, then those of the controls it instantiates, at any depth."""
        body = self.controls[control]
        self._collect(body, prefix, program)
        instance = r'^\s*(?:@name\("(\w+)"\)\s+)?(\w+)\(\) (\w+);'
        for m in re.finditer(instance, body, flags=re.M):
            if m.group(2) in self.controls:
                name = m.group(1) or m.group(3)  # p4c names its objects by the @name
                self._collect_instances(m.group(2), f"{prefix}.{name}", program)

    def _collect(self, body: str, prefix: str, program: Program) -> None:
        self._check_all_annotated(body)
        for m in re.finditer(ANNOTATED + r"action (\w+)\(([^)]*)\)", body):
            params = [p.split() for p in m.group(4).split(",") if p.strip()]
            program.actions[f"{prefix}.{m.group(2)}"] = Action(
                int(m.group(1), 0),
                tuple((i, name, self.width(t)) for i, (t, name) in enumerate(params, start=1)),
            )
        for m in re.finditer(ANNOTATED + r"table (\w+)", body):
            program.tables[f"{prefix}.{m.group(2)}"] = self._table(
                int(m.group(1), 0), _block(body, m.end()), prefix
            )
        counter = ANNOTATED + r"counter\((\w+), CounterType\.(\w+)\) (\w+);"
        for m in re.finditer(counter, body):
            program.counters[f"{prefix}.{m.group(2)}"] = Counter(
                int(m.group(1), 0), COUNTER_UNITS[m.group(4)], self._int(m.group(3))
            )
        meter = ANNOTATED + r"meter\((\w+), MeterType\.(\w+)\) (\w+);"
        for m in re.finditer(meter, body):
            program.meters[f"{prefix}.{m.group(2)}"] = Meter(
                int(m.group(1), 0), METER_UNITS[m.group(4)], self._int(m.group(3))
            )
        for m in re.finditer(ANNOTATED + r"register<(\w+|bit<\w+>)>\((\w+)\) (\w+);", body):
            program.registers[f"{prefix}.{m.group(2)}"] = Register(
                int(m.group(1), 0), self.width(m.group(3)), self._int(m.group(4))
            )

    @staticmethod
    def _check_all_annotated(body: str) -> None:
        """Every P4Runtime object must pin its @id and a @name equal to its declared name."""
        for m in DECLARATION.finditer(body):
            name = m.group(1) or m.group(2)
            pinned = ANNOTATED.replace("(\\w+)", name) + "$"
            assert re.search(pinned, body[: m.start()].rstrip() + " "), f"{name}: no @id/@name"

    def _table(self, table_id: int, body: str, prefix: str) -> Table:
        key = re.search(r"key\s*=\s*\{(.*?)\}", body, flags=re.S)  # none: a keyless table
        fields = re.findall(
            r"([\w.]+)\s*:\s*(\w+)\s*@name\(\"(\w+)\"\)\s*;", key.group(1) if key else ""
        )
        actions = re.search(r"actions\s*=\s*\{(.*?)\}", body, flags=re.S)
        assert actions is not None
        refs = re.findall(r"(@defaultonly\s+)?(\w+)\s*;", actions.group(1))
        default = re.search(r"const default_action\s*=\s*(\w+)\(", body)
        size = re.search(r"size\s*=\s*(\w+)\s*;", body)
        assert size is not None, "every table declares its size (BMv2's default is 1024)"
        return Table(
            table_id,
            tuple(
                (i, name, self.expression_width(expr), kind.upper())
                for i, (expr, kind, name) in enumerate(fields, start=1)
            ),
            tuple((f"{prefix}.{a}", bool(d)) for d, a in refs),
            f"{prefix}.{default.group(1)}" if default else None,
            self._int(size.group(1)),
        )


def _p4info() -> p4info_pb2.P4Info:
    return text_format.Parse(P4INFO.read_text(), p4info_pb2.P4Info())


def _p4info_program(info: p4info_pb2.P4Info) -> Program:
    """The same model read from the P4Info, resolving action ids to names."""
    action_names = {a.preamble.id: a.preamble.name for a in info.actions}
    unit_name = p4info_pb2.CounterSpec.Unit.Name
    match_name = p4info_pb2.MatchField.MatchType.Name
    return Program(
        tables={
            t.preamble.name: Table(
                t.preamble.id,
                tuple((f.id, f.name, f.bitwidth, match_name(f.match_type)) for f in t.match_fields),
                tuple(
                    (action_names[r.id], r.scope == p4info_pb2.ActionRef.DEFAULT_ONLY)
                    for r in t.action_refs
                ),
                action_names.get(t.const_default_action_id),
                t.size,
            )
            for t in info.tables
        },
        actions={
            a.preamble.name: Action(
                a.preamble.id, tuple((p.id, p.name, p.bitwidth) for p in a.params)
            )
            for a in info.actions
        },
        counters={
            c.preamble.name: Counter(c.preamble.id, unit_name(c.spec.unit), c.size)
            for c in info.counters
        },
        registers={
            r.preamble.name: Register(r.preamble.id, r.type_spec.bitstring.bit.bitwidth, r.size)
            for r in info.registers
        },
        meters={
            m.preamble.name: Meter(
                m.preamble.id, p4info_pb2.MeterSpec.Unit.Name(m.spec.unit), m.size
            )
            for m in info.meters
        },
    )


@pytest.fixture(scope="module")
def source() -> Program:
    return SourceModel(P4_MAIN).program()


@pytest.fixture(scope="module")
def info() -> p4info_pb2.P4Info:
    return _p4info()


@pytest.mark.parametrize("kind", ["tables", "actions", "counters", "registers", "meters"])
def test_p4info_objects_match_source(source: Program, info: p4info_pb2.P4Info, kind: str) -> None:
    expected = getattr(source, kind)
    actual = getattr(_p4info_program(info), kind)
    assert sorted(actual) == sorted(expected), f"{kind}: names differ"
    for name, obj in expected.items():
        assert actual[name] == obj, f"{kind} {name}"


def test_source_has_the_objects_we_rely_on(source: Program) -> None:
    """Guards the parser itself: an empty model would make the comparison vacuous."""
    assert len(source.tables) == 17
    assert len(source.actions) == 22
    assert len(source.counters) == 7
    assert len(source.registers) == 13
    assert len(source.meters) == 1
    # Keyless tables run one register read-modify-write atomically (BMv2 locks per action).
    keyless = [name.rsplit(".", 1)[1] for name, t in source.tables.items() if not t.match_fields]
    assert keyless == [
        "vq_return_table",
        "codel_state",
        "abc_meter_clock",
        "abc_meter_state",
        "abc_average_clock",
        "abc_count_state",
        "abc_average_state",
    ]
    # Range fields need a priority on every P4Runtime entry: only ABC's decay tables have one.
    ranged = [
        name.rsplit(".", 1)[1]
        for name, t in source.tables.items()
        if any(kind == "RANGE" for *_, kind in t.match_fields)
    ]
    assert ranged == ["abc_meter_decay", "abc_average_decay"]
    assert source.counters["SliceportalIngress.aqm.aqm_dropped"].id == 0x12000007


@pytest.mark.parametrize("kind", ["tables", "actions", "counters", "registers", "meters"])
def test_p4info_lists_objects_in_declaration_order(
    source: Program, info: p4info_pb2.P4Info, kind: str
) -> None:
    """p4c lists each kind in the order of declaration (controls in instantiation order), so a
    hand-edited P4Info stays byte for byte what p4c would write."""
    assert list(getattr(_p4info_program(info), kind)) == list(getattr(source, kind))


def test_ids_carry_their_type_prefix_and_are_unique(info: p4info_pb2.P4Info) -> None:
    groups = {
        "table": info.tables,
        "action": info.actions,
        "counter": info.counters,
        "meter": info.meters,
        "register": info.registers,
    }
    ids = [o.preamble.id for objects in groups.values() for o in objects]
    assert len(ids) == len(set(ids))
    for kind, objects in groups.items():
        for o in objects:
            assert o.preamble.id >> 24 == ID_PREFIX[kind], o.preamble.name
            assert p4info_pb2.P4Ids.Prefix.Value(kind.upper()) == ID_PREFIX[kind]


def test_aliases_are_the_shortest_unique_suffix(info: p4info_pb2.P4Info) -> None:
    objects = [*info.tables, *info.actions, *info.counters, *info.meters, *info.registers]
    names = [o.preamble.name for o in objects]
    for o in objects:
        parts = o.preamble.name.split(".")
        for n in range(1, len(parts) + 1):
            suffix = ".".join(parts[-n:])
            if sum(x == suffix or x.endswith("." + suffix) for x in names) == 1:
                break
        assert o.preamble.alias == suffix


def test_p4info_is_for_v1model_and_has_nothing_else(info: p4info_pb2.P4Info) -> None:
    assert info.pkg_info.arch == "v1model"
    assert not (info.direct_counters or info.direct_meters or info.digests)
    assert all(m.spec.unit == p4info_pb2.MeterSpec.BYTES for m in info.meters)
    assert not (info.action_profiles or info.value_sets or info.controller_packet_metadata)
    assert all(not o.preamble.annotations for o in [*info.tables, *info.actions])


def test_default_only_action_refs_are_annotated(info: p4info_pb2.P4Info) -> None:
    for table in info.tables:
        for ref in table.action_refs:
            default_only = ref.scope == p4info_pb2.ActionRef.DEFAULT_ONLY
            assert list(ref.annotations) == (["@defaultonly"] if default_only else [])


def test_tables_fit_thousands_of_slices(source: Program) -> None:
    sizes = {name.rsplit(".", 1)[1]: t.size for name, t in source.tables.items()}
    assert sizes["slice_policy"] >= 4096
    assert sizes["vlan_classifier"] >= 16384
    assert sizes["prefix_classifier"] >= 16384
