// sliceportal data plane for v1model (BMv2 simple_switch_grpc): IPv4 routing, slice
// classification, one virtual queue per slice with tail-drop, ECN-step, CoDel or ABC, a real-queue
// check in egress and per-slice counters. This file only wires the blocks; each control lives in
// include/control/, types and sizes in include/shared/. Every P4Runtime object carries a
// pinned @id, so build/sliceportal.p4info.txtpb stays stable (docs/dataplane.md lists them).
#include <core.p4>
#include <v1model.p4>

#include "include/shared/define.p4"
#include "include/shared/header.p4"
#include "include/control/parser.p4"
#include "include/control/checksum.p4"
#include "include/control/routing.p4"
#include "include/control/slice_classifier.p4"
#include "include/control/codel.p4"
#include "include/control/abc.p4"
#include "include/control/vqueue.p4"
#include "include/control/aqm_drop.p4"
#include "include/control/real_queue.p4"
#include "include/control/slice_monitor.p4"

control SliceportalIngress(inout headers_t hdr,
                           inout local_metadata_t local_md,
                           inout standard_metadata_t standard_metadata) {
    Routing() routing;
    SliceClassifier() classifier;
    VirtualQueue() vqueue;
    AqmDrop() aqm;

    apply {
        routing.apply(hdr, local_md, standard_metadata);
        if (local_md.routed) {
            classifier.apply(hdr, local_md, standard_metadata);
            vqueue.apply(hdr, local_md, standard_metadata);
            aqm.apply(hdr, local_md, standard_metadata);
        }
    }
}

control SliceportalEgress(inout headers_t hdr,
                          inout local_metadata_t local_md,
                          inout standard_metadata_t standard_metadata) {
    RealQueueCheck() real_queue;
    SliceMonitor() monitor;

    apply {
        real_queue.apply(hdr, local_md, standard_metadata);
        monitor.apply(local_md);
    }
}

V1Switch(SliceportalParser(),
         VerifyIpv4Checksum(),
         SliceportalIngress(),
         SliceportalEgress(),
         ComputeIpv4Checksum(),
         SliceportalDeparser()) main;
