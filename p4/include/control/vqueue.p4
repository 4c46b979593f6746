// One virtual queue per slice (Listing 1 of Harkous et al., 2021), counted in bytes. The
// queue holds no packet: it is the delay a packet would see behind the slice's earlier
// packets on a link running at the slice's rate limit. Per packet:
//   1. drain it by the time elapsed since the slice's previous packet;
//   2. add this packet's transmission time, packet_length x byte_time;
//   3. drop if that would exceed the burst limit C_DELAY, else keep the new delay.
// Marking against M_DELAY happens in egress (RealQueueCheck), on max(virtual, real). CoDel
// (SliceCodel) and ABC (SliceAbc) run inside this control, right after step 3, on the delay
// ahead of the packet (local_md.queue_ahead), and only for packets it took; a packet either
// drops is given back: vq_return takes its transmission time out of the virtual queue again,
// so the queue counts the packets that leave, never the ones dropped (else, under overload,
// the dropped packets alone would keep the queue at the burst limit and the scheme would drop
// everything). They live here because P4 lets only this control write vq_delay.
//
// Units: delays in vq units (2^-VQ_FRAC_BITS ns), timestamps in ticks (TIMESTAMP_TICK_NS).
// No step can overflow 64 bits (scripts/gen_p4_constants.py checks the bounds):
//   byte_time < 2^32 and packet_length < 2^32, so a transmission time is < 2^64;
//   a drained time is < VQ_ELAPSED_CAP_TICKS x VQ_UNITS_PER_TICK, about 2^48;
//   the stored delay never exceeds C_DELAY < 2^48, and admission compares
//   tx_time > C_DELAY - delay instead of adding, so no sum is formed before the test.
#ifndef SLICEPORTAL_VQUEUE_P4_
#define SLICEPORTAL_VQUEUE_P4_

