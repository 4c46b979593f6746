"""The Python half of bmv2_smoke.sh: push the pipeline and four slices, send, read counters back.

Runs inside the smoke test's network namespace against simple_switch_grpc on 127.0.0.1:9559.
Entries come from sliceportal.domain.dataplane, so this also checks the translation against a
real P4Runtime server. It prints what it saw and exits non-zero when the switch did not behave:
the rate-limited slice must drop, the ECN slice must mark, CoDel must drop in its overloaded
slice (aqm_dropped), ABC must drop in its slice and more of the heavy sender's packets than of
the light one's, best effort must pass.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from scapy.all import IP, UDP, Dot1Q, Ether, Raw  # type: ignore[import-untyped]

from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain.abc import AbcConfig
from sliceportal.domain.codel import CodelConfig
from sliceportal.domain.reconcile import EntryUpdate, UpdateKind
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.p4rt.pipeline import load_pipeline
from sliceportal.p4rt.session import connect
from sliceportal.schemas.choices import SwitchKind

SWITCH_MAC = "02:00:00:00:00:fe"
H1_MAC, H2_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
PACKETS_PER_SLICE = 300
PAYLOAD_BYTES = 1000
FRAMES_PER_SECOND = 2000  # 320 per slice (ABC's 640 + 80): above every slice rate

ROUTE = dp.Route("10.0.2.0/24", 2, H2_MAC)
# Both slices are far below what scapy offers (several Mbit/s), so their virtual queues fill.
PREFIX_SLICE = dp.DataplaneSlice(
    dp_sid=1,
    name="prefix tail-drop",
    vlan_id=None,
    ipv4_dst_prefixes=("10.0.2.0/25",),
    rate_bps=1e6,
    burst_limit_s=0.05,
    priority=7,
    scheme=dp.Scheme.TAIL_DROP,
    marking_threshold_s=None,
    egress_port=2,
)
VLAN_SLICE = dp.DataplaneSlice(
    dp_sid=2,
    name="vlan ecn-step",
    vlan_id=100,
    ipv4_dst_prefixes=(),
    rate_bps=2e6,
    burst_limit_s=0.2,
    priority=5,
    scheme=dp.Scheme.ECN_STEP,
    marking_threshold_s=0.01,
    egress_port=2,
)


# Overloaded by a third (each slice's share of the frames is about 2.7 Mbit/s): its queue
# stays above CoDel's 5 ms target for far longer than the 20 ms interval, so CoDel drops
# (aqm_dropped) long before the 0.5 s burst limit would.
CODEL_SLICE = dp.DataplaneSlice(
    dp_sid=3,
    name="prefix codel",
    vlan_id=None,
    ipv4_dst_prefixes=("10.0.2.128/26",),
    rate_bps=2e6,
    burst_limit_s=0.5,
    priority=6,
    scheme=dp.Scheme.CODEL,
    marking_threshold_s=None,
    egress_port=2,
    codel=CodelConfig.from_seconds(target_s=0.005, interval_s=0.02),
)


# Two senders share it: 10.0.1.1 sends 8 frames for each of 10.0.1.2's (about 5 and 0.6 Mbit/s
# against 2 Mbit/s). ABC (short memories, so activities part within the run) drops the heavy
# sender's packets at a lower queue than the light one's.
ABC_SLICE = dp.DataplaneSlice(
    dp_sid=4,
    name="prefix abc",
    vlan_id=None,
    ipv4_dst_prefixes=("10.0.2.192/26",),
    rate_bps=2e6,
    burst_limit_s=0.2,
    priority=4,
    scheme=dp.Scheme.ABC,
    marking_threshold_s=None,
    egress_port=2,
    abc=AbcConfig.with_paper_thresholds(2e6, 0.2, meter_memory_s=0.1, average_memory_s=0.05),
)
HEAVY, LIGHT = "10.0.1.1", "10.0.1.2"
HEAVY_PORT, LIGHT_PORT = 5005, 5006
PORTS = (5001, 5002, 5003, 5004, HEAVY_PORT, LIGHT_PORT)


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def traffic() -> list[bytes]:
    """Interleaved frames of the four slices and of best effort (10.0.2.200 is in none)."""
    payload = Raw(b"x" * PAYLOAD_BYTES)
    l2 = Ether(src=H1_MAC, dst=SWITCH_MAC)
    ect0 = 2
    frames = []
    for k in range(PACKETS_PER_SLICE):
        heavy = l2 / IP(src=HEAVY, dst="10.0.2.193") / UDP(dport=HEAVY_PORT) / payload
        frames += [heavy, heavy]
        if k % 4 == 0:
            frames.append(l2 / IP(src=LIGHT, dst="10.0.2.194") / UDP(dport=LIGHT_PORT) / payload)
        frames.append(l2 / IP(src="10.0.1.1", dst="10.0.2.1") / UDP(dport=5001) / payload)
        vlan = l2 / Dot1Q(vlan=100) / IP(src="10.0.1.1", dst="10.0.2.2", tos=ect0)
        frames.append(vlan / UDP(dport=5002) / payload)
        frames.append(l2 / IP(src="10.0.1.1", dst="10.0.2.200") / UDP(dport=5003) / payload)
        frames.append(l2 / IP(src="10.0.1.1", dst="10.0.2.130") / UDP(dport=5004) / payload)
    return [bytes(f) for f in frames]


def send(frames: list[bytes], iface: str) -> float:
    """Send at FRAMES_PER_SECOND on a raw socket and return the seconds it took.

    scapy's sendp manages ~150 frames/s here, below the slice rates; unpaced, the frames
    overrun BMv2's capture buffer and most never reach the pipeline.
    """
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as raw:
        raw.bind((iface, 0))
        started = time.monotonic()
        for k, frame in enumerate(frames):
            time.sleep(max(0.0, started + k / FRAMES_PER_SECOND - time.monotonic()))
            raw.send(frame)
        return time.monotonic() - started


def open_receiver(iface: str) -> socket.socket:
    """A raw socket that buffers everything arriving on ``iface`` until drained (scapy's
    sniffer dissects as it goes and falls behind)."""
    eth_p_all = 3
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(eth_p_all))
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    rx.bind((iface, 0))
    rx.setblocking(False)
    return rx


def drain(rx: socket.socket) -> list[object]:
    """Our UDP packets among the frames received (the kernel may strip the VLAN tag)."""
    packets = []
    while True:
        try:
            packet = Ether(rx.recv(65535))
        except BlockingIOError:
            return packets
        if UDP in packet and packet[UDP].dport in PORTS:
            packets.append(packet)


def bucket(p: dp.DelayBucket) -> str:
    return f">= {p.lower_us} us" if p.upper_us is None else f"< {p.upper_us} us"


def describe(name: str, reading: dp.SliceCounters, seconds: float) -> None:
    stats = dp.slice_stats(dp.SliceCounters.zero(), reading, seconds)
    say(
        f"{name}: forwarded {reading.forwarded.packets} pkts / {reading.forwarded.bytes} B, "
        f"vq-dropped {reading.vq_dropped.packets}, real-dropped {reading.real_dropped.packets}, "
        f"ECN-marked {reading.ecn_marked.packets}, {stats.throughput_bps / 1e6:.2f} Mbit/s"
    )
    say(f"  vq delay histogram {reading.vq_delay_hist}, real {reading.real_delay_hist}")
    for label, p in (("vq", stats.vq_delay), ("real", stats.real_delay)):
        if p is not None:
            say(f"  {label} delay p50 {bucket(p.p50)}, p99 {bucket(p.p99)}")


def report(checks: Iterable[tuple[bool, str]]) -> int:
    problems = [message for ok, message in checks if not ok]
    for problem in problems:
        say(f"FAILED: {problem}")
    say("bmv2_smoke: FAILED" if problems else "bmv2_smoke: OK")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grpc", required=True)
    parser.add_argument("--p4info", required=True)
    parser.add_argument("--json", required=True)
    parser.add_argument("--send-iface", required=True)
    parser.add_argument("--recv-iface", required=True)
    args = parser.parse_args()

    # The portal's own adapter, exactly as the control plane uses it (BMv2's device id is 0).
    pipeline = load_pipeline(Path(args.p4info), Path(args.json))
    target = SwitchTarget(0, args.grpc, device_id=0, election_id=1, kind=SwitchKind.BMV2)
    session = connect(target, pipeline=pipeline)
    try:
        session.push_pipeline(pipeline.cookie)
        reported = session.pipeline_cookie()
        say(f"pipeline pushed (cookie {pipeline.cookie:#x}); the switch reports {reported:#x}")
        slices = [PREFIX_SLICE, VLAN_SLICE, CODEL_SLICE, ABC_SLICE]
        entries = dp.dataplane_entries(slices, [ROUTE])
        outcomes = session.write([EntryUpdate(UpdateKind.INSERT, e) for e in entries])
        failed = [str(o) for o in outcomes if not o.ok]
        if failed:
            say(f"the switch refused {len(failed)} entries: {failed}")
            return 1
        read_back = session.read_entries()
        say(f"installed {len(entries)} entries, read back {len(read_back)}")

        frames = traffic()
        with open_receiver(args.recv_iface) as rx:
            seconds = send(frames, args.send_iface)
            time.sleep(2.0)
            received = drain(rx)
        ce = sum(1 for p in received if p[IP].tos & 3 == 3)
        say(f"sent {len(frames)} packets in {seconds:.2f} s; received {len(received)}")
        say(f"received CE-marked: {ce}")

        sids = (*(s.dp_sid for s in slices), c.BEST_EFFORT_DP_SID)
        cells = session.read_counter_cells([cell for sid in sids for cell in dp.counter_cells(sid)])
        readings = {sid: dp.SliceCounters.from_cells(cells, sid) for sid in sids}
    finally:
        session.close()

    prefix = readings[PREFIX_SLICE.dp_sid]
    vlan = readings[VLAN_SLICE.dp_sid]
    best_effort = readings[c.BEST_EFFORT_DP_SID]
    describe(PREFIX_SLICE.name, prefix, seconds)
    describe(VLAN_SLICE.name, vlan, seconds)
    describe(CODEL_SLICE.name, readings[CODEL_SLICE.dp_sid], seconds)
    aqm_dropped = readings[CODEL_SLICE.dp_sid].aqm_dropped.packets
    say(f"  CoDel dropped {aqm_dropped}")
    describe(ABC_SLICE.name, readings[ABC_SLICE.dp_sid], seconds)
    abc_dropped = readings[ABC_SLICE.dp_sid].aqm_dropped.packets
    delivered = {
        dport: sum(1 for p in received if p[UDP].dport == dport) / sent
        for dport, sent in (
            (HEAVY_PORT, 2 * PACKETS_PER_SLICE),
            (LIGHT_PORT, len(range(0, PACKETS_PER_SLICE, 4))),
        )
    }
    say(
        f"  ABC dropped {abc_dropped}; delivered {delivered[HEAVY_PORT]:.0%} of {HEAVY}'s "
        f"packets, {delivered[LIGHT_PORT]:.0%} of {LIGHT}'s"
    )
    describe("best effort", best_effort, seconds)
    forwarded = sum(r.forwarded.packets for r in readings.values())
    return report(
        [
            (prefix.vq_dropped.packets > 0, "the 1 Mbit/s slice dropped nothing"),
            (aqm_dropped > 0, "CoDel dropped nothing in its overloaded slice"),
            (abc_dropped > 0, "ABC dropped nothing in its overloaded slice"),
            (
                delivered[LIGHT_PORT] > delivered[HEAVY_PORT],
                "ABC did not favour the light sender",
            ),
            (vlan.ecn_marked.packets > 0, "the ECN slice marked nothing"),
            (ce == vlan.ecn_marked.packets, f"{ce} CE packets received, counter differs"),
            (best_effort.forwarded.packets > 0, "best effort forwarded nothing"),
            (forwarded == len(received), f"counted {forwarded}, received {len(received)}"),
            (len(read_back) == len(entries), "the entries read back differ from those written"),
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
