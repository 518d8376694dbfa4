import Foundation
import PostgresNIO

/// Who is doing what, under which policies: the context every domain operation runs in.
package struct OperationContext: Sendable {
    package let principal: Principal
    package let requestID: String
    package let sourceIP: String?
    package let policies: PolicySet
    /// The request's transaction (from the edge), nil outside a request (system work, tools).
    package let transaction: RequestTransaction?
    /// The SHA-256 of the bearer token the request authenticated with (nil outside a request): what
    /// a long answer authenticates again page by page (`ExportPages`). A hash, never the secret.
    package let tokenHash: [UInt8]?

    package init(
        principal: Principal, requestID: String, sourceIP: String?, policies: PolicySet,
        transaction: RequestTransaction? = nil,
        tokenHash: [UInt8]? = nil
    ) {
        self.principal = principal
        self.requestID = requestID
        self.sourceIP = sourceIP
        self.policies = policies
        self.transaction = transaction
        self.tokenHash = tokenHash
    }

    /// The context of the current API request, from its `RequestScope` (set by `EdgeResponder`).
    /// - Throws: `DomainError.unauthenticated` outside an authenticated request.
    static func ofCurrentRequest(policies: PolicySet) throws -> OperationContext {
        guard let scope = RequestScope.current, let principal = scope.principal else {
            throw DomainError.unauthenticated
        }
        return OperationContext(
            principal: principal, requestID: scope.requestID, sourceIP: scope.sourceIP, policies: policies,
            transaction: scope.transaction,
            tokenHash: scope.tokenHash)
    }

    /// The connection of the context's transaction (a page's read session).
    var connection: PostgresConnection {
        get throws {
            guard let transaction else { throw DomainError.inconsistent("no transaction for this read") }
            return transaction.connection
        }
    }

    /// The same request's context in another transaction (a page of a long answer).
    func with(_ transaction: RequestTransaction) -> OperationContext {
        OperationContext(
            principal: principal, requestID: requestID, sourceIP: sourceIP, policies: policies,
            transaction: transaction, tokenHash: tokenHash)
    }

    /// Whether customer PII must be masked for this principal.
    package var masksPII: Bool { policies.access.masksPII(principal.role) }
}
