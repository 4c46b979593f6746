// The drops of a slice's queue management (CoDel, ABC), in one control both reach: each
// scheme only sets local_md.aqm_drop, and this control, applied after VirtualQueue, drops
// the packet and counts it. One counter for every scheme, because a slice runs one scheme at
// a time and the control plane reads "dropped by queue management before the burst limit"
// the same way whichever it is (the burst limit's own drops are vq_dropped and real_dropped).
#ifndef SLICEPORTAL_AQM_DROP_P4_
#define SLICEPORTAL_AQM_DROP_P4_

control AqmDrop(inout headers_t hdr,
                inout local_metadata_t local_md,
                inout standard_metadata_t standard_metadata) {

    // Packets and bytes dropped by the slice's CoDel or ABC.
    @id(0x12000007) @name("aqm_dropped")
    counter(MAX_SLICES, CounterType.packets_and_bytes) aqm_dropped;

    apply {
        if (local_md.aqm_drop) {
            mark_to_drop(standard_metadata);
            aqm_dropped.count((bit<32>) local_md.dp_sid);
        }
    }
}

#endif  // SLICEPORTAL_AQM_DROP_P4_
