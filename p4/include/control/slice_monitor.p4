// Per-slice monitoring in indirect counters, because BMv2's P4Runtime server cannot read
// registers (p4lang/PI#376). Each counter is indexed by DP_SID; the histograms by
// DP_SID x HIST_BUCKETS + bucket. Per slice that is 4 packets-and-bytes cells plus 2 x 8
// histogram cells: reading a cell costs BMv2 about 0.1 ms, so a poller reads only the cells
// of slices that exist. Histograms count the packets that leave, so for every slice
//   sum(vq_delay_hist) == sum(real_delay_hist) == forwarded.packets.
#ifndef SLICEPORTAL_SLICE_MONITOR_P4_
#define SLICEPORTAL_SLICE_MONITOR_P4_

// Bucket of a delay in vq units, on edges drawn from the slice's delay target T (vq units):
// T/16, T/8, T/4, T/2, T - T/4, T - T/8 and T itself, each rounded down by the shift. So the
// top bucket holds exactly the packets that waited T or longer, whatever the target, and the
// buckets below it resolve the delays near the target finely enough for percentiles.
hist_bucket_t delay_bucket(in vq_time_t delay, in vq_param_t target) {
    vq_time_t t = (vq_time_t) target;
    hist_bucket_t bucket = HIST_BUCKETS - 1;
    if (delay < (t >> 4)) {
        bucket = 0;
    } else if (delay < (t >> 3)) {
        bucket = 1;
    } else if (delay < (t >> 2)) {
        bucket = 2;
    } else if (delay < (t >> 1)) {
        bucket = 3;
    } else if (delay < t - (t >> 2)) {
        bucket = 4;
    } else if (delay < t - (t >> 3)) {
        bucket = 5;
    } else if (delay < t) {
        bucket = 6;
    }
    return bucket;
}

control SliceMonitor(in local_metadata_t local_md) {

    @id(0x12000002) @name("forwarded")
    counter(MAX_SLICES, CounterType.packets_and_bytes) forwarded;
    @id(0x12000003) @name("real_dropped")
    counter(MAX_SLICES, CounterType.packets_and_bytes) real_dropped;
    // A subset of forwarded: the packets this switch marked CE.
    @id(0x12000004) @name("ecn_marked")
    counter(MAX_SLICES, CounterType.packets_and_bytes) ecn_marked;
    @id(0x12000005) @name("vq_delay_hist")
    counter(HIST_SIZE, CounterType.packets) vq_delay_hist;
    @id(0x12000006) @name("real_delay_hist")
    counter(HIST_SIZE, CounterType.packets) real_delay_hist;

    apply {
        bit<32> index = (bit<32>) local_md.dp_sid;
        if (local_md.real_dropped) {
            real_dropped.count(index);
        } else {
            forwarded.count(index);
            if (local_md.ecn_marked) {
                ecn_marked.count(index);
            }
            bit<32> cells = index << HIST_BUCKET_BITS;
            vq_delay_hist.count(
                cells | (bit<32>) delay_bucket(local_md.vq_delay, local_md.hist_target));
            real_delay_hist.count(
                cells | (bit<32>) delay_bucket(local_md.real_delay, local_md.hist_target));
        }
    }
}

#endif  // SLICEPORTAL_SLICE_MONITOR_P4_
