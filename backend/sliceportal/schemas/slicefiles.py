"""Slices as files, for import and export (NetBox's bulk import): CSV and YAML.

A file holds slice documents, each what `POST /slices` takes (`SliceCreate`), one per CSV row
or YAML list item; they are validated by the import itself (`services.bulk`), row by row, so
this module only reads the format. CSV has one column per member, the nested objects flattened
with a dot (`sla.max_delay_s`, `codel.target_s`, `abc.key`); lists (`ipv4_prefixes`,
`link_ids`) are comma-separated in one cell; an empty cell is a member left out. Row 1 is the
first slice (the line after the CSV header). Export writes what import reads, so an exported
file imports back to the same slices (DP_SIDs aside: each is allocated again).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any

import yaml
from pydantic import BaseModel

from sliceportal.schemas.slices import (
    AbcParameters,
    CodelParameters,
    Sla,
    SliceCreate,
    SlicePublic,
)


class FileFormat(StrEnum):
    CSV = "csv"
    YAML = "yaml"


MEDIA_TYPES = {FileFormat.CSV: "text/csv", FileFormat.YAML: "application/yaml"}
"""What an import is sent as (its Content-Type) and an export answered as."""

NESTED: dict[str, type[BaseModel]] = {
    "sla": Sla,
    "codel": CodelParameters,
    "abc": AbcParameters,
}
EXPORTED = [name for name in SliceCreate.model_fields if name not in ("burst_bytes", "dp_sid")]
"""The members an export writes: a slice as stored (its burst limit, not bytes; no DP_SID,
which each switch allocates)."""
COLUMNS = [
    f"{name}.{member}" if name in NESTED else name
    for name in SliceCreate.model_fields
    for member in (NESTED[name].model_fields if name in NESTED else [""])
]
"""Every CSV column an import reads, in the order an export writes them."""
_TEXT = frozenset({"name", "description", "scheme", "abc.key"})
_LISTS = frozenset({"ipv4_prefixes", "link_ids", "path"})
_ID_LISTS = frozenset({"link_ids", "path"})
_INTEGER = re.compile(r"[+-]?\d+")


class FileError(Exception):
    """A file that is not CSV or YAML of slices; `row`: the row at fault, if one is."""

    def __init__(self, message: str, *, row: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.row = row


class _Loader(yaml.CSafeLoader):  # type: ignore[misc]  # no stubs (types-PyYAML)
    """Safe YAML, with YAML 1.2's floats (`1e7`: PyYAML's 1.1 rules read it as a string)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)[eE][-+]?\d+$"),
    list("-+0123456789."),
)


_MEDIA_ALIASES = {media: file_format for file_format, media in MEDIA_TYPES.items()} | {
    "application/x-yaml": FileFormat.YAML,
    "text/yaml": FileFormat.YAML,
}
"""Every Content-Type an import is read as: `MEDIA_TYPES` and YAML's unregistered names."""


def media_format(content_type: str) -> FileFormat | None:
    """The format a Content-Type names (parameters such as `charset` ignored), or None."""
    return _MEDIA_ALIASES.get(content_type.split(";", 1)[0].strip().lower())


def parse(data: bytes, file_format: FileFormat) -> list[object]:
    """The slice documents of a file, one per row; FileError when it is not readable as
    `file_format` (not UTF-8, bad syntax, unknown CSV columns, YAML that is not a list)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileError(f"not UTF-8 text (bad byte at offset {exc.start})") from None
    if file_format is FileFormat.CSV:
        return _parse_csv(text)
    return _parse_yaml(text)


def _parse_yaml(text: str) -> list[object]:
    try:
        documents = yaml.load(text, Loader=_Loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or "bad syntax"
        raise FileError(f"not valid YAML: {problem}{where}") from None
    except RecursionError:
        raise FileError("not valid YAML: nested too deeply") from None
    except ValueError as exc:  # a scalar its tag cannot hold: `2024-13-01`, `!!int x`, 5,000 digits
        raise FileError(f"not valid YAML: {exc}") from None
    if not isinstance(documents, list):
        raise FileError("a YAML import is a list of slices, one mapping each")
    return documents


def _parse_csv(text: str) -> list[object]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise FileError("a CSV import needs a header row naming its columns")
        header = [column.strip() for column in header]
        unknown = [column for column in header if column not in COLUMNS]
        if unknown:
            raise FileError(f"unknown CSV column {unknown[0]!r} (columns: {', '.join(COLUMNS)})")
        twice = sorted({column for column in header if header.count(column) > 1})
        if twice:
            raise FileError(f"CSV column {twice[0]!r} appears twice")
        documents: list[object] = []
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue  # a blank line
            row = len(documents) + 1
            if len(cells) != len(header):
                raise FileError(
                    f"row {row} has {len(cells)} cells, the header {len(header)}", row=row
                )
            documents.append(_document(dict(zip(header, cells, strict=True))))
    except csv.Error as exc:
        raise FileError(f"not valid CSV: {exc} (line {reader.line_num})") from None
    return documents


def _document(cells: Mapping[str, str]) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for column, cell in cells.items():
        if cell.strip() == "":
            continue
        value = _cell(column, cell)
        name, _, member = column.partition(".")
        if member:
            document.setdefault(name, {})[member] = value
        else:
            document[name] = value
    return document


def _cell(column: str, cell: str) -> object:
    if column in _TEXT:
        return cell
    if column in _LISTS:
        items = [item.strip() for item in cell.split(",") if item.strip()]
        if column in _ID_LISTS:
            return [_scalar(item) for item in items]
        return items
    return _scalar(cell.strip())


def _scalar(text: str) -> object:
    """A cell as JSON would have it: true/false, an integer, a number; else the text (which
    the field's validation then refuses, naming it)."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if _INTEGER.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # more digits than `int` reads (4,300)
            return text
    try:
        return float(text)
    except ValueError:
        return text


def export_document(slice_: SlicePublic) -> dict[str, Any]:
    """A stored slice as an import takes it: the members of `SliceCreate` it has (none null;
    ABC parameters resolved, as stored)."""
    public = slice_.model_dump(mode="json")
    document = {name: public[name] for name in EXPORTED if public[name] is not None}
    sla = {key: value for key, value in document["sla"].items() if value is not None}
    if sla:
        document["sla"] = sla
    else:
        del document["sla"]
    if not document["description"]:
        del document["description"]
    return document


def render(documents: Iterable[Mapping[str, Any]], file_format: FileFormat) -> str:
    """`documents` (as `export_document` gives them) as a file `parse` reads back."""
    if file_format is FileFormat.YAML:
        return str(
            yaml.dump(list(documents), Dumper=yaml.CSafeDumper, sort_keys=False, allow_unicode=True)
        )
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for document in documents:
        writer.writerow(_format(_flat(document).get(column)) for column in COLUMNS)
    return out.getvalue()


def _flat(document: Mapping[str, Any]) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in document.items():
        if name in NESTED and isinstance(value, Mapping):
            flat |= {f"{name}.{member}": each for member, each in value.items()}
        else:
            flat[name] = value
    return flat


def _format(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Sequence) and not isinstance(value, str):
        return ",".join(str(item) for item in value)
    return str(value)
