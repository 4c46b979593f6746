"""Traffic profiles (JSON) and the open-loop generators: CBR, Poisson and on/off.

A profile names its sources; each source sends packets with fixed headers (the switch
classifies them into a slice as it would real traffic) following one pattern:

- ``cbr``: ``rate_bps``, evenly spaced frames;
- ``poisson``: ``rate_bps`` on average, exponential gaps;
- ``onoff``: bursts at ``rate_bps`` lasting ``on_s`` on average, silences of ``off_s`` on
  average (both exponential);
- ``tcp``: ``flows`` greedy responsive flows with congestion control ``cc`` (``reno``,
  ``cubic`` or ``dctcp``), base round-trip time ``rtt_s``, sending from a ``sender_rate_bps``
  NIC (the compiled kernel runs them; see `engine.FlowSpec`); DCTCP's window never goes below
  ``min_cwnd`` packets (Linux's 2 by default; dctcp only).

Everything random is drawn from generators seeded by (profile seed, source name), in blocks
whose size does not depend on how time is chopped into chunks: the same profile gives the
same packets in real time and in fast time, whatever the chunk length.
"""

from __future__ import annotations

import ipaddress
import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from sliceportal.domain import p4constants as c
from sliceportal.emulator.layout import DCTCP_MIN_CWND, Congestion
from sliceportal.emulator.model.kernel import MAX_FRAME_BYTES
from sliceportal.emulator.model.ports import PortConfig, PortConfigError, check_port
from sliceportal.emulator.model.program import DEFAULT_SOURCE, DEFAULT_TTL, Headers

NS_PER_S = 1_000_000_000
ETHERNET_IPV4_FRAME = 1514
"""A full-size frame: 1500 bytes of IPv4 (the paper's MTU) plus the Ethernet header."""
_BLOCK = 256  # random draws per refill
_ECN = {"not-ect": 0, "ect1": 1, "ect0": 2, "ce": 3}
PATTERNS = ("cbr", "poisson", "onoff", "tcp")
_MAX_RATE = float(c.RATE_MAX_BPS)
_MAX_FLOWS = 10_000
_MAX_MIN_CWND = 10_000  # engine.FlowSpec's max_cwnd


class ProfileError(ValueError):
    """A traffic profile the model cannot run; the message names the field."""


@dataclass(frozen=True)
class SourceSpec:
    """One named traffic source (see the module docstring for the patterns)."""

    name: str
    pattern: str
    ipv4_dst: str
    vlan_id: int | None = None
    ipv4_src: str = DEFAULT_SOURCE
    ttl: int = DEFAULT_TTL
    frame_bytes: int = ETHERNET_IPV4_FRAME
    ecn: int = 0
    rate_bps: float = 0.0
    on_s: float = 0.0
    off_s: float = 0.0
    cc: Congestion = Congestion.CUBIC
    flows: int = 1
    rtt_s: float = 0.0
    sender_rate_bps: float = 1e9
    min_cwnd: int = DCTCP_MIN_CWND
    start_s: float = 0.0
    stop_s: float | None = None
    enabled: bool = True

    @property
    def headers(self) -> Headers:
        return Headers.parse(self.ipv4_dst, self.vlan_id, self.ttl, self.ipv4_src)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "name": self.name,
            "pattern": self.pattern,
            "ipv4_dst": self.ipv4_dst,
            "frame_bytes": self.frame_bytes,
            "ecn": next(k for k, v in _ECN.items() if v == self.ecn),
            "start_s": self.start_s,
            "enabled": self.enabled,
        }
        if self.vlan_id is not None:
            doc["vlan_id"] = self.vlan_id
        if self.ipv4_src != DEFAULT_SOURCE:
            doc["ipv4_src"] = self.ipv4_src
        if self.ttl != DEFAULT_TTL:
            doc["ttl"] = self.ttl
        if self.stop_s is not None:
            doc["stop_s"] = self.stop_s
        if self.pattern == "tcp":
            doc |= {
                "cc": self.cc.name.lower(),
                "flows": self.flows,
                "rtt_s": self.rtt_s,
                "sender_rate_bps": self.sender_rate_bps,
            }
            if self.cc == Congestion.DCTCP:
                doc["min_cwnd"] = self.min_cwnd
        else:
            doc["rate_bps"] = self.rate_bps
            if self.pattern == "onoff":
                doc |= {"on_s": self.on_s, "off_s": self.off_s}
        return doc


@dataclass(frozen=True)
class Profile:
    """A switch's traffic: its sources, the seed of their randomness, its ports' settings."""

    sources: tuple[SourceSpec, ...] = ()
    seed: int = 1
    ports: Mapping[int, PortConfig] = field(default_factory=dict)

    def with_ports(self, ports: Mapping[int, PortConfig]) -> Profile:
        return replace(self, ports={**self.ports, **ports})


# -- parsing ----------------------------------------------------------------------------------


