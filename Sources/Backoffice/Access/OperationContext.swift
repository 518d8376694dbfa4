import Foundation

/// Who is doing what, under which policies: the context every domain operation runs in.
public struct OperationContext: Sendable {
    public let principal: Principal
    public let requestID: String
    public let sourceIP: String?
    public let policies: PolicySet
    /// The request's transaction (from the edge), nil outside a request (system work, tools).
    public let transaction: RequestTransaction?

    public init(principal: Principal, requestID: String, sourceIP: String?, policies: PolicySet, transaction: RequestTransaction? = nil) {
        self.principal = principal
        self.requestID = requestID
        self.sourceIP = sourceIP
        self.policies = policies
        self.transaction = transaction
    }

    /// Whether customer PII must be masked for this principal.
    public var masksPII: Bool { policies.access.masksPII(principal.role) }
}
