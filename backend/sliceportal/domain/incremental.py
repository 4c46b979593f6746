"""Incremental admission: "may I add, change or remove this slice?" in O(levels + log n).

A :class:`LinkState` keeps, per priority level, exactly what the bounds need: the sums of rates
and bursts, the count, the sorted targets (for the level minimum and for listing the slices a
change would break) and the sorted maximum packets (for the netcalc blocking term). A check
derives the level aggregates of the changed link from these without touching the other slices
and runs the shared level evaluator; listing the slices a change would break costs one step
per such slice on top.

The sums are kept exact (Shewchuk's non-overlapping partials, the algorithm behind
``math.fsum``), so removing a slice really removes it: after any history of changes the
aggregates are bit-for-bit those of a fresh analysis, and so is every verdict.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from dataclasses import dataclass

from sliceportal.domain.admission import AdmissionVerdict
from sliceportal.domain.bounds import (
    LevelAggregates,
    LinkAnalysis,
    Violation,
    analyze,
    evaluate_levels,
    make_violation,
)
from sliceportal.domain.capacity import min_capacity_levels
from sliceportal.domain.spec import (
    DEFAULT_MODEL,
    NUM_LEVELS,
    STANDARD_FRAMING,
    Framing,
    Model,
    SliceSpec,
    SpecError,
    check_capacity,
)

_EMPTY = LevelAggregates(
    rate_bps=(0.0,) * NUM_LEVELS,
    burst_bytes=(0.0,) * NUM_LEVELS,
    count=(0,) * NUM_LEVELS,
    min_target_s=(math.inf,) * NUM_LEVELS,
    max_packet_bytes=(0,) * NUM_LEVELS,
)


def _add_exact(partials: list[float], x: float) -> None:
    """Add ``x`` to the exact sum held as non-overlapping ``partials`` (Shewchuk's msum)."""
    i = 0
    for y in partials:
        if abs(x) < abs(y):
            x, y = y, x
        high = x + y
        low = y - (high - x)
        if low:
            partials[i] = low
            i += 1
        x = high
    partials[i:] = [x]


class _Level:
    """One priority level's running aggregates."""

    __slots__ = ("rate", "burst", "count", "targets", "packets")

    def __init__(self) -> None:
        self.rate: list[float] = []
        self.burst: list[float] = []
        self.count = 0
        self.targets: list[tuple[float, int]] = []  # (delay target, seq), sorted
        self.packets: list[int] = []  # sorted

    def insert(self, seq: int, spec: SliceSpec) -> None:
        _add_exact(self.rate, spec.rate_bps)
        _add_exact(self.burst, spec.burst_bytes)
        self.count += 1
        bisect.insort(self.targets, (spec.delay_target_s, seq))
        bisect.insort(self.packets, spec.max_packet_bytes)

    def delete(self, seq: int, spec: SliceSpec) -> None:
        self.count -= 1
        if self.count:
            _add_exact(self.rate, -spec.rate_bps)
            _add_exact(self.burst, -spec.burst_bytes)
        else:
            self.rate.clear()
            self.burst.clear()
        del self.targets[bisect.bisect_left(self.targets, (spec.delay_target_s, seq))]
        del self.packets[bisect.bisect_left(self.packets, spec.max_packet_bytes)]


@dataclass(frozen=True, slots=True)
class _Change:
    """A hypothetical change: the slice leaving (seq, spec) and the one arriving."""

    removed: tuple[int, SliceSpec] | None
    added: tuple[int, SliceSpec] | None


class LinkState:
    """The slices on one link, for cheap what-if admission checks.

    ``check_add``, ``check_replace`` and ``check_remove`` answer without changing anything;
    ``add``, ``replace`` and ``remove`` apply a change (without checking it). Unknown or
    clashing names raise :class:`SpecError` on field ``name``. Verdicts list violations in the
    order the slices were added (a replaced slice keeps its place), like a full analysis of
    :meth:`specs`.
    """

    def __init__(
        self,
        capacity_bps: float,
        model: Model | str = DEFAULT_MODEL,
        slices: Iterable[SliceSpec] = (),
        framing: Framing = STANDARD_FRAMING,
    ) -> None:
        self.capacity_bps = check_capacity(capacity_bps)
        self.model = Model(model)
        self.framing = framing
        self._specs: dict[int, SliceSpec] = {}  # seq -> spec, in seq order
        self._specs_shared = False  # a verdict still reads this dict: copy before writing
        self._seq: dict[str, int] = {}
        self._levels = [_Level() for _ in range(NUM_LEVELS)]
        self._next_seq = 0
        self._aggregates: LevelAggregates | None = None
        for spec in slices:
            self.add(spec)

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._seq

    def specs(self) -> tuple[SliceSpec, ...]:
        """The slices, in the order they were added."""
        return tuple(self._specs.values())

    def analysis(self) -> LinkAnalysis:
        """Full analysis of the current slices (O(n))."""
        return analyze(self._specs.values(), self.capacity_bps, self.model, self.framing)

    def aggregates(self) -> LevelAggregates:
        if self._aggregates is None:
            self._aggregates = self._derive(_Change(None, None))
        return self._aggregates

    # Checks -------------------------------------------------------------------------------

    def check_add(self, spec: SliceSpec) -> AdmissionVerdict:
        self._require_free(spec.name)
        return self._verdict(_Change(None, (self._next_seq, spec)))

    def check_replace(self, old_name: str, spec: SliceSpec) -> AdmissionVerdict:
        seq = self._require(old_name)
        if spec.name != old_name:
            self._require_free(spec.name)
        return self._verdict(_Change((seq, self._specs[seq]), (seq, spec)))

    def check_remove(self, name: str) -> AdmissionVerdict:
        seq = self._require(name)
        return self._verdict(_Change((seq, self._specs[seq]), None))

    # Changes ------------------------------------------------------------------------------

    def add(self, spec: SliceSpec) -> None:
        self._require_free(spec.name)
        seq = self._next_seq
        self._next_seq += 1
        self._writable_specs()[seq] = spec
        self._seq[spec.name] = seq
        self._levels[spec.priority].insert(seq, spec)
        self._aggregates = None

    def replace(self, old_name: str, spec: SliceSpec) -> None:
        seq = self._require(old_name)
        if spec.name != old_name:
            self._require_free(spec.name)
        specs = self._writable_specs()
        old = specs[seq]
        self._levels[old.priority].delete(seq, old)
        specs[seq] = spec
        del self._seq[old_name]
        self._seq[spec.name] = seq
        self._levels[spec.priority].insert(seq, spec)
        self._aggregates = None

    def remove(self, name: str) -> None:
        seq = self._require(name)
        spec = self._writable_specs().pop(seq)
        del self._seq[name]
        self._levels[spec.priority].delete(seq, spec)
        self._aggregates = None

    # Internals ----------------------------------------------------------------------------

    def _require(self, name: str) -> int:
        seq = self._seq.get(name)
        if seq is None:
            raise SpecError("name", f"no slice named {name!r} on this link")
        return seq

    def _require_free(self, name: str) -> None:
        if name in self._seq:
            raise SpecError("name", f"a slice named {name!r} is already on this link")

    def _writable_specs(self) -> dict[int, SliceSpec]:
        if self._specs_shared:
            self._specs = dict(self._specs)
            self._specs_shared = False
        return self._specs

    def _derive(self, change: _Change) -> LevelAggregates:
        """The level aggregates after ``change``, recomputing only the levels it touches."""
        if change.removed is None and change.added is None:
            base, levels = _EMPTY, list(range(NUM_LEVELS))
        else:
            base = self.aggregates()
            levels = sorted(
                {spec.priority for _, spec in filter(None, (change.removed, change.added))}
            )
        rate, burst = list(base.rate_bps), list(base.burst_bytes)
        count, min_target = list(base.count), list(base.min_target_s)
        max_packet = list(base.max_packet_bytes)
        for k in levels:
            level = self._levels[k]
            extra_rate: list[float] = []
            extra_burst: list[float] = []
            n = level.count
            targets = level.targets
            lowest = targets[0][0] if targets else math.inf
            packets = level.packets
            largest = packets[-1] if packets else 0
            if change.removed is not None and change.removed[1].priority == k:
                gone = change.removed[1]
                extra_rate.append(-gone.rate_bps)
                extra_burst.append(-gone.burst_bytes)
                n -= 1
                if targets[0][1] == change.removed[0]:
                    lowest = targets[1][0] if n else math.inf
                if gone.max_packet_bytes == largest:
                    largest = packets[-2] if n else 0
            if change.added is not None and change.added[1].priority == k:
                new = change.added[1]
                extra_rate.append(new.rate_bps)
                extra_burst.append(new.burst_bytes)
                n += 1
                lowest = min(lowest, new.delay_target_s)
                largest = max(largest, new.max_packet_bytes)
            rate[k] = math.fsum(level.rate + extra_rate) if n else 0.0
            burst[k] = math.fsum(level.burst + extra_burst) if n else 0.0
            count[k] = n
            min_target[k] = lowest
            max_packet[k] = largest
        return LevelAggregates.of(rate, burst, count, min_target, max_packet)

    def _verdict(self, change: _Change) -> AdmissionVerdict:
        agg = self._derive(change)
        levels = evaluate_levels(agg, self.capacity_bps, self.model, self.framing)
        violations: list[tuple[int, Violation]] = []
        if not levels.admissible:
            removed_seq = change.removed[0] if change.removed is not None else -1
            for k in range(NUM_LEVELS):
                if not agg.count[k] or (
                    not levels.overflow[k] and levels.bound_s[k] <= agg.min_target_s[k]
                ):
                    continue
                # Everyone at the level breaks when its rates overflow; else the tight targets.
                limit = math.inf if levels.overflow[k] else levels.bound_s[k]
                targets = self._levels[k].targets
                end = bisect.bisect_left(targets, (limit, -1)) if limit < math.inf else len(targets)
                for target, seq in targets[:end]:
                    if seq != removed_seq:
                        name = self._specs[seq].name
                        violations.append((seq, make_violation(name, k, target, levels)))
                if change.added is not None:
                    seq, spec = change.added
                    if spec.priority == k and (levels.overflow[k] or spec.delay_target_s < limit):
                        violation = make_violation(spec.name, k, spec.delay_target_s, levels)
                        violations.append((seq, violation))
            violations.sort(key=lambda item: item[0])
        snapshot = self._specs
        self._specs_shared = True
        model, capacity, framing = self.model, self.capacity_bps, self.framing

        def full_analysis() -> LinkAnalysis:
            return analyze(_apply(snapshot, change), capacity, model, framing)

        return AdmissionVerdict(
            admissible=levels.admissible,
            analysis=full_analysis,
            violations=tuple(violation for _, violation in violations),
            min_capacity_bps=lambda: min_capacity_levels(agg, model, framing),
        )


def _apply(specs: dict[int, SliceSpec], change: _Change) -> list[SliceSpec]:
    """The slice list after ``change``, in seq order (a replacement keeps its place)."""
    result = dict(specs)
    if change.removed is not None:
        del result[change.removed[0]]
    if change.added is not None:
        result[change.added[0]] = change.added[1]
    return [result[seq] for seq in sorted(result)]
