"""The packets of `p4/tests/vectors/codel.json` and their expected outcomes, from a float model.

RFC 8289's state machine with exact square roots on a virtual queue in microseconds, which a
packet CoDel drops leaves as it came (AqmDrop takes its time back out). The vector's outcomes
come from this model, not from the integer pipeline, and the generator refuses a step whose
outcome a rounding could flip (a sojourn within 1 us of the target, an arrival within 5 us of
a drop deadline), so `vectors.py` checking the reference against these outcomes is a real test.

``.venv/bin/python tests/emulator/model/codel_vector.py`` rewrites the steps, then run
``tests/emulator/model/vectors.py p4/tests/vectors/codel.json`` for the ``expected`` block.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PATH = Path(__file__).resolve().parents[3] / "p4/tests/vectors/codel.json"
RATE_BPS = 100e6
FRAME = 1514
TX_US = FRAME * 8 / RATE_BPS * 1e6
TARGET_US, INTERVAL_US = 200.0, 1000.0
REENTRY_INTERVALS = 16
NOT_ECT, ECT0 = 0, 2
BURST = 11
PACED_US = 119
"""Frames sent back to back at the start of a spell: the queue starts 1.2 ms deep, so each
drop (121 us taken back) leaves it above the 0.2 ms target for a whole spell."""


@dataclass
class FloatCodel:
    delay: float = 0.0
    last: int = 0
    first_above: int | None = None
    dropping: bool = False
    count: int = 0
    last_count: int = 0
    drop_next: float = 0.0
    margins: list[str] = field(default_factory=list)

    def packet(self, t: int, ecn: int, marks: bool) -> tuple[str, str]:
        """One arrival at ``t`` us: its outcome and why."""
        if self.last:
            self.delay = max(0.0, self.delay - (t - self.last))
        self.last = t
        sojourn = self.delay
        if abs(sojourn - TARGET_US) < 1:
            self.margins.append(f"sojourn {sojourn:.2f} us at {t}")
        ok = False
        if sojourn < TARGET_US:
            self.first_above = None
        elif self.first_above is None:
            self.first_above = t + int(INTERVAL_US)
        else:
            ok = t >= self.first_above
        signal = False
        if self.dropping and ok:
            self._near(t)
        if self.dropping:
            if not ok:
                self.dropping = False
            elif t >= self.drop_next:
                signal = True
                self.count += 1
                self.drop_next += INTERVAL_US / math.sqrt(self.count)
        elif ok:
            signal, self.dropping = True, True
            delta = self.count - self.last_count
            since = t - self.drop_next - REENTRY_INTERVALS * INTERVAL_US
            if abs(since) < 5:
                self.margins.append(f"arrival {t} within 5 us of 16 intervals after the spell")
            recent = since < 0
            self.count = delta if delta > 1 and recent else 1
            self.last_count = self.count
            self.drop_next = t + INTERVAL_US / math.sqrt(self.count)
        state = ", dropping" if self.dropping else ""
        above = "" if self.first_above is None else f", above target since {self.first_above}"
        if signal and not (marks and ecn in (1, 2)):
            return "aqm_dropped", f"sojourn {sojourn:.0f} us: CoDel signal, count {self.count}"
        self.delay += TX_US
        if signal:
            return "forwarded", (
                f"sojourn {sojourn:.0f} us: CoDel signal, count {self.count} (marked CE)"
            )
        return "forwarded", f"sojourn {sojourn:.0f} us{state}{above}"

    def _near(self, t: int) -> None:
        """Note an arrival a rounded spacing could put on the other side of the deadline."""
        if abs(t - self.drop_next) < 5:
            self.margins.append(f"arrival {t} within 5 us of drop_next {self.drop_next:.1f}")


def spell(model: FloatCodel, start: int, paced: int, dst: str, ecns: list[int], marks: bool
          ) -> tuple[list[dict[str, Any]], int]:  # fmt: skip
    """A burst of ``BURST`` frames 1 us apart from ``start``, then ``paced`` frames at the
    slice's rate (ECN codepoints in turn): the steps and the time after the last."""
    times = [start + i for i in range(BURST)]
    times += [times[-1] + (i + 1) * PACED_US for i in range(paced)]
    steps = []
    for i, t in enumerate(times):
        ecn = ecns[i % len(ecns)]
        outcome, why = model.packet(t, ecn, marks)
        step: dict[str, Any] = {"t_ns": t * 1000, "ipv4_dst": dst, "bytes": FRAME}
        if ecn:
            step["ecn"] = ecn
        steps.append(step | {"expect": outcome, "why": why})
    return steps, times[-1]


def build() -> dict[str, Any]:
    doc = json.loads(PATH.read_text())
    dropper = FloatCodel()
    first, end = spell(dropper, 1010, 45, "10.0.3.1", [NOT_ECT, ECT0], marks=False)
    # An idle gap of 2.5 ms drains the queue and ends the spell; the next begins within 16
    # intervals of the last drop, so CoDel resumes at count - last_count.
    second, _ = spell(dropper, end + 2507, 30, "10.0.3.1", [NOT_ECT], marks=False)
    marker = FloatCodel()
    third, _ = spell(marker, 30000, 25, "10.0.4.1", [ECT0] * 9 + [NOT_ECT], marks=True)
    problems = dropper.margins + marker.margins
    if problems:
        raise SystemExit(f"outcomes a rounding could flip: {problems}")
    counts = [s["why"] for s in second if "count" in s["why"]]
    if not counts or "count 1" in counts[0]:
        raise SystemExit(f"the second spell does not resume its count: {counts[:1]}")
    doc["steps"] = first + second + third
    doc["about"] = (
        "The codel scheme (RFC 8289 on the slice's virtual queue, codel.p4): 100 Mbit/s slices, "
        "target 0.2 ms, interval 1 ms, 1514-byte frames (121 us each at the slice rate): a "
        f"burst of {BURST} frames, then one per 121 us, so the queue starts 1.2 ms deep and "
        "each drop takes its frame's 121 us back out of it (AqmDrop). Slice 3 drops: the first "
        "signal one interval after the queue went above target, then at interval/sqrt(count); "
        "an idle gap ends the spell; re-entering within 16 intervals resumes at count - "
        "last_count. Slice 4 (ecn_mark) CE-marks ECT(0) packets and drops a Not-ECT one. "
        "Expectations from an independent float model with exact square roots "
        "(tests/emulator/model/codel_vector.py)."
    )
    return doc


if __name__ == "__main__":
    PATH.write_text(json.dumps(build(), indent=1) + "\n")
