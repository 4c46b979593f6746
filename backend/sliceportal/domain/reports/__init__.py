"""The capacity planning report (issue #7): pure mathematics, no I/O, no clock.

:func:`build_report` turns a :class:`Network` (and optionally what telemetry measured) into a
:class:`Report`, whose ``to_dict()`` is the document of ``sliceportal.schemas.reports`` and
whose ``tables()`` are the same numbers as flat rows for the CSV export.
"""

from sliceportal.domain.reports.build import build_report
from sliceportal.domain.reports.document import Report
from sliceportal.domain.reports.growth import growth_factor
from sliceportal.domain.reports.network import MeasuredSlice, Network, NetworkLink, NetworkSlice

__all__ = [
    "MeasuredSlice",
    "Network",
    "NetworkLink",
    "NetworkSlice",
    "Report",
    "build_report",
    "growth_factor",
]
