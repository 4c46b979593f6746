// Packet headers and the per-packet metadata the controls hand to each other.
#ifndef SLICEPORTAL_HEADER_P4_
#define SLICEPORTAL_HEADER_P4_

#include "define.p4"

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

// 802.1Q tag; it follows the MAC addresses, so its ether_type is the payload's.
header vlan_tag_t {
    bit<3>    pcp;
    bit<1>    dei;
    vlan_id_t vlan_id;
    bit<16>   ether_type;
}

header ipv4_t {
    bit<4>      version;
    bit<4>      ihl;
    bit<6>      dscp;
    bit<2>      ecn;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

// IPv4 options, kept so the recomputed header checksum stays right for any header length.
header ipv4_options_t {
    varbit<320> data;
}

struct headers_t {
    ethernet_t     ethernet;
    vlan_tag_t     vlan_tag;
    ipv4_t         ipv4;
    ipv4_options_t ipv4_options;
}

// v1model keeps user metadata from ingress to egress, so the slice's parameters ride along
// and egress needs no second table lookup (as the paper suggests).
struct local_metadata_t {
    bool       routed;        // routing found a next hop: only such packets are classified
    dp_sid_t   dp_sid;        // the packet's slice, BEST_EFFORT_DP_SID when unclassified
    bool       has_policy;    // the slice has a virtual queue (a slice_policy entry)
    bool       ecn_step;      // its scheme marks (ecn_step) rather than only drops (tail_drop)
    vq_param_t c_delay;       // burst limit C_DELAY, vq units
    vq_param_t m_delay;       // marking threshold M_DELAY, vq units
    vq_param_t hist_target;   // the slice's delay target, vq units: its histogram's top edge
    vq_time_t  vq_delay;      // virtual-queue delay including this packet, vq units
    vq_time_t  real_delay;    // egress: time spent in the real queue, vq units
    bool       real_dropped;  // egress: dropped by the real-queue check
    bool       ecn_marked;    // marked CE by this switch (CoDel in ingress, ecn_step in egress)
    // CoDel (SliceCodel), set by the slice's codel action and the virtual queue:
    bool       codel;          // the slice runs CoDel and its virtual queue took the packet
    bool       codel_ecn_mark; // CE-mark ECN-capable packets instead of dropping them
    vq_param_t codel_target;   // target, vq units (at least one full frame's time)
    codel_interval_t codel_interval;  // interval, ticks: the control-law table's exact key
    vq_time_t  codel_sojourn;  // the slice's virtual-queue delay ahead of this packet
    codel_count_t codel_count; // count after this packet's step: the control law's LPM key
    bool       codel_signal;   // CoDel drops (or marks) this packet
    bool       codel_entering; // ... and with it enters the dropping state
}

#endif  // SLICEPORTAL_HEADER_P4_
