import Foundation

/// Resolves bearer tokens to principals outside a request (demo credentials, tools): the same
/// `authenticate_request` the edge runs. Revoked, expired and disabled are refused at once.
package struct Authenticator: Sendable {
    package let database: Database
    package init(database: Database) { self.database = database }

    package func principal(for secret: String) async throws -> Principal? {
        let token = TokenSecret(value: secret)
        guard token.isWellFormed else { return nil }
        return try await database.requestTransaction(tokenHash: token.hash) { principal, _ in (principal, commit: true)
        }
    }
}
