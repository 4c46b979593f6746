// ABC, activity-based congestion management (Menth et al., 2019), inside a slice: the slice's
// aggregates (source addresses or source prefixes) are metered, and a packet is dropped when
// the slice's queue ahead of it exceeds a threshold that falls as its aggregate's activity
// rises above the slice's average activity. The paper used floating-point externs; this is
// integer arithmetic on stock BMv2, and domain/abc.py is its reference, bit for bit: each
// function there that reads and writes a register is one action here, run as a keyless
// table's action (BMv2 runs an action atomically only as a table's), and every function it
// gets from a table (decay, log2, 1/N) is a lookup table the control plane writes.
// docs/dataplane.md ("ABC inside a slice") has the equations, widths and errors.
//
// Per packet of an abc slice that the virtual queue took (queue_ahead: the slice's delay
// ahead of the packet, vq units):
//   aggregate: slot = crc32(src_addr & prefix_mask) mod 64, cell dp_sid * 64 + slot;
//   1. abc_meter_time: reads the aggregate's `last` (the time its S and N are decayed to),
//      elapsed = now - last;
//   2. abc_meter_decay (exact memory, range elapsed): the row's f = exp(-low / M_AM) in Q48
//      and the ticks it decays by (its low end; all of elapsed on the last row, f = 0);
//   3. abc_meter_update: S = f S + X, N = M - f (M - N) and last += those ticks (RMW of the
//      three; TDRM-UTEMA; the rest of the gap is carried to the next packet);
//   4. abc_log2_s, abc_log2_n (LPM): log2 S and log2 N, Q8;
//      A = log2 S + activity_offset - log2 N, clamped to [0, ABC_ACTIVITY_MAX];
//   5. abc_average_time: reads the slice's `last` and A_avg, elapsed ticks;
//   6. abc_average_decay: f and its ticks for M_AA;
//      T_drop = min(c_delay, max(q_min, q_base - gamma (A - A_avg))); accepted: Q <= T_drop;
//   7. abc_average_count: count = f count + [accepted] and last += the ticks (RMW);
//   8. accepted: abc_reciprocal (LPM) 1/count, then abc_average_update:
//      A_avg += (A - A_avg) / count (RMW); dropped: local_md.aqm_drop, AqmDrop drops and
//      counts it in aqm_dropped, and VirtualQueue's vq_return takes its transmission time back
//      out of the virtual queue, as for CoDel (this control runs inside VirtualQueue).
// The actions hold no conditional statement (BMv2 runs them as straight-line code): every
// choice is a ?: and every register read-modify-write writes back what it read. Products of
// the 64-bit state are taken in bit<128> (abc_wide_t) and shifted back;
// scripts/gen_p4_constants.py checks that none can overflow.
#ifndef SLICEPORTAL_ABC_P4_
#define SLICEPORTAL_ABC_P4_

const abc_state_t ABC_STATE_SATURATED = (1 << ABC_STATE_WIDTH) - 1;

