// Per-slice monitoring in indirect counters, because BMv2's P4Runtime server cannot read
// registers (p4lang/PI#376). Each counter is indexed by DP_SID; the histograms by
// DP_SID x HIST_BUCKETS + bucket. Per slice that is 4 packets-and-bytes cells plus 2 x 8
// histogram cells: reading a cell costs BMv2 about 0.1 ms, so a poller reads only the cells
// of slices that exist. Histograms count the packets that leave, so for every slice
//   sum(vq_delay_hist) == sum(real_delay_hist) == forwarded.packets.
#ifndef SLICEPORTAL_SLICE_MONITOR_P4_
#define SLICEPORTAL_SLICE_MONITOR_P4_

// Bucket of a delay in vq units; the edges are HIST_BUCKET_EDGES_US of p4/constants.json.
hist_bucket_t delay_bucket(in vq_time_t delay) {
    hist_bucket_t bucket = HIST_BUCKETS - 1;
    if (delay < HIST_EDGE_1_VQ) {
        bucket = 0;
    } else if (delay < HIST_EDGE_2_VQ) {
        bucket = 1;
    } else if (delay < HIST_EDGE_3_VQ) {
        bucket = 2;
    } else if (delay < HIST_EDGE_4_VQ) {
        bucket = 3;
    } else if (delay < HIST_EDGE_5_VQ) {
        bucket = 4;
    } else if (delay < HIST_EDGE_6_VQ) {
        bucket = 5;
    } else if (delay < HIST_EDGE_7_VQ) {
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
            vq_delay_hist.count(cells | (bit<32>) delay_bucket(local_md.vq_delay));
            real_delay_hist.count(cells | (bit<32>) delay_bucket(local_md.real_delay));
        }
    }
}

#endif  // SLICEPORTAL_SLICE_MONITOR_P4_
