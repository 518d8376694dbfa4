import Foundation

/// Parses an id from a path or body (`field` names it in the 400).
package func parseID(_ text: String, _ field: String) throws -> UUID {
    guard let id = UUID(uuidString: text) else {
        throw Problem(
            status: 400, code: "invalid_id", title: "Invalid id", detail: "\(field) is not a UUID: '\(text)'",
            errors: [FieldIssue(field: field, code: "invalid_id", message: "must be a UUID")])
    }
    return id
}

package func parseID(_ text: String?, _ field: String) throws -> UUID? {
    guard let text else { return nil }
    return try parseID(text, field) as UUID
}

/// Decodes JSON text (a jsonb column) into a generated free-form payload type.
/// - Throws: `DomainError.inconsistent` when the stored text does not decode (never a silent nil).
package func payload<T: Decodable>(_ json: String?, as type: T.Type) throws -> T? {
    guard let json else { return nil }
    do { return try JSONDecoder().decode(T.self, from: Data(json.utf8)) } catch {
        throw DomainError.inconsistent("a stored JSON value does not decode as \(T.self)")
    }
}