control SliceAbc(inout headers_t hdr,
                 inout local_metadata_t local_md,
                 inout standard_metadata_t standard_metadata) {

    // TDRM-UTEMA per aggregate, cell dp_sid * ABC_SLOTS + slot: last, the time S and N are
    // decayed to (ticks modulo 2^48; under one decay row behind the aggregate's last arrival),
    // S (bytes, Q16) and N (ticks, Q16). Cells start at zero, abc.py's MeterState(): the
    // measurement starts with the switch (t_0).
    @id(0x16000008) @name("abc_meter_last")
    register<timestamp_t>(ABC_METER_CELLS) abc_meter_last;
    @id(0x16000009) @name("abc_meter_s")
    register<abc_state_t>(ABC_METER_CELLS) abc_meter_s;
    @id(0x1600000a) @name("abc_meter_n")
    register<abc_state_t>(ABC_METER_CELLS) abc_meter_n;
    // The slice's activity average (UTEMA of its accepted packets' activities), cell dp_sid:
    // the time its count is decayed to (ticks, as the meter's last), the decayed count of
    // accepted packets (Q16) and A_avg (biased Q8 with ABC_AVERAGE_EXTRA_BITS more fractional
    // bits) stored as A_avg - ABC_AVERAGE_ZERO modulo 2^64, so that a cell the switch never
    // wrote is abc.py's starting average, activity 0 (a register cannot start at another
    // value).
    @id(0x1600000b) @name("abc_average_last")
    register<timestamp_t>(MAX_SLICES) abc_average_last;
    @id(0x1600000c) @name("abc_average_n")
    register<abc_state_t>(MAX_SLICES) abc_average_n;
    @id(0x1600000d) @name("abc_a_avg")
    register<abc_state_t>(MAX_SLICES) abc_a_avg;

    bit<32> meter_index = 0;          // the aggregate's cell
    bit<32> slice_index = 0;          // the slice's cell
    abc_decay_t decay = 0;            // a decay table's factor, for the action right after it
    timestamp_t decay_ticks = 0;      // ... and the ticks it decays by (the row's low end)
    timestamp_t meter_last = 0;       // the aggregate's last, as abc_meter_time read it
    timestamp_t average_last = 0;     // the slice's last, as abc_average_time read it
    abc_activity_t log2_value = 0;    // a log2 table's value
    abc_activity_t activity = 0;      // the packet's activity, biased Q8
    abc_state_t average = 0;          // A_avg before this packet, biased
    abc_weight_t step_weight = 0;     // 1 / count, Q32
    bool accepted = false;            // the queue ahead is at most T_drop

    // abc_meter_step, part 1: the aggregate's clock, read only (abc_meter_update writes it).
    // Elapsed ticks modulo 2^48, as abc.py's ticks_since: a timestamp wrap costs nothing; a
    // timestamp that went backwards is a huge gap, the decay table's last row (f = 0).
    @id(0x0100000e) @name("abc_meter_time")
    action abc_meter_time() {
        abc_meter_last.read(meter_last, meter_index);
        local_md.abc_meter_elapsed = standard_metadata.ingress_global_timestamp - meter_last;
    }

    @id(0x02000009) @name("abc_meter_clock")
    table abc_meter_clock {
        actions = {
            @defaultonly abc_meter_time;
        }
        const default_action = abc_meter_time();
        size = 1;
    }

    // One row of abc.py's abc_decay_table, for the meter's and the average's memories alike:
    // factor = exp(-low / memory) in Q48 (bit<49>: row 0's 1.0 is 2^48) and ticks = the row's
    // low end, the ticks that factor decays by exactly. The last row (from where the factor
    // rounds to zero, about 34 memories, to 2^48 - 1) has factor 0 and decays by the whole
    // gap, whatever its ticks say: factor 0 is the "all" flag, because that is abc.py's
    // decay_step rule (`row.low if row.factor else elapsed`) and only the last row has it, so
    // the control plane writes every row alike, (factor, low), and no other encoding of "all"
    // (a flag, or ticks = 0, which row 0 also has) can disagree with the reference.
    @id(0x0100000f) @name("abc_decay")
    action abc_decay(abc_decay_t factor, timestamp_t ticks) {
        decay = factor;
        decay_ticks = ticks;
    }

    // abc.py's abc_decay_table(memory) for each distinct memory the switch's abc slices use
    // (ABC_DECAY_ROWS at most per memory), keyed by the memory in ticks so slices with equal
    // memories share rows; the average's memories have a table of their own
    // (abc_average_decay, same rows) because a P4 table is applied once per packet.
    // Range match: P4Runtime wants a priority on every entry of a table with a range field.
    // One memory's rows do not overlap and other memories' rows differ in the exact field,
    // so every priority gives the same result (write 1). BMv2 finds a range table's row by
    // scanning all installed rows (behavioral-model's RangeMap), so a lookup costs time in
    // proportion to the memories installed. No row (a memory without rows): factor 0, which
    // decays by the whole gap, so the state restarts as after a long idle gap.
    @id(0x0200000a) @name("abc_meter_decay")
    table abc_meter_decay {
        key = {
            local_md.abc_meter_memory: exact @name("memory");
            local_md.abc_meter_elapsed: range @name("elapsed");
        }
        actions = {
            abc_decay;
        }
        const default_action = abc_decay(0, 0);
        size = ABC_DECAY_TABLE_SIZE;
    }

    // abc_meter_step, part 2: S = f S + X, saturating at 2^64 - 1, and N = M - f (M - N), both
    // Q16, with the products in bit<128> (S x f < 2^112). N stays at most the memory M, unless
    // a MODIFY shortened it: then M - N is negative, and abc.py's >> floors, so the magnitude
    // of the decayed difference rounds up. last advances by the ticks f decays by (abc.py's
    // decay_step: the row's low end, or all of elapsed when f = 0), modulo 2^48, from the
    // value abc_meter_time read: simple_switch runs ingress in one thread, so that is the
    // register's value, and last never passes the packet's own timestamp.
    @id(0x01000010) @name("abc_meter_update")
    action abc_meter_update() {
        abc_state_t s;
        abc_state_t n;
        abc_meter_s.read(s, meter_index);
        abc_meter_n.read(n, meter_index);
        abc_wide_t f = (abc_wide_t) decay;

        abc_wide_t bytes = (((abc_wide_t) s * f) >> ABC_DECAY_FRAC_BITS)
                           + (((abc_wide_t) standard_metadata.packet_length)
                              << ABC_STATE_FRAC_BITS);
        s = bytes[127:ABC_STATE_WIDTH] != 0 ? ABC_STATE_SATURATED
                                            : bytes[ABC_STATE_WIDTH - 1:0];

        abc_wide_t memory = ((abc_wide_t) local_md.abc_meter_memory) << ABC_STATE_FRAC_BITS;
        abc_wide_t time = (abc_wide_t) n;
        bool above = time > memory;
        abc_wide_t kept = (above ? time - memory : memory - time) * f;
        time = above ? memory + ((kept + (ABC_DECAY_ONE - 1)) >> ABC_DECAY_FRAC_BITS)
                     : memory - (kept >> ABC_DECAY_FRAC_BITS);
        n = time[ABC_STATE_WIDTH - 1:0];

        timestamp_t advance = (decay == 0) ? local_md.abc_meter_elapsed : decay_ticks;
        abc_meter_last.write(meter_index, meter_last + advance);
        abc_meter_s.write(meter_index, s);
        abc_meter_n.write(meter_index, n);
        local_md.abc_s = s;
        local_md.abc_n = n;
    }

    @id(0x0200000b) @name("abc_meter_state")
    table abc_meter_state {
        actions = {
            @defaultonly abc_meter_update;
        }
        const default_action = abc_meter_update();
        size = 1;
    }

    // log2 of the row's midpoint, Q8, for S and N alike.
    @id(0x01000011) @name("abc_log2")
    action abc_log2(abc_activity_t value) {
        log2_value = value;
    }

    // abc.py's abc_log2_table(): ABC_LOG2_TABLE_SIZE rows, the same in both tables (a P4 table
    // is applied once per packet, so S and N need one each). The prefix is the leading zeros,
    // the leading one and ABC_LOG2_MANTISSA_BITS mantissa bits; zero matches no row and gets
    // 0, as abc.py's lookup (S is never 0 here; N = 0 is handled apart).
    @id(0x0200000c) @name("abc_log2_s")
    table abc_log2_s {
        key = {
            local_md.abc_s: lpm @name("s");
        }
        actions = {
            abc_log2;
        }
        const default_action = abc_log2(0);
        size = ABC_LOG2_TABLE_SIZE;
    }

    @id(0x0200000d) @name("abc_log2_n")
    table abc_log2_n {
        key = {
            local_md.abc_n: lpm @name("n");
        }
        actions = {
            abc_log2;
        }
        const default_action = abc_log2(0);
        size = ABC_LOG2_TABLE_SIZE;
    }

    // abc_slice_step, part 1: the slice's clock, read only as the meter's (abc_average_count
    // writes it), and A_avg before this packet, which the threshold compares with. A_avg is
    // only read here; abc_average_update, its read-modify-write, runs later in the same
    // packet's ingress, and simple_switch runs ingress in one thread, so no other packet's
    // update falls in between.
    @id(0x01000012) @name("abc_average_time")
    action abc_average_time() {
        abc_state_t stored;
        abc_average_last.read(average_last, slice_index);
        abc_a_avg.read(stored, slice_index);
        local_md.abc_average_elapsed =
            standard_metadata.ingress_global_timestamp - average_last;
        average = stored + ABC_AVERAGE_ZERO;
    }

    @id(0x0200000e) @name("abc_average_clock")
    table abc_average_clock {
        actions = {
            @defaultonly abc_average_time;
        }
        const default_action = abc_average_time();
        size = 1;
    }

    // As abc_meter_decay, for the slices' average memories M_AA.
    @id(0x0200000f) @name("abc_average_decay")
    table abc_average_decay {
        key = {
            local_md.abc_average_memory: exact @name("memory");
            local_md.abc_average_elapsed: range @name("elapsed");
        }
        actions = {
            abc_decay;
        }
        const default_action = abc_decay(0, 0);
        size = ABC_DECAY_TABLE_SIZE;
    }

    // abc_slice_step, part 2: the count of accepted packets decays and, for an accepted packet,
    // gains one (Q16); last advances by the ticks the factor decays by, as in
    // abc_meter_update. Dropped packets decay the count too: the average forgets with time,
    // not with acceptances.
    @id(0x01000013) @name("abc_average_count")
    action abc_average_count() {
        abc_state_t count;
        abc_average_n.read(count, slice_index);
        abc_wide_t kept = ((abc_wide_t) count * (abc_wide_t) decay) >> ABC_DECAY_FRAC_BITS;
        count = kept[ABC_STATE_WIDTH - 1:0]
                + (accepted ? (abc_state_t) ABC_STATE_ONE : (abc_state_t) 0);
        timestamp_t advance = (decay == 0) ? local_md.abc_average_elapsed : decay_ticks;
        abc_average_last.write(slice_index, average_last + advance);
        abc_average_n.write(slice_index, count);
        local_md.abc_count = count;
    }

    @id(0x02000010) @name("abc_count_state")
    table abc_count_state {
        actions = {
            @defaultonly abc_average_count;
        }
        const default_action = abc_average_count();
        size = 1;
    }

    // 1 / count in Q32, at most 1.0 (2^32).
    @id(0x01000014) @name("abc_weight")
    action abc_weight(abc_weight_t weight) {
        step_weight = weight;
    }

    // abc.py's abc_reciprocal_table(): ABC_RECIPROCAL_TABLE_SIZE rows (counts below
    // 2^ABC_COUNT_WIDTH, ABC_RECIPROCAL_MANTISSA_BITS mantissa bits, valued at the row's low
    // end). A count no row matches gets weight 0: the average stays, as in abc.py.
    @id(0x02000011) @name("abc_reciprocal")
    table abc_reciprocal {
        key = {
            local_md.abc_count: lpm @name("count");
        }
        actions = {
            abc_weight;
        }
        const default_action = abc_weight(0);
        size = ABC_RECIPROCAL_TABLE_SIZE;
    }

    // abc_slice_step, part 3, accepted packets only: A_avg moves towards the packet's activity
    // by weight x the distance (bit<128> product, Q32 weight), never past it.
    @id(0x01000015) @name("abc_average_update")
    action abc_average_update() {
        abc_state_t stored;
        abc_a_avg.read(stored, slice_index);
        abc_wide_t current = (abc_wide_t) (stored + ABC_AVERAGE_ZERO);
        abc_wide_t sample = ((abc_wide_t) activity) << ABC_AVERAGE_EXTRA_BITS;
        bool rising = sample >= current;
        abc_wide_t step = ((abc_wide_t) step_weight
                           * (rising ? sample - current : current - sample))
                          >> ABC_RECIPROCAL_FRAC_BITS;
        current = rising ? current + step : current - step;
        abc_a_avg.write(slice_index, current[ABC_STATE_WIDTH - 1:0] - ABC_AVERAGE_ZERO);
    }

    @id(0x02000012) @name("abc_average_state")
    table abc_average_state {
        actions = {
            @defaultonly abc_average_update;
        }
        const default_action = abc_average_update();
        size = 1;
    }

    apply {
        if (local_md.abc) {
            // The aggregate's slot (abc.py's aggregate_slot): v1model's hash gives
            // base + crc32(data) mod max, over the masked address's 4 bytes, big-endian.
            // The key is a local variable, not the & expression, so the hash's field list holds
            // a plain field (p4c-bm2-ss lowers a complex list element to a temporary anyway).
            ipv4_addr_t aggregate = hdr.ipv4.src_addr & local_md.abc_prefix_mask;
            bit<32> slot;
            hash(slot, HashAlgorithm.crc32, (bit<32>) 0, { aggregate }, (bit<32>) ABC_SLOTS);
            slice_index = (bit<32>) local_md.dp_sid;
            meter_index = (slice_index << ABC_SLOT_BITS) + slot;

            // The aggregate's meter and the packet's activity (abc_meter_step, abc_activity).
            abc_meter_clock.apply();
            abc_meter_decay.apply();
            abc_meter_state.apply();
            abc_log2_s.apply();
            abc_activity_t log2_s = log2_value;
            abc_log2_n.apply();
            // A = log2 S + offset - log2 N in 32 bits (the sum reaches about 38,600), clamped
            // to [0, ABC_ACTIVITY_MAX]; N = 0 (a packet at t_0) is the most active.
            bit<32> rate_log = (bit<32>) log2_s + (bit<32>) local_md.abc_activity_offset;
            bit<32> time_log = (bit<32>) log2_value;
            bit<32> excess = rate_log - time_log;
            activity = (local_md.abc_n == 0) ? (abc_activity_t) ABC_ACTIVITY_MAX
                     : ((rate_log <= time_log) ? (abc_activity_t) 0
                     : ((excess > ABC_ACTIVITY_MAX) ? (abc_activity_t) ABC_ACTIVITY_MAX
                                                    : (abc_activity_t) excess));

            // The slice's decision (abc_slice_step, drop_threshold): T_drop =
            // min(c_delay, max(q_min, q_base - gamma (A - A_avg))), A_avg in Q8 (its extra
            // bits dropped), gamma x |A - A_avg| in bit<128> and shifted back; a cut at or
            // beyond q_base gives 0 before the max. c_delay is the burst limit, so T_drop
            // never admits what the virtual queue would not.
            abc_average_clock.apply();
            abc_average_decay.apply();
            abc_activity_t average_q8 = (abc_activity_t) (average >> ABC_AVERAGE_EXTRA_BITS);
            bool rising = activity >= average_q8;
            abc_wide_t distance = (abc_wide_t) (rising ? activity - average_q8
                                                       : average_q8 - activity);
            abc_wide_t shift = ((abc_wide_t) local_md.abc_gamma * distance)
                               >> ABC_GAMMA_FRAC_BITS;
            abc_wide_t q_base = (abc_wide_t) local_md.abc_q_base;
            abc_wide_t q_min = (abc_wide_t) local_md.abc_q_min;
            abc_wide_t burst = (abc_wide_t) local_md.c_delay;
            abc_wide_t threshold = rising ? ((shift < q_base) ? q_base - shift : (abc_wide_t) 0)
                                          : q_base + shift;
            threshold = (threshold < q_min) ? q_min : threshold;
            threshold = (threshold > burst) ? burst : threshold;
            accepted = (abc_wide_t) local_md.queue_ahead <= threshold;

            abc_count_state.apply();
            if (accepted) {
                abc_reciprocal.apply();
                abc_average_state.apply();
            } else {
                local_md.aqm_drop = true;
            }
        }
    }
}

#endif  // SLICEPORTAL_ABC_P4_
