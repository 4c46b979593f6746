"""The compiled hot loop: packets through ingress, the egress queues and egress, and the senders.

This is the only module of the model that imports numba (the wire codecs have small compiled
loops of their own). Everything here works on the int64/float64 arrays of `layout`, and
`engine.Engine` is its typed face: call nothing here directly.

The arithmetic is `domain.dataplane`'s (`vqueue_step`, `egress_check`, `delay_bucket`), in
int64: every intermediate stays below 2^58 for frames up to `MAX_FRAME_BYTES`, so int64 holds
the P4 program's unsigned values exactly. `tests/emulator/model` checks the kernel against
the pure-Python reference (`reference.py`) on the shared test vectors and on random traffic.

Time is in integer nanoseconds of simulated time; the P4 program sees it in ticks
(`TIMESTAMP_TICK_NS`) modulo 2^TIMESTAMP_WIDTH, as BMv2's ingress_global_timestamp.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import numba
import numpy as np

from sliceportal.domain import p4constants as c
from sliceportal.emulator import layout as L

F = TypeVar("F", bound=Callable[..., Any])

MAX_FRAME_BYTES = 1 << 16
"""Longest frame the kernel accepts: keeps packet_length x byte_time below 2^48."""

# Plain ints, folded into the machine code.
_TICK_NS = c.TIMESTAMP_TICK_NS
_TS_MASK = (1 << c.TIMESTAMP_WIDTH) - 1
_TS_TOP = c.TIMESTAMP_WIDTH - 1
_UNITS_PER_TICK = c.VQ_UNITS_PER_TICK
_CAP_TICKS = c.VQ_ELAPSED_CAP_TICKS
_TD_MAX = (1 << 32) - 1  # deq_timedelta is bit<32>
_HIST_BITS = c.HIST_BUCKET_BITS
_TICKS_PER_S = 1_000_000_000 // c.TIMESTAMP_TICK_NS
_NEVER = np.iinfo(np.int64).max
_UNROUTED = int(L.Outcome.UNROUTED)
_VQ_DROPPED = int(L.Outcome.VQ_DROPPED)
_QUEUE_FULL = int(L.Outcome.QUEUE_FULL)
_REAL_DROPPED = int(L.Outcome.REAL_DROPPED)
_FORWARDED = int(L.Outcome.FORWARDED)
_AQM_DROPPED = int(L.Outcome.AQM_DROPPED)
_COUNT_MAX = (1 << c.CODEL_COUNT_WIDTH) - 1
_REENTRY_INTERVALS = 16
_DONE = int(L.Status.DONE)
_GROW_HEAP = int(L.Status.GROW_HEAP)
_GROW_POOL = int(L.Status.GROW_POOL)
_RENO = int(L.Congestion.RENO)
_CUBIC = int(L.Congestion.CUBIC)
_DCTCP = int(L.Congestion.DCTCP)
_HEAP_RESERVE = 4  # most events one step pushes
_ECN_CE = 3
_CUBIC_C = 0.4
_CUBIC_BETA = 0.7
_RENO_BETA = 0.5
_DCTCP_G = 1.0 / 16.0
_MIN_CWND = 2.0  # Reno and CUBIC, as Linux; DCTCP's floor is per flow (FI_MIN_CWND)
_INITIAL_CWND = 10.0


def _cache_dir() -> str:
    """numba keys its cache on this file alone, but the machine code also freezes the
    constants of `layout` and `p4constants`: a directory per version of all three keeps a
    changed constant from running stale code."""
    sources = (Path(__file__), Path(L.__file__), Path(c.__file__))
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:16]
    for base in (Path(__file__).parent / "__pycache__", Path.home() / ".cache" / "sliceportal"):
        try:
            base.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(base, os.W_OK):
            return str(base / f"numba-{digest}")
    return ""  # nowhere writable


_CACHE = True
if not os.environ.get("NUMBA_CACHE_DIR"):  # the operator's choice wins
    _config: Any = numba.config
    _config.CACHE_DIR = _cache_dir()
    _CACHE = bool(_config.CACHE_DIR)  # else compile in memory, in every process


def _jit(function: F) -> F:
    """numba's njit with an on-disk cache (compiled once per source version) and the GIL
    released, so the gRPC server keeps answering while a chunk runs."""
    return cast(F, numba.njit(cache=_CACHE, nogil=True)(function))


# -- the event heap ---------------------------------------------------------------------------


@_jit
def _before(heap: Any, i: int, j: int) -> bool:
    ti = heap[i, L.EV_TIME]
    tj = heap[j, L.EV_TIME]
    return bool(ti < tj or (ti == tj and heap[i, L.EV_ORDER] < heap[j, L.EV_ORDER]))


@_jit
def _swap(heap: Any, i: int, j: int) -> None:
    for k in range(L.EV_COLUMNS):
        value = heap[i, k]
        heap[i, k] = heap[j, k]
        heap[j, k] = value


@_jit
def _push(heap: Any, cur: Any, time: int, kind: int, a: int, b: int) -> None:
    i = cur[L.CUR_HEAP_N]
    cur[L.CUR_HEAP_N] = i + 1
    heap[i, L.EV_TIME] = time
    heap[i, L.EV_ORDER] = cur[L.CUR_ORDER]
    cur[L.CUR_ORDER] += 1
    heap[i, L.EV_TYPE] = kind
    heap[i, L.EV_A] = a
    heap[i, L.EV_B] = b
    while i > 0:
        parent = (i - 1) >> 1
        if _before(heap, parent, i):
            break
        _swap(heap, parent, i)
        i = parent


@_jit
def _pop(heap: Any, cur: Any) -> tuple[int, int, int, int]:
    time = heap[0, L.EV_TIME]
    kind = heap[0, L.EV_TYPE]
    a = heap[0, L.EV_A]
    b = heap[0, L.EV_B]
    n = cur[L.CUR_HEAP_N] - 1
    cur[L.CUR_HEAP_N] = n
    if n > 0:
        for k in range(L.EV_COLUMNS):
            heap[0, k] = heap[n, k]
        i = 0
        while True:
            left = 2 * i + 1
            if left >= n:
                break
            child = left
            if left + 1 < n and _before(heap, left + 1, left):
                child = left + 1
            if _before(heap, i, child):
                break
            _swap(heap, i, child)
            i = child
    return time, kind, a, b


# -- the P4 program ---------------------------------------------------------------------------


@_jit
def _bucket(delay: int, target: int) -> int:
    """delay_bucket() of slice_monitor.p4: edges from the slice's histogram target."""
    if delay < (target >> 4):
        return 0
    if delay < (target >> 3):
        return 1
    if delay < (target >> 2):
        return 2
    if delay < (target >> 1):
        return 3
    if delay < target - (target >> 2):
        return 4
    if delay < target - (target >> 3):
        return 5
    if delay < target:
        return 6
    return 7


