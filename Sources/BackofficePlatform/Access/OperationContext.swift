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
        (self.principal, self.requestID, self.sourceIP, self.policies, self.transaction, self.tokenHash) = (
            principal, requestID, sourceIP, policies, transaction, tokenHash
        )
    }

    /// The context of a request acting for its scope's principal: how every request's context is
    /// made (the API's, the hot lists' and the console's).
    /// - Throws: `DomainError.unauthenticated` when the scope acts for no one yet.
    package init(_ scope: RequestScope, policies: PolicySet) throws {
        guard let principal = scope.principal else { throw DomainError.unauthenticated }
        self.init(scope, acting: principal, transaction: scope.transaction, policies: policies)
    }

    /// The context of a request acting for `principal` in `transaction` (a console session's, or
    /// the anonymous caller's before anyone signs in).
    package init(
        _ scope: RequestScope, acting principal: Principal, transaction: RequestTransaction? = nil, policies: PolicySet
    ) {
        self.init(
            principal: principal, requestID: scope.requestID, sourceIP: scope.sourceIP, policies: policies,
            transaction: transaction, tokenHash: principal == scope.principal ? scope.tokenHash : nil)
    }

    /// The context of work the system does on its own (`purpose`: bootstrap, lock expiry,
    /// reconciliation), under a request id of its own.
    package static func system(_ purpose: String, policies: PolicySet) -> OperationContext {
        OperationContext(
            principal: .system, requestID: "\(purpose)-\(UUID().text)", sourceIP: nil,
            policies: policies)
    }

    /// The same request's context acting for `principal` (demo data made in several roles).
    package func acting(as principal: Principal, sourceIP: String? = nil) -> OperationContext {
        OperationContext(principal: principal, requestID: requestID, sourceIP: sourceIP, policies: policies)
    }

    /// The connection of the context's transaction (a page's read session).
    package var connection: PostgresConnection {
        get throws {
            guard let transaction else { throw DomainError.inconsistent("no transaction for this read") }
            return transaction.connection
        }
    }

    /// The same request's context in another transaction (a page of a long answer).
    package func with(_ transaction: RequestTransaction) -> OperationContext {
        OperationContext(
            principal: principal, requestID: requestID, sourceIP: sourceIP, policies: policies,
            transaction: transaction, tokenHash: tokenHash)
    }

    /// Whether customer PII must be masked for this principal.
    package var masksPII: Bool { policies.access.masksPII(principal.role) }
    /// Whether the principal sees only the content it wrote (`authored_only` in access.yaml).
    package var authoredOnly: Bool { policies.access.authoredOnly(principal.role) }
}
