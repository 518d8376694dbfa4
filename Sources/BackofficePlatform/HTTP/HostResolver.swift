import Foundation
import NIOPosix

/// Resolves a host name to the addresses it names (text form, IPv4 and IPv6). The service's
/// checks of a user's URL (`OutboundTarget`) go through one, so tests give a table of their own
/// and no test sends traffic off the machine.
package protocol HostResolver: Sendable {
    /// Every address `host` resolves to; empty or a thrown error when it resolves to none.
    func addresses(of host: String) async throws -> [String]
}

/// The system's resolver (`getaddrinfo`), run on NIO's blocking-work thread pool so no event
/// loop waits on it.
package struct SystemResolver: HostResolver {
    package init() {}

    package func addresses(of host: String) async throws -> [String] {
        try await NIOThreadPool.singleton.runIfActive {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
            defer { freeaddrinfo(first) }
            var found: [String] = []
            for entry in sequence(first: first, next: { $0.pointee.ai_next }) {
                guard let address = entry.pointee.ai_addr else { continue }
                var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                if getnameinfo(address, entry.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST)
                    == 0
                {
                    found.append(String(cString: text))
                }
            }
            return Array(Set(found)).sorted()
        }
    }
}

/// A resolver that answers from a table (tests, and names a deployment pins), and only from it.
package struct TableResolver: HostResolver {
    package let table: [String: [String]]
    package init(_ table: [String: [String]]) { self.table = table }
    package func addresses(of host: String) async throws -> [String] { table[host.lowercased()] ?? [] }
}
