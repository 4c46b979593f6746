"""Slice telemetry: the counter poller, sample storage with downsampling and retention, and the
Redis channels the API streams from (docs/telemetry.md)."""
