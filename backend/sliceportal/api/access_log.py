"""Keep stream tickets out of the server's access log.

An EventSource cannot send headers, so a stream takes its ticket in the URL (`?token=`,
routes/stream.py), and uvicorn logs every request's URL with its query string. A ticket is
valid 60 s: long enough for anyone who reads the log to open the streams of its user. The
filter rewrites the value of every `token` query parameter in the access log's records.
"""

from __future__ import annotations

import logging
import re

ACCESS_LOGGER = "uvicorn.access"
QUERY_TOKEN = re.compile(r"([?&]token=)[^&#\s\"]*")
REDACTED = r"\1[redacted]"


class RedactQueryTokens(logging.Filter):
    """Rewrites `token=<value>` in a record's message and string arguments (uvicorn's access
    formatter unpacks the arguments: their number and order are kept)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = QUERY_TOKEN.sub(REDACTED, record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(
                QUERY_TOKEN.sub(REDACTED, arg) if isinstance(arg, str) else arg
                for arg in record.args
            )
        return True


REDACT_QUERY_TOKENS = RedactQueryTokens()


def redact_access_log() -> None:
    """Install the filter on uvicorn's access logger, however uvicorn is started (`serve`, the
    `uvicorn` command): the logger keeps it when uvicorn configures logging, before or after.
    Idempotent."""
    logging.getLogger(ACCESS_LOGGER).addFilter(REDACT_QUERY_TOKENS)
