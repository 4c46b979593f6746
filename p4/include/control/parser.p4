// Ethernet, an optional 802.1Q tag, IPv4 with its options. Anything else is left unparsed
// (and dropped by routing, which forwards IPv4 only).
#ifndef SLICEPORTAL_PARSER_P4_
#define SLICEPORTAL_PARSER_P4_

parser SliceportalParser(packet_in packet,
                         out headers_t hdr,
                         inout local_metadata_t local_md,
                         inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_VLAN: parse_vlan_tag;
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_vlan_tag {
        packet.extract(hdr.vlan_tag);
        transition select(hdr.vlan_tag.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        // A parser error does not drop on v1model: routing drops when parser_error is set.
        verify(hdr.ipv4.ihl >= IPV4_MIN_IHL, error.Ipv4IhlTooSmall);
        transition select(hdr.ipv4.ihl) {
            IPV4_MIN_IHL: accept;
            default: parse_ipv4_options;
        }
    }

    state parse_ipv4_options {
        // ihl counts 32-bit words; the first IPV4_MIN_IHL of them are the fixed header.
        packet.extract(hdr.ipv4_options, ((bit<32>) (hdr.ipv4.ihl - IPV4_MIN_IHL)) << 5);
        transition accept;
    }
}

control SliceportalDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.vlan_tag);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.ipv4_options);
    }
}

#endif  // SLICEPORTAL_PARSER_P4_
