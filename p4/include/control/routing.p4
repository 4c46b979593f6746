// IPv4 longest-prefix-match forwarding. It runs before slicing so that the classifier can
// key on the egress port: a slice's virtual queue models its share of one link.
#ifndef SLICEPORTAL_ROUTING_P4_
#define SLICEPORTAL_ROUTING_P4_

control Routing(inout headers_t hdr,
                inout local_metadata_t local_md,
                inout standard_metadata_t standard_metadata) {

    // The switch answers to the MAC address hosts send to, so that becomes the source.
    // The header checksum is recomputed in ComputeIpv4Checksum.
    @id(0x01000001) @name("set_next_hop")
    action set_next_hop(port_num_t port, mac_addr_t next_hop_mac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = next_hop_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        local_md.routed = true;
    }

    @id(0x01000002) @name("unrouted")
    action unrouted() {
        mark_to_drop(standard_metadata);
    }

    @id(0x02000001) @name("ipv4_lpm")
    table ipv4_lpm {
        key = {
            hdr.ipv4.dst_addr: lpm @name("ipv4_dst");
        }
        actions = {
            set_next_hop;
            @defaultonly unrouted;
        }
        const default_action = unrouted();
        size = ROUTE_TABLE_SIZE;
    }

    apply {
        local_md.routed = false;
        // Only well-formed IPv4 with TTL left is forwarded (no ICMP is generated).
        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1
                && standard_metadata.parser_error == error.NoError
                && standard_metadata.checksum_error == 0) {
            ipv4_lpm.apply();
        } else {
            mark_to_drop(standard_metadata);
        }
    }
}

#endif  // SLICEPORTAL_ROUTING_P4_
