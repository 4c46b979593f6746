"""`PacketModel`: the packet model as the emulator server's `PipelineModel`, with its clocks.

The server attaches it to every committed pipeline. It then runs the profile's traffic through
the program in chunks of simulated time, each under ``state.lock``, so controllers' reads and
writes land between chunks (a write takes effect from the next chunk on, as a real switch
applies it to the packets that follow). Three ways to move time:

- ``realtime``: a thread keeps simulated time level with the wall clock (the demo: counters
  grow as you watch);
- ``fast``: a thread runs as fast as the CPU allows;
- ``manual``: fast time, moved only by `advance` (tests and experiments read counters at
  exact simulated instants).

Sources start and stop at their profile times, and at any time through `start`/`stop`
(the side door, `emulator/control.py`).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import numpy as np

from sliceportal.emulator import layout as L
from sliceportal.emulator.model.engine import (
    Engine,
    FlowSpec,
    FlowStats,
    TapReading,
    compile_kernel,
)
from sliceportal.emulator.model.ports import PortConfig, check_port
from sliceportal.emulator.model.traffic import NS_PER_S, OpenLoop, Profile, SourceSpec, source_rng
from sliceportal.emulator.state import DeviceState

logger = logging.getLogger(__name__)

REALTIME_TICK_S = 0.01
"""Wall-clock period of the real-time driver: counters move in steps this small."""
_CATCH_UP_NS = 100_000_000
_STATS = {
    "offered": L.ST_INGRESS,
    "unrouted": L.ST_UNROUTED,
    "vq_dropped": L.ST_VQ_DROPPED,
    "queue_full": L.ST_QUEUE_FULL,
    "real_dropped": L.ST_REAL_DROPPED,
    "forwarded": L.ST_FORWARDED,
    "aqm_dropped": L.ST_AQM_DROPPED,
}


class Clock(StrEnum):
    REALTIME = "realtime"
    FAST = "fast"
    MANUAL = "manual"


class NotAttached(RuntimeError):
    """No pipeline is committed, so there is nothing to run traffic through."""


@dataclass
class _Source:
    spec: SourceSpec
    running: bool = False
    class_id: int = -1
    generator: OpenLoop | None = None
    flows: list[int] = field(default_factory=list)

    def window(self, now_ns: int) -> bool:
        """Whether the profile wants it sending at ``now_ns``."""
        start = round(self.spec.start_s * NS_PER_S)
        stop = None if self.spec.stop_s is None else round(self.spec.stop_s * NS_PER_S)
        return self.spec.enabled and start <= now_ns and (stop is None or now_ns < stop)


class PacketModel:
    """Traffic through the P4 program of whatever `DeviceState` the server attaches."""

    def __init__(
        self,
        profile: Profile | None = None,
        *,
        clock: Clock = Clock.REALTIME,
        default_port: PortConfig | None = None,
        chunk_s: float = 0.01,
        tap_bins: int = 10_000,
        tap_bin_us: int = 10,
    ) -> None:
        profile = profile or Profile()
        self.tap_bins = tap_bins
        """Bins of the egress tap: delays beyond them share the last bin."""
        self.tap_bin_us = tap_bin_us
        self.clock = clock
        self.seed = profile.seed
        self.default_port = default_port or PortConfig()
        self.chunk_ns = max(1, round(chunk_s * NS_PER_S))
        self._ports = dict(profile.ports)
        self._sources = {s.name: _Source(s) for s in profile.sources}
        self._taps: set[int] = set()
        self._lock = threading.RLock()  # guards everything below and the engine's inputs
        self._engine: Engine | None = None
        self._now_ns = 0  # simulated time survives a pipeline change, as a switch's uptime
        self._driver: threading.Thread | None = None
        self._stopping = threading.Event()
        self._lag_ns = 0

    # -- PipelineModel ----------------------------------------------------------------------

    def attach(self, state: DeviceState) -> None:
        with self._lock:
            try:
                self._engine = Engine(
                    state,
                    self._ports,
                    self.default_port,
                    now_ns=self._now_ns,
                    tap_bins=self.tap_bins,
                    tap_bin_us=self.tap_bin_us,
                )
            except LookupError as exc:
                logger.warning("the packet model stays idle: %s", exc)
                return
            for source in self._sources.values():
                source.running = False
                source.flows = []
            for dp_sid in self._taps:
                self._engine.tap(dp_sid)
        if self.clock != Clock.MANUAL:
            self._stopping.clear()
            self._driver = threading.Thread(
                target=self._drive, name=f"packet-model-{self.clock}", daemon=True
            )
            self._driver.start()

    def detach(self) -> None:
        self._stopping.set()
        if self._driver is not None:
            self._driver.join()
            self._driver = None
        with self._lock:
            if self._engine is not None:
                self._now_ns = self._engine.now_ns
            self._engine = None

    # -- time -------------------------------------------------------------------------------

    @property
    def now_ns(self) -> int:
        with self._lock:
            return self._engine.now_ns if self._engine is not None else self._now_ns

    def advance(self, seconds: float) -> None:
        """Run ``seconds`` of simulated time now, in this thread (clock ``manual``)."""
        self.advance_to(self.now_ns + round(seconds * NS_PER_S))

    def advance_to(self, t_ns: int) -> None:
        while True:
            with self._lock:
                engine = self._require()
                if engine.now_ns >= t_ns:
                    return
                self._chunk(engine, min(t_ns, engine.now_ns + self.chunk_ns))

    def _drive(self) -> None:
        compile_kernel()  # before the clock starts: a cold compile takes tens of seconds
        wall0, sim0 = time.monotonic(), self.now_ns
        while not self._stopping.is_set():
            try:
                if self.clock == Clock.FAST:
                    self.advance_to(self.now_ns + self.chunk_ns)
                    time.sleep(0)  # let P4Runtime reads take the state lock between chunks
                    continue
                target = sim0 + round((time.monotonic() - wall0) * NS_PER_S)
                # Catch up in bounded steps, so a stop is never held up by a long backlog.
                self.advance_to(min(target, self.now_ns + _CATCH_UP_NS))
                behind = sim0 + round((time.monotonic() - wall0) * NS_PER_S) - self.now_ns
                self._lag_ns = max(0, behind)
            except NotAttached:
                return
            except Exception:
                logger.exception("the packet model failed; traffic stops")
                return
            self._stopping.wait(REALTIME_TICK_S)

    def _chunk(self, engine: Engine, end_ns: int) -> None:
        """Start/stop sources at ``now``, then run up to ``end_ns`` or the next source
        start/stop, whichever comes first (so profile times are met exactly)."""
        now = engine.now_ns
        end = end_ns
        for source in self._sources.values():
            self._update(engine, source, now)
            for edge_s in (source.spec.start_s, source.spec.stop_s):
                if edge_s is not None and now < round(edge_s * NS_PER_S) < end:
                    end = round(edge_s * NS_PER_S)
        parts = []
        for source in self._sources.values():
            if source.generator is not None:
                times = source.generator.until(end)
                block = np.empty((len(times), L.OL_COLUMNS), np.int64)
                block[:, L.OL_TIME] = times
                block[:, L.OL_CLS] = source.class_id
                block[:, L.OL_LEN] = source.spec.frame_bytes
                block[:, L.OL_ECN] = source.spec.ecn
                parts.append(block)
        arrivals = None
        if parts:
            merged = np.concatenate(parts)
            arrivals = merged[np.argsort(merged[:, L.OL_TIME], kind="stable")]
        engine.run(end, arrivals)

    def _update(self, engine: Engine, source: _Source, now: int) -> None:
        wanted = source.window(now)
        if wanted == source.running:
            return
        source.running = wanted
        spec = source.spec
        if not wanted:
            source.generator = None
            for flow in source.flows:
                engine.stop_flow(flow)
            return
        source.class_id = engine.header_class(spec.headers)
        if spec.pattern != "tcp":
            source.generator = OpenLoop(spec, self.seed, now)
            return
        if not source.flows:
            flow_spec = FlowSpec(
                spec.headers,
                spec.frame_bytes,
                spec.ecn,
                round(spec.rtt_s * NS_PER_S),
                round(spec.sender_rate_bps),
                spec.cc,
                min_cwnd=spec.min_cwnd,
            )
            source.flows = [engine.add_flow(flow_spec) for _ in range(spec.flows)]
        # Flows start spread over one RTT, so they are not in lockstep from the first packet.
        offsets = source_rng(self.seed, spec.name).uniform(0, spec.rtt_s * NS_PER_S, spec.flows)
        for flow, offset in zip(source.flows, offsets, strict=True):
            engine.start_flow(flow, now + int(offset))

    def _require(self) -> Engine:
        if self._engine is None:
            raise NotAttached("no pipeline is committed on the switch, so no traffic runs")
        return self._engine

    # -- control ----------------------------------------------------------------------------

    def source_names(self) -> list[str]:
        with self._lock:
            return list(self._sources)

    def start(self, name: str) -> None:
        """Enable a source from now on (KeyError if unknown)."""
        self._set_enabled(name, True)

    def stop(self, name: str) -> None:
        self._set_enabled(name, False)

    def _set_enabled(self, name: str, enabled: bool) -> None:
        with self._lock:
            source = self._sources[name]
            now_s = self.now_ns / NS_PER_S
            spec = replace(source.spec, enabled=enabled)
            if enabled:  # from now, whatever window the profile gave
                spec = replace(spec, start_s=min(spec.start_s, now_s), stop_s=None)
            source.spec = spec

    def put_source(self, spec: SourceSpec) -> None:
        """Add a source, or replace the one with its name (its flows restart)."""
        with self._lock:
            old = self._sources.get(spec.name)
            if old is not None and self._engine is not None:
                for flow in old.flows:
                    self._engine.stop_flow(flow)
            self._sources[spec.name] = _Source(spec)

    def remove_source(self, name: str) -> None:
        with self._lock:
            source = self._sources.pop(name)
            if self._engine is not None:
                for flow in source.flows:
                    self._engine.stop_flow(flow)

    def set_port(self, port: int, config: PortConfig) -> None:
        with self._lock:
            self._ports[check_port(port)] = config
            if self._engine is not None:
                self._engine.set_port(port, config)

    def tap(self, dp_sid: int) -> None:
        """Record the slice's delays finely from now on (see `Engine.tap`)."""
        with self._lock:
            self._taps.add(dp_sid)
            if self._engine is not None:
                self._engine.tap(dp_sid)

    def tap_reading(self, dp_sid: int) -> TapReading:
        with self._lock:
            return self._require().tap_reading(dp_sid)

    def flow_stats(self, name: str) -> list[FlowStats]:
        with self._lock:
            engine = self._require()
            return [engine.flow_stats(f) for f in self._sources[name].flows]

    def status(self) -> dict[str, Any]:
        """A JSON-ready snapshot for the side door and the logs."""
        with self._lock:
            engine = self._engine
            doc: dict[str, Any] = {
                "clock": str(self.clock),
                "attached": engine is not None,
                "sim_time_s": self.now_ns / NS_PER_S,
                "sources": [
                    s.spec.to_json() | {"running": s.running} for s in self._sources.values()
                ],
                "ports": {
                    str(p): {"rate_bps": cfg.rate_bps, "queue_depth": cfg.queue_depth}
                    for p, cfg in sorted(self._ports.items())
                },
            }
            if self.clock == Clock.REALTIME:
                doc["lag_s"] = self._lag_ns / NS_PER_S
            if engine is not None:
                doc["packets"] = {k: int(engine.stats[i]) for k, i in _STATS.items()}
                for port, settings in doc["ports"].items():
                    settings["queued"] = engine.queued(int(port))
            return doc
