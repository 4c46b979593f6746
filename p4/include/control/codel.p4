// CoDel (RFC 8289) inside a slice, after Kundel et al.'s P4-CoDel: per slice the state
// machine of RFC 8289's dequeue, on the slice's own queueing delay (its virtual-queue delay
// ahead of the packet, from VirtualQueue), never the real queue's: with strict priority a
// low-priority slice waits while higher slices send, a delay its senders cannot reduce.
// domain/codel.py's codel_step is the reference, bit for bit; docs/dataplane.md explains it.
//
// Per packet of a codel slice that the virtual queue took:
//   1. codel_decide (codel_state's only action): one action reads and writes first_above_time, dropping, count and
//      last_count and reads drop_next (RFC 8289's state machine, including the count
//      re-entry rule), and says whether the packet is signalled;
//   2. a signalled packet looks up its spacing interval / sqrt(count) in codel_control_law
//      (exact on the interval, LPM on count) whose action sets drop_next, the only register
//      it touches; then it is dropped (local_md.aqm_drop: VirtualQueue's vq_return takes its
//      time back out of the virtual queue, AqmDrop drops it and counts it in aqm_dropped) or,
//      with ecn_mark and ECT, marked CE. This control runs inside VirtualQueue, which alone
//      may write vq_delay.
// The actions hold no conditional statement (BMv2 runs them as straight-line code): every
// choice is a ?: and every register read is written back.
#ifndef SLICEPORTAL_CODEL_P4_
#define SLICEPORTAL_CODEL_P4_

const codel_count_t CODEL_COUNT_MAX = (1 << CODEL_COUNT_WIDTH) - 1;

control SliceCodel(inout headers_t hdr,
                   inout local_metadata_t local_md,
                   inout standard_metadata_t standard_metadata) {

    // RFC 8289's per-queue variables, one cell per slice.
    @id(0x16000003) @name("codel_dropping")
    register<bit<1>>(MAX_SLICES) codel_dropping;
    @id(0x16000004) @name("codel_count")
    register<codel_count_t>(MAX_SLICES) codel_count;
    @id(0x16000005) @name("codel_last_count")
    register<codel_count_t>(MAX_SLICES) codel_last_count;
    // Ticks modulo 2^TIMESTAMP_WIDTH; first_above_time 0 means "not above target".
    @id(0x16000006) @name("codel_drop_next")
    register<timestamp_t>(MAX_SLICES) codel_drop_next;
    @id(0x16000007) @name("codel_first_above")
    register<timestamp_t>(MAX_SLICES) codel_first_above;

    @id(0x0100000a) @name("codel_decide")
    action codel_decide() {
        bit<32> index = (bit<32>) local_md.dp_sid;
        timestamp_t now = standard_metadata.ingress_global_timestamp;
        bit<1> dropping;
        codel_count_t count;
        codel_count_t last_count;
        timestamp_t drop_next;
        timestamp_t first_above;
        codel_dropping.read(dropping, index);
        codel_count.read(count, index);
        codel_last_count.read(last_count, index);
        codel_drop_next.read(drop_next, index);
        codel_first_above.read(first_above, index);

        // Above target for an interval: ok to drop. A "time at or after" test is the top bit
        // of the difference modulo 2^TIMESTAMP_WIDTH, so a timestamp wrap costs nothing.
        timestamp_t interval = (timestamp_t) local_md.codel_interval;
        bool below = local_md.queue_ahead < (vq_time_t) local_md.codel_target;
        timestamp_t deadline = now + interval;
        timestamp_t since_above = now - first_above;
        bool ok_to_drop = !below && first_above != 0
                          && since_above[TIMESTAMP_WIDTH - 1:TIMESTAMP_WIDTH - 1] == 0;
        first_above = below ? 0 : (first_above != 0 ? first_above
                                                     : (deadline == 0 ? 1 : deadline));

        timestamp_t since_next = now - drop_next;
        bool next_passed = since_next[TIMESTAMP_WIDTH - 1:TIMESTAMP_WIDTH - 1] == 0;
        bool in_spell = dropping == 1;
        // Dropping: a signal each time drop_next passes while ok to drop; leave when not ok.
        bool spell_signal = in_spell && ok_to_drop && next_passed;
        // Not dropping and ok to drop: signal and enter; resume the last spell's rate when it
        // ended within 16 intervals (RFC 8289's count re-entry, the paper's if_3).
        bool entering = !in_spell && ok_to_drop;
        codel_count_t delta = count - last_count;
        bool recent = since_next < interval * 16
                      || since_next[TIMESTAMP_WIDTH - 1:TIMESTAMP_WIDTH - 1] == 1;
        codel_count_t entry_count = (delta > 1 && recent) ? delta : 1;
        codel_count_t next_count = count == CODEL_COUNT_MAX ? count : count + 1;

        count = entering ? entry_count : (spell_signal ? next_count : count);
        last_count = entering ? entry_count : last_count;
        dropping = (entering || (in_spell && ok_to_drop)) ? 1w1 : 1w0;
        codel_dropping.write(index, dropping);
        codel_count.write(index, count);
        codel_last_count.write(index, last_count);
        codel_first_above.write(index, first_above);
        local_md.codel_count = count;
        local_md.codel_signal = entering || spell_signal;
        local_md.codel_entering = entering;
    }

    // Keyless: BMv2 runs an action atomically only as a table's, so codel_decide is one.
    @id(0x02000008) @name("codel_state")
    table codel_state {
        actions = {
            @defaultonly codel_decide;
        }
        const default_action = codel_decide();
        size = 1;
    }

    // interval / sqrt(count) in ticks: entering, the spell's first drop is that far from now;
    // in a spell, the next one that far from the last.
    @id(0x0100000b) @name("codel_spacing")
    action codel_spacing(codel_interval_t spacing) {
        bit<32> index = (bit<32>) local_md.dp_sid;
        timestamp_t drop_next;
        codel_drop_next.read(drop_next, index);
        timestamp_t base = local_md.codel_entering
                           ? standard_metadata.ingress_global_timestamp : drop_next;
        codel_drop_next.write(index, base + (timestamp_t) spacing);
    }

    // No row for the count: drop_next stays where it was.
    @id(0x0100000c) @name("codel_keep_next")
    action codel_keep_next() {
    }

    // The control plane writes CODEL_LAW_ROWS rows per interval in use (domain/codel.py's
    // codel_sqrt_table): counts 1-16 exact, beyond one row per highest set bit.
    @id(0x02000007) @name("codel_control_law")
    table codel_control_law {
        key = {
            local_md.codel_interval: exact @name("interval");
            local_md.codel_count: lpm @name("count");
        }
        actions = {
            codel_spacing;
            @defaultonly codel_keep_next;
        }
        const default_action = codel_keep_next();
        size = CODEL_LAW_TABLE_SIZE;
    }

    apply {
        local_md.codel_signal = false;
        if (local_md.codel) {
            codel_state.apply();
            if (local_md.codel_signal) {
                codel_control_law.apply();
                if (local_md.codel_ecn_mark
                    && (hdr.ipv4.ecn == ECN_ECT0 || hdr.ipv4.ecn == ECN_ECT1)) {
                    hdr.ipv4.ecn = ECN_CE;
                    local_md.ecn_marked = true;
                } else {
                    local_md.aqm_drop = true;
                }
            }
        }
    }
}

#endif  // SLICEPORTAL_CODEL_P4_
