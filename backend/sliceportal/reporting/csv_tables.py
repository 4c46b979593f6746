"""The report's flat tables as CSV: the same numbers as the JSON, one table per file."""

from __future__ import annotations

import csv
import io

from sliceportal.domain.reports.tables import Table


def render_csv(table: Table) -> str:
    """One table as CSV. The header row is always there, from the table's columns, so a file
    with no rows (say, the findings of a healthy network) still names them for a spreadsheet
    or ``pandas.read_csv``. Floats keep every digit (``repr``), so a value read back is the
    value computed; an absent value is an empty field."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=table.columns, lineterminator="\n")
    writer.writeheader()
    for row in table.rows:
        writer.writerow({key: "" if value is None else value for key, value in row.items()})
    return buffer.getvalue()
