"""Column layouts and codes shared by the compiled kernel and its typed wrapper.

The kernel works on plain int64/float64 arrays (numba compiles those best); these names say
which column holds what. Plain module constants, so numba folds them into the machine code.
"""

from __future__ import annotations

from enum import IntEnum

from sliceportal.domain import p4constants as c


class Outcome(IntEnum):
    """What became of a packet; the test vectors name them in lower case."""

    PENDING = 0  # still queued
    UNROUTED = 1  # dropped by routing (no route, TTL <= 1): nothing counted
    VQ_DROPPED = 2  # dropped by its virtual queue in ingress (vq_dropped)
    QUEUE_FULL = 3  # dropped by the traffic manager: the egress queue held queue_depth packets
    REAL_DROPPED = 4  # dropped in egress on max(virtual, real) delay (real_dropped)
    FORWARDED = 5  # sent on the egress port (forwarded, maybe ecn_marked)
    AQM_DROPPED = 6  # dropped by the slice's CoDel in ingress (aqm_dropped)


class Status(IntEnum):
    """Why the kernel returned."""

    DONE = 0  # reached t_end
    GROW_HEAP = 1  # the event heap is full: grow it and call again
    GROW_POOL = 2  # the queued-packet pool is full: grow it and call again


class Congestion(IntEnum):
    """Congestion control of a responsive flow."""

    RENO = 0
    CUBIC = 1
    DCTCP = 2


DCTCP_MIN_CWND = 2
"""Linux's floor of DCTCP's window in packets (dctcp_ssthresh), the default of a flow's
``min_cwnd``; Reno and CUBIC stop at 2 too, always. See docs/emulator.md ("Responsive flows")
for why experiment 1 also reports a run with 1."""

PORTS = 1 << c.PORT_WIDTH
QUEUES = c.MAX_PRIORITY + 1

# Header classes (`program.Verdict`s): int64[classes, CLS_COLUMNS]
CLS_PORT = 0  # -1: unrouted
CLS_SID = 1
CLS_POLICY = 2  # 0: none (best effort), 1: tail_drop, 2: ecn_step, 3: meter_policy
CLS_PRIO = 3
CLS_BYTE_TIME = 4
CLS_C_DELAY = 5
CLS_M_DELAY = 6
CLS_HIST_TARGET = 7  # the best_effort action's for a class without a policy
CLS_CODEL_TARGET = 8  # codel: target, vq units
CLS_CODEL_INTERVAL = 9  # codel: interval, ticks
CLS_CODEL_ECN = 10  # codel: 1 CE-marks ECN-capable packets instead of dropping them
CLS_LAW_START = 11  # codel: the interval's control-law rows are LAW rows [start, end)
CLS_LAW_END = 12
CLS_ABC_CELL = 13  # abc: the aggregate's meter cell, dp_sid x 64 + slot
CLS_ABC_Q_MIN = 14  # abc: the action's data (vq units; gamma Q16 per Q8 step, two's
CLS_ABC_Q_BASE = 15  # complement when it exceeds 2^63; activity offset Q8; memory ticks)
CLS_ABC_GAMMA = 16
CLS_ABC_OFFSET = 17
CLS_ABC_METER_MEMORY = 18
CLS_ABC_METER_START = 19  # abc: the meter memory's decay rows are ABC_DECAY rows [start, end)
CLS_ABC_METER_END = 20
CLS_ABC_AVERAGE_START = 21  # ... and the average memory's
CLS_ABC_AVERAGE_END = 22
CLS_COLUMNS = 23
POLICY_NONE = 0
POLICY_TAIL_DROP = 1
POLICY_ECN_STEP = 2
POLICY_METER = 3  # slice_meter (trTCM) in ingress, no virtual queue, no egress check
POLICY_CODEL = 4  # tail_drop's virtual queue, then CoDel on the delay ahead of the packet
POLICY_ABC = 5  # tail_drop's virtual queue, then ABC on the delay ahead of the packet

# ABC's decay rows (abc_meter_decay, abc_average_decay; `model.abc_tables`): int64[rows,
# DECAY_COLUMNS], one memory's rows contiguous, sorted by low end and disjoint
DECAY_LOW = 0
DECAY_HIGH = 1
DECAY_FACTOR = 2  # Q48
DECAY_TICKS = 3  # the ticks the row decays by
DECAY_COLUMNS = 4
# ABC's function tables as dense cells: int64[LOOKUP_TABLES, cells], in this order
LOOKUP_LOG2_S = 0
LOOKUP_LOG2_N = 1
LOOKUP_RECIPROCAL = 2
LOOKUP_TABLES = 3

# CoDel's control-law rows (codel_control_law), per interval longest prefix first:
# int64[rows, LAW_COLUMNS]; a count matches a row when their top PREFIX_LEN bits agree
LAW_VALUE = 0
LAW_PREFIX_LEN = 1
LAW_SPACING = 2  # ticks
LAW_COLUMNS = 3

