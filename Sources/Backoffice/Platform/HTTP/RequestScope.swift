import Foundation
import Hummingbird
import NIOCore

/// The request context: Hummingbird's core storage plus the peer address (recorded as the
/// audit event's source ip).
package struct AppRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    package let remoteAddress: SocketAddress?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// What the edge learned about the request, handed to the generated handlers through a task
/// local (the OpenAPI transport passes only path parameters to them).
package struct RequestScope: Sendable {
    package let principal: Principal?
    package let requestID: String
    package let sourceIP: String?
    /// The request's transaction, acting for `principal` (nil outside `/v1`).
    package var transaction: RequestTransaction? = nil
    /// The body as received, for a public operation that verifies a signature over it (webhooks).
    package var rawBody: [UInt8]? = nil
    /// The SHA-256 of the bearer token the request authenticated with.
    package var tokenHash: [UInt8]? = nil
    /// The connection's peer address (a trusted proxy's, behind one).
    package var peer: String? = nil

    @TaskLocal package static var current: RequestScope?
}

/// `X-Request-Id`: accepted when it is 1–128 characters of `[A-Za-z0-9._:-]`; anything else is
/// replaced by a new id (never stored or logged as sent).
enum RequestID {
    static func accept(_ header: String?) -> String {
        if let header, (1...128).contains(header.utf8.count), header.utf8.allSatisfy(isAllowed) { return header }
        return UUID().uuidString.lowercased()
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"): true
        default: false
        }
    }
}
