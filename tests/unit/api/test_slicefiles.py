"""The CSV and YAML of slice import and export (`schemas.slicefiles`): what a cell becomes, what
is refused before any row is validated, and that what `render` writes `parse` reads back."""

from __future__ import annotations

from typing import Any

import pytest

from sliceportal.schemas.slicefiles import (
    COLUMNS,
    FileError,
    FileFormat,
    media_format,
    parse,
    render,
)
from sliceportal.schemas.slices import SliceCreate


def test_csv_cells_become_what_json_would_give() -> None:
    text = (
        "name,description,ipv4_prefixes,rate_bps,burst_limit_s,priority,link_ids,vlan_id,"
        "codel.ecn_mark,sla.max_loss_ratio,scheme\n"
        'a,"x, y",10.0.0.0/24 , 1e7 ,0.01,7,"3, 4",,TRUE,0,codel\n'
        "007,,,fast,,,,12,false,,\n"
    )
    first, second = parse(text.encode(), FileFormat.CSV)
    assert first == {
        "name": "a",
        "description": "x, y",
        "ipv4_prefixes": ["10.0.0.0/24"],
        "rate_bps": 1e7,
        "burst_limit_s": 0.01,
        "priority": 7,
        "link_ids": [3, 4],
        "codel": {"ecn_mark": True},
        "sla": {"max_loss_ratio": 0},
        "scheme": "codel",
    }
    # a name stays text; a bad number stays text for the field's validation to name
    assert second == {
        "name": "007",
        "rate_bps": "fast",
        "vlan_id": 12,
        "codel": {"ecn_mark": False},
    }
    # an integer of more digits than `int` reads stays text too, as does one in a list
    (third,) = parse(f"rate_bps,link_ids\n{'9' * 5000},{'9' * 5000}\n".encode(), FileFormat.CSV)
    assert third == {"rate_bps": "9" * 5000, "link_ids": ["9" * 5000]}


def test_yaml_reads_yaml_1_2_floats_and_nothing_unsafe() -> None:
    (row,) = parse(
        b"- {name: a, rate_bps: 1e7, burst_limit_s: 5E-3, priority: 7}\n", FileFormat.YAML
    )
    assert row == {"name": "a", "rate_bps": 1e7, "burst_limit_s": 0.005, "priority": 7}
    with pytest.raises(FileError, match="not valid YAML"):
        parse(b"- !!python/object/apply:os.system [true]\n", FileFormat.YAML)


@pytest.mark.parametrize(
    ("data", "file_format", "says"),
    [
        (b"\xff", FileFormat.CSV, "not UTF-8"),
        (b"", FileFormat.CSV, "header row"),
        (b"name,bogus\n", FileFormat.CSV, "unknown CSV column 'bogus'"),
        (b'name\n"a\n', FileFormat.CSV, "not valid CSV"),
        (b"{}", FileFormat.YAML, "a list of slices"),
        (b"- [", FileFormat.YAML, r"not valid YAML: .* \(line 2, column 1\)"),
        (b"- name: 2024-13-01\n", FileFormat.YAML, "not valid YAML: month must be in 1..12"),
        (b"- name: !!int x\n", FileFormat.YAML, "not valid YAML: invalid literal for int"),
        (b"- rate_bps: " + b"9" * 5000, FileFormat.YAML, "not valid YAML: .*digits"),
    ],
)
def test_unreadable_files(data: bytes, file_format: FileFormat, says: str) -> None:
    with pytest.raises(FileError, match=says):
        parse(data, file_format)


def test_media_types() -> None:
    assert media_format("text/csv; charset=utf-8") is FileFormat.CSV
    assert media_format("application/x-yaml") is FileFormat.YAML
    assert media_format("application/json") is None


def test_every_member_of_a_creation_is_a_column() -> None:
    flat = {column.split(".")[0] for column in COLUMNS}
    assert flat == set(SliceCreate.model_fields)


DOCUMENTS: list[dict[str, Any]] = [
    {
        "name": "a",
        "description": 'quote " and, comma',
        "vlan_id": 5,
        "ipv4_prefixes": ["10.0.0.0/24", "10.0.1.0/24"],
        "rate_bps": 1234567.891,
        "burst_limit_s": 1e-05,
        "priority": 3,
        "scheme": "codel",
        "codel": {"target_s": 0.002, "interval_s": 0.1, "ecn_mark": True},
        "sla": {"max_delay_s": 0.02},
        "link_ids": [1, 2],
    },
    {
        "name": "b",
        "ipv4_prefixes": ["10.9.0.0/16"],
        "rate_bps": 1e6,
        "priority": 1,
        "link_ids": [3],
    },
]


@pytest.mark.parametrize("file_format", list(FileFormat))
def test_render_then_parse_is_the_same_documents(file_format: FileFormat) -> None:
    assert parse(render(DOCUMENTS, file_format).encode(), file_format) == DOCUMENTS