# Indirect meter cells (`state.MeterArray.cells`): int64[size, MTR_COLUMNS], updated in place
MTR_CONFIGURED = 0  # 0: never written or reset: every packet GREEN, as on BMv2
MTR_CIR = 1  # units (bytes or packets) per second
MTR_CBURST = 2  # units
MTR_PIR = 3
MTR_PBURST = 4
MTR_COMMITTED = 5  # tokens in the committed bucket, 1/TICKS_PER_S units
MTR_PEAK = 6  # tokens in the peak bucket
MTR_LAST = 7  # timestamp (ticks) of the cell's last packet; 0: none yet, both buckets full
MTR_COLUMNS = 8
# Open-loop arrivals of one run: int64[packets, OL_COLUMNS], sorted by time
OL_TIME = 0
OL_CLS = 1
OL_LEN = 2
OL_ECN = 3
OL_COLUMNS = 4

# Responsive flows, integer state: int64[flows, FI_COLUMNS]
FI_CLS = 0
FI_LEN = 1
FI_ECN = 2
FI_RTT_NS = 3
FI_GAP_NS = 4  # one frame at the sender's line rate: a window leaves as a line-rate burst
FI_CC = 5
FI_ACTIVE = 6
FI_KICK = 7  # 1: (re)started by the control plane, schedule its first send
FI_START_NS = 8
FI_INFLIGHT = 9
FI_NEXT_SEQ = 10
FI_RECOVER = 11  # highest sequence sent when the window was last reduced
FI_WIN_END = 12  # DCTCP: sequence that closes the current observation window
FI_WIN_ACKED = 13
FI_WIN_MARKED = 14
FI_NEXT_SEND = 15
FI_SEND_PENDING = 16
FI_SENT = 17
FI_DELIVERED = 18
FI_LOST = 19
FI_MARKED = 20
FI_MAX_CWND = 21
FI_MIN_CWND = 22  # DCTCP: the floor of the window, packets (Linux: 2; 0 counts as 1)
FI_COLUMNS = 23

# Responsive flows, float state: float64[flows, FF_COLUMNS]
FF_CWND = 0  # packets
FF_SSTHRESH = 1
FF_ALPHA = 2  # DCTCP's estimate of the marked fraction
FF_W_MAX = 3  # CUBIC
FF_EPOCH = 4  # CUBIC: start of the current growth epoch, s (-1: none)
FF_K = 5
FF_ORIGIN = 6
FF_COLUMNS = 7

# Egress ports: int64[PORTS, PORT_COLUMNS]; queues: int64[PORTS, QUEUES, Q_COLUMNS]
PORT_RATE_BPS = 0
PORT_DEPTH = 1  # packets per queue (BMv2: set_queue_depth)
PORT_FREE_AT = 2  # ns: when the link finishes the frame it is sending
PORT_DEQ_PENDING = 3
PORT_QUEUED = 4
PORT_COLUMNS = 5
Q_HEAD = 0
Q_TAIL = 1
Q_LEN = 2
Q_COLUMNS = 3

# Queued packets (with the metadata ingress hands to egress): int64[slots, PKT_COLUMNS]
PKT_ENQ_NS = 0
PKT_SID = 1
PKT_POLICY = 2
PKT_C_DELAY = 3
PKT_M_DELAY = 4
PKT_LEN = 5
PKT_ECN = 6
PKT_VQ = 7
PKT_FLOW = 8
PKT_SEQ = 9
PKT_TRACE = 10
PKT_NEXT = 11
PKT_HIST_TARGET = 12
PKT_MARKED = 13  # 1: CE-marked by this switch in ingress (CoDel)
PKT_COLUMNS = 14

# Pending events: int64[capacity, EV_COLUMNS], a binary heap on (time, order)
EV_TIME = 0
EV_ORDER = 1
EV_TYPE = 2
EV_A = 3
EV_B = 4
EV_COLUMNS = 5
EV_SEND = 0  # a: flow
EV_DEQ = 1  # a: port
EV_ACK = 2  # a: flow, b: sequence
EV_ACK_CE = 3
EV_LOSS = 4

# Cursor: int64[CUR_COLUMNS]
CUR_OL_POS = 0
CUR_HEAP_N = 1
CUR_ORDER = 2
CUR_FREE_N = 3
CUR_NOW = 4
CUR_COLUMNS = 5

# Per-packet trace (test vectors): int64[packets, TR_COLUMNS]
TR_OUTCOME = 0
TR_SID = 1
TR_PORT = 2
TR_PRIO = 3
TR_VQ = 4
TR_TD = 5  # deq_timedelta, ticks
TR_ECN = 6  # the ECN field as the packet left
TR_DEQ_NS = 7  # when the packet left its egress queue, simulated ns (exact, unlike TR_TD)
TR_COLUMNS = 8

# Egress tap (fine delay histograms of forwarded packets): int64[rows, 2, bins + 1]
TAP_VQ = 0
TAP_REAL = 1
# Tap sums: int64[rows, TS_COLUMNS]
TS_PACKETS = 0
TS_VQ_US = 1
TS_REAL_US = 2
TS_MAX_VQ_US = 3
TS_MAX_REAL_US = 4
TS_COLUMNS = 5

# Totals: int64[ST_COLUMNS]
ST_INGRESS = 0
ST_UNROUTED = 1
ST_VQ_DROPPED = 2
ST_QUEUE_FULL = 3
ST_REAL_DROPPED = 4
ST_FORWARDED = 5
ST_EVENTS = 6
ST_AQM_DROPPED = 7
ST_COLUMNS = 8
