import Foundation
import Logging
import PostgresNIO

/// The service's database role would defeat row-level security: it is a superuser, has
/// BYPASSRLS, or owns a table. `serve` refuses to start with it.
package struct UnsafeServiceRole: Error, CustomStringConvertible {
    package let role: String
    package let reasons: [String]
    package var description: String {
        "refusing to serve as database role '\(role)': it \(reasons.joined(separator: ", ")), "
            + "so row-level security would not apply; "
            + "connect as the backoffice_app role the migrations create (BACKOFFICE_DATABASE_URL)"
    }
}

package enum ServiceRoleCheck {
    /// Throws `UnsafeServiceRole` unless the connected role is an ordinary one that owns nothing.
    package static func verify(_ url: DatabaseURL, logger: Logger) async throws {
        try await url.withConnection(logger: logger) { connection in
            let rows = try await connection.query(
                """
                SELECT r.rolname, r.rolsuper, r.rolbypassrls,
                       (SELECT count(*) FROM pg_class c WHERE c.relowner = r.oid AND c.relkind IN ('r', 'p'))::int
                FROM pg_roles r WHERE r.rolname = current_user
                """, logger: logger)
            for try await (role, isSuperuser, bypassesRLS, ownedTables) in rows.decode((String, Bool, Bool, Int).self) {
                var reasons: [String] = []
                if isSuperuser { reasons.append("is a superuser") }
                if bypassesRLS { reasons.append("has BYPASSRLS") }
                if ownedTables > 0 { reasons.append("owns \(ownedTables) table(s)") }
                if !reasons.isEmpty { throw UnsafeServiceRole(role: role, reasons: reasons) }
            }
        }
    }
}
