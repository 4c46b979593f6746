"""Human-readable quantities for verdict sentences ("exceeds target 10 ms")."""

from __future__ import annotations


def format_rate(bps: float) -> str:
    """A rate with a readable unit: ``12 Mbit/s``."""
    for scale, unit in ((1e12, "Tbit/s"), (1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if abs(bps) >= scale:
            return f"{bps / scale:.4g} {unit}"
    return f"{bps:.4g} bit/s"


def format_delay(seconds: float) -> str:
    """A delay with a readable unit: ``12.3 ms``."""
    if seconds == 0 or abs(seconds) >= 1:
        return f"{seconds:.4g} s"
    if abs(seconds) >= 1e-3:
        return f"{seconds * 1e3:.4g} ms"
    return f"{seconds * 1e6:.4g} µs"


def format_bytes(count: float) -> str:
    """A size with a readable unit: ``120 kB``."""
    for scale, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(count) >= scale:
            return f"{count / scale:.4g} {unit}"
    return f"{count:.4g} B"