def _number(doc: Mapping[str, Any], key: str, where: str, default: float | None = None) -> float:
    value = doc.get(key, default)
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        raise ProfileError(f"{where}.{key}: must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ProfileError(f"{where}.{key}: must be finite, got {value!r}")
    return float(value)


def _integer(
    doc: Mapping[str, Any], key: str, where: str, default: int, low: int, high: int
) -> int:
    value = doc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProfileError(f"{where}.{key}: must be an integer, got {value!r}")
    if not low <= value <= high:
        raise ProfileError(f"{where}.{key}: must be in [{low}, {high}], got {value}")
    return value


def _positive(doc: Mapping[str, Any], key: str, where: str, high: float) -> float:
    value = _number(doc, key, where)
    if not 0 < value <= high:
        raise ProfileError(f"{where}.{key}: must be in (0, {high:g}], got {value:g}")
    return value


_KEYS = {
    "cbr": {"rate_bps"},
    "poisson": {"rate_bps"},
    "onoff": {"rate_bps", "on_s", "off_s"},
    "tcp": {"cc", "flows", "rtt_s", "sender_rate_bps", "min_cwnd"},
}
_COMMON = {
    "name",
    "pattern",
    "ipv4_dst",
    "ipv4_src",
    "vlan_id",
    "ttl",
    "frame_bytes",
    "ecn",
    "start_s",
    "stop_s",
    "enabled",
}


def _address(doc: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = doc.get(key, default)
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        ipaddress.IPv4Address(value)
    except ValueError:
        raise ProfileError(f"{where}.{key}: must be an IPv4 address, got {value!r}") from None
    return value


def parse_source(doc: object, where: str = "source") -> SourceSpec:
    """A `SourceSpec` from its JSON form, or ProfileError naming the bad field."""
    if not isinstance(doc, dict):
        raise ProfileError(f"{where}: must be an object, got {type(doc).__name__}")
    name = doc.get("name")
    if not isinstance(name, str) or not name or len(name) > 64 or "/" in name:
        raise ProfileError(f"{where}.name: must be a non-empty string of at most 64 chars, no '/'")
    where = f"{where}({name})"
    pattern = doc.get("pattern")
    if pattern not in PATTERNS:
        raise ProfileError(f"{where}.pattern: must be one of {list(PATTERNS)}, got {pattern!r}")
    unknown = set(doc) - _COMMON - _KEYS[pattern]
    if unknown:
        raise ProfileError(f"{where}: unknown field(s) {sorted(unknown)} for pattern {pattern}")
    dst = _address(doc, "ipv4_dst", where)
    src = _address(doc, "ipv4_src", where, DEFAULT_SOURCE)
    vlan = doc.get("vlan_id")
    if vlan is not None:
        vlan = _integer(doc, "vlan_id", where, 0, 0, (1 << c.VLAN_ID_WIDTH) - 1)
    ecn = doc.get("ecn", "ect0" if doc.get("cc") == "dctcp" else "not-ect")
    if ecn not in _ECN:
        raise ProfileError(f"{where}.ecn: must be one of {list(_ECN)}, got {ecn!r}")
    start = _number(doc, "start_s", where, 0.0)
    stop = doc.get("stop_s")
    if start < 0:
        raise ProfileError(f"{where}.start_s: must be >= 0, got {start:g}")
    if stop is not None and _number(doc, "stop_s", where) <= start:
        raise ProfileError(f"{where}.stop_s: must be after start_s")
    enabled = doc.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ProfileError(f"{where}.enabled: must be true or false, got {enabled!r}")
    spec = SourceSpec(
        name=name,
        pattern=pattern,
        ipv4_dst=dst,
        ipv4_src=src,
        vlan_id=vlan,
        ttl=_integer(doc, "ttl", where, DEFAULT_TTL, 0, 255),
        frame_bytes=_integer(doc, "frame_bytes", where, ETHERNET_IPV4_FRAME, 64, MAX_FRAME_BYTES),
        ecn=_ECN[ecn],
        start_s=start,
        stop_s=None if stop is None else float(stop),
        enabled=enabled,
    )
    if pattern == "tcp":
        cc = doc.get("cc", "cubic")
        if not isinstance(cc, str) or cc.upper() not in Congestion.__members__:
            raise ProfileError(f"{where}.cc: must be reno, cubic or dctcp, got {cc!r}")
        if "min_cwnd" in doc and cc.upper() != Congestion.DCTCP.name:
            raise ProfileError(f"{where}.min_cwnd: only for cc dctcp (Reno and CUBIC keep 2)")
        return replace(
            spec,
            cc=Congestion[cc.upper()],
            min_cwnd=_integer(doc, "min_cwnd", where, DCTCP_MIN_CWND, 1, _MAX_MIN_CWND),
            flows=_integer(doc, "flows", where, 1, 1, _MAX_FLOWS),
            rtt_s=_positive(doc, "rtt_s", where, 10.0),
            sender_rate_bps=_positive(doc, "sender_rate_bps", where, _MAX_RATE)
            if "sender_rate_bps" in doc
            else spec.sender_rate_bps,
        )
    spec = replace(spec, rate_bps=_positive(doc, "rate_bps", where, _MAX_RATE))
    if pattern == "onoff":
        on_s = _positive(doc, "on_s", where, 3600)
        spec = replace(spec, on_s=on_s, off_s=_positive(doc, "off_s", where, 3600))
    return spec


def parse_ports(doc: object, where: str = "ports") -> dict[int, PortConfig]:
    """``{"1": {"rate_bps": 285e6, "queue_depth": 200000}}`` to port settings."""
    if not isinstance(doc, dict):
        raise ProfileError(f"{where}: must be an object of port number -> settings")
    ports: dict[int, PortConfig] = {}
    for key, settings in doc.items():
        try:
            port = check_port(int(key))
        except (ValueError, PortConfigError):
            raise ProfileError(f"{where}: {key!r} is not a usable port number") from None
        if not isinstance(settings, dict) or set(settings) - {"rate_bps", "queue_depth"}:
            raise ProfileError(f"{where}.{key}: must be an object with rate_bps and queue_depth")
        default = PortConfig()
        rate = _number(settings, "rate_bps", f"{where}.{key}", default.rate_bps)
        depth = settings.get("queue_depth", default.queue_depth)
        try:
            ports[port] = PortConfig(round(rate), depth)
        except PortConfigError as exc:
            raise ProfileError(f"{where}.{key}.{exc}") from None
    return ports


def parse_profile(doc: object) -> Profile:
    """A `Profile` from its JSON form: ``{"seed", "ports", "sources"}``, all optional."""
    if not isinstance(doc, dict):
        raise ProfileError("profile: must be a JSON object")
    unknown = set(doc) - {"seed", "ports", "sources", "about"}
    if unknown:
        raise ProfileError(f"profile: unknown field(s) {sorted(unknown)}")
    seed = _integer(doc, "seed", "profile", 1, 0, 2**63 - 1)
    raw = doc.get("sources", [])
    if not isinstance(raw, list):
        raise ProfileError("profile.sources: must be a list")
    sources = tuple(parse_source(s, f"sources[{i}]") for i, s in enumerate(raw))
    names = [s.name for s in sources]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise ProfileError(f"profile.sources: two sources are named {duplicate!r}")
    return Profile(sources, seed, parse_ports(doc.get("ports", {})))


# -- open-loop generators ---------------------------------------------------------------------


def source_rng(seed: int, name: str) -> np.random.Generator:
    """The random stream of one source: the same for a (seed, name) in every run."""
    key = (zlib.crc32(name.encode()),)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


class OpenLoop:
    """Arrival times of a CBR, Poisson or on/off source, in ns, produced on demand.

    Times are generated ahead in fixed blocks and handed out by `until`, so the sequence is
    the same however the caller slices time.
    """

    def __init__(self, spec: SourceSpec, seed: int, start_ns: int) -> None:
        self.spec = spec
        self._rng = source_rng(seed, spec.name)
        self._gap_ns = spec.frame_bytes * 8 * NS_PER_S / spec.rate_bps
        self._pending: npt.NDArray[np.int64] = np.zeros(0, np.int64)
        self._origin = float(start_ns)  # CBR: time of frame 0; others: time of the last draw
        self._sent = 0  # CBR: frames generated
        self._burst_end = float(start_ns)  # on/off: when the next burst may begin

    def until(self, end_ns: int) -> npt.NDArray[np.int64]:
        """The arrival times before ``end_ns`` not handed out yet, ascending."""
        while not len(self._pending) or self._pending[-1] < end_ns:
            self._pending = np.concatenate([self._pending, self._block()])
        cut = int(np.searchsorted(self._pending, end_ns))
        out: npt.NDArray[np.int64] = self._pending[:cut]
        self._pending = self._pending[cut:]
        return out

    def _block(self) -> npt.NDArray[np.int64]:
        pattern = self.spec.pattern
        if pattern == "cbr":
            k = np.arange(self._sent, self._sent + _BLOCK)
            self._sent += _BLOCK
            return _floor_ns(self._origin + k * self._gap_ns)
        if pattern == "poisson":
            draws = self._origin + np.cumsum(self._rng.exponential(self._gap_ns, _BLOCK))
            self._origin = float(draws[-1])
            return _floor_ns(draws)
        # on/off: one burst at the peak rate, then one silence.
        on_ns = self._rng.exponential(self.spec.on_s * NS_PER_S)
        off_ns = self._rng.exponential(self.spec.off_s * NS_PER_S)
        start = self._burst_end
        frames = max(1, math.ceil(on_ns / self._gap_ns))
        times = start + np.arange(frames) * self._gap_ns
        self._burst_end = start + frames * self._gap_ns + off_ns
        return _floor_ns(times)


def _floor_ns(times: npt.NDArray[np.floating[Any]]) -> npt.NDArray[np.int64]:
    floored: npt.NDArray[np.int64] = np.floor(times).astype(np.int64)
    return floored
