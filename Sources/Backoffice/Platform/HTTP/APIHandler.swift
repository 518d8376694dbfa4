import BackofficeAPI
import Foundation
import OpenAPIRuntime

/// The generated `APIProtocol`, implemented per domain in `Accounts/AccountsAPI.swift`,
/// `Tenancy/TenancyAPI.swift` and `Audit/AuditAPI.swift`: each handler reads the request scope,
/// validates input, runs one domain operation and maps its result to the contract's types.
struct APIHandler: APIProtocol {
    let database: Database
    let policies: PolicySet

    var idempotency: Idempotency { Idempotency(database: database) }

    /// The operation context of the current request (set by `EdgeResponder`).
    func context() throws -> OperationContext {
        guard let scope = RequestScope.current, let principal = scope.principal else { throw Problem.unauthenticated }
        return OperationContext(
            principal: principal, requestID: scope.requestID, sourceIP: scope.sourceIP, policies: policies, transaction: scope.transaction)
    }
}

/// Parses an id from a path or body (`field` names it in the 400).
func parseID(_ text: String, _ field: String) throws -> UUID {
    guard let id = UUID(uuidString: text) else {
        throw Problem(
            status: 400, code: "invalid_id", title: "Invalid id", detail: "\(field) is not a UUID: '\(text)'",
            errors: [FieldIssue(field: field, code: "invalid_id", message: "must be a UUID")])
    }
    return id
}

func parseID(_ text: String?, _ field: String) throws -> UUID? {
    guard let text else { return nil }
    return try parseID(text, field) as UUID
}

extension UUID {
    /// Lower-case text, as ids appear in the API and the audit log.
    var text: String { uuidString.lowercased() }
}

/// Decodes JSON text (a jsonb column) into a generated free-form payload type.
func payload<T: Decodable>(_ json: String?, as type: T.Type) -> T? {
    guard let json else { return nil }
    return try? JSONDecoder().decode(T.self, from: Data(json.utf8))
}
