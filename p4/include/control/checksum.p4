// IPv4 header checksum: verified on arrival (routing drops a bad one, RFC 1812) and
// recomputed on departure, after the TTL decrement and any ECN mark. The options take part
// in both; BMv2 skips the fields of an invalid header, so option-less packets work too.
#ifndef SLICEPORTAL_CHECKSUM_P4_
#define SLICEPORTAL_CHECKSUM_P4_

control VerifyIpv4Checksum(inout headers_t hdr, inout local_metadata_t local_md) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4_options.data },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control ComputeIpv4Checksum(inout headers_t hdr, inout local_metadata_t local_md) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4_options.data },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

#endif  // SLICEPORTAL_CHECKSUM_P4_
