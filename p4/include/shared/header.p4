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
    // Set by the virtual queue for a packet it took, for the slice's queue management (CoDel,
    // ABC): the slice's virtual-queue delay ahead of the packet (before its own transmission
    // time), vq units: CoDel's sojourn time, ABC's queue Q.
    vq_time_t  queue_ahead;
    vq_time_t  vq_tx_time;    // this packet's transmission time at the slice's rate, vq units
    bool       aqm_drop;      // CoDel or ABC drops this packet: the virtual queue gives its
                              // time back (vq_return), AqmDrop drops and counts it
    // CoDel (SliceCodel), set by the slice's codel action and the virtual queue:
    bool       codel;          // the slice runs CoDel and its virtual queue took the packet
    bool       codel_ecn_mark; // CE-mark ECN-capable packets instead of dropping them
    vq_param_t codel_target;   // target, vq units (at least one full frame's time)
    codel_interval_t codel_interval;  // interval, ticks: the control-law table's exact key
    codel_count_t codel_count; // count after this packet's step: the control law's LPM key
    bool       codel_signal;   // CoDel drops (or marks) this packet
    bool       codel_entering; // ... and with it enters the dropping state
    // ABC (SliceAbc), set by the slice's abc action and the virtual queue:
    bool       abc;                  // the slice runs ABC and its virtual queue took the packet
    vq_param_t abc_q_min;            // Q_min, vq units: ABC never drops below it
    vq_param_t abc_q_base;           // Q_base, vq units: the threshold at A = A_avg
    abc_gamma_t abc_gamma;           // gamma, vq units per Q8 activity step, Q16
    abc_activity_t abc_activity_offset;  // 64 - log2(R_r in bytes per tick), Q8
    abc_memory_t abc_meter_memory;   // M_AM, ticks: N's limit and the meter decay table's key
    abc_memory_t abc_average_memory; // M_AA, ticks: the average decay table's key
    ipv4_addr_t abc_prefix_mask;     // the aggregate: source address & this mask
    // ... and by SliceAbc's actions, as keys of its lookup tables:
    timestamp_t abc_meter_elapsed;   // ticks since the aggregate's previous packet, mod 2^48
    timestamp_t abc_average_elapsed; // ticks since the slice's previous ABC packet, mod 2^48
    abc_state_t abc_s;               // the aggregate's S after this packet: log2 table key
    abc_state_t abc_n;               // the aggregate's N after this packet: log2 table key
    abc_state_t abc_count;           // the average's count after this packet: 1/N table key
}

#endif  // SLICEPORTAL_HEADER_P4_
