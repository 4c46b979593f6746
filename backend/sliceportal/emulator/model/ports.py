"""Egress port settings of the model: line rate and queue depth.

BMv2 differs in two ways worth knowing: its `set_queue_rate` counts packets per second, not
bits (the model sends a frame in `frame_bytes x 8 / rate_bps`), and a packet its egress
pipeline drops still used a dequeue slot there (here it takes no time on the link).
"""

from __future__ import annotations

from dataclasses import dataclass

from sliceportal.domain import p4constants as c

BMV2_QUEUE_DEPTH = 64
"""simple_switch's default depth of each egress queue, packets."""

DEFAULT_RATE_BPS = 1_000_000_000
"""Line rate of a port nobody configured: the 1 GbE links of the paper's BMv2 testbed."""


class PortConfigError(ValueError):
    """A port setting the model cannot run, naming the field."""


@dataclass(frozen=True)
class PortConfig:
    """One egress port: 8 strict-priority FIFO queues of ``queue_depth`` packets each, drained
    at ``rate_bps``."""

    rate_bps: int = DEFAULT_RATE_BPS
    queue_depth: int = BMV2_QUEUE_DEPTH

    def __post_init__(self) -> None:
        if isinstance(self.rate_bps, bool) or not isinstance(self.rate_bps, int):
            raise PortConfigError(f"rate_bps: must be an integer, got {self.rate_bps!r}")
        if not 1_000 <= self.rate_bps <= c.RATE_MAX_BPS:
            raise PortConfigError(
                f"rate_bps: must be in [1000, {c.RATE_MAX_BPS}] bit/s, got {self.rate_bps}"
            )
        if isinstance(self.queue_depth, bool) or not isinstance(self.queue_depth, int):
            raise PortConfigError(f"queue_depth: must be an integer, got {self.queue_depth!r}")
        if not 1 <= self.queue_depth <= 10_000_000:
            raise PortConfigError(
                f"queue_depth: must be in [1, 10000000] packets, got {self.queue_depth}"
            )


def check_port(port: object) -> int:
    """A usable egress port number, or PortConfigError."""
    if isinstance(port, bool) or not isinstance(port, int):
        raise PortConfigError(f"port: must be an integer, got {port!r}")
    if not 0 <= port < 1 << c.PORT_WIDTH or port == c.BMV2_DROP_PORT:
        raise PortConfigError(
            f"port: must be in [0, {(1 << c.PORT_WIDTH) - 1}] and not {c.BMV2_DROP_PORT}, "
            f"got {port}"
        )
    return port


def tx_time_ns(frame_bytes: int, rate_bps: int) -> int:
    """Time the link needs for one frame, rounded up to whole nanoseconds."""
    return (frame_bytes * 8 * 1_000_000_000 + rate_bps - 1) // rate_bps
