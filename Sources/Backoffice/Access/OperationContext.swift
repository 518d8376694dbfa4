import Foundation
import PostgresNIO

/// Who is doing what, under which policies: the context every domain operation runs in.
public struct OperationContext: Sendable {
    public let principal: Principal
    public let requestID: String
    public let sourceIP: String?
    public let policies: PolicySet
    /// The request's transaction (from the edge), nil outside a request (system work, tools).
    public let transaction: RequestTransaction?
    /// The SHA-256 of the bearer token the request authenticated with (nil outside a request): what
    /// a long answer authenticates again page by page (`ExportPages`). A hash, never the secret.
    public let tokenHash: [UInt8]?

    public init(
        principal: Principal, requestID: String, sourceIP: String?, policies: PolicySet, transaction: RequestTransaction? = nil,
        tokenHash: [UInt8]? = nil
    ) {
        self.principal = principal
        self.requestID = requestID
        self.sourceIP = sourceIP
        self.policies = policies
        self.transaction = transaction
        self.tokenHash = tokenHash
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
            principal: principal, requestID: requestID, sourceIP: sourceIP, policies: policies, transaction: transaction, tokenHash: tokenHash)
    }

    /// Whether customer PII must be masked for this principal.
    public var masksPII: Bool { policies.access.masksPII(principal.role) }
}
