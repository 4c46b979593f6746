// The real queue counts too (the paper's experiment 3): when the link is slower than the
// sum of the slices' rate limits, the egress queue grows although every virtual queue is
// within bounds. So egress decides on max(virtual delay, real delay): drop above the burst
// limit C_DELAY, and for ecn_step slices mark ECT packets CE above M_DELAY. The virtual
// delay is never above C_DELAY after ingress, so only the real delay can cause a drop here.
// A packet marked here was not marked before: the only marks in ingress are CoDel's, and a
// CoDel slice has no M_DELAY (ecn_marked is reset in ingress, by VirtualQueue).
#ifndef SLICEPORTAL_REAL_QUEUE_P4_
#define SLICEPORTAL_REAL_QUEUE_P4_

control RealQueueCheck(inout headers_t hdr,
                       inout local_metadata_t local_md,
                       inout standard_metadata_t standard_metadata) {
    apply {
        // deq_timedelta < 2^32 ticks, so the product stays below 2^58.
        local_md.real_delay = (vq_time_t) standard_metadata.deq_timedelta * VQ_UNITS_PER_TICK;
        local_md.real_dropped = false;
        if (local_md.has_policy) {
            vq_time_t worst = local_md.vq_delay;
            if (local_md.real_delay > worst) {
                worst = local_md.real_delay;
            }
            if (worst > (vq_time_t) local_md.c_delay) {
                mark_to_drop(standard_metadata);
                local_md.real_dropped = true;
            } else if (local_md.ecn_step && worst > (vq_time_t) local_md.m_delay
                       && (hdr.ipv4.ecn == ECN_ECT0 || hdr.ipv4.ecn == ECN_ECT1)) {
                hdr.ipv4.ecn = ECN_CE;
                local_md.ecn_marked = true;
            }
        }
    }
}

#endif  // SLICEPORTAL_REAL_QUEUE_P4_
