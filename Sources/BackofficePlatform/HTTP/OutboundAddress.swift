import Foundation

/// Where the service may send a request whose address a user chose (a partner's webhook
/// endpoint): a public unicast address only, checked on every address a name resolves to
/// (`OutboundTarget`, which keeps the address checked so that a connection can go to it rather
/// than to a second lookup of a name that may change its answer).
///
/// IPv6 addresses that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
/// `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address they carry.
package enum OutboundAddress {
    /// Why an address is refused.
    package enum Refusal: String, Sendable, Equatable {
        case loopback
        case privateNetwork = "private"
        case linkLocal = "link_local"
        /// A cloud's instance metadata service (169.254.169.254, fd00:ec2::254, 100.100.100.200).
        case metadata
        /// Unspecified, multicast, broadcast, documentation, benchmarking, shared (CGNAT) and
        /// reserved ranges, and tunnels that hide their endpoint (Teredo).
        case reserved
        case notAnAddress = "not_an_address"
    }

    /// nil when `address` (text, IPv4 or IPv6) is a public unicast address, else why not.
    package static func refusal(_ address: String) -> Refusal? {
        guard let bytes = CIDR.bytes(of: address) else { return .notAnAddress }
        return bytes.count == 4 ? refusal(v4: bytes) : refusal(v6: bytes)
    }

    private static let metadata: Set<[UInt8]> = [[169, 254, 169, 254], [100, 100, 100, 200]]

    private static func refusal(v4 b: [UInt8]) -> Refusal? {
        if metadata.contains(b) { return .metadata }
        switch (b[0], b[1]) {
        case (127, _): return .loopback
        case (10, _), (172, 16...31), (192, 168): return .privateNetwork
        case (169, 254): return .linkLocal
        case (0, _), (100, 64...127),
            (192, 0) where b[2] == 0 || b[2] == 2, (198, 18...19),
            (198, 51) where b[2] == 100,
            (203, 0) where b[2] == 113, (224...255, _):
            return .reserved
        default: return nil
        }
    }

    private static func refusal(v6 b: [UInt8]) -> Refusal? {
        let head = b.prefix(12)
        if head.allSatisfy({ $0 == 0 }) {  // ::, ::1, or IPv4-compatible ::a.b.c.d
            if b[12..<15].allSatisfy({ $0 == 0 }) && b[15] <= 1 { return b[15] == 1 ? .loopback : .reserved }
            return refusal(v4: Array(b[12...]))
        }
        if head.prefix(10).allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF {
            return refusal(v4: Array(b[12...]))  // IPv4-mapped
        }
        if b.starts(with: [0x00, 0x64, 0xFF, 0x9B]) && b[4..<12].allSatisfy({ $0 == 0 }) {
            return refusal(v4: Array(b[12...]))  // NAT64's well-known prefix
        }
        if b[0] == 0x20 && b[1] == 0x02 { return refusal(v4: Array(b[2..<6])) }  // 6to4
        if b == [0xFD, 0x00, 0x0E, 0xC2] + Array(repeating: 0, count: 10) + [0x02, 0x54] { return .metadata }
        if b[0] & 0xFE == 0xFC { return .privateNetwork }  // unique local fc00::/7
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return .linkLocal }  // fe80::/10
        if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return .privateNetwork }  // site-local fec0::/10 (deprecated)
        if b[0] == 0xFF { return .reserved }  // multicast
        if b.starts(with: [0x20, 0x01, 0x00, 0x00]) || b.starts(with: [0x20, 0x01, 0x0D, 0xB8]) {
            return .reserved  // Teredo, documentation
        }
        if b.starts(with: [0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01]) || b[0] & 0xE0 != 0x20 { return .reserved }
        return nil
    }
}
