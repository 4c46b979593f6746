// Classify a routed packet to its slice (DP_SID). Two exact+LPM tables instead of one
// ternary table: BMv2 looks up LPM in a trie but scans ternary entries one by one, and the
// classifier holds up to CLASSIFIER_TABLE_SIZE entries. The egress port is part of both keys
// because a DP_SID names a slice on one link.
//   vlan_classifier:   slices with a VLAN id (and optional prefixes, /0 when none).
//   prefix_classifier: slices matching by prefix alone, whatever the VLAN; consulted when
//                      the first table misses, so a VLAN slice wins over a prefix slice.
// A packet matching neither is best effort.
#ifndef SLICEPORTAL_SLICE_CLASSIFIER_P4_
#define SLICEPORTAL_SLICE_CLASSIFIER_P4_

control SliceClassifier(in headers_t hdr,
                        inout local_metadata_t local_md,
                        in standard_metadata_t standard_metadata) {

    @id(0x01000003) @name("set_slice")
    action set_slice(dp_sid_t dp_sid) {
        local_md.dp_sid = dp_sid;
    }

    @id(0x01000004) @name("unclassified")
    action unclassified() {
        local_md.dp_sid = BEST_EFFORT_DP_SID;
    }

    @id(0x02000002) @name("vlan_classifier")
    table vlan_classifier {
        key = {
            standard_metadata.egress_spec: exact @name("egress_port");
            hdr.vlan_tag.vlan_id: exact @name("vlan_id");
            hdr.ipv4.dst_addr: lpm @name("ipv4_dst");
        }
        actions = {
            set_slice;
            @defaultonly unclassified;
        }
        const default_action = unclassified();
        size = CLASSIFIER_TABLE_SIZE;
    }

    @id(0x02000003) @name("prefix_classifier")
    table prefix_classifier {
        key = {
            standard_metadata.egress_spec: exact @name("egress_port");
            hdr.ipv4.dst_addr: lpm @name("ipv4_dst");
        }
        actions = {
            set_slice;
            @defaultonly unclassified;
        }
        const default_action = unclassified();
        size = CLASSIFIER_TABLE_SIZE;
    }

    apply {
        bool classified = false;
        if (hdr.vlan_tag.isValid()) {
            classified = vlan_classifier.apply().hit;
        }
        if (!classified) {
            prefix_classifier.apply();
        }
    }
}

#endif  // SLICEPORTAL_SLICE_CLASSIFIER_P4_
