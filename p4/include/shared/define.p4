// Types and protocol constants. The widths come from constants.p4 (generated from
// p4/constants.json) so the control plane validates parameters against the same numbers.
#ifndef SLICEPORTAL_DEFINE_P4_
#define SLICEPORTAL_DEFINE_P4_

#include "constants.p4"

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<PORT_WIDTH> port_num_t;
typedef bit<VLAN_ID_WIDTH> vlan_id_t;
typedef bit<DP_SID_WIDTH> dp_sid_t;
typedef bit<PRIORITY_WIDTH> priority_t;
typedef bit<TIMESTAMP_WIDTH> timestamp_t;
typedef bit<HIST_BUCKET_BITS> hist_bucket_t;

// Virtual-queue time is counted in "vq units" of 2^-VQ_FRAC_BITS ns. A slice's rate is the
// time one byte takes at that rate (byte_time_t, vq units per byte), so admission costs one
// multiplication (BMv2 cannot divide by a run-time value) and stays exact to 0.1%.
typedef bit<BYTE_TIME_WIDTH> byte_time_t;
// Burst limit (C_DELAY) and marking threshold (M_DELAY), vq units.
typedef bit<VQ_PARAM_WIDTH> vq_param_t;
// A virtual or real queuing delay, vq units; 64 bits so no intermediate can overflow.
typedef bit<VQ_DELAY_WIDTH> vq_time_t;
// CoDel's drop count and its interval and control-law spacings (ticks).
typedef bit<CODEL_COUNT_WIDTH> codel_count_t;
typedef bit<CODEL_INTERVAL_WIDTH> codel_interval_t;
// ABC's fixed point (domain/abc.py, docs/dataplane.md "ABC inside a slice"): a memory in ticks
// (the decay tables' exact key), a decay factor exp(-low/M) in Q48, which reaches 1.0 = 2^48
// and so has one bit more, the meter's S and N and the average's count in Q16 and A_avg (all
// bit<64>), a biased Q8 activity (also a log2 value and the per-slice activity offset), gamma
// in Q16 vq units per activity step and a reciprocal weight 1/N in Q32, which reaches
// 1.0 = 2^32 and so has one bit more.
typedef bit<ABC_MEMORY_WIDTH> abc_memory_t;
typedef bit<ABC_DECAY_WIDTH> abc_decay_t;
typedef bit<ABC_STATE_WIDTH> abc_state_t;
typedef bit<ABC_ACTIVITY_WIDTH> abc_activity_t;
typedef bit<ABC_GAMMA_WIDTH> abc_gamma_t;
typedef bit<ABC_WEIGHT_WIDTH> abc_weight_t;
// Products of ABC's 64-bit state with a factor, gamma or a weight, before the shift back.
typedef bit<128> abc_wide_t;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_VLAN = 0x8100;

// Header length in 32-bit words of an IPv4 header without options.
const bit<4> IPV4_MIN_IHL = 5;

// ECN codepoints (RFC 3168). Only ECN-capable (ECT) packets are marked CE; Not-ECT (0) ones
// pass unmarked and meet only the burst-limit drop.
const bit<2> ECN_ECT1 = 1;
const bit<2> ECN_ECT0 = 2;
const bit<2> ECN_CE = 3;

// v1model meter colours (BMv2: 0 green, 1 yellow, 2 red).
const bit<2> METER_COLOR_RED = 2;

error {
    Ipv4IhlTooSmall
}

#endif  // SLICEPORTAL_DEFINE_P4_
