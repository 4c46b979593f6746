"""The Redis pub/sub channels the poller publishes on and the API streams from.

Pub/sub ignores Redis database numbers, so channel names carry the name of the PostgreSQL
database they describe: two portals (or two test runs) sharing one Redis never hear each
other's slices.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import make_url


@dataclass(frozen=True)
class Channels:
    prefix: str

    @classmethod
    def of(cls, database_url: str) -> Channels:
        return cls(f"sliceportal:{make_url(database_url).database or 'default'}")

    @property
    def samples(self) -> str:
        """Every sample of one poll of one switch, as one JSON list."""
        return f"{self.prefix}:telemetry"

    def slice(self, slice_id: int) -> str:
        """One slice's samples, one JSON object per message."""
        return f"{self.prefix}:telemetry:slice:{slice_id}"

    @property
    def slice_pattern(self) -> str:
        """The glob pattern of every slice's channel (`PUBSUB CHANNELS`), this prefix escaped."""
        prefix = "".join("\\" + char if char in "*?[]\\" else char for char in self.prefix)
        return f"{prefix}:telemetry:slice:*"

    @property
    def alerts(self) -> str:
        """Alert events: ``{"event": "firing" | "resolved" | "acknowledged", "alert": {…}}``."""
        return f"{self.prefix}:alerts"
