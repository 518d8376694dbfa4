import Foundation

/// A URL a user gave for the service to call (a partner's webhook endpoint), checked: `https`,
/// no credentials in it, a host that resolves only to addresses `OutboundAddress` accepts (one
/// refused answer among several refuses the name), and the address the connection must go to.
/// In `dev` (`Rules.loopbackAllowed`) loopback addresses and `http` are accepted too, for a
/// receiver on the developer's machine; nothing else is.
package struct OutboundTarget: Sendable, Equatable {
    package let url: URL
    package let host: String
    /// The checked address to connect to (never a second lookup of `host`).
    package let address: String

    /// What a deployment accepts.
    package struct Rules: Sendable {
        package var loopbackAllowed: Bool
        package static let serve = Rules(loopbackAllowed: false)
        package static let dev = Rules(loopbackAllowed: true)
        package init(loopbackAllowed: Bool) { self.loopbackAllowed = loopbackAllowed }
    }

    /// Why a URL is refused, in words for the problem's detail.
    package struct Refused: Error, Equatable, CustomStringConvertible {
        package let description: String
    }

    /// Checks `text` under `rules`, resolving its host through `resolver`.
    package static func check(_ text: String, rules: Rules, resolver: any HostResolver) async throws -> OutboundTarget {
        guard text.count <= 2048, let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(),
            let rawHost = parts.host, !rawHost.isEmpty, let url = parts.url
        else { throw Refused(description: "not an absolute URL") }
        guard parts.user == nil && parts.password == nil else {
            throw Refused(
                description: "a URL with credentials in it is refused (sign with the endpoint's secret instead)")
        }
        guard scheme == "https" || (scheme == "http" && rules.loopbackAllowed) else {
            throw Refused(
                description: rules.loopbackAllowed ? "the URL must be http or https" : "the URL must be https")
        }
        let host = rawHost.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let addresses = CIDR.bytes(of: host) != nil ? [host] : try await resolver.addresses(of: host)
        guard let first = addresses.first else { throw Refused(description: "\(host) does not resolve") }
        for address in addresses {
            guard let refusal = OutboundAddress.refusal(address) else { continue }
            if refusal == .loopback && rules.loopbackAllowed { continue }
            throw Refused(description: "\(host) resolves to \(address), a \(refusal.words) address: refused")
        }
        return OutboundTarget(url: url, host: host, address: first)
    }
}

/// Where the service may call a URL a user gave, and how it resolves hosts: `serve` accepts only
/// https to public addresses through the system's resolver; `dev` accepts loopback and http too;
/// tests give a `TableResolver`, so no test reaches off the machine.
package struct OutboundSettings: Sendable {
    package var rules: OutboundTarget.Rules = .serve
    package var resolver: any HostResolver = SystemResolver()
    package init() {}
}

extension OutboundAddress.Refusal {
    /// The refusal in words ("a private address").
    package var words: String {
        switch self {
        case .loopback: "loopback"
        case .privateNetwork: "private"
        case .linkLocal: "link-local"
        case .metadata: "cloud metadata"
        case .reserved: "reserved or non-unicast"
        case .notAnAddress: "malformed"
        }
    }
}