control VirtualQueue(inout headers_t hdr,
                     inout local_metadata_t local_md,
                     inout standard_metadata_t standard_metadata) {

    // Current virtual-queue delay of each slice, vq units.
    @id(0x16000001) @name("vq_delay")
    register<vq_time_t>(MAX_SLICES) vq_delay;
    // Ingress timestamp of each slice's previous packet, ticks; 0 means "no packet yet".
    @id(0x16000002) @name("vq_last_seen")
    register<timestamp_t>(MAX_SLICES) vq_last_seen;
    // Packets and bytes dropped because the virtual queue would exceed the burst limit.
    @id(0x12000001) @name("vq_dropped")
    counter(MAX_SLICES, CounterType.packets_and_bytes) vq_dropped;

    // The paper's baseline (Harkous et al. 2021, Sec. IV-C): one two-rate three-colour meter
    // (RFC 2698, colour-blind, in bytes) per slice instead of a virtual queue. The control
    // plane writes each meter slice's cell with a MeterEntry; RED packets are dropped (and
    // counted in vq_dropped, the ingress policer's drops), GREEN and YELLOW pass.
    @id(0x14000001) @name("slice_meter")
    meter(MAX_SLICES, MeterType.bytes) slice_meter;

    byte_time_t slice_byte_time = 0;
    bool metered = false;
    bool codel_policy = false;
    bool abc_policy = false;

    // hist_target: the slice's delay target, which SliceMonitor makes the top edge of the
    // slice's delay histograms, so the share of packets above the target is counted exactly.
    @id(0x01000005) @name("tail_drop")
    action tail_drop(priority_t priority, byte_time_t byte_time, vq_param_t c_delay,
                     vq_param_t hist_target) {
        standard_metadata.priority = priority;
        slice_byte_time = byte_time;
        local_md.has_policy = true;
        local_md.c_delay = c_delay;
        local_md.hist_target = hist_target;
    }

    // ECN step: as tail_drop, and mark ECT packets CE while the delay exceeds M_DELAY.
    @id(0x01000006) @name("ecn_step")
    action ecn_step(priority_t priority, byte_time_t byte_time, vq_param_t c_delay,
                    vq_param_t m_delay, vq_param_t hist_target) {
        tail_drop(priority, byte_time, c_delay, hist_target);
        local_md.ecn_step = true;
        local_md.m_delay = m_delay;
    }

    // CoDel (RFC 8289) inside the slice: as tail_drop, and SliceCodel runs CoDel's state
    // machine on the slice's virtual-queue delay (include/control/codel.p4). `target` in vq
    // units, `interval` in ticks (the control-law table's key), `ecn_mark` 1: CE-mark
    // ECN-capable packets instead of dropping them.
    @id(0x01000009) @name("codel")
    action codel(priority_t priority, byte_time_t byte_time, vq_param_t c_delay,
                 vq_param_t hist_target, vq_param_t target, codel_interval_t interval,
                 bit<1> ecn_mark) {
        tail_drop(priority, byte_time, c_delay, hist_target);
        codel_policy = true;
        local_md.codel_target = target;
        local_md.codel_interval = interval;
        local_md.codel_ecn_mark = ecn_mark == 1;
    }

    // ABC (Menth et al., 2019) inside the slice: as tail_drop, and SliceAbc meters the packet's
    // aggregate and drops it when the delay ahead exceeds
    // T_drop = min(c_delay, max(q_min, q_base - gamma (A - A_avg))) (include/control/abc.p4).
    // Every parameter is here, so a MODIFY of the slice's entry changes them at once:
    // q_min, q_base vq units; gamma vq units per Q8 activity step, Q16; activity_offset
    // 64 - log2(R_r in bytes per tick), Q8; meter_memory, average_memory ticks (the decay
    // tables' exact key, so slices with equal memories share rows); prefix_mask the
    // aggregate's source prefix (255.255.255.255: per source address).
    @id(0x0100000d) @name("abc")
    action abc(priority_t priority, byte_time_t byte_time, vq_param_t c_delay,
               vq_param_t hist_target, vq_param_t q_min, vq_param_t q_base, abc_gamma_t gamma,
               abc_activity_t activity_offset, abc_memory_t meter_memory,
               abc_memory_t average_memory, ipv4_addr_t prefix_mask) {
        tail_drop(priority, byte_time, c_delay, hist_target);
        abc_policy = true;
        local_md.abc_q_min = q_min;
        local_md.abc_q_base = q_base;
        local_md.abc_gamma = gamma;
        local_md.abc_activity_offset = activity_offset;
        local_md.abc_meter_memory = meter_memory;
        local_md.abc_average_memory = average_memory;
        local_md.abc_prefix_mask = prefix_mask;
    }

    // Meter baseline: the slice's priority and histogram target, policed by slice_meter alone:
    // no virtual queue and no real-queue check in egress (the virtual delay counts as 0).
    @id(0x01000008) @name("meter_policy")
    action meter_policy(priority_t priority, vq_param_t hist_target) {
        standard_metadata.priority = priority;
        metered = true;
        local_md.hist_target = hist_target;
    }

    // A slice without a policy entry (best effort, by default) has no virtual queue; its
    // histograms use a fixed target.
    @id(0x01000007) @name("best_effort")
    action best_effort() {
        standard_metadata.priority = BEST_EFFORT_PRIORITY;
        local_md.hist_target = HIST_BEST_EFFORT_TARGET_VQ;
    }

    @id(0x02000004) @name("slice_policy")
    table slice_policy {
        key = {
            local_md.dp_sid: exact @name("dp_sid");
        }
        actions = {
            tail_drop;
            ecn_step;
            codel;
            abc;
            meter_policy;
            @defaultonly best_effort;
        }
        const default_action = best_effort();
        size = MAX_SLICES;
    }

    // A packet CoDel or ABC dropped leaves the virtual queue as it came: its transmission time
    // comes back out (a read-modify-write of its own, in one action; the subtraction cannot
    // underflow while ingress runs packets one at a time, and saturates at 0 if it ever did).
    @id(0x01000016) @name("vq_return")
    action vq_return() {
        bit<32> index = (bit<32>) local_md.dp_sid;
        vq_time_t delay;
        vq_delay.read(delay, index);
        vq_delay.write(index, delay > local_md.vq_tx_time ? delay - local_md.vq_tx_time : 0);
    }

    @id(0x02000013) @name("vq_return_table")
    table vq_return_table {
        actions = {
            @defaultonly vq_return;
        }
        const default_action = vq_return();
        size = 1;
    }

    // Applied inside this control's apply, after the virtual queue took a packet. Named codel
    // and abc in P4Info (SliceportalIngress.vqueue.codel.*); the identifiers differ from the
    // actions codel and abc, which p4c would otherwise refuse as duplicate declarations.
    @name("codel") SliceCodel() codel_control;
    @name("abc") SliceAbc() abc_control;

    apply {
        local_md.has_policy = false;
        local_md.ecn_step = false;
        local_md.vq_delay = 0;
        local_md.ecn_marked = false;
        local_md.codel = false;
        local_md.abc = false;
        local_md.aqm_drop = false;
        local_md.vq_tx_time = 0;
        metered = false;
        codel_policy = false;
        abc_policy = false;
        slice_policy.apply();
        if (metered) {
            bit<32> meter_index = (bit<32>) local_md.dp_sid;
            bit<2> color;
            slice_meter.execute_meter(meter_index, color);
            if (color == METER_COLOR_RED) {
                mark_to_drop(standard_metadata);
                vq_dropped.count(meter_index);
            }
        }
        if (local_md.has_policy) {
            bit<32> index = (bit<32>) local_md.dp_sid;
            @atomic {
                timestamp_t now = standard_metadata.ingress_global_timestamp;
                timestamp_t last;
                vq_time_t delay;
                vq_last_seen.read(last, index);
                vq_delay.read(delay, index);
                vq_last_seen.write(index, now);

                // Modulo 2^TIMESTAMP_WIDTH, so right across a timestamp wrap. A difference
                // with the top bit set is a timestamp that went backwards (reordering
                // between threads): it drains nothing. The first packet drains nothing.
                timestamp_t elapsed = now - last;
                if (last == 0 || elapsed[TIMESTAMP_WIDTH - 1:TIMESTAMP_WIDTH - 1] == 1) {
                    elapsed = 0;
                }
                if (elapsed >= VQ_ELAPSED_CAP_TICKS) {
                    delay = 0;
                } else {
                    vq_time_t drained = (vq_time_t) elapsed * VQ_UNITS_PER_TICK;
                    if (drained >= delay) {
                        delay = 0;
                    } else {
                        delay = delay - drained;
                    }
                }

                vq_time_t tx_time = (vq_time_t) standard_metadata.packet_length
                                    * (vq_time_t) slice_byte_time;
                vq_time_t c_delay = (vq_time_t) local_md.c_delay;
                // delay > c_delay only after the control plane lowered the burst limit.
                if (delay > c_delay || tx_time > c_delay - delay) {
                    mark_to_drop(standard_metadata);
                    vq_dropped.count(index);
                } else {
                    // CoDel and ABC decide on the delay ahead of this packet, once it is
                    // queued.
                    local_md.codel = codel_policy;
                    local_md.abc = abc_policy;
                    local_md.queue_ahead = delay;
                    local_md.vq_tx_time = tx_time;
                    delay = delay + tx_time;
                }
                vq_delay.write(index, delay);
                local_md.vq_delay = delay;
            }
            codel_control.apply(hdr, local_md, standard_metadata);
            abc_control.apply(hdr, local_md, standard_metadata);
            if (local_md.aqm_drop) {
                vq_return_table.apply();
            }
        }
    }
}

#endif  // SLICEPORTAL_VQUEUE_P4_
