import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 network in CIDR notation (`10.0.0.0/8`, `::1/128`; a bare address is /32 or /128).
package struct CIDR: Sendable, Equatable, CustomStringConvertible {
    package let network: [UInt8]
    package let prefixLength: Int
    package let description: String

    /// - Throws: `CIDR.Invalid` naming the text when it is not an address with an optional prefix length.
    package init(_ text: String) throws {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard let first = parts.first, let bytes = CIDR.bytes(of: first) else { throw Invalid(text: text) }
        let bits = bytes.count * 8
        let digits = parts.count == 2 && !parts[1].isEmpty && parts[1].count <= 3 && parts[1].allSatisfy(\.isASCIIDigit)
        let length = parts.count == 2 ? (digits ? Int(parts[1]) : nil) : bits
        guard let length, (0...bits).contains(length) else { throw Invalid(text: text) }
        network = bytes
        prefixLength = length
        description = text
    }

    package struct Invalid: Error, CustomStringConvertible {
        package let text: String
        package var description: String { "not an IP address or CIDR network: '\(text)'" }
    }

    /// Whether `address` (text form) lies in this network.
    package func contains(_ address: String) -> Bool {
        guard let bytes = CIDR.bytes(of: address), bytes.count == network.count else { return false }
        var remaining = prefixLength
        for (a, b) in zip(bytes, network) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if a & mask != b & mask { return false }
            remaining -= 8
        }
        return true
    }

    /// The network in PostgreSQL's `cidr` form: the bits past the prefix cleared, with its length
    /// (`10.1.2.3/16` → `10.1.0.0/16`, `::1` → `::1/128`).
    package var canonical: String {
        var bytes = network
        for index in bytes.indices {
            let kept = max(0, min(8, prefixLength - index * 8))
            bytes[index] &= kept == 8 ? 0xFF : ~(0xFF >> UInt8(kept))
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        _ = bytes.withUnsafeBytes { raw in
            inet_ntop(bytes.count == 4 ? AF_INET : AF_INET6, raw.baseAddress, &text, socklen_t(text.count))
        }
        return String(cString: text) + "/\(prefixLength)"
    }

    /// Whether every address of `other` lies in this network (it is this network or inside it).
    package func contains(_ other: CIDR) -> Bool {
        other.network.count == network.count && other.prefixLength >= prefixLength
            && zip(other.network, network).enumerated().allSatisfy { index, pair in
                let remaining = prefixLength - index * 8
                guard remaining > 0 else { return true }
                let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
                return pair.0 & mask == pair.1 & mask
            }
    }

    /// The address's bytes (4 for IPv4, 16 for IPv6), nil when `text` is not an address.
    package static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}

/// Which address a request comes from: the peer, or — only when the peer is a trusted proxy —
/// the nearest address in `X-Forwarded-For` that is not itself a trusted proxy.
package struct ClientAddress: Sendable {
    package let trustedProxies: [CIDR]

    /// What a per-address limit counts `address` as: an IPv4 address itself, an IPv6 address its
    /// /64 (one subscriber's network: a host picks any of its 2^64 addresses at will).
    package static func limitKey(_ address: String) -> String {
        guard let bytes = CIDR.bytes(of: address), bytes.count == 16 else { return address }
        let groups = stride(from: 0, to: 8, by: 2).map {
            String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
        }
        return groups.joined(separator: ":") + "::/64"
    }

    package init(trustedProxies: [CIDR]) { self.trustedProxies = trustedProxies }

    package func resolve(peer: String?, forwardedFor: String?) -> String? {
        guard let peer, isTrusted(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard CIDR.bytes(of: hop) != nil else { return peer }  // garbage in the header: keep what we know
            if !isTrusted(hop) { return hop }
        }
        return hops.first ?? peer
    }

    package func isTrusted(_ address: String) -> Bool { trustedProxies.contains { $0.contains(address) } }

    /// Whether the request reached the service over TLS: only a trusted proxy can say so
    /// (`X-Forwarded-Proto: https`); the service itself speaks plain HTTP (loopback in `dev`).
    package func isTLS(peer: String?, forwardedProto: String?) -> Bool {
        guard let peer, isTrusted(peer) else { return false }
        return forwardedProto?.lowercased() == "https"
    }
}