@_jit
def _refill(tokens: int, cap: int, rate: int, elapsed: int) -> int:
    """min(cap, tokens + elapsed x rate), without forming a product that could overflow."""
    if rate == 0:
        return tokens
    room = cap - tokens
    if elapsed > room // rate:
        return cap
    return tokens + elapsed * rate


@_jit
def _meter_red(meters: Any, sid: int, now: int, length: int) -> bool:
    """slice_meter.execute_meter for one packet (see dataplane.meter_step): True when RED."""
    if meters[sid, L.MTR_CONFIGURED] == 0:
        return False  # an unconfigured cell colours everything GREEN, as on BMv2
    ts = (now // _TICK_NS) & _TS_MASK
    c_cap = meters[sid, L.MTR_CBURST] * _TICKS_PER_S
    p_cap = meters[sid, L.MTR_PBURST] * _TICKS_PER_S
    last = meters[sid, L.MTR_LAST]
    if last == 0:
        committed = c_cap
        peak = p_cap
    else:
        elapsed = (ts - last) & _TS_MASK
        if (elapsed >> _TS_TOP) == 1:
            elapsed = 0
        committed = _refill(meters[sid, L.MTR_COMMITTED], c_cap, meters[sid, L.MTR_CIR], elapsed)
        peak = _refill(meters[sid, L.MTR_PEAK], p_cap, meters[sid, L.MTR_PIR], elapsed)
    need = length * _TICKS_PER_S
    red = False
    if peak < need:
        red = True
    elif committed < need:
        peak -= need
    else:
        committed -= need
        peak -= need
    meters[sid, L.MTR_COMMITTED] = committed
    meters[sid, L.MTR_PEAK] = peak
    meters[sid, L.MTR_LAST] = ts
    return red


@_jit
def _trace(tr: Any, index: int, outcome: int, sid: int, port: int, prio: int) -> None:
    if index >= 0 and tr.shape[0] > 0:
        tr[index, L.TR_OUTCOME] = outcome
        tr[index, L.TR_SID] = sid
        tr[index, L.TR_PORT] = port
        tr[index, L.TR_PRIO] = prio


@_jit
def _feedback(heap: Any, cur: Any, fi: Any, flow: int, seq: int, time: int, kind: int) -> None:
    """Tell a responsive sender what became of its packet, one base RTT later."""
    if flow >= 0:
        _push(heap, cur, time + fi[flow, L.FI_RTT_NS], kind, flow, seq)


@_jit
def _egress(
    port: int,
    slot: int,
    deq: int,
    pool: Any,
    ports: Any,
    heap: Any,
    cur: Any,
    fi: Any,
    counters: tuple[Any, ...],
    tr: Any,
    tap_row: Any,
    tap_hist: Any,
    tap_sum: Any,
    tap_bin_us: int,
    stats: Any,
) -> bool:
    """RealQueueCheck and SliceMonitor for the packet in pool ``slot`` dequeued at ``deq``;
    True if it was transmitted (then the link is busy until its last bit is out)."""
    (_, _, fwd_p, fwd_b, rd_p, rd_b, ecn_p, ecn_b, vqh, rqh, _, _) = counters
    sid = pool[slot, L.PKT_SID]
    policy = pool[slot, L.PKT_POLICY]
    length = pool[slot, L.PKT_LEN]
    ecn = pool[slot, L.PKT_ECN]
    vq = pool[slot, L.PKT_VQ]
    flow = pool[slot, L.PKT_FLOW]
    index = pool[slot, L.PKT_TRACE]
    td = deq // _TICK_NS - pool[slot, L.PKT_ENQ_NS] // _TICK_NS
    if td > _TD_MAX:
        td = _TD_MAX
    real = td * _UNITS_PER_TICK
    marked = pool[slot, L.PKT_MARKED] == 1
    if policy != L.POLICY_NONE and policy != L.POLICY_METER:
        worst = vq if vq > real else real
        if worst > pool[slot, L.PKT_C_DELAY]:
            rd_p[sid] += 1
            rd_b[sid] += length
            stats[L.ST_REAL_DROPPED] += 1
            if index >= 0 and tr.shape[0] > 0:
                tr[index, L.TR_OUTCOME] = _REAL_DROPPED
                tr[index, L.TR_TD] = td
                tr[index, L.TR_DEQ_NS] = deq
            _feedback(heap, cur, fi, flow, pool[slot, L.PKT_SEQ], deq, L.EV_LOSS)
            return False
        if (
            policy == L.POLICY_ECN_STEP
            and worst > pool[slot, L.PKT_M_DELAY]
            and (ecn == 1 or ecn == 2)
        ):
            marked = True
    fwd_p[sid] += 1
    fwd_b[sid] += length
    if marked:
        ecn_p[sid] += 1
        ecn_b[sid] += length
        ecn = _ECN_CE
    cells = sid << _HIST_BITS
    target = pool[slot, L.PKT_HIST_TARGET]
    vqh[cells | _bucket(vq, target)] += 1
    rqh[cells | _bucket(real, target)] += 1
    stats[L.ST_FORWARDED] += 1
    rate = ports[port, L.PORT_RATE_BPS]
    tx_ns = (length * 8 * 1_000_000_000 + rate - 1) // rate
    ports[port, L.PORT_FREE_AT] = deq + tx_ns
    if index >= 0 and tr.shape[0] > 0:
        tr[index, L.TR_OUTCOME] = _FORWARDED
        tr[index, L.TR_TD] = td
        tr[index, L.TR_DEQ_NS] = deq
        tr[index, L.TR_ECN] = ecn
    row = tap_row[sid]
    if row >= 0:
        vq_us = vq // _UNITS_PER_TICK
        bins = tap_hist.shape[2] - 1
        b = vq_us // tap_bin_us
        tap_hist[row, L.TAP_VQ, b if b < bins else bins] += 1
        b = td // tap_bin_us
        tap_hist[row, L.TAP_REAL, b if b < bins else bins] += 1
        tap_sum[row, L.TS_PACKETS] += 1
        tap_sum[row, L.TS_VQ_US] += vq_us
        tap_sum[row, L.TS_REAL_US] += td
        if vq_us > tap_sum[row, L.TS_MAX_VQ_US]:
            tap_sum[row, L.TS_MAX_VQ_US] = vq_us
        if td > tap_sum[row, L.TS_MAX_REAL_US]:
            tap_sum[row, L.TS_MAX_REAL_US] = td
    kind = L.EV_ACK_CE if ecn == _ECN_CE else L.EV_ACK
    _feedback(heap, cur, fi, flow, pool[slot, L.PKT_SEQ], deq + tx_ns, kind)
    return True


@_jit
def _codel(sid: int, ts: int, sojourn: int, cls_row: Any, codel: tuple[Any, ...], law: Any) -> bool:
    """SliceCodel (codel.p4) for a packet the slice's virtual queue took: codel_decide, then
    on a signal the control-law lookup and codel_spacing (see codel.codel_step). True: the
    packet is signalled (dropped, or marked CE)."""
    dropping_a, count_a, last_a, next_a, above_a = codel
    interval = cls_row[L.CLS_CODEL_INTERVAL]
    # int64 at once: numba turns uint64 - int64 into float64
    dropping = int(np.int64(dropping_a[sid]))
    count = int(np.int64(count_a[sid]))
    last_count = int(np.int64(last_a[sid]))
    drop_next = int(np.int64(next_a[sid]))
    first_above = int(np.int64(above_a[sid]))
    ok_to_drop = False
    if sojourn < cls_row[L.CLS_CODEL_TARGET]:
        first_above = 0
    elif first_above == 0:
        first_above = (ts + interval) & _TS_MASK
        if first_above == 0:
            first_above = 1
    else:
        ok_to_drop = ((ts - first_above) & _TS_MASK) >> _TS_TOP == 0
    since = (ts - drop_next) & _TS_MASK
    signal = False
    entering = False
    if dropping == 1:
        if not ok_to_drop:
            dropping = 0
        elif since >> _TS_TOP == 0:
            signal = True
            if count < _COUNT_MAX:
                count += 1
    elif ok_to_drop:
        signal = True
        entering = True
        dropping = 1
        delta = (count - last_count) & _COUNT_MAX
        recent = since < _REENTRY_INTERVALS * interval or since >> _TS_TOP == 1
        count = delta if delta > 1 and recent else 1
        last_count = count
    dropping_a[sid] = dropping
    count_a[sid] = count
    last_a[sid] = last_count
    above_a[sid] = first_above
    if signal:
        for row in range(cls_row[L.CLS_LAW_START], cls_row[L.CLS_LAW_END]):
            shift = c.CODEL_COUNT_WIDTH - law[row, L.LAW_PREFIX_LEN]
            if count >> shift == law[row, L.LAW_VALUE] >> shift:
                base = ts if entering else drop_next
                next_a[sid] = (base + law[row, L.LAW_SPACING]) & _TS_MASK
                break
    return signal


# -- ABC: unsigned 64-bit state, products in 128 bits as (high, low) uint64 pairs ----------------

_U32 = np.uint64(32)
_U64 = np.uint64(64)
_MASK32 = np.uint64(0xFFFFFFFF)
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_DECAY_BITS = np.uint64(c.ABC_DECAY_FRAC_BITS)
_STATE_BITS = np.uint64(c.ABC_STATE_FRAC_BITS)
_GAMMA_BITS = np.uint64(c.ABC_GAMMA_FRAC_BITS)
_WEIGHT_BITS = np.uint64(c.ABC_RECIPROCAL_FRAC_BITS)
_EXTRA_BITS = np.uint64(c.ABC_AVERAGE_EXTRA_BITS)
_ROUND_UP = np.uint64((1 << c.ABC_DECAY_FRAC_BITS) - 1)
_SATURATED = np.uint64((1 << 64) - 1)
_ACTIVITY_MASK = np.uint64((1 << c.ABC_ACTIVITY_WIDTH) - 1)
_AVERAGE_ZERO = np.uint64(c.ABC_AVERAGE_ZERO)
_STATE_ONE = np.uint64(c.ABC_STATE_ONE)
_ACTIVITY_MAX = c.ABC_ACTIVITY_MAX


@_jit
def _mul(a: Any, b: Any) -> tuple[Any, Any]:
    """a x b for uint64s, as the (high, low) words of the 128-bit product."""
    a0 = a & _MASK32
    a1 = a >> _U32
    b0 = b & _MASK32
    b1 = b >> _U32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    mid = (p00 >> _U32) + (p01 & _MASK32) + (p10 & _MASK32)
    low = (mid << _U32) | (p00 & _MASK32)
    high = a1 * b1 + (p01 >> _U32) + (p10 >> _U32) + (mid >> _U32)
    return high, low


@_jit
def _shr(high: Any, low: Any, shift: Any) -> tuple[Any, Any]:
    """(high, low) >> shift, for 0 < shift < 64."""
    return high >> shift, (low >> shift) | (high << (_U64 - shift))


@_jit
def _mul_shr(a: Any, b: Any, shift: Any) -> tuple[Any, Any]:
    """(a x b) >> shift as (high, low) words: a bit<128> product shifted back."""
    high, low = _mul(a, b)
    return _shr(high, low, shift)


@_jit
def _add(high: Any, low: Any, value: Any) -> tuple[Any, Any]:
    """(high, low) + value, carrying into the high word."""
    total = low + value
    return high + (_U1 if total < low else _U0), total


@_jit
def _decay_row(rows: Any, start: int, end: int, elapsed: int) -> tuple[Any, int]:
    """abc_meter_decay / abc_average_decay: the factor and ticks of the row covering
    ``elapsed`` among one memory's rows [start, end) (sorted, disjoint); (0, 0) for none."""
    lo = start
    hi = end - 1
    if hi < lo or elapsed < rows[lo, L.DECAY_LOW]:
        return _U0, 0
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if rows[mid, L.DECAY_LOW] <= elapsed:
            lo = mid
        else:
            hi = mid - 1
    if elapsed > rows[lo, L.DECAY_HIGH]:
        return _U0, 0
    return np.uint64(rows[lo, L.DECAY_FACTOR]), rows[lo, L.DECAY_TICKS]


@_jit
def _cell_value(cells: Any, offsets: Any, table: int, bits: int, key: Any) -> int:
    """An ABC function table's answer for ``key``: its cell's value (abc_tables.cell_offsets:
    key 0 has the last cell)."""
    if key == _U0:
        return int(cells[table, offsets[table, c.ABC_STATE_WIDTH]])
    msb = 0
    probe = key
    for step in (32, 16, 8, 4, 2, 1):
        if probe >> np.uint64(step) != _U0:
            probe = probe >> np.uint64(step)
            msb += step
    kept = bits if bits < msb else msb
    mantissa = int((key >> np.uint64(msb - kept)) & np.uint64((1 << kept) - 1))
    return int(cells[table, offsets[table, msb] + mantissa])


@_jit
def _abc(
    sid: int,
    ts: int,
    length: int,
    queue: int,
    cls_row: Any,
    abc: tuple[Any, ...],
    decay: Any,
    cells: Any,
    offsets: Any,
) -> bool:
    """SliceAbc (abc.p4) for a packet the slice's virtual queue took, ``queue`` the delay
    ahead of it (see abc.abc_meter_step and abc_slice_step). True: the packet is dropped."""
    meter_last, meter_s, meter_n, average_last, average_n, a_avg = abc
    cell = cls_row[L.CLS_ABC_CELL]
    # abc_meter_time, abc_meter_decay, abc_meter_update
    last = int(np.int64(meter_last[cell]))
    elapsed = (ts - last) & _TS_MASK
    start, end = cls_row[L.CLS_ABC_METER_START], cls_row[L.CLS_ABC_METER_END]
    f, ticks = _decay_row(decay, start, end, elapsed)
    advance = elapsed if f == _U0 else ticks
    high, low = _mul_shr(meter_s[cell], f, _DECAY_BITS)
    high, low = _add(high, low, np.uint64(length) << _STATE_BITS)
    s = _SATURATED if high != _U0 else low
    memory = np.uint64(cls_row[L.CLS_ABC_METER_MEMORY]) << _STATE_BITS
    n = meter_n[cell]
    if n > memory:
        high, low = _mul(n - memory, f)
        high, low = _add(high, low, _ROUND_UP)
        n = memory + _shr(high, low, _DECAY_BITS)[1]
    else:
        n = memory - _mul_shr(memory - n, f, _DECAY_BITS)[1]
    meter_last[cell] = (last + advance) & _TS_MASK
    meter_s[cell] = s
    meter_n[cell] = n
    # abc_log2_s, abc_log2_n and the activity
    log_s = _cell_value(cells, offsets, L.LOOKUP_LOG2_S, c.ABC_LOG2_MANTISSA_BITS, s)
    log_n = _cell_value(cells, offsets, L.LOOKUP_LOG2_N, c.ABC_LOG2_MANTISSA_BITS, n)
    rate_log = log_s + cls_row[L.CLS_ABC_OFFSET]
    if n == _U0:
        activity = _ACTIVITY_MAX
    elif rate_log <= log_n:
        activity = 0
    else:
        activity = min(rate_log - log_n, _ACTIVITY_MAX)
    # abc_average_time, abc_average_decay and T_drop
    last = int(np.int64(average_last[sid]))
    stored = a_avg[sid]
    elapsed = (ts - last) & _TS_MASK
    start, end = cls_row[L.CLS_ABC_AVERAGE_START], cls_row[L.CLS_ABC_AVERAGE_END]
    f, ticks = _decay_row(decay, start, end, elapsed)
    advance = elapsed if f == _U0 else ticks
    average = int(((stored + _AVERAGE_ZERO) >> _EXTRA_BITS) & _ACTIVITY_MASK)
    distance = activity - average if activity >= average else average - activity
    gamma = np.uint64(cls_row[L.CLS_ABC_GAMMA])
    high, shift = _mul_shr(gamma, np.uint64(distance), _GAMMA_BITS)
    q_base = np.uint64(cls_row[L.CLS_ABC_Q_BASE])
    burst = np.uint64(cls_row[L.CLS_C_DELAY])
    if activity >= average:
        threshold = q_base - shift if high == _U0 and shift < q_base else _U0
    else:
        threshold = q_base + shift if high == _U0 and shift <= burst else burst
    q_min = np.uint64(cls_row[L.CLS_ABC_Q_MIN])
    threshold = q_min if threshold < q_min else threshold
    threshold = burst if threshold > burst else threshold
    accepted = np.uint64(queue) <= threshold
    # abc_average_count
    count = _mul_shr(average_n[sid], f, _DECAY_BITS)[1] + (_STATE_ONE if accepted else _U0)
    average_last[sid] = (last + advance) & _TS_MASK
    average_n[sid] = count
    if not accepted:
        return True
    # abc_reciprocal, abc_average_update
    bits = c.ABC_RECIPROCAL_MANTISSA_BITS
    weight = np.uint64(_cell_value(cells, offsets, L.LOOKUP_RECIPROCAL, bits, count))
    current = stored + _AVERAGE_ZERO
    sample = np.uint64(activity) << _EXTRA_BITS
    if sample >= current:
        current = current + _mul_shr(weight, sample - current, _WEIGHT_BITS)[1]
    else:
        current = current - _mul_shr(weight, current - sample, _WEIGHT_BITS)[1]
    a_avg[sid] = current - _AVERAGE_ZERO
    return False


@_jit
def _dropped_in_ingress(
    sid: int,
    length: int,
    vq: int,
    counters: tuple[Any, ...],
    counter: int,
    stats: Any,
    stat: int,
    tr: Any,
    index: int,
    outcome: int,
    heap: Any,
    cur: Any,
    fi: Any,
    flow: int,
    seq: int,
    now: int,
) -> None:
    """A drop in ingress: the packets-and-bytes counter pair at ``counters[counter]``, the
    total ``stat``, the trace (``outcome``, the virtual delay ``vq``) and the sender's loss."""
    counters[counter][sid] += 1
    counters[counter + 1][sid] += length
    stats[stat] += 1
    if index >= 0 and tr.shape[0] > 0:
        tr[index, L.TR_OUTCOME] = outcome
        tr[index, L.TR_VQ] = vq
    _feedback(heap, cur, fi, flow, seq, now, L.EV_LOSS)


@_jit
def _ingress(
    now: int,
    cls_id: int,
    length: int,
    ecn: int,
    flow: int,
    seq: int,
    index: int,
    cls: Any,
    ports: Any,
    queues: Any,
    pool: Any,
    free: Any,
    heap: Any,
    cur: Any,
    fi: Any,
    vq_delay: Any,
    vq_last: Any,
    meters: Any,
    codel: tuple[Any, ...],
    law: Any,
    abc: tuple[Any, ...],
    abc_decay: Any,
    abc_cells: Any,
    abc_offsets: Any,
    counters: tuple[Any, ...],
    tr: Any,
    tap_row: Any,
    tap_hist: Any,
    tap_sum: Any,
    tap_bin_us: int,
    stats: Any,
) -> None:
    """SliceportalIngress for one packet arriving at ``now``, then the traffic manager."""
    stats[L.ST_INGRESS] += 1
    port = cls[cls_id, L.CLS_PORT]
    sid = cls[cls_id, L.CLS_SID]
    prio = cls[cls_id, L.CLS_PRIO]
    if port < 0:
        stats[L.ST_UNROUTED] += 1
        _trace(tr, index, _UNROUTED, -1, -1, -1)
        _feedback(heap, cur, fi, flow, seq, now, L.EV_LOSS)
        return
    _trace(tr, index, 0, sid, port, prio)
    policy = cls[cls_id, L.CLS_POLICY]
    vq = 0
    marked = 0
    if policy == L.POLICY_METER:
        if _meter_red(meters, sid, now, length):
            _dropped_in_ingress(sid, length, 0, counters, 0, stats, L.ST_VQ_DROPPED, tr, index,
                                _VQ_DROPPED, heap, cur, fi, flow, seq, now)  # fmt: skip
            return
    elif policy != L.POLICY_NONE:
        # vqueue.p4, step for step (see dataplane.vqueue_step).
        ts = (now // _TICK_NS) & _TS_MASK
        last = int(vq_last[sid])
        delay = int(vq_delay[sid])
        vq_last[sid] = ts
        elapsed = (ts - last) & _TS_MASK
        if last == 0 or (elapsed >> _TS_TOP) == 1:
            elapsed = 0
        if elapsed >= _CAP_TICKS:
            delay = 0
        else:
            drained = elapsed * _UNITS_PER_TICK
            delay = 0 if drained >= delay else delay - drained
        tx_time = length * cls[cls_id, L.CLS_BYTE_TIME]
        c_delay = cls[cls_id, L.CLS_C_DELAY]
        if delay > c_delay or tx_time > c_delay - delay:
            vq_delay[sid] = delay
            _dropped_in_ingress(sid, length, delay, counters, 0, stats, L.ST_VQ_DROPPED, tr,
                                index, _VQ_DROPPED, heap, cur, fi, flow, seq, now)  # fmt: skip
            return
        vq_delay[sid] = delay + tx_time
        vq = delay + tx_time
        aqm_drop = False
        if policy == L.POLICY_CODEL and _codel(sid, ts, delay, cls[cls_id], codel, law):
            if cls[cls_id, L.CLS_CODEL_ECN] == 1 and (ecn == 1 or ecn == 2):
                ecn = _ECN_CE
                marked = 1
            else:
                aqm_drop = True
        elif policy == L.POLICY_ABC:
            aqm_drop = _abc(
                sid, ts, length, delay, cls[cls_id], abc, abc_decay, abc_cells, abc_offsets
            )
        if aqm_drop:
            # AqmDrop: the packet never queues, so it leaves the virtual queue as it came
            vq_delay[sid] = delay
            _dropped_in_ingress(sid, length, delay, counters, 10, stats, L.ST_AQM_DROPPED, tr,
                                index, _AQM_DROPPED, heap, cur, fi, flow, seq, now)  # fmt: skip
            return
    if index >= 0 and tr.shape[0] > 0:
        tr[index, L.TR_VQ] = vq
    if queues[port, prio, L.Q_LEN] >= ports[port, L.PORT_DEPTH]:
        stats[L.ST_QUEUE_FULL] += 1
        if index >= 0 and tr.shape[0] > 0:
            tr[index, L.TR_OUTCOME] = _QUEUE_FULL
        _feedback(heap, cur, fi, flow, seq, now, L.EV_LOSS)
        return
    n = cur[L.CUR_FREE_N] - 1
    cur[L.CUR_FREE_N] = n
    slot = free[n]
    pool[slot, L.PKT_ENQ_NS] = now
    pool[slot, L.PKT_SID] = sid
    pool[slot, L.PKT_POLICY] = policy
    pool[slot, L.PKT_C_DELAY] = cls[cls_id, L.CLS_C_DELAY]
    pool[slot, L.PKT_M_DELAY] = cls[cls_id, L.CLS_M_DELAY]
    pool[slot, L.PKT_HIST_TARGET] = cls[cls_id, L.CLS_HIST_TARGET]
    pool[slot, L.PKT_LEN] = length
    pool[slot, L.PKT_ECN] = ecn
    pool[slot, L.PKT_VQ] = vq
    pool[slot, L.PKT_FLOW] = flow
    pool[slot, L.PKT_SEQ] = seq
    pool[slot, L.PKT_TRACE] = index
    pool[slot, L.PKT_MARKED] = marked
    if ports[port, L.PORT_QUEUED] == 0 and ports[port, L.PORT_FREE_AT] <= now:
        # An idle link takes the packet at once: dequeued at its enqueue time.
        free[n] = slot
        cur[L.CUR_FREE_N] = n + 1
        _egress(
            port, slot, now, pool, ports, heap, cur, fi, counters, tr,
            tap_row, tap_hist, tap_sum, tap_bin_us, stats,
        )  # fmt: skip
        return
    pool[slot, L.PKT_NEXT] = -1
    if queues[port, prio, L.Q_LEN] == 0:
        queues[port, prio, L.Q_HEAD] = slot
    else:
        pool[queues[port, prio, L.Q_TAIL], L.PKT_NEXT] = slot
    queues[port, prio, L.Q_TAIL] = slot
    queues[port, prio, L.Q_LEN] += 1
    ports[port, L.PORT_QUEUED] += 1
    if ports[port, L.PORT_DEQ_PENDING] == 0:
        ports[port, L.PORT_DEQ_PENDING] = 1
        _push(heap, cur, ports[port, L.PORT_FREE_AT], L.EV_DEQ, port, 0)


@_jit
def _dequeue(
    port: int,
    now: int,
    ports: Any,
    queues: Any,
    pool: Any,
    free: Any,
    heap: Any,
    cur: Any,
    fi: Any,
    counters: tuple[Any, ...],
    tr: Any,
    tap_row: Any,
    tap_hist: Any,
    tap_sum: Any,
    tap_bin_us: int,
    stats: Any,
) -> None:
    """The link is free: strict priority, highest queue first. A packet dropped in egress
    takes no link time, so the next one goes out at the same instant."""
    ports[port, L.PORT_DEQ_PENDING] = 0
    while ports[port, L.PORT_QUEUED] > 0:
        if heap.shape[0] - cur[L.CUR_HEAP_N] < _HEAP_RESERVE:
            break  # resume at the same instant once the heap has grown
        prio = L.QUEUES - 1
        while queues[port, prio, L.Q_LEN] == 0:
            prio -= 1
        slot = queues[port, prio, L.Q_HEAD]
        queues[port, prio, L.Q_HEAD] = pool[slot, L.PKT_NEXT]
        queues[port, prio, L.Q_LEN] -= 1
        ports[port, L.PORT_QUEUED] -= 1
        free[cur[L.CUR_FREE_N]] = slot
        cur[L.CUR_FREE_N] += 1
        sent = _egress(
            port, slot, now, pool, ports, heap, cur, fi, counters, tr,
            tap_row, tap_hist, tap_sum, tap_bin_us, stats,
        )  # fmt: skip
        if sent:
            break
    if ports[port, L.PORT_QUEUED] > 0:
        ports[port, L.PORT_DEQ_PENDING] = 1
        at = ports[port, L.PORT_FREE_AT]
        _push(heap, cur, at if at > now else now, L.EV_DEQ, port, 0)


# -- responsive senders -----------------------------------------------------------------------


@_jit
def _reduce(fi: Any, ff: Any, f: int, factor: float) -> None:
    """One multiplicative decrease, at most once per window of data."""
    cwnd = ff[f, L.FF_CWND]
    if fi[f, L.FI_CC] == _CUBIC:
        # RFC 8312 with fast convergence.
        if cwnd < ff[f, L.FF_W_MAX]:
            ff[f, L.FF_W_MAX] = cwnd * (1.0 + _CUBIC_BETA) / 2.0
        else:
            ff[f, L.FF_W_MAX] = cwnd
        ff[f, L.FF_EPOCH] = -1.0
    cwnd = cwnd * factor
    floor = _MIN_CWND
    if fi[f, L.FI_CC] == _DCTCP:
        floor = float(max(fi[f, L.FI_MIN_CWND], 1))  # a row built without it: 1
    if cwnd < floor:
        cwnd = floor
    ff[f, L.FF_CWND] = cwnd
    ff[f, L.FF_SSTHRESH] = cwnd
    fi[f, L.FI_RECOVER] = fi[f, L.FI_NEXT_SEQ] - 1


@_jit
def _grow(fi: Any, ff: Any, f: int, now: int) -> None:
    """Additive (Reno, DCTCP) or cubic increase for one acknowledged packet."""
    cwnd = ff[f, L.FF_CWND]
    if cwnd < ff[f, L.FF_SSTHRESH]:
        cwnd += 1.0
    elif fi[f, L.FI_CC] == _CUBIC:
        t = now * 1e-9
        rtt = fi[f, L.FI_RTT_NS] * 1e-9
        if ff[f, L.FF_EPOCH] < 0.0:
            ff[f, L.FF_EPOCH] = t
            if cwnd < ff[f, L.FF_W_MAX]:
                ff[f, L.FF_K] = ((ff[f, L.FF_W_MAX] - cwnd) / _CUBIC_C) ** (1.0 / 3.0)
                ff[f, L.FF_ORIGIN] = ff[f, L.FF_W_MAX]
            else:
                ff[f, L.FF_K] = 0.0
                ff[f, L.FF_ORIGIN] = cwnd
        since = t - ff[f, L.FF_EPOCH]
        offset = since + rtt - ff[f, L.FF_K]
        target = ff[f, L.FF_ORIGIN] + _CUBIC_C * offset * offset * offset
        # The TCP-friendly region: never slower than Reno would be (the paper's "Reno mode").
        reno = ff[f, L.FF_W_MAX] * _CUBIC_BETA + (
            3.0 * (1.0 - _CUBIC_BETA) / (1.0 + _CUBIC_BETA)
        ) * (since / rtt)
        if target < reno:
            target = reno
        if target > cwnd:
            cwnd += (target - cwnd) / cwnd
        else:
            cwnd += 0.01 / cwnd
    else:
        cwnd += 1.0 / cwnd
    limit = float(fi[f, L.FI_MAX_CWND])
    ff[f, L.FF_CWND] = cwnd if cwnd < limit else limit


@_jit
def _on_feedback(fi: Any, ff: Any, f: int, seq: int, kind: int, now: int) -> None:
    fi[f, L.FI_INFLIGHT] -= 1
    fresh = seq > fi[f, L.FI_RECOVER]  # sent after the last reduction
    if kind == L.EV_LOSS:
        fi[f, L.FI_LOST] += 1
        if fresh:
            factor = _CUBIC_BETA if fi[f, L.FI_CC] == _CUBIC else _RENO_BETA
            _reduce(fi, ff, f, factor)
        return
    fi[f, L.FI_DELIVERED] += 1
    marked = kind == L.EV_ACK_CE
    if marked:
        fi[f, L.FI_MARKED] += 1
    if fi[f, L.FI_CC] == _DCTCP:
        fi[f, L.FI_WIN_ACKED] += 1
        if marked:
            fi[f, L.FI_WIN_MARKED] += 1
        if seq >= fi[f, L.FI_WIN_END]:
            share = fi[f, L.FI_WIN_MARKED] / fi[f, L.FI_WIN_ACKED]
            ff[f, L.FF_ALPHA] = (1.0 - _DCTCP_G) * ff[f, L.FF_ALPHA] + _DCTCP_G * share
            fi[f, L.FI_WIN_ACKED] = 0
            fi[f, L.FI_WIN_MARKED] = 0
            fi[f, L.FI_WIN_END] = fi[f, L.FI_NEXT_SEQ]
        if marked:
            if fresh:
                _reduce(fi, ff, f, 1.0 - ff[f, L.FF_ALPHA] / 2.0)
            return
    elif marked:
        # Classic ECN (RFC 3168): a mark is a loss without the loss.
        if fresh:
            factor = _CUBIC_BETA if fi[f, L.FI_CC] == _CUBIC else _RENO_BETA
            _reduce(fi, ff, f, factor)
        return
    if fresh:
        _grow(fi, ff, f, now)


@_jit
def _may_send(heap: Any, cur: Any, fi: Any, ff: Any, f: int, now: int) -> None:
    """Schedule the flow's next send if its window has room and none is scheduled."""
    if (
        fi[f, L.FI_ACTIVE] == 1
        and fi[f, L.FI_SEND_PENDING] == 0
        and fi[f, L.FI_INFLIGHT] < np.int64(ff[f, L.FF_CWND])
    ):
        fi[f, L.FI_SEND_PENDING] = 1
        at = fi[f, L.FI_NEXT_SEND]
        _push(heap, cur, at if at > now else now, L.EV_SEND, f, 0)


@_jit
def _start_flows(heap: Any, cur: Any, fi: Any, ff: Any) -> bool:
    """Flows the control plane (re)started: fresh window, first send at their start time.
    False when the heap lacks room (grow it first)."""
    for f in range(fi.shape[0]):
        if fi[f, L.FI_KICK] == 1 and fi[f, L.FI_ACTIVE] == 1:
            if heap.shape[0] - cur[L.CUR_HEAP_N] < _HEAP_RESERVE:
                return False
            fi[f, L.FI_KICK] = 0
            if fi[f, L.FI_INFLIGHT] == 0:
                ff[f, L.FF_CWND] = _INITIAL_CWND
                ff[f, L.FF_SSTHRESH] = float(fi[f, L.FI_MAX_CWND])
                ff[f, L.FF_ALPHA] = 1.0
                ff[f, L.FF_W_MAX] = 0.0
                ff[f, L.FF_EPOCH] = -1.0
            start = fi[f, L.FI_START_NS]
            if fi[f, L.FI_NEXT_SEND] < start:
                fi[f, L.FI_NEXT_SEND] = start
            _may_send(heap, cur, fi, ff, f, cur[L.CUR_NOW])
    return True


# -- the loop ---------------------------------------------------------------------------------


@_jit
def run(
    t_end: int,
    ol: Any,
    trace_offset: int,
    cls: Any,
    fi: Any,
    ff: Any,
    ports: Any,
    queues: Any,
    pool: Any,
    free: Any,
    heap: Any,
    cur: Any,
    vq_delay: Any,
    vq_last: Any,
    meters: Any,
    codel: tuple[Any, ...],
    law: Any,
    abc: tuple[Any, ...],
    abc_decay: Any,
    abc_cells: Any,
    abc_offsets: Any,
    counters: tuple[Any, ...],
    tr: Any,
    tap_row: Any,
    tap_hist: Any,
    tap_sum: Any,
    tap_bin_us: int,
    stats: Any,
) -> int:
    """Process every event before ``t_end`` (ns): the open-loop arrivals ``ol`` from
    ``cur[CUR_OL_POS]`` on, and the heap's sends, dequeues and feedback. At equal times heap
    events go first, in the order they were scheduled. Returns a `layout.Status`."""
    if not _start_flows(heap, cur, fi, ff):
        return _GROW_HEAP
    while True:
        if heap.shape[0] - cur[L.CUR_HEAP_N] < _HEAP_RESERVE:
            return _GROW_HEAP
        if cur[L.CUR_FREE_N] < 2:
            return _GROW_POOL
        pos = cur[L.CUR_OL_POS]
        t_ol = ol[pos, L.OL_TIME] if pos < ol.shape[0] else _NEVER
        t_heap = heap[0, L.EV_TIME] if cur[L.CUR_HEAP_N] > 0 else _NEVER
        if t_heap <= t_ol:
            if t_heap >= t_end:
                break
            time, kind, a, b = _pop(heap, cur)
            cur[L.CUR_NOW] = time
            stats[L.ST_EVENTS] += 1
            if kind == L.EV_DEQ:
                _dequeue(
                    a, time, ports, queues, pool, free, heap, cur, fi, counters, tr,
                    tap_row, tap_hist, tap_sum, tap_bin_us, stats,
                )  # fmt: skip
            elif kind == L.EV_SEND:
                fi[a, L.FI_SEND_PENDING] = 0
                if fi[a, L.FI_ACTIVE] == 1 and fi[a, L.FI_INFLIGHT] < np.int64(ff[a, L.FF_CWND]):
                    seq = fi[a, L.FI_NEXT_SEQ]
                    fi[a, L.FI_NEXT_SEQ] = seq + 1
                    fi[a, L.FI_INFLIGHT] += 1
                    fi[a, L.FI_SENT] += 1
                    fi[a, L.FI_NEXT_SEND] = time + fi[a, L.FI_GAP_NS]
                    _ingress(
                        time, fi[a, L.FI_CLS], fi[a, L.FI_LEN], fi[a, L.FI_ECN], a, seq, -1,
                        cls, ports, queues, pool, free, heap, cur, fi, vq_delay, vq_last,
                        meters, codel, law, abc, abc_decay, abc_cells, abc_offsets, counters, tr,
                        tap_row, tap_hist, tap_sum, tap_bin_us, stats,
                    )  # fmt: skip
                    _may_send(heap, cur, fi, ff, a, time)
            else:
                _on_feedback(fi, ff, a, b, kind, time)
                _may_send(heap, cur, fi, ff, a, time)
        else:
            if t_ol >= t_end:
                break
            cur[L.CUR_OL_POS] = pos + 1
            cur[L.CUR_NOW] = t_ol
            traced = trace_offset + pos if trace_offset >= 0 else -1
            _ingress(
                t_ol, ol[pos, L.OL_CLS], ol[pos, L.OL_LEN], ol[pos, L.OL_ECN], -1, 0, traced,
                cls, ports, queues, pool, free, heap, cur, fi, vq_delay, vq_last, meters,
                codel, law, abc, abc_decay, abc_cells, abc_offsets, counters, tr, tap_row,
                tap_hist, tap_sum, tap_bin_us, stats,
            )  # fmt: skip
    cur[L.CUR_NOW] = t_end
    return _DONE
