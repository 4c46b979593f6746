"""The report's flat tables as CSV: the same numbers as the JSON, one table per file."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Literal

Cell = str | int | float | bool | None
TableName = Literal["links", "link_slices", "slices", "findings"]
TABLES: tuple[TableName, ...] = ("links", "link_slices", "slices", "findings")


def render_csv(rows: Sequence[Mapping[str, Cell]]) -> str:
    """One table as CSV with a header row. Floats keep every digit (``repr``), so a value
    read back is the value computed; an absent value is an empty field."""
    buffer = io.StringIO()
    if not rows:
        return ""
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if value is None else value for key, value in row.items()})
    return buffer.getvalue()
