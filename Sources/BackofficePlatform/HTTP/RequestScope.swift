import Foundation
import Hummingbird
import NIOCore

/// The request context: Hummingbird's core storage, the peer address, and the request's scope
/// (`RequestScope`), which the edge sets before anything else runs.
package struct AppRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    package let remoteAddress: SocketAddress?
    /// Who the request is from and, once authenticated, who it acts for (set by `EdgeResponder`).
    package var scope = RequestScope(requestID: "", sourceIP: nil, secure: false, now: Date(timeIntervalSince1970: 0))

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// The one typed request context: what the edge learned about a request (its id, the client's
/// address, whether it came over TLS) and, once authenticated, the principal it acts for, its
/// transaction and its token's hash; for an API call, the contract's operation id and the
/// `Idempotency-Key` too. The edge sets it on `AppRequestContext.scope` for every request and makes
/// it act for a token's principal; `Console.page` makes it act for a console session's operator.
///
/// The generated API handlers receive only their typed input (the OpenAPI transport passes them no
/// request context), so a request also carries its scope in the one task-local below, bound by
/// the edge and by `OperationScopeMiddleware` and read through `current` only
/// (docs/decisions/request-scope.md).
package struct RequestScope: Sendable {
    package let requestID: String
    /// The request's one reading of the clock (`Database.clock`, when the edge received it): the time
    /// every page and answer shows a state at. A use case's writes take its unit's own `now`.
    package let now: Date
    package let sourceIP: String?
    /// Whether the request came over TLS (behind a trusted proxy that says so).
    package let secure: Bool
    /// Who the request acts for, once authenticated (`.anonymous` for a public operation).
    package private(set) var principal: Principal?
    /// The request's transaction, acting for `principal` (nil outside `/v1`, and for staged changes).
    package private(set) var transaction: RequestTransaction?
    /// The SHA-256 of the bearer token the request authenticated with.
    package private(set) var tokenHash: [UInt8]?
    /// The body as received, for a public operation that verifies a signature over it (webhooks).
    package var rawBody: [UInt8]?
    /// A public operation's `Authorization: Basic` header: an OAuth client's credentials at the
    /// token endpoint (`client_secret_basic`). Never logged.
    package var clientAuthorization: String?
    /// The contract's `operationId` (`lockCustomer`) of an API call: with the request, what its
    /// `Idempotency-Key` is fingerprinted with.
    package var operationID: String?
    /// The `Idempotency-Key` header as the generated code reads it (percent-decoded), if sent.
    package var idempotencyKey: String?

    package init(requestID: String, sourceIP: String?, secure: Bool, now: Date) {
        (self.requestID, self.sourceIP, self.secure, self.now) = (requestID, sourceIP, secure, now)
    }

    /// The same request acting for `principal`, in `transaction`, authenticated by the token `tokenHash`.
    package func acting(
        for principal: Principal, transaction: RequestTransaction? = nil, tokenHash: [UInt8]? = nil
    ) -> RequestScope {
        var scope = self
        (scope.principal, scope.transaction, scope.tokenHash) = (principal, transaction, tokenHash)
        return scope
    }

    /// The scope of the request this task serves (nil outside one).
    @TaskLocal private static var bound: RequestScope?

    /// The scope of the request this task serves, bound by the edge for every request (and again
    /// by `OperationScopeMiddleware` with the API call's operation). Read only where no context can
    /// be passed: the generated handlers' adapter (`APIHandler.scope()`), the problem middleware,
    /// and the database's error log line.
    package static var current: RequestScope? { bound }

    /// Runs `body` as the request of this scope (`current` in it).
    package func serving<T>(_ body: () async throws -> T) async rethrows -> T {
        try await Self.$bound.withValue(self, operation: body)
    }
}

/// `X-Request-Id`: accepted when it is 1–128 characters of `[A-Za-z0-9._:-]`; anything else is
/// replaced by a new id (never stored or logged as sent).
package enum RequestID {
    package static func accept(_ header: String?) -> String {
        if let header, (1...128).contains(header.utf8.count), header.utf8.allSatisfy(isAllowed) { return header }
        return UUID().text
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
